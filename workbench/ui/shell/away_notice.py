""""While you were away" (issue 33): what the accounts' controllers did while the app was closed, and a
controller that does not answer.

The session's controller hook reads the boards when the app opens and then at most once a minute
(``ui.runtime.controller_hook``, on a worker); :class:`AwayNotice` turns each read into words: one notification
summarising the new events (relaunched, gave up, stopped by a guard, finished, and what the attempts cost), a
banner above the views with "Show what happened…" opening :class:`AwayDialog` (every event and every attempt
with its cost), and, when a profile's controller does not answer (``Away.took_over``), a warning that the app
relaunches its launches while it runs (once, until it answers again).  Main thread only.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFrame, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget)

from workbench.ui.common.format import money, plural
from workbench.ui.common.icons import icon
from workbench.ui.i18n import N_, tr

COUNTS = {"relaunched": N_("{n} relaunched"), "gave_up": N_("{n} gave up"), "guard": N_("{n} stopped by a guard"),
          "finished": N_("{n} finished"), "failed": N_("{n} failed")}
ENDS = {"preemption": N_("interrupted"), "failure": N_("failed"), "finished": N_("finished"), "stopped": N_("stopped")}


def event_kind(e: dict[str, Any]) -> str | None:
    """relaunched / gave_up / guard / finished / failed / idle_end for a board event; None: nothing to tell."""
    action, guard = e.get("action"), e.get("guard")
    if action == "idle_end":
        return "idle_end"
    if not guard:
        return {"relaunched": "relaunched", "gave_up": "gave_up", "not_recovered": "failed"}.get(str(action))
    if guard == "finished" and action in ("pending", "notice"):
        return "finished" if e.get("level") == "info" else "failed"
    if action in ("teardown", "stop"):
        return "guard"
    return None


def event_words(e: dict[str, Any]) -> str:
    """One event in the UI language (the controller's own message, in English, is its tooltip)."""
    kind = event_kind(e)
    if kind == "relaunched":
        return tr("relaunched: attempt {n} runs as {id}").format(n=e.get("attempt", "?"), id=e.get("launch_id", ""))
    if kind == "gave_up":
        return tr("not relaunched again after attempt {n}").format(n=e.get("attempt", "?"))
    if kind == "guard":
        return tr("stopped by the {guard} guard").format(guard=e.get("guard", ""))
    if kind == "idle_end":
        return tr("the controller ended itself: nothing to watch")
    return tr("finished") if kind == "finished" else tr("failed")


def attempts_cost(attempts: list[dict[str, Any]]) -> str:
    """What the attempts cost, per currency: ``$4.20`` (``$4.20 + ¥3.00 CNY``)."""
    by: dict[str, float] = {}
    for a in attempts:
        by[str(a.get("currency") or "USD")] = by.get(str(a.get("currency") or "USD"), 0.0) + float(a.get("cost") or 0)
    return " + ".join(money(v, c) for c, v in sorted(by.items())) if by else money(0.0)


def summary(events: list[dict[str, Any]], attempts: list[dict[str, Any]]) -> str:
    """"3 relaunched, 1 finished; the attempts cost $4.20"."""
    counts: dict[str, int] = {}
    for e in events:
        kind = event_kind(e)
        if kind in COUNTS:
            counts[kind] = counts.get(kind, 0) + 1
    parts = [tr(COUNTS[k]).format(n=counts[k]) for k in COUNTS if counts.get(k)]
    text = tr(", ").join(parts) if parts else tr("the controller kept watching")
    if attempts:
        text += tr("; ") + plural(len(attempts), N_("1 attempt cost {cost}"), N_("{n} attempts cost {cost}")).format(
            n=len(attempts), cost=attempts_cost(attempts))
    return text


def silent_words(profile: str) -> str:
    return tr("The controller of {profile} does not answer; the app relaunches its launches while it runs.").format(
        profile=profile)


class AwayDialog(QDialog):
    """Every event the controllers reported and every attempt with its cost."""

    def __init__(self, events: list[dict[str, Any]], attempts: list[dict[str, Any]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("away-dialog")
        self.setWindowTitle(tr("While you were away"))
        self.resize(900, 480)
        self.events = QTableWidget(0, 4, objectName="away-events")
        self.events.setHorizontalHeaderLabels([tr("When"), tr("Profile"), tr("Launch"), tr("What happened")])
        for e in events:
            self._row(self.events, (time.strftime("%Y-%m-%d %H:%M", time.localtime(float(e.get("ts") or 0))),
                                    str(e.get("profile") or ""), str(e.get("root_id") or e.get("launch_id") or ""),
                                    event_words(e)), tip=str(e.get("message") or ""))
        self.attempts = QTableWidget(0, 5, objectName="away-attempts")
        self.attempts.setHorizontalHeaderLabels([tr("Launch"), tr("Attempt"), tr("Machine"), tr("How it ended"),
                                                 tr("Cost")])
        for a in attempts:
            machine = " · ".join(str(x) for x in (a.get("instance_type"), a.get("region")) if x)
            if a.get("spot"):
                machine += " " + tr("(spot)")
            end = a.get("end_reason")
            self._row(self.attempts, (str(a.get("root_id") or ""), str(a.get("attempt") or ""), machine or "–",
                                      tr(ENDS[end]) if end in ENDS else (end or tr("running")),
                                      money(float(a.get("cost") or 0), str(a.get("currency") or "USD"))),
                      tip=str(a.get("detail") or ""))
        for t in (self.events, self.attempts):
            t.verticalHeader().setVisible(False)
            t.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a list to read: no current cell framed on opening
            t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            t.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(tr("What the controllers did:")))
        lay.addWidget(self.events, 1)
        lay.addWidget(QLabel(tr("Every attempt and what it cost:")))
        lay.addWidget(self.attempts, 1)
        lay.addWidget(buttons)

    @staticmethod
    def _row(table: QTableWidget, cells: tuple[str, ...], tip: str = "") -> None:
        row = table.rowCount()
        table.insertRow(row)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if tip:
                item.setToolTip(tip)
            table.setItem(row, col, item)


class AwayNotice(QObject):
    """The notification, the banner (:attr:`banner`, placed by the main window) and the dialog."""

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.parent_widget = parent
        self.events: list[dict[str, Any]] = []  # every new event seen in this session, oldest first
        self.attempts: dict[tuple[str, str], dict[str, Any]] = {}  # (root, launch id) → the latest row
        self.silent: set[str] = set()  # profiles whose controller was last found not answering
        self.dialog: AwayDialog | None = None
        self.banner = QFrame(objectName="away-banner")
        self.banner.setStyleSheet("#away-banner { background: rgba(33, 150, 243, 0.14); "
                                  "border: 1px solid #64a0d8; border-radius: 4px; }")
        self.icon = QLabel()
        self.text = QLabel(objectName="away-text", wordWrap=True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = QPushButton(tr("Show what happened…"), objectName="away-details")
        self.details.clicked.connect(self.open_dialog)
        close = QToolButton(objectName="away-close", text="✕", autoRaise=True)
        close.setToolTip(tr("Hide"))
        close.clicked.connect(self.banner.hide)
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(8, 4, 4, 4)
        row.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.text, 1)
        row.addWidget(self.details)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.banner.hide()
        session.controller.caught_up.connect(self.show_found)

    def show_found(self, found: list[Any]) -> None:
        """One read of the boards (a list of ``away.Away``): notify what is new, warn of a silent controller."""
        new = [{**e, "profile": e.get("profile") or a.profile} for a in found for e in a.events]
        for a in found:
            for row in a.attempts:
                self.attempts[(str(row.get("root_id")), str(row.get("launch_id")))] = row
        lines = []
        if new:
            self.events.extend(new)
            text = summary(new, list(self.attempts.values()))
            level = "warning" if any(event_kind(e) in ("gave_up", "failed") for e in new) else "info"
            self.session.notify.emit(tr("While you were away"), text, level)
            lines.append(tr("While you were away: {summary}").format(summary=text))
        silent = {a.profile for a in found if a.took_over}
        for profile in sorted(silent - self.silent):
            self.session.notify.emit(tr("Controller does not answer"), silent_words(profile), "warning")
        changed, self.silent = silent != self.silent, silent
        lines += [silent_words(p) for p in sorted(silent)]
        if not new and not changed:
            return  # nothing new: a banner the user hid stays hidden
        if not lines:
            self.banner.hide()
            return
        self.icon.setPixmap(icon("warning" if silent else "finished").pixmap(20, 20))
        self.text.setText("\n".join(lines))
        self.details.setVisible(bool(self.events))
        self.banner.show()

    def open_dialog(self) -> AwayDialog:
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = AwayDialog(self.events, list(self.attempts.values()), self.parent_widget)
        self.dialog.open()
        return self.dialog
