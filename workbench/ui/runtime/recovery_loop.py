"""Recovery in the GUI: after each refresh, relaunch interrupted launches, off the UI thread.

:class:`RecoveryHook` belongs to the Session (which makes it; this module knows it only as the
small :class:`RecoveryHost` protocol).  After every snapshot that holds a launch with a recovery
policy it runs one :meth:`RecoveryEngine.poll` on its own lane (``lanes.RECOVERY``), never overlapping the
previous one.  Each event becomes a notification (``session.notify``) and an ``event`` signal; a
relaunch asks the session for a fresh snapshot, whose remote-jobs sync then uploads and starts
the new attempt on a cloud machine.  While the app is closed nothing is relaunched (``workbench
watch`` does it headless); the wizard and the README say so.

Main thread only, except the engine's poll, which runs on the lane.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance

from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import RECOVERY, Lane
from workbench.ui.runtime.tasks import Task

if TYPE_CHECKING:  # the engine (job specs, storage, catalog) loads with the first snapshot, after the first paint
    from workbench.core.lifecycle.recovery import RecoveryEngine, RecoveryEvent
    from workbench.core.providers.accounts import Accounts

class RecoveryHost(Protocol):
    accounts: "Accounts | None"
    notify: SignalInstance  # (title, message, level)
    snapshot_changed: SignalInstance

    def run(self, fn: Callable[..., Any], *args: Any, lane: Lane | None = None, **kwargs: Any) -> Task: ...

    def refresh(self, after_change: bool = False) -> Any: ...


def event_title(ev: RecoveryEvent) -> str:
    return {"relaunched": tr("Job relaunched"), "relaunch_failed": tr("Relaunch failed"),
            "gave_up": tr("Not relaunched"), "not_recovered": tr("Job interrupted")}.get(ev.action, tr("Recovery"))


class RecoveryHook(QObject):
    """Runs the recovery engine after each refresh that has something to recover (see the module docstring)."""

    event = Signal(object)  # RecoveryEvent, on the main thread

    def __init__(self, session: RecoveryHost, clock: Callable[[], float] = time.time) -> None:
        super().__init__(session if isinstance(session, QObject) else None)
        self.session = session
        self.clock = clock
        self.enabled = True
        self.engine: RecoveryEngine | None = None
        self._busy = False
        session.snapshot_changed.connect(self.check)

    def check(self, snap: Any = None) -> Task | None:
        if not self.enabled or self._busy or self.session.accounts is None:
            return None
        launches = getattr(snap, "launches", None)
        if launches is not None and not any((r.spec or {}).get("recovery") for r in launches.values()):
            return None  # nothing in the store asks for recovery: no work, no lane
        if self.engine is None:
            from workbench.core.lifecycle.recovery import RecoveryEngine

            from workbench.core.controller.away import app_claims

            # launches handed to a controller are relaunched by it while it answers, else here (its board's claims)
            self.engine = RecoveryEngine(self.session.accounts, clock=lambda: self.clock(),
                                         claims=app_claims(self.session.accounts, clock=lambda: self.clock()))
        self._busy = True
        return (self.session.run(self.engine.poll, lane=RECOVERY).then(self._show)
                .fail(lambda exc: self.session.notify.emit(tr("Recovery problem"), str(exc), "error"))
                .finally_(self._done))

    def _done(self) -> None:
        self._busy = False

    def _show(self, events: list[RecoveryEvent]) -> None:
        for ev in events:
            self.session.notify.emit(event_title(ev), ev.message, ev.level)
            self.event.emit(ev)
        if any(ev.action == "relaunched" for ev in events):  # only then: a refresh after every poll would loop
            self.session.refresh(after_change=True)
