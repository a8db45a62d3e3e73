"""Cyclic garbage collection on the UI thread only, while the app's worker threads run.

Why: CPython runs a collection in whichever thread allocates when a generation's threshold is
crossed.  When that is a worker thread and the garbage holds a Qt object (a PySide wrapper caught in
a reference cycle), the Qt object is destroyed on the worker: ``~QObject`` takes Qt's signal/slot
mutex and then waits for the interpreter lock, while the UI thread, holding the interpreter lock,
waits for that mutex in ``QObject::connect`` — both wait for ever.  Seen here: the GUI suite hung with
the UI thread building the Monitor's plots (``QMenu::actionEvent`` → ``QObject::connect``) while a
``wb-read`` worker's collection, started by a store query, destroyed a QObject.

So while a :class:`~workbench.ui.runtime.tasks.TaskRunner` lives, automatic collection is off and a
timer on the UI thread collects instead, by the interpreter's own thresholds (the young generation
when it is full, an older one when its count is reached): the same collections, on the one thread
Qt objects belong to.  With no runner left, automatic collection is back on.
"""

from __future__ import annotations

import gc
import logging
import threading

log = logging.getLogger("workbench.gc")

TICK_MS = 250
_lock = threading.Lock()
_users = 0
_timer = None  # QTimer on the UI thread while a runner lives


def _collect_due() -> int:
    """Collect the oldest generation whose threshold is reached (-1: none due)."""
    thresholds, counts = gc.get_threshold(), gc.get_count()
    if thresholds[0] <= 0 or counts[0] < thresholds[0]:
        return -1
    generation = 2 if counts[2] >= thresholds[2] and counts[1] >= thresholds[1] else (
        1 if counts[1] >= thresholds[1] else 0)
    gc.collect(generation)
    return generation


def acquire() -> bool:
    """A runner starts (UI thread): collection moves to the UI thread.  False when no Qt event loop
    can run the timer (no QCoreApplication): then automatic collection stays on."""
    global _users, _timer
    from PySide6.QtCore import QCoreApplication, QThread, QTimer

    app = QCoreApplication.instance()
    if app is None or QThread.currentThread() is not app.thread():
        return False
    with _lock:
        _users += 1
        if _users == 1:
            _timer = QTimer(app)
            _timer.setInterval(TICK_MS)
            _timer.timeout.connect(_collect_due)
            _timer.start()
            gc.disable()
            log.debug("automatic garbage collection off; the UI thread collects every %d ms", TICK_MS)
    return True


def release() -> None:
    """A runner (that acquired) shut down: the last one turns automatic collection back on."""
    global _users, _timer
    with _lock:
        _users = max(0, _users - 1)
        if _users or _timer is None:
            return
        _timer.stop()
        _timer.deleteLater()
        _timer = None
        gc.enable()
        log.debug("automatic garbage collection on again")


def active() -> bool:
    """Whether the UI thread does the collecting now."""
    return _timer is not None
