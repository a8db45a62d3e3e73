"""The Monitor view's pyqtgraph plots: utilization, memory, cumulative spend and burn rate.

Threading: main thread only (pyqtgraph is Qt).  The view decides *when* to
draw (at most 2 Hz); :meth:`MonitorPlots.draw` hands pyqtgraph at most
``max_points`` points per curve, min/max-decimated so spikes survive, and
pyqtgraph's own peak downsampling and clip-to-view do the rest on zoom.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.core.telemetry.series import SeriesKey, SeriesSet, SpendCurves, decimate

MAX_POINTS = 2000
MIN_SPAN_S = 30.0
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

    def __init__(self, util: pg.PlotDataItem, mem: pg.PlotDataItem, total: pg.InfiniteLine | None) -> None:
        self.util, self.mem, self.total = util, mem, total


class MonitorPlots(QWidget):
    """Four x-linked plots in one GraphicsLayoutWidget; ``draw()`` replaces what they show."""

    def __init__(self, parent: QWidget | None = None, max_points: int = MAX_POINTS) -> None:
        super().__init__(parent)
        self.max_points = max_points
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("monitor-plots")
        self.canvas.setAntialiasing(False)  # speed; 1 px lines look fine without it
        QVBoxLayout(self).addWidget(self.canvas)
        self.layout().setContentsMargins(0, 0, 0, 0)

        def plot(row: int) -> pg.PlotItem:
            p = self.canvas.addPlot(row=row, col=0, axisItems={"bottom": pg.DateAxisItem(orientation="bottom")})
            p.showGrid(x=False, y=True, alpha=0.2)  # horizontal lines only: each grid line costs a translucent paint
            p.setMenuEnabled(False)
            p.getAxis("left").setWidth(52)  # aligned left edges, so the x-linked plots line up
            p.getViewBox().setAutoVisible(y=True)  # y autorange looks at the visible window only
            return p

        self.util_plot, self.mem_plot, self.cost_plot, self.burn_plot = (plot(r) for r in range(4))
        for row, stretch in enumerate((3, 3, 2, 2)):
            self.canvas.ci.layout.setRowStretchFactor(row, stretch)
        for p in (self.util_plot, self.mem_plot):
            p.setDownsampling(auto=True, mode="peak")
            p.setClipToView(True)
        for p in (self.mem_plot, self.cost_plot, self.burn_plot):
            p.setXLink(self.util_plot)
        self.util_plot.setYRange(0, 100, padding=0.02)
        self.util_plot.getViewBox().setMouseEnabled(y=False)
        self.util_legend = self.util_plot.addLegend(offset=(-10, 10))
        self.mem_legend = self.mem_plot.addLegend(offset=(-10, 10))
        self.cost_curve = self.cost_plot.plot([], [], pen=pg.mkPen((60, 140, 220), width=2))
        self.burn_curve = self.burn_plot.plot([], [], pen=pg.mkPen((230, 140, 40), width=2))
        self.budget_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen((220, 60, 60), width=1,
                                                                                 style=Qt.PenStyle.DashLine),
                                           label="", labelOpts={"position": 0.08, "color": (220, 60, 60)})
        self.cost_plot.addItem(self.budget_line, ignoreBounds=True)
        self.budget_line.setVisible(False)
        self.budget: float | None = None
        self.curves: dict[SeriesKey, _Curves] = {}
        self.mem_unit = "MB"
        self._title_text: dict[int, str] = {}
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
        self.mem_plot.setLabel("left", tr("GB") if self.mem_unit == "GB" else tr("MB"))

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
            util = self.util_plot.plot([], [], pen=pen, name=series_label(key), antialias=False)
            mem = self.mem_plot.plot([], [], pen=pen, name=None, antialias=False)
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

    def draw(self, sets: SeriesSet, spend: SpendCurves | None, start: float, end: float) -> None:
        """Show the window [start, end] of ``sets`` and ``spend`` (main thread)."""
        keys = sets.keys()
        windows = {k: sets.series[k].window(start, end) for k in keys}
        peak = max([float(w.mem.max()) for w in windows.values() if len(w)] +
                   [sets.series[k].mem_total for k in keys if k[0] != "cpu"] + [0.0])
        self.mem_unit = "GB" if peak >= _MB_PER_GB else "MB"
        scale = 1.0 / _MB_PER_GB if self.mem_unit == "GB" else 1.0
        self._titles(sets)
        for i, key in enumerate(keys):
            w, ring = windows[key], sets.series[key]
            c = self._curves_for(key, i, ring.mem_total)
            c.util.setData(*decimate(w.t, w.util, self.max_points))
            t, mem = decimate(w.t, w.mem, self.max_points)
            c.mem.setData(t, mem * scale)
            if c.total is not None:
                c.total.setValue(ring.mem_total * scale)
        if spend is not None and spend.t.size:
            self.cost_curve.setData(spend.t, spend.cost)
            self.burn_curve.setData(spend.burn_t, spend.burn)
        else:
            self.cost_curve.setData([], [])
            self.burn_curve.setData([], [])
        if end - start < MIN_SPAN_S:
            start = end - MIN_SPAN_S
        self.util_plot.setXRange(start, end, padding=0)
        self._fit_cost(spend)

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
        self.cost_plot.setYRange(0, max(self.budget or 0.0, top, 0.01) * 1.08, padding=0)
        rate = float(spend.burn.max()) if have and spend.burn.size else 0.0
        self.burn_plot.setYRange(0, max(rate, 0.01) * 1.15, padding=0)

    def has_data(self) -> bool:
        """True when at least one telemetry curve holds points."""
        return any(np.size(c.util.getData()[0]) for c in self.curves.values())
