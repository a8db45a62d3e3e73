"""The app-side guards in the GUI: run after each refresh, off the UI thread; events become notifications.

:class:`GuardHook` belongs to a :class:`~workbench.ui.runtime.session.Session`
(the session makes it; this module knows the session only as the small
:class:`GuardHost` protocol, so the two modules do not import each other).  After
every snapshot it runs one :meth:`GuardEngine.poll` (``refresh=False``: the
session has just reconciled) on the runner's guards lane, so a teardown a
guard starts never blocks the UI and never overlaps the next poll.  Each
event is passed to ``session.notify`` (tray / status bar) and to the ``event``
signal; a job-finished event with a grace period also opens a non-modal
prompt whose "Keep running" answers the guard (:meth:`keep_running`).

Main thread only, except the engine's poll, which runs on the lane.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance

from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import GUARDS, Lane
from workbench.ui.runtime.tasks import Task

if TYPE_CHECKING:  # the engine and the prompt's QMessageBox load with the first snapshot, after the first paint
    from PySide6.QtWidgets import QMessageBox

    from workbench.core.lifecycle.guards import GuardEngine, GuardEvent
    from workbench.core.providers.accounts import Accounts
    from workbench.core.remote.jobs import RemoteJobs

class GuardHost(Protocol):
    """What the hook needs of its owner (the Session): accounts, a runner, the notify and snapshot signals."""

    accounts: "Accounts | None"
    remote: "RemoteJobs | None"
    notify: SignalInstance  # (title, message, level)
    snapshot_changed: SignalInstance

    def run(self, fn: Callable[..., Any], *args: Any, lane: Lane | None = None, **kwargs: Any) -> Task: ...

    def mutate(self, fn: Callable[..., Any], *args: Any, lane: Lane, **kwargs: Any) -> Task: ...


def event_title(ev: GuardEvent) -> str:
    """A short notification title for a guard event, in the UI language."""
    from workbench.core.lifecycle.guards import BUDGET, FINISHED, IDLE, MAX_RUNTIME, MONTHLY_BUDGET

    if ev.action == "still_billing":
        return tr("Still billing")
    if ev.action == "verified":
        return tr("Billing stopped")
    if ev.action == "error":
        return tr("Guard problem")
    return {
        MAX_RUNTIME: tr("Maximum runtime reached"),
        IDLE: tr("GPUs idle"),
        BUDGET: tr("Budget"),
        MONTHLY_BUDGET: tr("Monthly budget"),
        FINISHED: tr("Job finished"),
    }.get(ev.guard, tr("Guard"))


class GuardHook(QObject):
    """Runs the guards after each refresh and shows what they decide (see the module docstring)."""

    event = Signal(object)  # GuardEvent, on the main thread

    def __init__(self, session: GuardHost, finish_grace_s: float = 600.0,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(session if isinstance(session, QObject) else None)
        self.session = session
        self.finish_grace_s = finish_grace_s
        self.clock = clock
        self.enabled = True
        self.engine: GuardEngine | None = None
        self.prompts: dict[str, QMessageBox] = {}
        self._busy = False
        session.snapshot_changed.connect(self.check)

    def _engine(self) -> GuardEngine:
        if self.engine is None:
            from workbench.core.lifecycle.guards import GuardEngine

            self.engine = GuardEngine(self.session.accounts, clock=lambda: self.clock(),
                                      finish_grace_s=self.finish_grace_s)
        self.engine.finish_grace_s = self.finish_grace_s
        return self.engine

    def check(self, _snap: object = None) -> Task | None:
        """One guard poll on the lane, unless one is still running (then this snapshot is skipped)."""
        if not self.enabled or self._busy or self.session.accounts is None:
            return None
        self._busy = True
        return (self.session.run(self._engine().poll, False, lane=GUARDS).then(self._show)
                .fail(lambda exc: self.session.notify.emit(tr("Guard problem"), str(exc), "error"))
                .finally_(self._done))

    def _done(self) -> None:
        self._busy = False

    def _show(self, events: list[GuardEvent]) -> None:
        from workbench.core.lifecycle.guards import FINISHED

        for ev in events:
            self.session.notify.emit(event_title(ev), ev.message, ev.level)
            self.event.emit(ev)
            if ev.guard == FINISHED and ev.action == "pending":
                self._prompt(ev)
            elif ev.guard == FINISHED and ev.action in ("teardown", "stop"):
                box = self.prompts.pop(ev.launch_id, None)
                if box is not None:
                    box.close()

    def _prompt(self, ev: GuardEvent) -> None:
        """A non-modal question: keep the finished job's machine, or let the guard end it."""
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Question, tr("Job finished"), ev.message)
        box.setObjectName(f"guard-prompt-{ev.launch_id}")
        when = time.strftime("%H:%M", time.localtime(ev.deadline)) if ev.deadline else ""
        box.setInformativeText(tr("It will be ended at {time}. Keep it running to look at it; the maximum runtime, "
                                  "idle and budget guards still apply.").format(time=when))
        keep = box.addButton(tr("&Keep running"), QMessageBox.ButtonRole.AcceptRole)
        keep.setObjectName("guard-keep-running")
        box.addButton(tr("&Let it end"), QMessageBox.ButtonRole.RejectRole)
        box.setModal(False)
        box.buttonClicked.connect(lambda b, lid=ev.launch_id, k=keep: self._answered(lid, b is k))
        self.prompts[ev.launch_id] = box
        box.show()

    def _answered(self, launch_id: str, keep: bool) -> None:
        self.prompts.pop(launch_id, None)
        if keep:
            self.keep_running(launch_id)

    def keep_running(self, launch_id: str) -> Task:
        """Answer the job-finished guard with "keep running" (off the UI thread; a failure is shown)."""
        return (self.session.mutate(self._keep, launch_id, lane=GUARDS)
                .then(lambda _ok: self.session.notify.emit(
                    tr("Keeps running"), tr("{launch} keeps running; end it with Terminate when you are done.")
                    .format(launch=launch_id), "info")))

    def _keep(self, launch_id: str) -> None:
        """Worker thread: the app's guard stands down, and so does the machine's own on_finish."""
        self._engine().keep_running(launch_id)
        remote = self.session.remote
        if remote is not None:
            remote.keep(launch_id)

    def close_prompts(self) -> None:
        for box in self.prompts.values():
            box.close()
        self.prompts.clear()
