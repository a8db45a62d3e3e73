"""The Spend view: money per launch, per day, and a CSV export.

All sums come from the store's state ledger (price × billable seconds, see
core/spend.py), computed on a worker after each refresh.  The plot shows the
last 30 days as bars with the running total as a line.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSplitter,
                               QTableView, QVBoxLayout, QWidget)

from ..core.accounts import Accounts
from ..core.spend import spend_by_day, spend_by_instance, start_of_today
from .dialogs import show_error
from .format import money
from .table_model import RowTableModel
from .i18n import N_, tr
from .icons import icon
from .session import Session, Snapshot

COLUMNS = (N_("Launch"), N_("Provider / profile"), N_("Region"), N_("Status"), N_("Started"),
           N_("Spent"), N_("Projected (max runtime)"))


@dataclass(frozen=True)
class SpendRow:
    launch_id: str
    name: str
    where: str
    region: str
    status: str
    started: float
    spent: float
    projected: float | None
    currency: str


@dataclass(frozen=True)
class SpendReport:
    rows: tuple[SpendRow, ...]
    days: tuple[tuple[float, float], ...]
    today: float
    month: float


def build_report(accounts: Accounts, now: float | None = None) -> SpendReport:
    """Per-launch and per-day spend from the ledger (runs on a worker)."""
    now = time.time() if now is None else now
    store = accounts.store
    ledger = store.ledger()
    per_instance = spend_by_instance(ledger, now)
    by_launch: dict[str, float] = {}
    for inst in store.list_instances():
        by_launch[inst.launch_id] = by_launch.get(inst.launch_id, 0.0) + per_instance.get(
            (inst.provider, inst.profile, inst.instance_id), 0.0)
    rows = tuple(SpendRow(r.launch_id, r.name, f"{r.provider} / {r.profile}", r.region or "", r.status,
                          r.created_at, by_launch.get(r.launch_id, 0.0), r.projected_cost, r.currency or "USD")
                 for r in store.list_launches())
    t = time.localtime(now)
    month_start = time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))
    return SpendReport(rows=rows, days=tuple(spend_by_day(ledger, 30, now)),
                       today=sum(spend_by_instance(ledger, now, since=start_of_today(now)).values()),
                       month=sum(spend_by_instance(ledger, now, since=month_start).values()))


def write_csv(path: str, report: SpendReport) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["launch_id", "name", "provider_profile", "region", "status", "started_utc", "spent",
                    "projected", "currency"])
        for r in report.rows:
            w.writerow([r.launch_id, r.name, r.where, r.region, r.status,
                        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.started)), f"{r.spent:.4f}",
                        "" if r.projected is None else f"{r.projected:.4f}", r.currency])


class SpendModel(RowTableModel):
    """Per-launch spend rows (SpendRow)."""

    columns = COLUMNS

    def set_rows(self, rows) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (r.name, r.where, r.region, r.status, time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started)),
                    money(r.spent, r.currency), money(r.projected, r.currency))[index.column()]
        if role == Qt.ItemDataRole.UserRole:
            return (r.name, r.where, r.region, r.status, r.started, r.spent, r.projected or 0.0)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return r.launch_id
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() >= 5:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SpendView(QWidget):
    """Totals, a 30-day plot and the per-launch table; recomputed after each refresh."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("spend-view")
        self.session = session
        self.report: SpendReport | None = None
        self._busy = False
        self.totals = QLabel(tr("No spend recorded yet."))
        self.totals.setObjectName("spend-totals")
        f = self.totals.font()
        f.setPointSizeF(f.pointSizeF() * 1.3)
        self.totals.setFont(f)
        self.export_btn = QPushButton(icon("export"), tr("&Export CSV…"))
        self.export_btn.setObjectName("spend-export")
        self.export_btn.clicked.connect(self.export)
        note = QLabel(tr("Estimates: price × billable seconds from each provider's price list."))
        note.setObjectName("spend-note")
        note.setWordWrap(True)

        self.plot = None  # built when first shown: importing pyqtgraph costs ~0.2 s at start-up
        self.bars = None
        self.model = SpendModel(self)
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.model)
        proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setObjectName("spend-table")
        self.table.setModel(proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)

        top = QHBoxLayout()
        top.addWidget(self.totals, 1)
        top.addWidget(self.export_btn)
        split = QSplitter(Qt.Orientation.Vertical)
        self.plot_holder = QWidget()
        self.plot_holder.setMinimumHeight(160)
        QVBoxLayout(self.plot_holder).setContentsMargins(0, 0, 0, 0)
        split.addWidget(self.plot_holder)
        split.addWidget(self.table)
        split.setSizes([220, 300])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(note)
        lay.addWidget(split, 1)
        session.snapshot_changed.connect(self.recompute)

    def _ensure_plot(self) -> None:
        if self.plot is not None:
            return
        import pyqtgraph as pg

        pal = QGuiApplication.palette()
        self.plot = pg.PlotWidget(background=pal.color(QPalette.ColorRole.Base))
        self.plot.setObjectName("spend-plot")
        self.plot.showGrid(x=False, y=True, alpha=0.3)
        self.plot.setLabel("left", tr("per day (USD)"))
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # "$0.07", not "70 (x0.001)"
        self.plot.setAxisItems({"bottom": pg.DateAxisItem(orientation="bottom")})
        self.bars = pg.BarGraphItem(x=[], height=[], width=80_000, brush="#42a5f5")
        self.plot.addItem(self.bars)
        self.plot_holder.layout().addWidget(self.plot)
        if self.report is not None:
            self._draw_days(self.report)

    def _draw_days(self, report: SpendReport) -> None:
        xs = [d + 43_200 for d, _ in report.days]  # bar centred on midday
        self.bars.setOpts(x=xs, height=[v for _, v in report.days], width=70_000)

    def showEvent(self, event) -> None:  # noqa: N802
        self._ensure_plot()
        super().showEvent(event)

    def recompute(self, _snap: Snapshot | None = None) -> None:
        if self._busy or self.session.accounts is None:
            return
        self._busy = True
        (self.session.run(build_report, self.session.accounts).then(self.show_report)
         .fail(lambda e: self.totals.setText(tr("Spend could not be computed: {error}").format(error=e)))
         .finally_(lambda: setattr(self, "_busy", False)))

    def show_report(self, report: SpendReport) -> None:
        self.report = report
        snap = self.session.snapshot
        self.totals.setText(tr("Now {rate}/h · today {today} · this month {month}").format(
            rate=money(snap.burn_rate), today=money(report.today), month=money(report.month)))
        first = not self.model._rows
        self.model.set_rows(report.rows)
        if first and report.rows:
            self.table.resizeColumnsToContents()
        if self.bars is not None:
            self._draw_days(report)
        self.export_btn.setEnabled(bool(report.rows))

    def export(self) -> None:
        if self.report is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, tr("Export spend"), "workbench-spend.csv", tr("CSV files (*.csv)"))
        if not path:
            return
        try:
            write_csv(path, self.report)
        except OSError as exc:
            show_error(self, exc)
        else:
            self.session.notify.emit(tr("Exported"), path, "info")
