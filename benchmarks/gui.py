"""GUI figures for `make bench` (each run in a fresh process on the offscreen Qt platform).

    python -m benchmarks.gui start-app | start-bare | gaps | monitor-memory

start-app / start-bare: print seconds from interpreter start to the first paint of the main
window / of a bare PySide6 window with one label (same interpreter, same platform).
gaps: the largest event-loop stall (10 ms QTimer gap recorder) in the real main window while a
cloud whose every call takes 500 ms is refreshed, launched into through the wizard, and torn
down with Stop all billing; prints "largest_ms baseline_ms" where the baseline is the same
recorder's largest gap over an idle second.  Raises when a step does not happen (no first paint,
no offers, the launch not made, Stop all billing not verified clean): a broken flow is never timed.
monitor-memory: bytes held by the monitor's sample rings for 64 instances × 8 GPUs × 24 h at 1 Hz.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]


def _first_paint(make_window) -> float:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["bench"])
    painted: list[float] = []

    class Spy(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802
            if ev.type() == QEvent.Type.Paint and not painted:
                painted.append(time.perf_counter())
            return False

    win = make_window()
    spy = Spy()
    win.installEventFilter(spy)
    win.show()
    deadline = time.monotonic() + 60
    while not painted:
        if time.monotonic() > deadline:
            raise RuntimeError("the window was never painted")
        app.processEvents()
    return painted[0] - T0


def start_bare() -> float:
    def make():
        from PySide6.QtWidgets import QLabel

        return QLabel("Cloud GPU Workbench")

    return _first_paint(make)


def start_app() -> float:
    def make():
        from workbench.app import make_application
        from workbench.core.providers.accounts import Accounts
        from workbench.core.store.database import Store
        from workbench.ui.shell.main_window import MainWindow

        make_application()
        return MainWindow(Accounts(Store.open()), refresh_ms=60_000)

    return _first_paint(make)


def gaps() -> tuple[float, float]:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "plugins"))
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.shell.main_window import MainWindow
    from workbench.ui.instances.stop_all import StopAllDialog

    app = QApplication.instance() or QApplication(["bench"])

    class Creds:
        def get(self, provider, profile):
            return {"account": "bench"}

        def check_backend(self):
            return None

        def backend_name(self):
            return "memory"

    acc = Accounts(Store.open(), entries=discover(), credentials=Creds())
    acc.save_profile(Profile("slow", "fakecloud", "fake-east", settings={"delay": "0.5"}))
    win = MainWindow(acc, refresh_ms=2000)
    win._quitting = True
    win.show()
    largest = [0.0]
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        largest[0] = max(largest[0], now - last[0])
        last[0] = now

    timer = QTimer(interval=10, timeout=tick)

    def pump(cond, what: str, limit: float = 120.0) -> None:
        end = time.monotonic() + limit
        while not cond():
            if time.monotonic() > end:
                raise RuntimeError(f"gave up after {limit:g} s waiting for {what}")
            app.processEvents()
            time.sleep(0.001)

    # idle baseline
    for _ in range(5):
        app.processEvents()
    timer.start()
    last[0] = time.perf_counter()
    end = time.monotonic() + 1.0
    pump(lambda: time.monotonic() > end, "an idle second")
    idle = largest[0]
    largest[0] = 0.0
    last[0] = time.perf_counter()
    # refresh, launch through the wizard, stop all billing — all against the slow cloud
    pump(lambda: win.session.snapshot.taken_at > 0, "the first refresh")
    wiz = win.launch_view.start_wizard(str(ROOT / "resources" / "examples" / "v100-single.yaml"))
    wiz.next()
    pump(lambda: not wiz.offer_page.loading, "the offers")
    wiz.next()
    wiz.next()
    wiz.start_launch() if hasattr(wiz, "start_launch") else wiz.accept()
    pump(lambda: wiz.launched_ok or not wiz.busy(), "the launch")
    if not wiz.launched_ok:
        raise RuntimeError("the wizard's launch failed")
    dlg = StopAllDialog.open_for(win.session, win, timeout=30, poll=0.2)
    pump(lambda: dlg.state in ("confirm", "nothing"), "the stop-all inventory")
    if dlg.state != "confirm":
        raise RuntimeError("Stop all billing found nothing to stop after the launch")
    dlg.confirm()
    pump(lambda: dlg.state == "done", "Stop all billing")
    if dlg.report is None or not dlg.report.clean:
        raise RuntimeError(f"Stop all billing did not end clean: {dlg.report!r}")
    timer.stop()
    win.session.shutdown()
    return largest[0], idle


def main(argv: list[str]) -> int:
    what = argv[0]
    if what in ("start-app", "start-bare"):
        with tempfile.TemporaryDirectory(prefix="wb-bench-gui-", ignore_cleanup_errors=True) as home:
            os.environ["WORKBENCH_HOME"] = home
            print(f"{(start_app if what == 'start-app' else start_bare)():.6f}")
        os._exit(0)  # skip interpreter teardown: not part of the figure
    if what == "gaps":
        with tempfile.TemporaryDirectory(prefix="wb-bench-gui-", ignore_cleanup_errors=True) as home:
            os.environ["WORKBENCH_HOME"] = home
            largest, idle = gaps()
            print(f"{largest * 1000:.3f} {idle * 1000:.3f}")
        os._exit(0)
    if what == "monitor-memory":
        from workbench.core.telemetry.series import benchmark_memory

        print(benchmark_memory())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
