"""While the app's worker threads run, cyclic garbage is collected on the UI thread only.

A collection on a worker that frees a Qt object destroys it there and can deadlock against the UI
thread (Qt's signal/slot mutex vs the interpreter lock; the GUI suite once hung so).  Evidence here:
every collection that starts while a TaskRunner lives starts on the UI thread, also when a worker
makes all the garbage; with the runner shut down, automatic collection is back."""

from __future__ import annotations

import gc
import threading

from workbench.ui.runtime import main_thread_gc
from workbench.ui.runtime.tasks import TaskRunner


class Cycle:
    def __init__(self) -> None:
        self.me = self


def _make_garbage(n: int) -> int:
    for _ in range(n):
        Cycle()
    return n


def test_only_the_ui_thread_collects_while_workers_run(qtbot):
    starts: list[str] = []

    def seen(phase, info):
        if phase == "start":
            starts.append(threading.current_thread().name)

    runner = TaskRunner()
    gc.callbacks.append(seen)
    try:
        assert main_thread_gc.active() and not gc.isenabled()
        done = []
        for _ in range(4):  # far past the young generation's threshold, all made on workers
            runner.run(_make_garbage, 20_000).then(done.append)
        qtbot.waitUntil(lambda: len(done) == 4, timeout=20_000)
        qtbot.waitUntil(lambda: len(starts) >= 1, timeout=5_000)  # the UI thread's timer collected
        assert set(starts) == {threading.main_thread().name}, starts
    finally:
        gc.callbacks.remove(seen)
        runner.shutdown(wait=True)
    assert not main_thread_gc.active() and gc.isenabled()


def test_two_runners_keep_it_until_the_last_one_shuts_down(qtbot):
    a, b = TaskRunner(), TaskRunner()
    a.shutdown()
    assert main_thread_gc.active() and not gc.isenabled()
    b.shutdown()
    assert not main_thread_gc.active() and gc.isenabled()
