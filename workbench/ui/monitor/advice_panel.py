"""Advice cards beside the Monitor's plots: what to change in the selected launch, and what it saves.

:class:`AdvicePanel` asks the advisor about the launch of the instance the Monitor shows (all
its nodes) on the session's read pool: when the instance changes and then every
``REFRESH_MS`` while it runs (the store gets a new minute of samples each minute).  Each
:class:`AdviceCard` shows the advice's title, saving, action and evidence window; clicking a
card emits :attr:`AdvicePanel.highlight` with that window, which the Monitor shades in its
plots; clicking it again clears it.

Kept in its own module (and the shading in :mod:`.evidence_highlight`) so the Monitor's node
selector and other additions do not touch it.  Main thread only, except the worker function.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget
from shiboken6 import isValid

from workbench.core.domain.models import Instance
from workbench.core.telemetry.advisor import Advice, Advisory
from workbench.ui.common.advice_text import advice_action, advice_title, severity_label
from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.ui.runtime.session import Session

log = logging.getLogger("workbench.ui.monitor.advice")

REFRESH_MS = 60_000
SEVERITY_COLORS = {"high": "#c62828", "medium": "#ef6c00", "low": "#757575"}


def advise_launch(store, launch_id: str) -> Advisory:
    """Worker: the advisor over a launch's stored telemetry, offers from the bundled snapshots."""
    from workbench.core.money.planner import snapshot_offers
    from workbench.core.telemetry.advisor import advise
    from workbench.core.telemetry.trace import trace_from_store

    return advise(trace_from_store(store, launch_id), snapshot_offers())


class AdviceCard(QFrame):
    """One piece of advice; click to highlight its evidence window."""

    clicked = Signal(object)  # the card

    def __init__(self, advice: Advice, start: str, end: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.advice = advice
        self.setObjectName(f"advice-card-{advice.id}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(tr("Click to highlight the evidence in the plots"))
        color = SEVERITY_COLORS.get(advice.severity, "#757575")
        title = QLabel(f'<b style="color:{color}">{advice_title(advice)}</b> '
                       f'<span style="color:{color}">({severity_label(advice.severity)})</span>')
        amount = advice.saving.amount
        saving = QLabel(tr("Saves about {amount} on this run").format(amount=money(amount, advice.saving.currency))
                        if amount is not None else tr("Saving unknown (no price)"))
        saving.setObjectName("advice-saving")
        f = saving.font()
        f.setBold(True)
        saving.setFont(f)
        action = QLabel(advice_action(advice))
        action.setObjectName("advice-action")
        evidence = QLabel(tr("Evidence: {start} – {end}").format(start=start, end=end))
        evidence.setObjectName("advice-evidence")
        evidence.setEnabled(False)  # the palette's muted text colour
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        for w in (title, saving, action, evidence):
            w.setWordWrap(True)
            w.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
            lay.addWidget(w)
        self.set_selected(False)

    def set_selected(self, on: bool) -> None:
        self.setProperty("selected", on)
        self.setLineWidth(2 if on else 1)
        self.setFrameShadow(QFrame.Shadow.Sunken if on else QFrame.Shadow.Raised)
        self.setStyleSheet("QFrame#%s { border: %s; border-radius: 4px; }" % (
            self.objectName(), "2px solid palette(highlight)" if on else "1px solid palette(mid)"))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt)
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self)
        super().mousePressEvent(event)


class AdvicePanel(QWidget):
    """The list of advice for the Monitor's launch (see the module docstring)."""

    highlight = Signal(float, float)  # evidence window (start, end), POSIX seconds
    cleared = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None, refresh_ms: int = REFRESH_MS) -> None:
        super().__init__(parent)
        self.setObjectName("advice-panel")
        self.session = session
        self.instance: Instance | None = None
        self.advisory: Advisory | None = None
        self.cards: list[AdviceCard] = []
        self.selected: AdviceCard | None = None
        self.busy = False
        self._asked_for: str | None = None
        heading = QLabel(tr("Advice"))
        f = heading.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.15)
        heading.setFont(f)
        self.status = QLabel(objectName="advice-status")
        self.status.setWordWrap(True)
        self.list = QWidget()
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(0, 0, 0, 0)
        self.list_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.list)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        lay.addWidget(heading)
        lay.addWidget(self.status)
        lay.addWidget(scroll, 1)
        self.setMinimumWidth(260)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.timer = QTimer(self, interval=refresh_ms, timeout=self.refresh)
        self.set_instance(None)

    # -- data ---------------------------------------------------------------
    def set_instance(self, inst: Instance | None) -> None:
        """Show the advice of ``inst``'s launch (all its nodes); None clears the panel."""
        same = inst is not None and self.instance is not None and inst.launch_id == self.instance.launch_id
        self.instance = inst
        if inst is None:
            self.timer.stop()
            self._show(None)
            self.status.setText(tr("Pick an instance to see advice on its run."))
            return
        if inst.state.active:
            self.timer.start()
        else:
            self.timer.stop()
        if not same:
            self._show(None)
            self.status.setText(tr("Looking at the run's telemetry…"))
            self.refresh()

    def refresh(self) -> None:
        """Ask the advisor again on a worker (skipped while the previous answer is pending)."""
        inst = self.instance
        accounts = self.session.accounts
        if inst is None or accounts is None or self.busy:
            return
        self.busy = True
        self._asked_for = inst.launch_id
        try:
            task = self.session.run(advise_launch, accounts.store, inst.launch_id)
        except RuntimeError:  # the runner was shut down (app closing)
            self.busy = False
            return
        task.then(self._advised).fail(self._failed).finally_(self._done)

    def _done(self) -> None:
        self.busy = False
        if isValid(self) and self.instance is not None and self._asked_for != self.instance.launch_id:
            self.refresh()  # the instance changed while the answer was on its way: ask about the new one

    def _advised(self, advisory: Advisory) -> None:
        if not isValid(self) or self.instance is None or self._asked_for != self.instance.launch_id:
            return
        self._show(advisory)

    def _failed(self, exc: BaseException) -> None:
        if isValid(self):
            log.warning("advice for %s failed: %s", self._asked_for, exc)
            self.status.setText(tr("No advice: {error}").format(error=exc))

    # -- cards --------------------------------------------------------------
    def _show(self, advisory: Advisory | None) -> None:
        keep = self.selected.advice.id if self.selected is not None else None
        self.advisory = advisory
        for c in self.cards:
            c.setParent(None)
            c.deleteLater()
        self.cards = []
        self.selected = None
        if advisory is None:
            self.cleared.emit()
            return
        for a in advisory.advice:
            start, end = a.window
            card = AdviceCard(a, _local(start), _local(end))
            card.clicked.connect(self._card_clicked)
            self.list_layout.insertWidget(self.list_layout.count() - 1, card)
            self.cards.append(card)
        if not advisory.advice:
            self.status.setText(tr("No advice: the GPUs were busy and their memory well used.") if advisory.gpus
                                else tr("Advice needs a few minutes of GPU readings."))
        else:
            self.status.setText(tr("Checked at {time}; click a card to see its evidence.").format(
                time=time.strftime("%H:%M")))
        again = next((c for c in self.cards if c.advice.id == keep), None)
        if again is not None:
            self._select(again)
        else:
            self.cleared.emit()

    def _card_clicked(self, card: AdviceCard) -> None:
        if self.selected is card:
            card.set_selected(False)
            self.selected = None
            self.cleared.emit()
        else:
            self._select(card)

    def _select(self, card: AdviceCard) -> None:
        if self.selected is not None and isValid(self.selected):
            self.selected.set_selected(False)
        self.selected = card
        card.set_selected(True)
        start, end = card.advice.window
        self.highlight.emit(start, end)

    def select(self, advice_id: str) -> AdviceCard | None:
        """Select the card of ``advice_id`` as a click would (keyboard, tests, screenshots)."""
        card = next((c for c in self.cards if c.advice.id == advice_id), None)
        if card is not None and card is not self.selected:
            self._select(card)
        return card


def _local(ts: float) -> str:
    """A stored (UTC) time on the user's local clock: 14:05 today, 2026-01-03 14:05 another day."""
    t = time.localtime(float(ts))
    same_day = time.localtime().tm_yday == t.tm_yday and time.localtime().tm_year == t.tm_year
    return time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", t)
