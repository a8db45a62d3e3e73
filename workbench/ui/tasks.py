"""TaskRunner: run core calls off the UI thread, deliver results by queued signals.

    runner.run(fn, *args).then(on_ok).fail(on_err)

Reads go to a shared pool; mutations of one profile go to that profile's
single-worker lane (``lane="aws/default"``) so a teardown never races its
own launch.  Callbacks always run on the Qt main thread.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, Signal, Slot

log = logging.getLogger("workbench.ui.tasks")


class Task(QObject):
    """One background call; attach callbacks with then()/fail()/finally_()."""

    # One tuple argument, never a bare None: PySide6 (6.12, Python 3.11) loses a reference
    # to None for each queued `object` argument that is None, and after enough
    # deliveries the interpreter aborts with "deallocating None".
    _done = Signal(object)  # (result, exception)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ok: list[Callable[[Any], None]] = []
        self._err: list[Callable[[BaseException], None]] = []
        self._always: list[Callable[[], None]] = []
        self.finished = False
        # Always queued: a future that is already done runs its callback in the calling (main)
        # thread, and a direct call would fire before then()/fail() were attached.
        self._done.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def then(self, cb: Callable[[Any], None]) -> "Task":
        self._ok.append(cb)
        return self

    def fail(self, cb: Callable[[BaseException], None]) -> "Task":
        self._err.append(cb)
        return self

    def finally_(self, cb: Callable[[], None]) -> "Task":
        self._always.append(cb)
        return self

    # (no @Slot: PySide6 6.12 drops a reference to None on each queued call of a decorated slot)
    def _deliver(self, payload: tuple[Any, BaseException | None]) -> None:
        result, exc = payload
        self.finished = True
        try:
            if exc is None:
                for cb in self._ok:
                    cb(result)
            else:
                if not self._err:
                    log.error("unhandled task error: %s", exc)
                for cb in self._err:
                    cb(exc)
        finally:
            for cb in self._always:
                cb()
            self.deleteLater()


class TaskRunner(QObject):
    """Owns the worker pools; create one per main window and call shutdown() on close."""

    def __init__(self, parent: QObject | None = None, read_workers: int = 4) -> None:
        super().__init__(parent)
        self._reads = ThreadPoolExecutor(max_workers=read_workers, thread_name_prefix="wb-read")
        self._lanes: dict[str, ThreadPoolExecutor] = {}
        self._closed = False

    def run(self, fn: Callable[..., Any], *args: Any, lane: str | None = None, **kwargs: Any) -> Task:
        task = Task(self)
        if self._closed:
            # the window is closing: a late timer tick gets a task that never fires
            log.debug("task %s dropped: the runner is shut down", getattr(fn, "__name__", fn))
            return task
        pool = self._reads if lane is None else self._lanes.setdefault(
            lane, ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"wb-lane-{lane}"))

        def done(fut: Future) -> None:
            exc = fut.exception()
            # emit from the worker: the connection is queued to the task's (main) thread
            task._done.emit((None if exc else fut.result(), exc))

        pool.submit(fn, *args, **kwargs).add_done_callback(done)
        return task

    def shutdown(self, wait: bool = False) -> None:
        self._closed = True
        self._reads.shutdown(wait=wait, cancel_futures=True)
        for pool in self._lanes.values():
            pool.shutdown(wait=wait, cancel_futures=True)
