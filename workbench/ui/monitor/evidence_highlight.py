"""Shading an advice's evidence window in the Monitor's utilization and memory plots.

Its own module so the Monitor's plots stay as they are: it adds one non-movable
``LinearRegionItem`` to each plot (behind the curves, ignored by auto-range) and moves or hides
it.  Main thread only (pyqtgraph).
"""

from __future__ import annotations

import pyqtgraph as pg

from workbench.ui.monitor.monitor_plots import MonitorPlots

BRUSH = (255, 167, 38, 60)  # amber, translucent: readable on light and dark backgrounds
PEN = (239, 108, 0, 160)


class EvidenceHighlight:
    """One shaded time window across the utilization and memory plots."""

    def __init__(self, plots: MonitorPlots) -> None:
        self.regions: list[pg.LinearRegionItem] = []
        for plot in (plots.util_plot, plots.mem_plot):
            region = pg.LinearRegionItem(values=(0.0, 1.0), movable=False, brush=pg.mkBrush(*BRUSH),
                                         pen=pg.mkPen(*PEN))
            region.setZValue(-10)
            plot.addItem(region, ignoreBounds=True)
            region.hide()
            self.regions.append(region)
        self.window: tuple[float, float] | None = None

    def show(self, start: float, end: float) -> None:
        self.window = (start, end)
        for r in self.regions:
            r.setRegion((start, end))
            r.show()

    def clear(self) -> None:
        self.window = None
        for r in self.regions:
            r.hide()

    @property
    def visible(self) -> bool:
        return any(r.isVisible() for r in self.regions)
