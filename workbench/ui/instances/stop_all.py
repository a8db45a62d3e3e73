"""Stop all billing: one click → what bills → confirm → parallel teardown with progress → verified result.

How to open it (toolbar action and tray menu alike)::

    StopAllDialog.open_for(session, parent)    # shows it and starts; re-shows one that is still busy
    dlg = StopAllDialog(session, parent, timeout=600, poll=2.0)
    dlg.start()                                 # open() window-modal, then list what bills

One dialog, four steps:

1. *Looking*: :func:`workbench.core.lifecycle.teardown.inventory` runs on the read pool (a busy bar turns).
2. *Confirm*: every billable instance and leftover per provider/profile with its $/h and the total
   (money only); free jobs on the user's own hardware (this computer, their cluster) listed apart, each
   unticked (they cost nothing: only ticked ones are ended); launches in flight (the teardown waits for them, then ends what they made);
   profiles that could not be listed: "cannot check P: why", with "may still be billing" only when
   the app launched something there.  When nothing bills: "Nothing is billing right now" and Close.
3. *Stopping*: :func:`workbench.core.lifecycle.teardown.teardown` of everything, a change on the teardown lane;
   its :class:`TeardownEvent` s arrive on worker threads and are re-emitted through a queued
   signal, so the table model is only touched on the main thread.
4. *Result*: "0 billable resources remain" (green; profiles that could not be checked but where
   nothing was launched are named beside it) or a red list of what remains with a console link per
   item, and Retry.  In quit mode (``quitting``) the close button quits the app once the result shows.  Then ``session.notify`` ("info" when clean, else "error"); the
   session refreshes (``Session.mutate``).

Closing while the teardown runs does not cancel it (a half-run teardown would leave the bill
unknown): the window hides, the teardown finishes in the background, and the notification
reports the result; ``open_for`` shows the same dialog again.  Closing at any other step simply
closes; a late inventory result for a closed dialog is dropped.
"""

from __future__ import annotations

from __future__ import annotations

import logging
import weakref
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QHBoxLayout, QHeaderView, QLabel, QProgressBar,
                               QPushButton, QStackedWidget, QTableView, QVBoxLayout, QWidget)

from workbench.core.providers.accounts import Accounts
from workbench.core.lifecycle.teardown import (Inventory, TeardownEvent, TeardownReport, hourly_price, inventory,
                                               item_key, teardown)
from workbench.core.money.billing_status import kept_apart
from workbench.ui.common.dialogs import show_error
from workbench.ui.common.format import money, unchecked_text
from workbench.ui.i18n import tr
from workbench.ui.common.icons import icon
from workbench.ui.instances.stop_all_local import LocalJobsBox
from workbench.ui.instances.stop_all_model import COL_STATUS, GREEN, RED, StopAllModel, describe, price_text
from workbench.ui.runtime.session import Session
from workbench.ui.runtime.lanes import TEARDOWN

__all__ = ["GREEN", "RED", "StopAllDialog", "StopAllModel", "teardown_with_links"]

log = logging.getLogger("workbench.ui.instances.stop_all")


class _EventPipe(QObject):
    """Carries TeardownEvents from worker threads to the main thread (queued connection)."""

    arrived = Signal(object)


def teardown_with_links(accounts: Accounts, timeout: float, poll: float, progress,
                        keep: list[str] | tuple[str, ...] = ()) -> tuple[TeardownReport, dict[tuple, str]]:
    """Worker side: tear everything (but the ``keep`` launches) down, then ask each provider for
    console links of what remains.

    Runs on the teardown lane: building a provider may read the keyring, which must not block the UI.
    """
    report = teardown(accounts, None, timeout=timeout, poll=poll, progress=progress, keep=keep)
    links: dict[tuple, str] = {}
    for x in report.remaining:
        try:
            url = accounts.provider(accounts.profile(x.profile)).console_url(x)
        except Exception:  # noqa: BLE001 - a missing link must not hide what remains
            url = None
        if url:
            links[item_key(x)] = url
    return report, links


_open_dialogs: "weakref.WeakKeyDictionary[Session, StopAllDialog]" = weakref.WeakKeyDictionary()


class StopAllDialog(QDialog):
    """The one-click "Stop all billing" flow (see the module docstring for the steps and the API)."""

    #: the teardown's report, each time one finishes (main thread)
    teardown_finished = Signal(object)

    def __init__(self, session: Session, parent: QWidget | None = None, *, timeout: float = 600.0,
                 poll: float = 2.0) -> None:
        super().__init__(parent)
        self.setObjectName("stop-all-dialog")
        self.setWindowTitle(tr("Stop all billing"))
        self.setWindowIcon(icon("stop-billing"))
        self.session = session
        self.timeout, self.poll = timeout, poll
        self.state = "idle"  # idle → loading → confirm | nothing → running → done; closed
        self.inventory: Inventory | None = None
        self.report: TeardownReport | None = None
        self.quitting = False  # opened by Quit → Tear everything down: Close quits once the result shows
        self._generation = 0  # results of an abandoned step are dropped
        self.model = StopAllModel(self)
        self._pipe = _EventPipe(self)
        self._pipe.arrived.connect(self._on_event, Qt.ConnectionType.QueuedConnection)
        self._build()
        self._show_state()

    # -- building ---------------------------------------------------------------
    def _label(self, name: str, text: str = "", wrap: bool = True) -> QLabel:
        lab = QLabel(text)
        lab.setObjectName(name)
        lab.setWordWrap(wrap)
        lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return lab

    def _build(self) -> None:
        self.heading = self._label("stop-all-heading")
        font = self.heading.font()
        font.setBold(True)
        self.heading.setFont(font)

        busy_page = QWidget()
        self.busy = QProgressBar()
        self.busy.setObjectName("stop-all-busy")
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        busy_lay = QVBoxLayout(busy_page)
        busy_lay.addStretch(1)
        busy_lay.addWidget(self._label("stop-all-busy-text", tr("Asking every provider what is billing…")))
        busy_lay.addWidget(self.busy)
        busy_lay.addStretch(1)

        nothing_page = QWidget()
        self.nothing = self._label("stop-all-nothing", tr("Nothing is billing right now"))
        self.nothing.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.nothing.setStyleSheet(f"color: {GREEN}; font-size: 14pt;")
        QVBoxLayout(nothing_page).addWidget(self.nothing)

        table_page = QWidget()
        self.table = QTableView()
        self.table.setObjectName("stop-all-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.listing_errors = self._label("stop-all-listing-errors")
        self.listing_errors.setStyleSheet(f"color: {RED};")
        self.note = self._label("stop-all-note")
        self.progress = QProgressBar()
        self.progress.setObjectName("stop-all-progress")
        self.progress.setFormat(tr("%v of %m done"))
        self.result = self._label("stop-all-result")
        self.remaining_box = QWidget()
        self.remaining_box.setObjectName("stop-all-remaining")
        self.remaining_lay = QVBoxLayout(self.remaining_box)
        self.remaining_lay.setContentsMargins(0, 0, 0, 0)
        table_lay = QVBoxLayout(table_page)
        table_lay.setContentsMargins(0, 0, 0, 0)
        self.local_box = LocalJobsBox()
        self.local_box.changed.connect(self._local_choice_changed)
        self.launching = self._label("stop-all-launching")
        for w in (self.table, self.local_box, self.launching, self.listing_errors, self.note, self.progress,
                  self.result, self.remaining_box):
            table_lay.addWidget(w, 1 if w is self.table else 0)

        self.stack = QStackedWidget()
        self.pages = {"busy": busy_page, "nothing": nothing_page, "table": table_page}
        for page in self.pages.values():
            self.stack.addWidget(page)

        self.stop_button = QPushButton(icon("stop-billing", "#ffffff"), tr("&Stop all billing"))
        self.stop_button.setObjectName("stop-all-confirm")
        self.stop_button.setStyleSheet("QPushButton { color: white; background: #c62828; font-weight: bold; "
                                       "padding: 5px 14px; border-radius: 4px; }"
                                       "QPushButton:hover { background: #b71c1c; }"
                                       "QPushButton:focus { border: 2px solid #ffcdd2; }")
        self.stop_button.clicked.connect(self.confirm)
        self.retry_button = QPushButton(icon("refresh"), tr("&Retry"))
        self.retry_button.setObjectName("stop-all-retry")
        self.retry_button.clicked.connect(self.retry)
        self.close_button = QPushButton()
        self.close_button.setObjectName("stop-all-close")
        self.close_button.clicked.connect(self.reject)
        for b in (self.stop_button, self.retry_button):
            b.setAutoDefault(False)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.retry_button, self.stop_button, self.close_button):
            buttons.addWidget(b)

        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addWidget(self.stack, 1)
        lay.addLayout(buttons)
        self.resize(760, 460)

    # -- opening ------------------------------------------------------------------
    @classmethod
    def open_for(cls, session: Session, parent: QWidget | None = None, **kwargs: Any) -> "StopAllDialog":
        """Show the session's dialog if one is still busy or visible; else open a fresh one and start it."""
        old = _open_dialogs.get(session)
        if old is not None and shiboken6.isValid(old) and (old.running or old.isVisible()):
            old.show()
            old.raise_()
            old.activateWindow()
            return old
        if old is not None and shiboken6.isValid(old):
            old.deleteLater()
        dlg = cls(session, parent, **kwargs)
        _open_dialogs[session] = dlg
        return dlg.start()

    def start(self) -> "StopAllDialog":
        """Open (window-modal, non-blocking) and list what bills in the background."""
        self.open()
        self._generation += 1
        gen = self._generation
        self.state = "loading"
        self._show_state()
        if self.session.accounts is None:
            self._listed(gen, Inventory())
            return self
        (self.session.run(inventory, self.session.accounts)
         .then(lambda inv: self._listed(gen, inv))
         .fail(lambda exc: self._listing_failed(gen, exc)))
        return self

    @property
    def running(self) -> bool:
        return self.state == "running"

    def _current(self, gen: int) -> bool:
        return shiboken6.isValid(self) and gen == self._generation and self.state != "closed"

    # -- step 2: confirm --------------------------------------------------------------
    def _listed(self, gen: int, inv: Inventory) -> None:
        if not self._current(gen):
            return
        self.inventory = inv
        self.model.set_items([x for x in inv.items if not kept_apart(x)])
        self.local_box.set_items([x for x in inv.items if kept_apart(x)])
        self.state = "nothing" if inv.nothing_billing else "confirm"
        self._show_state()

    def _listing_failed(self, gen: int, exc: BaseException) -> None:
        if not self._current(gen):
            return
        self.state = "nothing"
        self._show_state()
        self.nothing.setText(tr("Could not find out what is billing."))
        self.nothing.setStyleSheet(f"color: {RED};")
        show_error(self, exc)

    def _listing_error_text(self) -> str:
        inv = self.inventory
        if inv is None:
            return ""
        return "\n".join(unchecked_text(name, exc, bool(launched)) for name, exc, launched in inv.unchecked)

    def _launching_text(self) -> str:
        inv = self.inventory
        if inv is None or not inv.launching:
            return ""
        return "\n".join(tr("{launch} is starting on {profile}: the teardown waits for it, then ends it").format(
            launch=lid, profile=p.name) for p, lid in inv.launching)

    def _to_stop(self) -> int:
        """How many things the Stop button ends: billing ones, launches in flight, ticked local jobs."""
        inv = self.inventory or Inventory()
        return self.model.rowCount() + len(inv.launching) + len(self.local_box.chosen()) + len(inv.errors)

    def _local_choice_changed(self) -> None:
        if self.state == "confirm":
            self._confirm_texts()
            self.stop_button.setEnabled(self._to_stop() > 0)

    # -- step 3: stop -----------------------------------------------------------------
    def confirm(self) -> None:
        """Start the teardown of everything (also the Retry action).

        Callable at any step, e.g. right after ``start()`` by a caller that already asked
        (the quit dialog): a listing still under way is then dropped.
        """
        if self.running or self.session.accounts is None:
            return
        self._generation += 1
        gen = self._generation
        self.state = "running"
        self.report = None
        ticked = self.local_box.chosen()
        if ticked and self.model.status_of(ticked[0]) is None:  # the ticked local jobs get rows of their own
            self.model.set_items([*self.model.items(), *ticked])
        self.local_box.lock(True)
        self.model.restart()
        self._show_state()
        (self.session.mutate(teardown_with_links, self.session.accounts, self.timeout, self.poll,
                             self._pipe.arrived.emit, self.local_box.kept(), lane=TEARDOWN, parent=self)
         .then(lambda out: self._finished(gen, *out))
         .fail(lambda exc: self._teardown_failed(gen, exc)))

    def retry(self) -> None:
        self.confirm()

    def _on_event(self, ev: TeardownEvent) -> None:
        if shiboken6.isValid(self) and self.running:
            if ev.kind == "waiting":
                self.launching.setText(tr("Waiting for {launch} to finish starting on {profile}…").format(
                    launch=ev.message, profile=ev.profile))
                self.launching.setVisible(True)
            self.model.apply(ev)
            self._update_progress()

    def _update_progress(self) -> None:
        self.progress.setRange(0, max(1, self.model.rowCount()))
        self.progress.setValue(self.model.done_count())

    # -- step 4: result -----------------------------------------------------------------
    def _finished(self, gen: int, report: TeardownReport, links: dict[tuple, str]) -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return
        self.report = report
        self.model.finish(report)
        self.state = "done"
        self._show_state()
        self._show_remaining(report, links)
        unchecked = [unchecked_text(name, exc, report.may_bill(name)) for name, exc in report.errors]
        if report.settled:
            self.session.notify.emit(tr("Billing stopped"), "\n".join([tr("0 billable resources remain"), *unchecked]),
                                     "info")
        else:
            lines = [f"{describe(x)} ({x.provider}/{x.profile})" for x in report.remaining]
            title = tr("Still billing") if report.remaining else tr("May still be billing")
            self.session.notify.emit(title, "\n".join(lines + unchecked), "error" if report.remaining else "warning")
        self.teardown_finished.emit(report)

    def _teardown_failed(self, gen: int, exc: BaseException) -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return
        self.state = "done"
        self._show_state()
        self.result.setText(tr("The teardown could not run; something may still be billing."))
        self.result.setStyleSheet(f"color: {RED}; font-weight: bold;")
        self.retry_button.setVisible(True)
        self.session.notify.emit(tr("Still billing"), tr("The teardown could not run."), "error")
        show_error(self, exc)

    def _show_remaining(self, report: TeardownReport, links: dict[tuple, str]) -> None:
        while self.remaining_lay.count():
            w = self.remaining_lay.takeAt(0).widget()
            if w is not None:
                w.hide()
                w.setParent(None)  # out of the dialog now (and of findChildren), not only when deleted
                w.deleteLater()
        if report.settled:
            self.result.setText(tr("0 billable resources remain"))
            self.result.setStyleSheet(f"color: {GREEN}; font-weight: bold;")
            for name, exc in report.errors:  # nothing of ours there: said, but not as a warning
                self._remaining_row(unchecked_text(name, exc, False), None, color="")
            return
        if report.remaining:
            self.result.setText(tr("{count} billable resource(s) remain:").format(count=len(report.remaining)))
        else:
            self.result.setText(tr("Could not verify everything; something may still be billing:"))
        self.result.setStyleSheet(f"color: {RED}; font-weight: bold;")
        for x in report.remaining:
            self._remaining_row(tr("{thing} on {where}, {price}").format(
                thing=describe(x), where=f"{x.provider}/{x.profile} ({x.region})", price=price_text(x)),
                links.get(item_key(x)))
        for name, exc in report.errors:
            self._remaining_row(unchecked_text(name, exc, report.may_bill(name)), None,
                                color=RED if report.may_bill(name) else "")

    def _remaining_row(self, text: str, url: str | None, color: str = RED) -> None:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lab = self._label("stop-all-remaining-item", "• " + text)
        if color:
            lab.setStyleSheet(f"color: {color};")
        lay.addWidget(lab, 1)
        if url:
            link = QPushButton(icon("open"), tr("Open in &console"))
            link.setObjectName("stop-all-console-link")
            link.setToolTip(url)
            link.setAutoDefault(False)
            link.clicked.connect(lambda _=False, u=url: QDesktopServices.openUrl(QUrl(u)))
            lay.addWidget(link)
        self.remaining_lay.addWidget(row)

    # -- presentation -------------------------------------------------------------------
    def _show_state(self) -> None:
        s = self.state
        page = {"idle": "busy", "loading": "busy", "nothing": "nothing"}.get(s, "table")
        self.stack.setCurrentWidget(self.pages[page])
        self.table.setColumnHidden(COL_STATUS, s == "confirm")
        self.stop_button.setVisible(s == "confirm")
        self.retry_button.setVisible(s == "done" and self.report is not None and not self.report.clean)
        self.progress.setVisible(s in ("running", "done"))
        self.result.setVisible(s == "done")
        self.remaining_box.setVisible(s == "done")
        self.listing_errors.setText(self._listing_error_text() if s == "confirm" else "")
        self.listing_errors.setVisible(bool(self.listing_errors.text()))
        may_bill = bool(self.inventory and any(launched for _, _, launched in self.inventory.unchecked))
        self.listing_errors.setStyleSheet(f"color: {RED};" if may_bill else "")
        self.launching.setText(self._launching_text() if s == "confirm" else self.launching.text() if s == "running"
                               else "")
        self.launching.setVisible(bool(self.launching.text()))
        self.local_box.setVisible(bool(self.local_box.boxes) and s in ("confirm", "running", "done"))
        self.local_box.lock(s != "confirm")
        self.stop_button.setEnabled(s != "confirm" or self._to_stop() > 0)
        done = tr("&Quit") if self.quitting and s == "done" else tr("&Close")
        self.close_button.setText({"loading": tr("&Cancel"), "idle": tr("&Cancel"), "confirm": tr("&Cancel"),
                                   "running": tr("Continue in &background")}.get(s, done))
        if s == "running":
            self.heading.setText(tr("Stopping all billing…"))
            self.note.setText(tr("Closing this window does not stop the teardown; "
                                 "you will be notified when it is finished."))
            self._update_progress()
        elif s == "confirm":
            self._confirm_texts()
        elif s == "done":
            self.heading.setText(tr("Stop all billing: result"))
            self.note.setText("")
            self._update_progress()
        else:
            self.heading.setText(tr("Stop all billing"))
            self.note.setText("")
        self.note.setVisible(bool(self.note.text()))
        default = {"confirm": self.close_button, "done": self.close_button}.get(s)
        self.close_button.setDefault(default is self.close_button)
        (self.stop_button if s == "confirm" else self.close_button).setFocus()

    def _confirm_texts(self) -> None:
        inv = self.inventory or Inventory()
        items = [*self.model.items(), *self.local_box.chosen()]
        if items:
            self.heading.setText(tr("Stop {count} billable thing(s), {rate}/h in total?").format(
                count=len(items), rate=money(sum(hourly_price(x) or 0.0 for x in items))))
        elif inv.launching:
            self.heading.setText(tr("Stop what is starting now?"))
        elif self.local_box.boxes and not inv.errors:
            self.heading.setText(tr("Nothing is billing right now"))
        else:
            self.heading.setText(tr("Nothing billing was found, but not every profile could be listed."))
        note = tr("Machines are terminated and their disks, addresses and other leftovers deleted. "
                  "This cannot be undone.")
        if inv.unpriced:
            note += " " + tr("{count} leftover(s) without a known price are not in the total.").format(
                count=len(inv.unpriced))
        self.note.setText(note)

    # -- closing --------------------------------------------------------------------------
    def reject(self) -> None:
        """Close; while the teardown runs, only hide (it keeps going and notifies when done)."""
        if self.running:
            self.hide()
            return
        if self.state in ("idle", "loading"):
            self.state = "closed"
        super().reject()
