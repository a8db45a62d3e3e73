"""The Monitor's view of a multi-node launch: a node selector and an all-nodes overview.

:class:`NodeSelector` is the "Node" combo box: "All nodes (overview)" then each node of the
selected instance's launch (head first); it is hidden for a single machine.
:class:`NodesOverview` is a table with one row per node: its state, GPU (or CPU) use and memory
from the latest reading the Monitor holds, and how old that reading is, so a stalled or idle
node stands out; the launch's guards treat the launch as idle only when every node is.
Main thread only; the readings come from the Monitor's series (no polling here).
"""

from __future__ import annotations

import math
import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QComboBox, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.models import Instance
from workbench.core.telemetry.series import SeriesSet
from workbench.ui.common.format import duration, state_label
from workbench.ui.i18n import N_, tr

ALL = "all"
HEADERS = (N_("Node"), N_("Machine"), N_("State"), N_("GPU use"), N_("Memory"), N_("Last reading"))


def latest(sets: SeriesSet | None) -> tuple[str, float, float, float, float | None]:
    """(kind, mean use %, memory used MB, memory total MB, time) of the newest readings; kind '' when none.

    GPUs when the node has GPU readings (MIG slices are part of their GPU), else its CPU reading.
    """
    if sets is None or sets.last_ts is None:
        return "", math.nan, math.nan, math.nan, None
    for kind in ("gpu", "cpu"):
        rings = [r for k, r in sets.series.items() if k[0] == kind and r.count]
        if not rings:
            continue
        last = [r.fine() for r in rings]
        utils = [float(w.util[-1]) for w in last if len(w) and not math.isnan(float(w.util[-1]))]
        mem = sum(float(w.mem[-1]) for w in last if len(w))
        total = sum(r.mem_total for r in rings)
        return kind, (sum(utils) / len(utils) if utils else math.nan), mem, total, max(r.last_ts for r in rings)
    return "", math.nan, math.nan, math.nan, sets.last_ts


def _size(mb: float) -> str:
    if math.isnan(mb):
        return "–"
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else f"{mb:.0f} MB"


class NodeSelector(QComboBox):
    """All nodes, or one of them (see the module doc)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("monitor-node")
        self.launch_id: str | None = None

    def show_nodes(self, nodes: list[Instance], current: Instance | None, overview: bool) -> None:
        """List ``nodes`` (one launch, rank order) and select ``current`` (or the overview)."""
        self.blockSignals(True)
        self.clear()
        self.launch_id = nodes[0].launch_id if nodes else None
        if len(nodes) > 1:
            self.addItem(tr("All nodes (overview)"), ALL)
            for inst in nodes:
                rank = node_rank_of(inst.extra)
                self.addItem(tr("node {rank} (head)").format(rank=rank) if rank == 0
                             else tr("node {rank}").format(rank=rank), inst)
            if overview:
                self.setCurrentIndex(0)
            elif current is not None:
                self.setCurrentIndex(next((n for n in range(1, self.count())
                                           if self.itemData(n).instance_id == current.instance_id), 0))
        self.blockSignals(False)
        self.setVisible(len(nodes) > 1)


class NodesOverview(QTableWidget):
    """One row per node of a launch (see the module doc)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(HEADERS), parent)
        self.setObjectName("monitor-nodes-overview")
        self.setHorizontalHeaderLabels([tr(h) for h in HEADERS])
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)

    def show_nodes(self, nodes: list[Instance], series: dict[tuple[str, str, str], SeriesSet],
                   now: float | None = None) -> None:
        now = time.time() if now is None else now
        self.setRowCount(len(nodes))
        dim = QGuiApplication.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        for row, inst in enumerate(nodes):
            kind, use, mem, total, ts = latest(series.get((inst.provider, inst.profile, inst.instance_id)))
            rank = node_rank_of(inst.extra)
            if not kind:
                use_text = mem_text = "–"
            else:
                use_text = (f"{use:.0f} %" if not math.isnan(use) else "–") + ("" if kind == "gpu" else " " + tr("(CPU)"))
                mem_text = _size(mem) + (f" / {_size(total)}" if total else "")
            cells = (tr("node {rank} (head)").format(rank=rank) if rank == 0 else tr("node {rank}").format(rank=rank),
                     f"{inst.instance_type} · {inst.instance_id}", state_label(inst.state), use_text, mem_text,
                     tr("{age} ago").format(age=duration(max(0.0, now - ts))) if ts else tr("none yet"))
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in (3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if not inst.state.active:
                    item.setForeground(dim)
                elif col == 5 and (ts is None or now - ts > 120):
                    item.setForeground(QBrush(QColor("#c62828")))  # a node that stopped reporting
                self.setItem(row, col, item)
