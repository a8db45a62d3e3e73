"""Monitor figures at scale, each in a fresh process on the offscreen Qt platform.

    python -m benchmarks.monitor cpu [WINDOW] | memory | scale MACHINES [WINDOW] | renderer

cpu: 64 machines × 8 GPUs stream telemetry at 1 Hz into the real :class:`TelemetryHub` (a feeder
thread parses the synthetic H100 ×8 ``nvidia-smi`` lines (real format, invented values; each
second with a new random utilization and memory use, so every second changes the picture) per
machine, as the SSH channel threads do, minute averages going to the real store), while the real
:class:`MonitorView` is open on one of them with 24 h of history and the window WINDOW (index of
the view's box: 0 "5 min", 1 "1 hour", 2 "All", the default), polling the hub at its own 1 s rate
and redrawing at its own ≤ 2 Hz.  Prints one JSON object: ``busy`` and ``idle``, process CPU time
(``time.process_time``) per wall second over windows of ``WINDOW_S`` with the telemetry streaming
and with the same window open and nothing streaming (the baseline), interleaved (idle, busy,
busy, idle, …: ``ROUNDS`` of each); for every redraw during the busy windows ``redraw_ms`` (wall:
the view's ``redraw()`` — window, decimation, handing changed curves to pyqtgraph — plus the
paints Qt then really does, only of the regions that changed), ``redraw_cpu_ms`` (the main
thread's CPU time for the same) and ``painted`` (1 when it repainted anything).  Not counted:
SSH decryption of the streams.  Raises when the view never redrew or the feeder failed.
``scale``: the same with MACHINES machines and shorter windows (``SCALE_WINDOW_S``, ``SCALE_ROUNDS``
of each side): the "how cost grows" table (benchmarks/scale.py).

The OpenGL row of `make bench` runs ``cpu`` under Xvfb (the xcb platform, Mesa's OpenGL) once with
``WORKBENCH_PLOTS_OPENGL=1`` and once with ``=0``; ``opengl`` in the output says which path drew,
``renderer`` prints the GL_RENDERER string a context gets there.

memory: RSS (psutil) of a process with the app's monitor view and hub holding 64 × 8 GPUs ×
24 h of history at 1 Hz (the view's rings: 2 h raw + 48 h of minute min/max; the hub's rings:
15 min per GPU); prints ``rss_loaded rss_empty``, the baseline being the same process with the
view open before any history was loaded (`make bench` runs it several times).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MACHINES, GPUS = 64, 8
WINDOW_S = 5.0
ROUNDS = 3
HOURS = 24.0
SCALE_WINDOW_S, SCALE_ROUNDS = 4.0, 2


def _lines() -> list[str]:
    text = (ROOT / "tests" / "fixtures" / "nvidia_smi" / "synthetic" / "h100x8" / "stream.txt").read_text()
    return [ln for ln in text.splitlines() if ln.strip()][:GPUS]


def _varying(lines: list[str], rng: np.random.Generator) -> list[str]:
    """``lines`` with a fresh utilization (0-100 %) and memory use in each, as a busy job's readings
    move: every second changes what the plots show (a constant stream would let them skip repaints)."""
    out = []
    for ln in lines:
        f = [p.strip() for p in ln.split(",")]
        f[3] = str(int(rng.integers(0, 101)))
        f[4] = str(int(rng.integers(20_000, 80_001)))
        out.append(", ".join(f))
    return out


def _setup(window: int = 2):
    """QApplication, a real store and Session, a hub, and a visible MonitorView on machine 0."""
    from types import SimpleNamespace

    from PySide6.QtWidgets import QApplication

    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.store.database import Store
    from workbench.core.telemetry.hub import TelemetryHub
    from workbench.ui.monitor.monitor_view import MonitorView, instance_key
    from workbench.ui.runtime.session import Session

    app = QApplication.instance() or QApplication(["bench"])
    store = Store.open()
    session = Session(Accounts(store))
    hub = TelemetryHub(store)
    session.remote = SimpleNamespace(hub=hub)  # the hub is what the monitor reads of RemoteJobs
    insts = [Instance("aws", "bench", f"i-bench{m:04d}", f"bench-{m}", "us-east-1", "p5.48xlarge",
                      InstanceState.RUNNING, name=f"job-{m}", host=f"198.51.100.{m + 1}", launched_at=time.time())
             for m in range(MACHINES)]
    view = MonitorView(session)
    view.resize(1200, 800)
    view.show()
    view.window_box.setCurrentIndex(window)  # 2, "All": the most points to window and decimate
    view.show_instance(insts[0])
    return app, session, hub, view, insts, instance_key


def _history(view, inst, key_of, hours: float = HOURS) -> None:
    """``hours`` of 1 Hz readings for every GPU of ``inst`` in the view's rings, ending now."""
    from workbench.core.telemetry.series import SampleBatch, SeriesSet

    n = int(hours * 3600)
    ts = time.time() - n + np.arange(n, dtype=np.float64)
    rng = np.random.default_rng(len(view.series))
    sets = view.series.setdefault(key_of(inst), SeriesSet())
    sets.add({("gpu", g, "NVIDIA H100 80GB HBM3"): SampleBatch(ts, rng.uniform(0, 100, n).astype(np.float32),
                                                               rng.uniform(0, 80_000, n).astype(np.float32),
                                                               81_559.0) for g in range(GPUS)})


def _pump(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.002)


def cpu(window: int = 2) -> dict[str, list[float]]:
    from benchmarks.harness import check
    from workbench.core.telemetry.nvidia_smi import parse_line

    app, session, hub, view, insts, key_of = _setup(window)
    _history(view, insts[0], key_of)
    redraws: list[list[float]] = []  # per redraw: [handover s, paint s, paint CPU s of the main thread]
    inner = view.redraw

    def timed_redraw() -> None:
        t, c = time.perf_counter(), time.thread_time()
        inner()
        redraws.append([time.perf_counter() - t, 0.0, time.thread_time() - c])

    def timed_paint(event) -> None:  # the paints Qt actually does (only the regions that changed)
        t, c = time.perf_counter(), time.thread_time()
        paint(event)
        if redraws:
            redraws[-1][1] += time.perf_counter() - t
            redraws[-1][2] += time.thread_time() - c

    view.redraw = timed_redraw
    canvas = view.plots.canvas
    paint = canvas.paintEvent
    canvas.paintEvent = timed_paint
    _pump(app, 2.0)  # first poll, history load, pyqtgraph import and first paint: not steady state
    lines = _lines()
    streaming, stop, failed = threading.Event(), threading.Event(), []

    rng = np.random.default_rng(7)

    def feed() -> None:  # one thread for all machines; the app has one per SSH channel
        try:
            next_at = time.monotonic()
            while not stop.is_set():
                if streaming.is_set():
                    now = time.time()
                    for inst in insts:
                        readings = [r for r in map(parse_line, _varying(lines, rng)) if r is not None]
                        if len(readings) != GPUS:
                            raise RuntimeError(f"{len(readings)} of {GPUS} lines parsed")
                        hub.add(inst.instance_id, readings, now)
                next_at += 1.0
                stop.wait(max(0.0, next_at - time.monotonic()))
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            failed.append(exc)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out: dict[str, list[float]] = {"busy": [], "idle": [], "redraw_ms": [], "redraw_cpu_ms": [], "painted": []}
    for k in range(2 * ROUNDS):
        busy = (k % 4) in (1, 2)  # idle, busy, busy, idle, idle, busy: neither side always first
        (streaming.set if busy else streaming.clear)()
        _pump(app, 1.5)  # settle into the new state
        drawn = len(redraws)
        c0, w0 = time.process_time(), time.perf_counter()
        _pump(app, WINDOW_S)
        out["busy" if busy else "idle"].append((time.process_time() - c0) / (time.perf_counter() - w0))
        if busy:
            done = redraws[drawn:-1]  # the last one's paint may still be pending
            out["redraw_ms"] += [(h + p) * 1000 for h, p, _ in done]
            out["redraw_cpu_ms"] += [c * 1000 for _, _, c in done]
            out["painted"] += [1.0 if p > 0 else 0.0 for _, p, _ in done]
    stop.set()
    feeder.join()
    check(not failed, f"the telemetry feeder failed: {failed[:1]}")
    check(out["redraw_ms"], "the monitor never redrew while telemetry streamed")
    session.runner.shutdown() if hasattr(session.runner, "shutdown") else None
    out["opengl"] = [1.0 if view.plots.opengl else 0.0]  # which path drew: the OpenGL row checks it
    return out


def gl_renderer() -> str:
    """The OpenGL renderer a context gets on this display ('' when none can be made)."""
    from PySide6.QtGui import QOffscreenSurface, QOpenGLContext
    from PySide6.QtWidgets import QApplication

    _app = QApplication.instance() or QApplication(["bench"])
    context = QOpenGLContext()
    if not context.create():
        return ""
    surface = QOffscreenSurface()
    surface.setFormat(context.format())
    surface.create()
    if not context.makeCurrent(surface):
        return ""
    try:
        return str(context.functions().glGetString(0x1F01) or "")  # GL_RENDERER
    finally:
        context.doneCurrent()


def memory() -> tuple[int, int]:
    import psutil

    from workbench.core.telemetry.nvidia_smi import parse_line

    app, session, hub, view, insts, key_of = _setup()
    _pump(app, 1.0)
    _ = view.plots  # pyqtgraph loaded and the plots built, as once anything is shown
    _pump(app, 0.5)
    proc = psutil.Process()
    empty = proc.memory_info().rss
    for inst in insts:
        _history(view, inst, key_of)
    readings = [r for r in map(parse_line, _lines()) if r is not None]
    t0 = time.time() - hub.capacity
    for k in range(hub.capacity):  # the hub's rings full (15 min per GPU)
        for inst in insts:
            hub.add(inst.instance_id, readings, t0 + k)
    view._dirty = True
    drawn = view.redraw_count
    _pump(app, 1.5)  # a redraw of the selected machine's 24 h
    from benchmarks.harness import check

    check(len(view.series) == MACHINES and view.redraw_count > drawn, "the history was not loaded and drawn")
    return proc.memory_info().rss, empty


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="wb-bench-mon-", ignore_cleanup_errors=True) as home:
        os.environ["WORKBENCH_HOME"] = home
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        if argv[:1] == ["cpu"]:
            print(json.dumps(cpu(int(argv[1]) if len(argv) > 1 else 2)), flush=True)
        elif argv[:1] == ["scale"] and len(argv) >= 2:
            global MACHINES, WINDOW_S, ROUNDS
            MACHINES, WINDOW_S, ROUNDS = int(argv[1]), SCALE_WINDOW_S, SCALE_ROUNDS
            print(json.dumps(cpu(int(argv[2]) if len(argv) > 2 else 2)), flush=True)
        elif argv[:1] == ["renderer"]:
            print(json.dumps(gl_renderer()), flush=True)
        elif argv[:1] == ["memory"]:
            print("%d %d" % memory(), flush=True)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    os._exit(0)  # skip interpreter teardown: not part of any figure


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
