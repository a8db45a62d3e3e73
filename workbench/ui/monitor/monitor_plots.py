"""The Monitor view's pyqtgraph plots: utilization, memory, cumulative spend and burn rate.

Threading: main thread only (pyqtgraph is Qt).  The view decides *when* to
draw (at most 2 Hz); :meth:`MonitorPlots.draw` decides *what* changes:

* Clip to view and downsample to the pixel width: only the window is handed over, peak
  (min/max) decimated to one bucket per pixel column (:func:`peak_decimate`), buckets aligned
  to absolute time and the window moved in whole pixel steps (:func:`pixel_step`), so the
  arrays only change when the picture would.
* Only what changed repaints: a curve whose arrays are the same is not handed to pyqtgraph
  again, and the x and y ranges move only when they really change (the money and memory
  axes with head room), so a new reading in the 24 h view repaints the telemetry plots and
  leaves the spend plots, the axes and their labels alone.
* Cheap paints: no antialiasing (1 px lines on dense data), the axes, their grid lines and
  the legends are cached as pixmaps (re-rendered only when their range or text changes),
  and pyqtgraph's own per-paint downsampling is off (the data already fits the pixels).
* OpenGL where the platform has it in hardware, Qt's raster engine otherwise (:func:`use_opengl`:
  "auto" by default; the ``monitor/opengl`` setting or ``WORKBENCH_PLOTS_OPENGL`` forces either).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.core.telemetry.series import (SeriesKey, SeriesSet, SpendCurves, peak_decimate, pixel_step,
                                             snap_window)

MAX_POINTS = 2000  # kept for callers; the pixel width now bounds the points (2 per column)
MIN_SPAN_S = 30.0
MIN_COLUMNS = 200  # before the first layout the plot's width is not known yet
HEADROOM = 1.25  # a growing y range jumps ahead by this much, so it is not rescaled at every reading
_MB_PER_GB = 1024.0
#: distinct on light and dark backgrounds (a qualitative palette: blue, orange, green, red, …)
SERIES_COLORS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
                 (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))


def series_label(key: SeriesKey) -> str:
    """Legend text naming the GPU index and model (or the MIG slice, or the CPU)."""
    kind, index, name = key
    if kind == "gpu":
        return tr("GPU {index} · {model}").format(index=index, model=name or "?")
    if kind == "mig":
        return tr("MIG {index} · {profile}").format(index=index, profile=name or "?")
    if kind == "cpu":
        return tr("CPU")
    return f"{kind} {index} {name}".strip()


def memory_label(key: SeriesKey, total_mb: float) -> str:
    """The memory plot's legend: a GPU's used memory "of" its size; for a job without a GPU, the job's
    resident memory (RSS), beside (not "of") this computer's RAM, which is not the job's."""
    if key[0] == "cpu":
        if total_mb > 0:
            return tr("Job memory (RSS) · this computer has {total}").format(total=_size(total_mb))
        return tr("Job memory (RSS)")
    return tr("{series} (of {total})").format(series=series_label(key), total=_size(total_mb))


def _size(mb: float) -> str:
    return tr("{n} GB").format(n=f"{mb / _MB_PER_GB:.1f}") if mb >= _MB_PER_GB else tr("{n} MB").format(n=f"{mb:.0f}")


class _Curves:
    """The pyqtgraph items of one series."""

    def __init__(self, util: pg.PlotCurveItem, mem: pg.PlotCurveItem, total: pg.InfiniteLine | None) -> None:
        self.util, self.mem, self.total = util, mem, total


class MonitorPlots(QWidget):
    """Four x-linked plots in one GraphicsLayoutWidget; ``draw()`` replaces what they show."""

    def __init__(self, parent: QWidget | None = None, max_points: int = MAX_POINTS,
                 opengl: bool | str | None = None) -> None:
        super().__init__(parent)
        self.max_points = max_points
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("monitor-plots")
        self.canvas.setAntialiasing(False)  # speed; 1 px lines look fine without it
        self.opengl = use_opengl(opengl)
        if self.opengl:
            self.canvas.useOpenGL(True)
        QVBoxLayout(self).addWidget(self.canvas)
        self.layout().setContentsMargins(0, 0, 0, 0)

        def plot(row: int) -> pg.PlotItem:
            p = self.canvas.addPlot(row=row, col=0, axisItems={"bottom": pg.DateAxisItem(orientation="bottom")})
            p.showGrid(x=False, y=True, alpha=0.2)  # horizontal lines only: each grid line costs a translucent paint
            p.setMenuEnabled(False)
            p.getAxis("left").setWidth(52)  # aligned left edges, so the x-linked plots line up
            p.getViewBox().setAutoVisible(y=True)  # y autorange looks at the visible window only
            for name in ("left", "bottom", "right", "top"):  # the hidden ones follow the view too
                axis = p.getAxis(name)
                axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # re-rendered only on change
                axis.enableAutoSIPrefix(False)  # we scale (MB/GB) ourselves; its label relayout cost every move
            if row < 3:  # x-linked: only the bottom plot shows the time axis (each one costs a paint per move)
                p.hideAxis("bottom")
            return p

        self.util_plot, self.mem_plot, self.cost_plot, self.burn_plot = (plot(r) for r in range(4))
        for row, stretch in enumerate((3, 3, 2, 2)):
            self.canvas.ci.layout.setRowStretchFactor(row, stretch)
        for p in (self.util_plot, self.mem_plot):
            p.setDownsampling(auto=False)  # draw() hands at most 2 points per pixel column already
            p.setClipToView(False)  # and only the window
        for p in (self.mem_plot, self.cost_plot, self.burn_plot):
            p.setXLink(self.util_plot)
        self.util_plot.setYRange(0, 100, padding=0.02)
        self.util_plot.getViewBox().setMouseEnabled(y=False)
        self.util_legend = self.util_plot.addLegend(offset=(-10, 10))
        self.mem_legend = self.mem_plot.addLegend(offset=(-10, 10))
        for legend in (self.util_legend, self.mem_legend):
            legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.cost_curve = _curve(self.cost_plot, pg.mkPen((60, 140, 220), width=2))
        self.burn_curve = _curve(self.burn_plot, pg.mkPen((230, 140, 40), width=2))
        self.budget_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen((220, 60, 60), width=1,
                                                                                 style=Qt.PenStyle.DashLine),
                                           label="", labelOpts={"position": 0.08, "color": (220, 60, 60)})
        self.cost_plot.addItem(self.budget_line, ignoreBounds=True)
        self.budget_line.setVisible(False)
        self.budget: float | None = None
        self.curves: dict[SeriesKey, _Curves] = {}
        self.mem_unit = "MB"
        self._title_text: dict[int, str] = {}
        self._shown: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(curve) → the arrays it holds
        self._x_range: tuple[float, float] | None = None
        self._y_top: dict[int, float] = {}  # id(plot) → the top of its y range
        self.handed = 0  # curves handed new data (tests and benchmarks)
        self._unit_shown = ""
        self.apply_palette()

    # -- look ---------------------------------------------------------------
    def apply_palette(self) -> None:
        """Background and text from the widget's QPalette, so dark mode works."""
        pal = self.palette()
        bg, fg = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        self.canvas.setBackground(bg)
        for p in (self.util_plot, self.mem_plot, self.cost_plot, self.burn_plot):
            for name in ("left", "bottom"):
                ax = p.getAxis(name)
                ax.setPen(fg)
                ax.setTextPen(fg)
            if self._title_text.get(id(p)):
                p.setTitle(self._title_text[id(p)], color=fg)
        for legend in (self.util_legend, self.mem_legend):
            legend.setLabelTextColor(fg)
            legend.setBrush(QColor(bg.red(), bg.green(), bg.blue(), 200))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_palette()
        super().changeEvent(event)

    # -- content ------------------------------------------------------------
    def clear(self) -> None:
        """Forget the series of the previous instance."""
        for c in self.curves.values():
            self.util_plot.removeItem(c.util)
            self.mem_plot.removeItem(c.mem)
            if c.total is not None:
                self.mem_plot.removeItem(c.total)
        self.curves.clear()
        self.util_legend.clear()
        self.mem_legend.clear()
        self.cost_curve.setData([], [])
        self.burn_curve.setData([], [])
        self._shown.clear()
        self._x_range = None
        self._y_top.clear()
        self.set_budget(None, "USD")

    def _titles(self, sets: SeriesSet) -> None:
        kinds = {k[0] for k in sets.series}
        if kinds == {"cpu"}:
            util, mem = tr("CPU utilization (%)"), tr("Memory used by the job (RSS)")
        elif "cpu" in kinds:
            util, mem = tr("Utilization (%)"), tr("Memory used")
        else:
            util, mem = tr("GPU utilization (%)"), tr("GPU memory used")
        self._set_title(self.util_plot, util)
        self._set_title(self.mem_plot, mem)
        unit = tr("GB") if self.mem_unit == "GB" else tr("MB")
        if self._unit_shown != unit:  # a new label re-lays out (and repaints) the whole plot
            self._unit_shown = unit
            self.mem_plot.setLabel("left", unit)

    def _set_title(self, plot: pg.PlotItem, text: str) -> None:
        if self._title_text.get(id(plot)) != text:
            self._title_text[id(plot)] = text
            plot.setTitle(text, color=self.palette().color(QPalette.ColorRole.Text))

    def title(self, plot: pg.PlotItem) -> str:
        """The plain title text of one of the plots (for tests and screenshots)."""
        return self._title_text.get(id(plot), "")

    def _curves_for(self, key: SeriesKey, ordinal: int, total_mb: float) -> _Curves:
        c = self.curves.get(key)
        if c is None:
            color = SERIES_COLORS[ordinal % len(SERIES_COLORS)]
            pen = pg.mkPen(color, width=1)
            util = _curve(self.util_plot, pen, series_label(key))
            mem = _curve(self.mem_plot, pen)
            total = None
            if key[0] != "cpu":  # a GPU's memory size is a real ceiling; the computer's RAM is not the job's
                total = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1,
                                                                             style=Qt.PenStyle.DashLine))
                self.mem_plot.addItem(total)
            c = self.curves[key] = _Curves(util, mem, total)
        label = memory_label(key, total_mb)
        if c.mem.name() != label:
            self.mem_legend.removeItem(c.mem)
            c.mem.opts["name"] = label
            self.mem_legend.addItem(c.mem, label)
        return c

    def columns(self) -> int:
        """Pixel columns of the plots' data area (the x-linked plots share it)."""
        return max(MIN_COLUMNS, int(self.util_plot.getViewBox().width()))

    def draw(self, sets: SeriesSet, spend: SpendCurves | None, start: float, end: float) -> None:
        """Show the window [start, end] of ``sets`` and ``spend`` (main thread); see the module doc."""
        if end - start < MIN_SPAN_S:
            start = end - MIN_SPAN_S
        step = pixel_step(end - start, self.columns())
        lo, hi = snap_window(start, end, step)
        keys = sets.keys()
        windows = {k: sets.series[k].window(lo, hi) for k in keys}
        totals = [sets.series[k].mem_total for k in keys if k[0] != "cpu"]
        peak = max([float(np.nanmax(w.mem)) for w in windows.values() if len(w) and not np.isnan(w.mem).all()]
                   + totals + [0.0])
        self.mem_unit = "GB" if peak >= _MB_PER_GB else "MB"
        scale = 1.0 / _MB_PER_GB if self.mem_unit == "GB" else 1.0
        self._titles(sets)
        for i, key in enumerate(keys):
            w, ring = windows[key], sets.series[key]
            c = self._curves_for(key, i, ring.mem_total)
            self._hand(c.util, *peak_decimate(w.t, w.util, lo, step))
            t, mem = peak_decimate(w.t, w.mem, lo, step)
            self._hand(c.mem, t, mem * scale)
            if c.total is not None and c.total.value() != ring.mem_total * scale:
                c.total.setValue(ring.mem_total * scale)
        if spend is not None and spend.t.size:
            self._hand(self.cost_curve, *_up_to(spend.t, spend.cost, hi, step))
            self._hand(self.burn_curve, *_up_to(spend.burn_t, spend.burn, hi, step))
        else:
            self._hand(self.cost_curve, _EMPTY, _EMPTY)
            self._hand(self.burn_curve, _EMPTY, _EMPTY)
        if (lo, hi) != self._x_range:
            self._x_range = (lo, hi)
            self.util_plot.setXRange(lo, hi, padding=0)
        self._fit(self.mem_plot, peak * scale, fixed=bool(totals) and peak <= max(totals))
        self._fit_cost(spend)
        for plot in (self.util_plot, self.mem_plot, self.cost_plot, self.burn_plot):
            # move the curves now: left to the paint, pyqtgraph moves them while painting, which makes
            # Qt paint everything a second time
            plot.getViewBox().updateMatrix()

    def _hand(self, curve: pg.PlotCurveItem, x: np.ndarray, y: np.ndarray) -> None:
        """Give ``curve`` new arrays unless it holds the same ones (then nothing repaints)."""
        old = self._shown.get(id(curve))
        if old is not None and _same(old[0], x) and _same(old[1], y):
            return
        self._shown[id(curve)] = (x, y)
        curve.setData(x, y)
        self.handed += 1

    def _fit(self, plot: pg.PlotItem, top: float, *, fixed: bool = False, margin: float = 1.08) -> None:
        """y from 0 to ``top`` × ``margin``.  ``fixed``: exactly that (a known ceiling such as a GPU's
        memory size, or a burn rate that changes in steps).  Otherwise the range stays while ``top``
        is within it and above a third of it, and a growing one jumps ahead by :data:`HEADROOM`, so
        a rising spend does not rescale (and repaint) its axis at every poll."""
        want = max(top, 1e-9) * margin
        have = self._y_top.get(id(plot))
        if not fixed:
            if have is not None and have / 3 <= want <= have:
                return
            if have is None or want > have:
                want *= HEADROOM
        if want == have:
            return
        self._y_top[id(plot)] = want
        plot.setYRange(0, want, padding=0)

    def set_budget(self, budget: float | None, currency: str) -> None:
        """Draw the launch's budget as a horizontal line (hidden when there is none)."""
        self.budget = budget
        self.budget_line.setVisible(budget is not None)
        self._set_title(self.cost_plot, tr("Spend ({currency})").format(currency=currency))
        self._set_title(self.burn_plot, tr("Burn rate ({currency}/h)").format(currency=currency))
        if budget is not None:
            self.budget_line.setValue(budget)
            self.budget_line.label.setFormat(tr("Budget {amount}").format(amount=money(budget, currency)))

    def _fit_cost(self, spend: SpendCurves | None) -> None:
        """Money axes start at 0 (a flat burn rate must not look like noise) and show the budget."""
        have = spend is not None and spend.t.size > 0
        top = float(spend.cost.max()) if have else 0.0
        self._fit(self.cost_plot, max(self.budget or 0.0, top, 0.01))
        rate = float(spend.burn.max()) if have and spend.burn.size else 0.0
        self._fit(self.burn_plot, max(rate, 0.01), fixed=True, margin=1.15)

    def has_data(self) -> bool:
        """True when at least one telemetry curve holds points."""
        return any(np.size(c.util.getData()[0]) for c in self.curves.values())


_EMPTY = np.empty(0, np.float64)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, to a millionth of a millionth (a value re-interpolated at the same time may differ in
    its last bit; no pixel can show that)."""
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True))


def _curve(plot: pg.PlotItem, pen: object, name: str | None = None) -> pg.PlotCurveItem:
    """A bare curve item (not a PlotDataItem: that wrapper re-processes the arrays in Python at every
    setData, for features these plots do not use), unsmoothed, broken at NaN (an unreported value)."""
    curve = pg.PlotCurveItem(x=_EMPTY, y=_EMPTY, pen=pen, name=name, antialias=False, connect="finite")
    plot.addItem(curve)
    return curve


def _up_to(t: np.ndarray, v: np.ndarray, end: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """A spend curve whose last point (now) is moved back to the last whole ``step`` before it, its value
    interpolated (both curves are linear between entries): the curve then changes once a pixel column,
    not at every poll."""
    if t.size < 2 or not math.isfinite(t[-1]):
        return t, v
    snapped = math.floor(float(t[-1]) / step) * step
    if not t[-2] < snapped < t[-1]:  # within the first step after the last entry: as it is
        return t, v
    span = float(t[-1] - t[-2])
    value = float(v[-2]) + (float(v[-1]) - float(v[-2])) * ((snapped - float(t[-2])) / span if span > 0 else 1.0)
    return np.r_[t[:-1], snapped], np.r_[v[:-1], value]


#: OpenGL renderers that draw on the CPU: slower than Qt's raster engine for these plots (measured)
SOFTWARE_GL = ("llvmpipe", "softpipe", "swrast", "software", "swiftshader", "basic render")
_probed: list[bool] = []


def use_opengl(setting: bool | str | None = None) -> bool:
    """Whether the plots draw with OpenGL: ``WORKBENCH_PLOTS_OPENGL`` (1/0/auto) first, else ``setting``
    (the ``monitor/opengl`` setting: true, false or auto; None is auto).

    Auto: OpenGL where the platform has it in hardware, Qt's raster engine otherwise.  A software
    OpenGL (Mesa's llvmpipe, as on a machine without a GPU or under Xvfb) is not "having it": with
    64 × 8 GPUs streaming it took two to three times the raster engine's CPU for the same picture
    (6.5 % vs 3.2 % of a core in one run, 8.2 % vs 2.7 % in the latest: `make bench`'s OpenGL rows,
    docs/benchmarks.md).
    """
    flag = os.environ.get("WORKBENCH_PLOTS_OPENGL", "").strip().lower()
    choice = flag or (setting if isinstance(setting, str) else ("auto" if setting is None else str(setting)))
    choice = str(choice).strip().lower()
    if choice in ("1", "true", "yes", "on"):
        return True
    if choice != "auto":
        return False
    if not _probed:
        _probed.append(hardware_opengl())
    return _probed[0]


def hardware_opengl() -> bool:
    """True when an OpenGL context can be made here and its renderer is a GPU's (main thread; ~50 ms once)."""
    from PySide6.QtGui import QGuiApplication, QOffscreenSurface, QOpenGLContext

    if QGuiApplication.platformName() in ("offscreen", "minimal", "vnc"):
        return False
    try:
        context = QOpenGLContext()
        if not context.create():
            return False
        surface = QOffscreenSurface()
        surface.setFormat(context.format())
        surface.create()
        if not context.makeCurrent(surface):
            return False
        try:
            name = str(context.functions().glGetString(0x1F01) or "").lower()  # GL_RENDERER
        finally:
            context.doneCurrent()
    except Exception:  # noqa: BLE001 - no usable OpenGL: the raster engine
        return False
    return bool(name) and not any(s in name for s in SOFTWARE_GL)
