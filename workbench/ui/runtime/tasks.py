"""TaskRunner: run core calls off the UI thread, deliver results by queued signals.

    runner.run(fn, *args).then(on_ok).fail(on_err).finally_(always)

Reads go to a shared pool; ``lane=`` names a single-worker pool instead, so
the tasks of one lane run one after another in the order given (a profile's
launches and account changes, teardowns, guards, recovery: each its own lane,
:mod:`workbench.ui.runtime.lanes`).  A lane orders nothing beyond its own tasks:
a teardown and a launch of one profile run side by side, as they do when a CLI
process runs beside the app; what orders them is core's
:mod:`~workbench.core.lifecycle.launch_gate`.  Callbacks always run on the Qt
main thread.

Lifetime rules (each learned from a crash):

* Workers never hold a Task: they emit ``(task id, result, error)`` through one
  long-lived relay object, and the runner looks the Task up on the main thread.
  So no Qt or Python object of the UI is ever released on a worker thread.
* After delivery a Task's callbacks are not dropped inside the delivering slot
  but on the next event-loop turn: a callback may hold the last reference to a
  wizard that holds the Session that owns this runner, and deleting those while
  one of their slots is still on the stack crashes PySide.
* The relay signal carries one tuple, never a bare ``None`` argument (PySide6
  6.12.0 lost a reference to None per queued ``object`` argument; we also pin
  PySide6 below 6.12 for a related leak in every Python slot call).
"""

from __future__ import annotations

import itertools
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from workbench.ui.runtime import main_thread_gc
from workbench.ui.runtime.lanes import Lane

log = logging.getLogger("workbench.ui.runtime.tasks")

_graveyard: list[object] = []


def _bury(obj: object) -> None:
    """Keep ``obj`` alive until the event loop turns once more (see the module docstring)."""
    if not _graveyard:
        QTimer.singleShot(0, _graveyard.clear)
    _graveyard.append(obj)


class Task:
    """One background call; attach callbacks with then()/fail()/finally_() (main thread only).

    Who starts it may also set, before it is delivered: ``alive`` (the callbacks are skipped once it
    says False: the widget that asked is gone), ``unhandled`` (called with an error no ``fail``
    callback took, instead of only logging it) and ``after`` (called once the callbacks ran, also
    when they were skipped, with the error or None).
    """

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._ok: list[Callable[[Any], None]] = []
        self._err: list[Callable[[BaseException], None]] = []
        self._always: list[Callable[[], None]] = []
        self.finished = False
        self.alive: Callable[[], bool] | None = None
        self.unhandled: Callable[[BaseException], None] | None = None
        self.after: Callable[[BaseException | None], None] | None = None

    def then(self, cb: Callable[[Any], None]) -> "Task":
        self._ok.append(cb)
        return self

    def fail(self, cb: Callable[[BaseException], None]) -> "Task":
        self._err.append(cb)
        return self

    def finally_(self, cb: Callable[[], None]) -> "Task":
        self._always.append(cb)
        return self

    def _deliver(self, result: Any, exc: BaseException | None) -> None:
        self.finished = True
        alive = self.alive is None or self.alive()
        try:
            if exc is None:
                for cb in self._ok if alive else ():
                    cb(result)
            elif alive and self._err:
                for cb in self._err:
                    cb(exc)
            elif self.unhandled is not None:
                self.unhandled(exc)
            else:
                log.error("unhandled error in task %s: %s", self.name, exc)
        finally:
            try:
                if self.after is not None:
                    self.after(exc)
            finally:
                try:
                    for cb in self._always if alive else ():
                        cb()
                finally:
                    _bury((self._ok, self._err, self._always, self.alive, self.unhandled, self.after))
                    self._ok, self._err, self._always = [], [], []
                    self.alive = self.unhandled = self.after = None


class _Relay(QObject):
    delivered = Signal(object)  # (task id, result, exception)


class TaskRunner(QObject):
    """Owns the worker pools; create one per main window and call shutdown() on close."""

    def __init__(self, parent: QObject | None = None, read_workers: int = 4) -> None:
        super().__init__(parent)
        self._reads = ThreadPoolExecutor(max_workers=read_workers, thread_name_prefix="wb-read")
        self._lanes: dict[Lane, ThreadPoolExecutor] = {}
        self._closed = False
        self._pending: dict[int, Task] = {}
        self._ids = itertools.count(1)
        self._relay = _Relay(self)
        # Always queued: a future that is already done runs its callback in the calling (main)
        # thread, and a direct call would fire before then()/fail() were attached.
        self._relay.delivered.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        # workers must never be the thread that collects (and so destroys) a Qt object: see main_thread_gc
        self._gc_held = main_thread_gc.acquire()

    def run(self, fn: Callable[..., Any], *args: Any, lane: Lane | None = None, **kwargs: Any) -> Task:
        """``fn(*args, **kwargs)`` on the read pool, or on ``lane``'s one worker; a Task to attach callbacks to."""
        if lane is not None and not isinstance(lane, Lane):
            raise TypeError(f"lane must be a workbench.ui.runtime.lanes.Lane, not {lane!r}")
        task = Task(getattr(fn, "__name__", str(fn)))
        if self._closed:
            # the window is closing: a late timer tick gets a task that never fires
            log.debug("task %s dropped: the runner is shut down", task.name)
            return task
        task_id = next(self._ids)
        self._pending[task_id] = task
        pool = self._reads if lane is None else self._lanes.setdefault(
            lane, ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"wb-lane-{lane.name}"))
        relay = self._relay

        def done(fut: Future) -> None:
            if fut.cancelled():  # shutdown(cancel_futures=True): nobody is waiting any more
                return
            exc = fut.exception()
            try:
                relay.delivered.emit((task_id, None if exc else fut.result(), exc))
            except RuntimeError:  # the window (and its relay) is already gone
                log.debug("result of task %d dropped: the runner was deleted", task_id)

        pool.submit(fn, *args, **kwargs).add_done_callback(done)
        return task

    def _deliver(self, payload: tuple[int, Any, BaseException | None]) -> None:
        task_id, result, exc = payload
        task = self._pending.pop(task_id, None)
        if task is None:
            return
        _bury(task)
        task._deliver(result, exc)

    @property
    def pending(self) -> int:
        """Tasks submitted and not yet delivered."""
        return len(self._pending)

    def shutdown(self, wait: bool = False) -> None:
        if self._gc_held:
            self._gc_held = False
            main_thread_gc.release()
        self._closed = True
        self._reads.shutdown(wait=wait, cancel_futures=True)
        for pool in self._lanes.values():
            pool.shutdown(wait=wait, cancel_futures=True)
