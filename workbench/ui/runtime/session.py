"""The GUI's shared state: one refresh loop, one snapshot, signals for every view.

Views never call providers themselves for the instance list: they listen to
``snapshot_changed`` and ask the session to ``refresh()``.  The refresh runs
on the TaskRunner's read pool; the timer skips a tick while one is running and
backs off (doubling up to 5 minutes) while providers answer with
TransientError, returning to the normal interval after a success.

A change (launch, teardown, stop, save or remove a profile, extend…) goes through
:meth:`Session.mutate`, not ``run``: in its lane, off the UI thread, then a refresh
so every view sees it, and its error in a dialog unless the caller handles it.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from PySide6.QtCore import QObject, QTimer, Signal
from shiboken6 import isValid

from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import TransientError, WorkbenchError
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.remote.kinds import is_queued, is_remote
from workbench.core.lifecycle.outcome import guard_endings, relaunches
from workbench.core.money.billing_status import launched_on, paying, running_here
from workbench.core.money.spend import burn_rate, spend_by_instance, start_of_today
from workbench.core.store.database import LaunchRecord
from workbench.ui.common.format import state_label
from workbench.ui.i18n import tr
from workbench.ui.runtime.guard_loop import GuardHook
from workbench.ui.runtime.lanes import Lane
from workbench.ui.runtime.settings import UiSettings
from workbench.ui.runtime.tasks import Task, TaskRunner

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from workbench.core.remote.job import JobEvent
    from workbench.core.remote.jobs import RemoteJobs

log = logging.getLogger("workbench.ui.runtime.session")

MAX_BACKOFF_MS = 5 * 60_000
#: the first refresh waits this long, so its imports (plugins, SDK modules) on a worker thread do
#: not compete with the main thread for the GIL while the window paints for the first time
FIRST_REFRESH_DELAY_MS = 150
GUARD_ENDINGS_S = 30 * 86400  # how far back a guard's teardown still explains a job's end


@dataclass(frozen=True)
class Snapshot:
    """What the app knows after one refresh (immutable; shared by all views)."""

    instances: tuple[Instance, ...] = ()
    launches: dict[str, LaunchRecord] = field(default_factory=dict)
    spend: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (provider, profile, id) → total
    spend_today: float = 0.0
    errors: tuple[tuple[str, WorkbenchError], ...] = ()
    taken_at: float = 0.0
    #: profiles in ``errors`` where the app launched something that may still bill (so: "may still be billing")
    may_bill: frozenset[str] = frozenset()
    #: launch id → why a guard tore it down or stopped it (the job's outcome reads "stopped by a guard")
    guard_ended: Mapping[str, str] = field(default_factory=dict)
    #: launch id → (why recovery ended it, the attempt it started next): "interrupted · relaunched as attempt 2"
    relaunched: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    #: launch id (every attempt) → the profile whose controller watches it while this computer is off
    watched: Mapping[str, str] = field(default_factory=dict)
    #: the launch ids of the accounts' controllers (their machine is no job of the user's)
    controllers: frozenset[str] = frozenset()

    @property
    def billable(self) -> list[Instance]:
        """Every instance that may bill, free Local jobs included (see ``paying`` for money)."""
        return [i for i in self.instances if i.state.billable]

    @property
    def paying(self) -> list[Instance]:
        """The instances that cost money now: what the badge, the tray and the quit guard count."""
        return paying(self.instances)

    @property
    def running_here(self) -> list[Instance]:
        """Jobs alive on this computer."""
        return running_here(self.instances)

    @property
    def burn_rate(self) -> float:
        return burn_rate(self.instances)

    def spend_of(self, inst: Instance) -> float:
        return self.spend.get((inst.provider, inst.profile, inst.instance_id), 0.0)


def take_snapshot(accounts: Accounts, profiles=None) -> Snapshot:
    """Reconcile with the providers and read the store (runs on a worker thread)."""
    from workbench.core.lifecycle.reconcile import reconcile  # the first refresh loads it, off the UI thread

    result = reconcile(accounts, profiles)
    store = accounts.store
    now = time.time()
    ledger = store.ledger()
    return Snapshot(
        instances=tuple(store.list_instances()),
        launches={r.launch_id: r for r in store.list_launches()},
        spend=spend_by_instance(ledger, now),
        spend_today=sum(spend_by_instance(ledger, now, since=start_of_today(now)).values()),
        errors=tuple(result.errors),
        taken_at=now,
        may_bill=frozenset(name for name, _ in result.errors if launched_on(store, name)),
        guard_ended=guard_endings(store.guard_events(since=now - GUARD_ENDINGS_S)),
        relaunched=relaunches(store.all_attempts()),
        **controller_view(store),
    )


def controller_view(store: Any) -> dict[str, Any]:
    """The snapshot's ``watched`` and ``controllers`` (worker thread: the controller's modules load here)."""
    from workbench.core.controller.deploy import is_controller
    from workbench.core.controller.handover import handed

    watched: dict[str, str] = {}
    for root, profile in handed(store).items():
        watched[root] = profile
        watched.update((a.launch_id, profile) for a in store.attempts(root))
    return {"watched": watched,
            "controllers": frozenset(r.launch_id for r in store.list_launches() if is_controller(r))}


def prepare_remote(snap: Snapshot) -> None:
    """Load off the UI thread what :meth:`Session._sync_remote` needs for ``snap``: which plugins run jobs
    over SSH (an entry-point scan, once per provider) and, once a cloud machine has an address, the SSH,
    telemetry and job modules (~50 ms of imports the UI thread would otherwise stall on)."""
    remote = [is_remote(i) for i in snap.instances]  # every provider's answer, now: it is cached per provider
    for inst, r in zip(snap.instances, remote):
        if r:
            is_queued(inst)  # (and whether it is a scheduler's batch job: the same scan, cached)
    if any(r and i.host for r, i in zip(remote, snap.instances)):
        import workbench.core.remote.job  # noqa: F401
        import workbench.core.remote.jobs  # noqa: F401


_FREEZE_STEP = 20  # modules loaded since the last freeze that make the next one worth it
_frozen_at = [0]
_freeze_lock = threading.Lock()


def freeze_loaded_modules() -> bool:
    """Move every object alive now out of the cyclic collector's reach (``gc.freeze``) once the app has
    loaded another batch of modules (a cloud's SDK on its first refresh or launch, the views preloaded).

    Why: the collector's full passes walk every tracked object while holding the interpreter lock; with
    Qt, botocore's models and the Azure SDK loaded that is a million objects and 70–160 ms on this
    machine, during which the UI thread cannot run one line (measured: the longest event-loop stalls of
    `make bench`'s stall row were these passes).  Frozen objects are skipped by every later pass, so those
    cost what the objects made since then cost.  Module-level objects live until exit anyway; the price
    is that garbage cycles that exist at the moment of a freeze are never collected (a few per freeze,
    and freezes happen only when modules were added: a handful per session).  Call from any thread."""
    with _freeze_lock:
        loaded = len(sys.modules)
        if loaded - _frozen_at[0] < _FREEZE_STEP:
            return False
        _frozen_at[0] = loaded
        gc.freeze()
        return True


class Session(QObject):
    """Owns the accounts, the TaskRunner, the refresh loop and the latest snapshot."""

    snapshot_changed = Signal(object)  # Snapshot
    refresh_started = Signal()
    refresh_failed = Signal(object)  # exception
    #: (title, message, level) for the tray / notifications; level: "info", "warning", "error"
    notify = Signal(str, str, str)
    #: a remote job's JobEvent (emitted from its worker thread; delivered queued on the main thread)
    remote_event = Signal(object)

    def __init__(self, accounts: Accounts | None, settings: UiSettings | None = None,
                 runner: TaskRunner | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.accounts = accounts
        self.settings = settings or UiSettings()
        self.runner = runner or TaskRunner(self)
        self.snapshot = Snapshot()
        self.refreshing = False
        self._refresh_again = False  # a change ended while a refresh ran: that refresh may predate it
        self._error_boxes: list[Any] = []  # errors of changes whose window was gone, shown on their own
        self.interval_ms = self.settings.refresh_seconds * 1000
        self.backoff_ms = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(False)
        self.timer.timeout.connect(self.refresh)
        self._snapshot_fn: Callable[[Accounts], Snapshot] = take_snapshot
        #: remote jobs and GPU streams of cloud machines (core, threads of its own); made on first need
        self.remote: "RemoteJobs | None" = None
        self.remote_event.connect(self._on_remote_event)
        self._announced_exits: set[str] = set()  # launches whose end was announced (once each)
        # every teardown of the app (Stop all, Terminate, guards) cleans ssh up: installed before the
        # first task (every teardown runs as one), not before the first paint
        self._ssh_cleanup = accounts is None
        # app-side guards (budget, runtime, idle, finished) after each refresh
        self.guards = GuardHook(self)
        # recovery: relaunch interrupted launches whose spec asks for it, after each refresh
        from workbench.ui.runtime.recovery_loop import RecoveryHook

        self.recovery = RecoveryHook(self)
        # the accounts' controllers: "while you were away", handing launches over, creating and ending them
        from workbench.ui.runtime.controller_hook import ControllerHook

        self.controller = ControllerHook(self)

    # -- refresh loop -------------------------------------------------------
    first_refresh_delay_ms = FIRST_REFRESH_DELAY_MS

    def start(self, interval_ms: int | None = None) -> None:
        if interval_ms is not None:
            self.interval_ms = interval_ms
        if self.accounts is None:
            return
        self.timer.start(self.interval_ms)
        QTimer.singleShot(self.first_refresh_delay_ms, self.refresh)

    def stop(self) -> None:
        self.timer.stop()

    def refresh(self, after_change: bool = False) -> Task | None:
        """Start a refresh unless one is running: then this tick is skipped or, ``after_change``, another
        refresh starts when it ends (what it reads may predate the change)."""
        if self.accounts is None:
            return None
        if self.refreshing:
            self._refresh_again = self._refresh_again or after_change
            return None
        self.refreshing = True
        self.refresh_started.emit()
        self._install_ssh_cleanup()
        return (self.runner.run(self._take_snapshot, self.accounts)
                .then(self._refreshed).fail(self._refresh_error).finally_(self._refresh_done))

    def _take_snapshot(self, accounts: Accounts) -> Snapshot:
        """The snapshot, and what handing it to the remote-jobs manager will need, both on the worker."""
        freeze_loaded_modules()  # the app's own modules, before a cloud SDK's imports make the heap grow
        snap = self._snapshot_fn(accounts)
        prepare_remote(snap)
        freeze_loaded_modules()
        return snap

    def _refresh_done(self) -> None:
        self.refreshing = False
        if self._refresh_again:
            self._refresh_again = False
            self.refresh()

    def _refreshed(self, snap: Snapshot) -> None:
        transient = [e for _, e in snap.errors if isinstance(e, TransientError)]
        self._set_backoff(bool(transient) and len(transient) == len(snap.errors))
        previous, self.snapshot = self.snapshot, snap
        self._announce_changes(previous, snap)
        self._sync_remote(snap)
        self.snapshot_changed.emit(snap)

    # -- remote jobs ----------------------------------------------------------
    def _sync_remote(self, snap: Snapshot) -> None:
        """Hand running cloud machines to the remote-jobs manager (non-blocking: it starts threads)."""
        if self.accounts is None or (self.remote is None and not any(is_remote(i) and i.host
                                                                     for i in snap.instances)):
            return
        if self.remote is None:
            from workbench.core.remote.job import JobOptions  # SSH, telemetry and numpy: only once a cloud machine runs
            from workbench.core.remote.jobs import RemoteJobs

            # The finish guard (ui.runtime.guard_loop) ends machines after its grace, with "keep running".
            self.remote = RemoteJobs(self.accounts, on_event=self.remote_event.emit,
                                     options=JobOptions(teardown_by_guards=True))
        # a controller's install runs on its own once started (core.controller.deploy.start): not followed here
        self.remote.sync([i for i in snap.instances if i.launch_id not in snap.controllers], snap.launches)

    def _on_remote_event(self, ev: "JobEvent") -> None:
        if ev.kind == "exit":
            self._announce_exit(ev.launch_id, ev.launch_id, ev.data.get("exit_code"))
        elif ev.kind == "error":
            self.notify.emit(tr("Remote job problem"), f"{ev.launch_id}: {ev.message}", "error")
        elif ev.kind == "warning" and ev.phase == "kept":
            self.notify.emit(tr("Still billing"), ev.message, "warning")
        elif ev.kind == "warning" and ev.phase == "interrupted":
            self.notify.emit(tr("Spot machine taken back"), f"{ev.launch_id}: {ev.message}", "warning")

    def _announce_changes(self, old: Snapshot, new: Snapshot) -> None:
        """Notify when a machine became ready or a job ended since the last refresh."""
        if not old.taken_at:
            return  # the first snapshot is the starting point, not news
        before = {(i.provider, i.profile, i.instance_id): i for i in old.instances}
        for inst in new.instances:
            prev = before.get((inst.provider, inst.profile, inst.instance_id))
            name = inst.name or inst.instance_id
            if prev is not None and prev.state != InstanceState.RUNNING and inst.state == InstanceState.RUNNING:
                self.notify.emit(tr("Machine ready"), tr("{name} is running.").format(name=name), "info")
            if prev is not None and prev.state.active and not inst.state.active:
                if inst.exit_code is not None:
                    self._announce_exit(inst.launch_id, name, inst.exit_code)
                elif inst.state.billable:
                    self.notify.emit(tr("Machine stopped"), tr("{name} is {state} and may still bill.").format(
                        name=name, state=state_label(inst.state)), "warning")

    def _announce_exit(self, launch_id: str, name: str, code: Any) -> None:
        """One notification per launch: "Job finished" (exit 0) or "Job failed" (any other code)."""
        if launch_id in self._announced_exits:
            return
        self._announced_exits.add(launch_id)
        if code == 0:
            self.notify.emit(tr("Job finished"), tr("{name} finished (exit code 0).").format(name=name), "info")
        else:
            self.notify.emit(tr("Job failed"), tr("{name} failed with exit code {code}.").format(
                name=name, code=code), "warning")

    def _refresh_error(self, exc: BaseException) -> None:
        self._set_backoff(isinstance(exc, TransientError))
        log.warning("refresh failed: %s", exc)
        self.refresh_failed.emit(exc)

    def _set_backoff(self, transient: bool) -> None:
        if transient:
            self.backoff_ms = min(MAX_BACKOFF_MS, max(self.interval_ms, self.backoff_ms * 2 or self.interval_ms * 2))
        else:
            self.backoff_ms = 0
        interval = self.backoff_ms or self.interval_ms
        if self.timer.isActive() and self.timer.interval() != interval:
            self.timer.setInterval(interval)

    # -- helpers for views --------------------------------------------------
    def run(self, fn: Callable[..., Any], *args: Any, lane: Lane | None = None, **kwargs: Any) -> Task:
        """Run ``fn`` off the UI thread (see TaskRunner.run); for a change use :meth:`mutate`."""
        self._install_ssh_cleanup()
        return self.runner.run(fn, *args, lane=lane, **kwargs)

    def mutate(self, fn: Callable[..., Any], *args: Any, lane: Lane, parent: "QWidget | None" = None,
               **kwargs: Any) -> Task:
        """Change something (``fn(*args, **kwargs)``) in ``lane``, off the UI thread; then refresh.

        The refresh follows success and failure alike (a failed teardown may have ended part of what it
        was given), after the task's ``then``/``fail`` callbacks; a refresh already running is followed by
        another.  An error no ``fail`` callback handles is shown in an error dialog over ``parent``.  With
        a ``parent``, the callbacks are skipped once it has been deleted (the refresh still comes, and an
        error is then shown on its own).  Attach callbacks to the returned Task as with :meth:`run`.
        """
        task = self.run(fn, *args, lane=lane, **kwargs)
        if parent is not None:
            task.alive = lambda: isValid(parent)
        task.unhandled = lambda exc: self._show_unhandled(exc, parent)
        task.after = lambda _exc: self._refresh_after_change()
        return task

    def _show_unhandled(self, exc: BaseException, parent: "QWidget | None") -> None:
        from workbench.ui.common.dialogs import show_error  # QMessageBox: loaded on the first error, not at start

        log.warning("change failed, nobody handled it: %s", exc)
        owner = parent if parent is not None and isValid(parent) else None
        box = show_error(owner, exc)
        if owner is None:  # nobody owns a box without a parent: keep it alive until it is closed
            self._error_boxes.append(box)
            box.finished.connect(lambda _result, b=box: self._error_boxes.remove(b))

    def _refresh_after_change(self) -> None:
        if not isValid(self):  # the window closed (and took the session) while the change ran on
            log.info("session already gone; no refresh after the change")
            return
        self.refresh(after_change=True)

    def _install_ssh_cleanup(self) -> None:
        if not self._ssh_cleanup:
            self._ssh_cleanup = True
            from workbench.core.remote import ssh_cleanup

            ssh_cleanup.install()

    def shutdown(self) -> None:
        self.timer.stop()
        self.guards.close_prompts()
        self.controller.close()
        if self.remote is not None:
            self.remote.stop_all()  # the jobs go on on their machines; we only stop following
        self.runner.shutdown(wait=False)
