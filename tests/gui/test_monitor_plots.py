"""The Monitor's plots repaint only what changed, at pixel resolution, without antialiasing (issue 22)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtWidgets import QGraphicsItem

from workbench.core.telemetry.series import SampleBatch, SeriesSet, SpendCurves
from workbench.ui.monitor import monitor_plots
from workbench.ui.monitor.monitor_plots import MonitorPlots

GPUS = 4
DAY = 24 * 3600


class PaintSpy(QObject):
    """Remembers the region of every paint of the plots' viewport."""

    def __init__(self) -> None:
        super().__init__()
        self.regions: list[QRect] = []

    def eventFilter(self, obj, ev):  # noqa: N802 (Qt)
        if ev.type() == QEvent.Type.Paint:
            self.regions.append(ev.region().boundingRect())
        return False


def _day(end: float) -> tuple[SeriesSet, np.ndarray]:
    """A day of 1 Hz readings of GPUS GPUs, utilization 10-50 %, memory at two levels."""
    ts = end - DAY + np.arange(DAY, dtype=np.float64)
    rng = np.random.default_rng(5)
    sets = SeriesSet()
    sets.add({("gpu", g, "H100"): SampleBatch(ts, rng.uniform(10, 50, DAY).astype(np.float32),
                                              np.where(np.arange(DAY) % 2, 30_000.0, 40_000.0).astype(np.float32),
                                              81_559.0) for g in range(GPUS)})
    return sets, ts


@pytest.fixture
def plots(qtbot):
    p = MonitorPlots()
    qtbot.addWidget(p)
    p.resize(1100, 800)
    p.show()
    qtbot.waitExposed(p)
    spy = PaintSpy()
    p.canvas.viewport().installEventFilter(spy)
    p.spy = spy  # type: ignore[attr-defined]
    return p


def _settle(qtbot, plots) -> None:
    """Let Qt do the paints the last draw asked for (the viewport paints on the event loop): until a
    quarter of a second passes without one."""
    for _ in range(40):
        plots.spy.regions.clear()
        qtbot.wait(250)
        if not plots.spy.regions:
            return
    raise AssertionError("the plots never stopped repainting")


MARKER = QRect(0, 0, 1, 1)


def _paints_up_to_a_marker(qtbot, plots) -> list[QRect]:
    """The regions painted from now until a one-pixel repaint asked for now has been painted.

    Qt merges every repaint asked of the viewport before the marker's into the same paint or an
    earlier one (pyqtgraph's scene changes reach the view through events queued before it), so
    the regions seen by then are all that was asked: the marker alone means nothing else was.
    """
    plots.spy.regions.clear()
    plots.canvas.viewport().update(MARKER)
    qtbot.waitUntil(lambda: any(r.contains(MARKER) for r in plots.spy.regions), timeout=5_000)
    return list(plots.spy.regions)


def test_an_unchanged_picture_is_not_handed_over_or_repainted(qtbot, plots):
    end = time.time()
    sets, ts = _day(end)
    hours = (end - ts[0]) / 3600
    spend = SpendCurves(np.array([ts[0], end]), np.array([0.0, hours]), np.array([ts[0], end]), np.array([1.0, 1.0]))
    plots.draw(sets, spend, ts[0], end)
    assert plots.handed == 2 * GPUS + 2
    x, y = plots.curves[("gpu", 0, "H100")].util.getData()
    assert len(x) <= 2 * plots.columns()  # two points (min, max) per pixel column at most
    assert y.max() == pytest.approx(sets.series[("gpu", 0, "H100")].window().util.max())  # the peaks are kept
    _settle(qtbot, plots)
    handed = plots.handed
    later = end + 0.5  # half a second later the 24 h picture is the same to the pixel
    plots.draw(sets, spend._replace(t=np.array([ts[0], later]), burn_t=np.array([ts[0], later]),
                                    cost=np.array([0.0, hours + 0.5 / 3600])), ts[0], later)  # $1/h
    assert plots.handed == handed  # nothing handed over: decided synchronously in draw()
    assert _paints_up_to_a_marker(qtbot, plots) == [MARKER]  # and nothing asked to repaint before the marker


def test_a_new_peak_repaints_only_the_utilization_plot(qtbot, plots):
    end = time.time()
    sets, ts = _day(end)
    plots.draw(sets, None, ts[0], end)
    _settle(qtbot, plots)
    handed = plots.handed
    sets.add({("gpu", 1, "H100"): SampleBatch(np.array([end + 0.25]), np.array([97.0], np.float32),
                                              np.array([30_000.0], np.float32), 81_559.0)})
    plots.draw(sets, None, ts[0], end + 0.25)
    qtbot.waitUntil(lambda: len(plots.spy.regions) > 0, timeout=5_000)
    assert plots.handed == handed + 1  # the util curve of GPU 1: its memory column did not change
    util_rect = plots.canvas.mapFromScene(plots.util_plot.sceneBoundingRect()).boundingRect()
    assert all(util_rect.adjusted(-2, -2, 2, 2).contains(r) for r in plots.spy.regions), (util_rect, plots.spy.regions)


def test_the_plots_draw_cheaply(plots):
    assert not plots.canvas.renderHints() & plots.canvas.renderHints().Antialiasing
    for plot in (plots.util_plot, plots.mem_plot, plots.cost_plot, plots.burn_plot):
        assert plot.getAxis("left").cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
        assert not plot.getAxis("left").autoSIPrefix
    assert plots.util_legend.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert plots.burn_plot.getAxis("bottom").isVisible() and not plots.util_plot.getAxis("bottom").isVisible()


def test_opengl_is_chosen_by_the_environment_first_then_the_setting(monkeypatch):
    monkeypatch.delenv("WORKBENCH_PLOTS_OPENGL", raising=False)
    assert monitor_plots.use_opengl(False) is False and monitor_plots.use_opengl(True) is True
    assert monitor_plots.use_opengl("true") is True and monitor_plots.use_opengl("false") is False
    assert monitor_plots.use_opengl("auto") is False  # the offscreen platform has no OpenGL: raster
    monkeypatch.setenv("WORKBENCH_PLOTS_OPENGL", "0")
    assert monitor_plots.use_opengl(True) is False
    monkeypatch.setenv("WORKBENCH_PLOTS_OPENGL", "1")
    assert monitor_plots.use_opengl(False) is True


def test_auto_opengl_refuses_a_software_renderer_under_xvfb():
    """Mesa's llvmpipe (what a machine without a GPU has) is slower than the raster engine: auto says no."""
    import subprocess
    import sys

    code = ("from PySide6.QtWidgets import QApplication; app = QApplication([]); "
            "from PySide6.QtGui import QOpenGLContext, QOffscreenSurface; "
            "from workbench.ui.monitor import monitor_plots as m; "
            "c = QOpenGLContext(); ok = c.create(); s = QOffscreenSurface(); s.setFormat(c.format()); s.create(); "
            "c.makeCurrent(s); name = c.functions().glGetString(0x1F01); c.doneCurrent(); "
            "print(ok, name, m.hardware_opengl(), m.use_opengl('auto'))")
    env = dict(__import__("os").environ, QT_QPA_PLATFORM="xcb")
    env.pop("WORKBENCH_PLOTS_OPENGL", None)
    proc = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 800x600x24", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ok, *name, hardware, auto = proc.stdout.split()
    assert ok == "True" and "llvmpipe" in " ".join(name)  # an OpenGL context was made: the platform has one
    assert hardware == "False" and auto == "False"  # but it draws on the CPU, so the plots stay raster
