"""The Spend view: money per launch and per day, budgets, billed cost beside the estimate, CSV export.

All sums come from :class:`~workbench.core.money.spend.SpendBook` (price × billable
seconds under each provider's billing rule, spot prices as they were), computed
on a worker after each refresh.  Where a provider reports billed cost (AWS Cost
Explorer, Azure Cost Management; cached, refreshed at most every 6 h) it is
shown beside the estimate with the difference.  Figures are in the display
currency (USD, or CNY at the user's rate), always labelled.  The monthly
budget and the display currency are set here; writes go through the
TaskRunner, never on the UI thread.
"""

from __future__ import annotations

import csv
import datetime as _dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QHBoxLayout, QHeaderView, QInputDialog,
                               QLabel, QProgressBar, QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget)

from workbench.core.applog import first_time
from workbench.core.lifecycle.attempts import attempt_of
from workbench.core.money import budgets, currency
from workbench.core.providers.accounts import Accounts
from workbench.core.money.billing_sync import actual_by, sync_actual_costs, sync_spot_history
from workbench.core.money.budgets import BudgetStatus
from workbench.core.money.currency import CurrencySettings
from workbench.core.money.spend import SpendBook, start_of_month, start_of_today
from workbench.ui.common.dialogs import show_error
from workbench.ui.common.format import launch_status, money
from workbench.ui.i18n import N_, tr
from workbench.ui.common.icons import icon
from workbench.ui.runtime.session import Session, Snapshot
from workbench.ui.common.table_model import RowTableModel

log = logging.getLogger("workbench.ui.spend")

COLUMNS = (N_("Launch"), N_("Provider / profile"), N_("Region"), N_("Status"), N_("Started"),
           N_("Spent (estimate)"), N_("Billed"), N_("Difference"), N_("Budget used"), N_("Projected (max runtime)"))
COL_BILLED, COL_DIFF = 6, 7


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
    actual: float | None = None
    actual_source: str = ""
    budget: float | None = None
    budget_percent: float | None = None

    @property
    def difference(self) -> float | None:
        return None if self.actual is None else self.actual - self.spent


@dataclass(frozen=True)
class SpendReport:
    rows: tuple[SpendRow, ...]
    days: tuple[tuple[float, float], ...]
    today: float
    month: float
    burn_rate: float = 0.0
    currency: str = "USD"
    note: str = ""
    monthly: BudgetStatus | None = None
    has_actual: bool = False
    settings: CurrencySettings = CurrencySettings()
    #: the currencies the figures were priced in (the note says which were converted)
    sources: tuple[str, ...] = ("USD",)


def currency_note(settings: CurrencySettings, sources: tuple[str, ...]) -> str:
    """How the figures in the display currency were obtained, in the UI language (core's ``note`` in words)."""
    converted = ", ".join(sorted(c for c in sources if c != settings.display))
    if not converted:
        return tr("{display}, as the provider prices it").format(display=settings.display)
    if settings.cny_per_usd is None:
        return tr("{display}; amounts in {others} are not converted (no rate set)").format(
            display=settings.display, others=converted)
    return tr("{display}; {others} converted at your rate of {rate} CNY per USD").format(
        display=settings.display, others=converted, rate=f"{settings.cny_per_usd:g}")


def build_report(accounts: Accounts, now: float | None = None, fetch_actual: bool = True) -> SpendReport:
    """Per-launch and per-day spend from the ledger, budgets and billed cost (runs on a worker)."""
    now = time.time() if now is None else now
    store = accounts.store
    month_start = start_of_month(now)
    since_day = _dt.date.fromtimestamp(month_start - 62 * 86400).isoformat()
    if fetch_actual:  # both cached: the providers are asked at most every few hours
        for name, exc in sync_actual_costs(accounts, since_day, now=now):
            if first_time(f"billed cost of {name}", str(exc)):  # said once, not on every refresh
                log.info("billed cost of %s not available: %s", name, exc)
        for name, exc in sync_spot_history(accounts, now=now, max_age_s=3600.0):
            log.info("spot price history of %s not available: %s", name, exc)
    book = SpendBook.load(store)
    cur = book.currency
    statuses = {s.budget.scope: s for s in budgets.statuses(store, book, now)}
    actual = actual_by(store, "launch", since_day)
    by_launch = book.group("launch", now)
    rows = []
    for r in store.list_launches():
        act = actual.get(r.launch_id)
        st = statuses.get(budgets.launch_scope(r.launch_id))
        projected = book.projection(r.launch_id, now)
        attempt = attempt_of(r.launch_id, r.spec)
        name = r.name if attempt is None else tr("{name} · attempt {n} of {root}").format(
            name=r.name, n=attempt[0], root=attempt[1])
        rows.append(SpendRow(
            r.launch_id, name, f"{r.provider} / {r.profile}", r.region or "", r.status, r.created_at,
            by_launch.get(r.launch_id, 0.0), None if projected is None else cur.convert(projected, r.currency or "USD"),
            cur.display, None if act is None else cur.convert(act.amount, act.currency),
            act.source if act else "", st.budget.amount if st else None, st.percent if st else None))
    sources = {book.currency_of(k) for k in book.entries} or {cur.display}
    note = cur.note(sources)
    return SpendReport(rows=tuple(rows), days=tuple(book.by_day(30, now)), today=book.total(now, start_of_today(now)),
                       month=book.total(now, month_start), burn_rate=book.rate_total(now), currency=cur.display,
                       note=note, monthly=statuses.get(budgets.MONTHLY), has_actual=bool(actual), settings=cur,
                       sources=tuple(sorted(sources)))


def write_csv(path: str, report: SpendReport) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["launch_id", "name", "provider_profile", "region", "status", "started_utc", "spent", "billed",
                    "difference", "budget", "budget_percent", "projected", "currency"])
        opt = lambda v: "" if v is None else f"{v:.4f}"  # noqa: E731
        for r in report.rows:
            w.writerow([r.launch_id, r.name, r.where, r.region, r.status,
                        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.started)), f"{r.spent:.4f}",
                        opt(r.actual), opt(r.difference), opt(r.budget), opt(r.budget_percent), opt(r.projected),
                        r.currency])


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
        r: SpendRow = self._rows[index.row()]
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            used = "–" if r.budget_percent is None else tr("{p} % of {amount}").format(
                p=f"{r.budget_percent:.0f}", amount=money(r.budget, "USD"))
            return (r.name, r.where, r.region, launch_status(r.status),
                    time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started)),
                    money(r.spent, r.currency), money(r.actual, r.currency), money(r.difference, r.currency), used,
                    money(r.projected, r.currency))[c]
        if role == Qt.ItemDataRole.UserRole:
            return (r.name, r.where, r.region, r.status, r.started, r.spent, r.actual or 0.0, r.difference or 0.0,
                    r.budget_percent or 0.0, r.projected or 0.0)[c]
        if role == Qt.ItemDataRole.ToolTipRole:
            if c in (COL_BILLED, COL_DIFF) and r.actual_source:
                return tr("Billed cost reported by {source}; it lags by hours").format(source=r.actual_source)
            return r.launch_id
        if role == Qt.ItemDataRole.TextAlignmentRole and c >= 5:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SpendView(QWidget):
    """Totals, budget, currency, a 30-day plot and the per-launch table; recomputed after each refresh."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("spend-view")
        self.session = session
        self.report: SpendReport | None = None
        self._busy = False
        self._again = False
        self.totals = QLabel(tr("No spend recorded yet."))
        self.totals.setObjectName("spend-totals")
        f = self.totals.font()
        f.setPointSizeF(f.pointSizeF() * 1.3)
        self.totals.setFont(f)
        self.export_btn = QPushButton(icon("export"), tr("&Export CSV…"))
        self.export_btn.setObjectName("spend-export")
        self.export_btn.clicked.connect(self.export)
        self.report_btn = QPushButton(icon("export"), tr("Run &report…"), objectName="spend-run-report")
        self.report_btn.setToolTip(tr("Cost, utilization and advice of the selected launch, as HTML or PDF"))
        self.report_btn.setEnabled(False)
        self.report_btn.clicked.connect(self.open_report)
        self.budget_btn = QPushButton(tr("Monthly &budget…"))
        self.budget_btn.setObjectName("spend-budget")
        self.budget_btn.clicked.connect(self.ask_budget)
        self.budget_bar = QProgressBar(objectName="spend-budget-bar", minimum=0, maximum=100)
        self.budget_bar.setVisible(False)
        self.currency_box = QComboBox(objectName="spend-currency")
        self.currency_box.addItems(list(currency.SUPPORTED))
        self.rate = QDoubleSpinBox(objectName="spend-rate", decimals=4, minimum=0.0001, maximum=1000.0, value=7.2)
        self.rate.setPrefix(tr("1 USD = "))
        self.rate.setSuffix(" CNY")
        self.rate.setEnabled(False)
        self.currency_box.activated.connect(self._currency_changed)
        self.rate.editingFinished.connect(self._currency_changed)
        self.note = QLabel(tr("Estimates: price × billable seconds from each provider's price list."))
        self.note.setObjectName("spend-note")
        self.note.setWordWrap(True)

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
        for c in (COL_BILLED, COL_DIFF):
            self.table.setColumnHidden(c, True)
        self.table.resizeColumnsToContents()  # before any row: every header whole, in every language

        top = QHBoxLayout()
        top.addWidget(self.totals, 1)
        top.addWidget(self.budget_btn)
        top.addWidget(self.report_btn)
        top.addWidget(self.export_btn)
        money_row = QHBoxLayout()
        money_row.addWidget(self.budget_bar, 1)
        money_row.addWidget(QLabel(tr("Currency:")))
        money_row.addWidget(self.currency_box)
        money_row.addWidget(self.rate)
        split = QSplitter(Qt.Orientation.Vertical)
        self.plot_holder = QWidget()
        self.plot_holder.setMinimumHeight(160)
        QVBoxLayout(self.plot_holder).setContentsMargins(0, 0, 0, 0)
        split.addWidget(self.plot_holder)
        split.addWidget(self.table)
        split.setSizes([220, 300])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(money_row)
        lay.addWidget(self.note)
        lay.addWidget(split, 1)
        session.snapshot_changed.connect(self.recompute)
        self.table.selectionModel().selectionChanged.connect(
            lambda *_: self.report_btn.setEnabled(self.selected_launch() is not None))

    def _ensure_plot(self) -> None:
        if self.plot is not None:
            return
        import pyqtgraph as pg

        pal = QGuiApplication.palette()
        self.plot = pg.PlotWidget(background=pal.color(QPalette.ColorRole.Base))
        self.plot.setObjectName("spend-plot")
        self.plot.showGrid(x=False, y=True, alpha=0.3)
        self.plot.setLabel("left", tr("per day ({currency})").format(currency=self.report.currency
                                                                     if self.report else "USD"))
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
        self.plot.setLabel("left", tr("per day ({currency})").format(currency=report.currency))

    def showEvent(self, event) -> None:  # noqa: N802
        self._ensure_plot()
        super().showEvent(event)

    def recompute(self, _snap: Snapshot | None = None) -> None:
        if self.session.accounts is None:
            return
        if self._busy:
            self._again = True  # a setting changed while computing: compute once more afterwards
            return
        self._busy = True
        (self.session.run(build_report, self.session.accounts).then(self.show_report)
         .fail(lambda e: self.totals.setText(tr("Spend could not be computed: {error}").format(error=e)))
         .finally_(self._computed))

    def _computed(self) -> None:
        self._busy = False
        if self._again:
            self._again = False
            self.recompute()

    def show_report(self, report: SpendReport) -> None:
        self.report = report
        cur = report.currency
        text = tr("Now {rate}/h · today {today} · this month {month}").format(
            rate=money(report.burn_rate, cur), today=money(report.today, cur), month=money(report.month, cur))
        m = report.monthly
        if m is not None:
            used = tr("cannot be checked (no exchange rate)") if m.percent is None else f"{m.percent:.0f} %"
            text += " · " + tr("monthly budget {amount}: {used}").format(
                amount=money(m.budget.amount, m.budget.currency), used=used)
            self.budget_bar.setValue(int(min(100, m.percent or 0)))
            self.budget_bar.setFormat(tr("{p} % of the monthly budget").format(p=f"{m.percent or 0:.0f}"))
        self.budget_bar.setVisible(m is not None)
        if not report.rows:  # the empty state says what will be here, not "$0.00" three times
            text = tr("Nothing spent yet: each launch shows here with what it costs, from its first minute.")
        elif report.burn_rate == 0 and not any(r.spent for r in report.rows):
            text = tr("Nothing has cost money: {n} launch(es), all free (jobs on this computer).").format(
                n=len(report.rows))
        self.totals.setText(text)
        self.note.setText(tr("Estimates: price × billable seconds under each provider's billing rules; "
                             "figures in {note}.").format(note=currency_note(report.settings, report.sources))
                          + (" " + tr("Billed: what the provider reports (lags by hours).") if report.has_actual else ""))
        for c in (COL_BILLED, COL_DIFF):
            self.table.setColumnHidden(c, not report.has_actual)
        self.currency_box.setCurrentText(report.settings.display)
        if report.settings.cny_per_usd:
            self.rate.setValue(report.settings.cny_per_usd)
        self.rate.setEnabled(report.settings.display == "CNY")
        first = not self.model._rows
        self.model.set_rows(report.rows)
        if first and report.rows:
            self.table.resizeColumnsToContents()
        if self.bars is not None:
            self._draw_days(report)
        self.export_btn.setEnabled(bool(report.rows))

    # -- settings ---------------------------------------------------------------
    def set_currency(self, display: str, cny_per_usd: float | None):
        """Save the display currency (and rate) off the UI thread, then recompute."""
        settings = CurrencySettings(display, cny_per_usd)
        return (self.session.run(currency.save, self.session.accounts.store, settings)
                .then(lambda _r: self.recompute()).fail(lambda e: show_error(self, e)))

    def _currency_changed(self, *_args) -> None:
        display = self.currency_box.currentText()
        self.rate.setEnabled(display == "CNY")
        self.set_currency(display, self.rate.value())

    def set_monthly_budget(self, amount: float | None):
        """Set (amount > 0) or clear (None/0) the monthly budget off the UI thread, then recompute."""
        store = self.session.accounts.store
        fn = (lambda: store.clear_budget(budgets.MONTHLY)) if not amount else \
            (lambda: budgets.set_monthly(store, amount, self.report.currency if self.report else "USD"))
        return self.session.run(fn).then(lambda _r: self.recompute()).fail(lambda e: show_error(self, e))

    def ask_budget(self) -> None:
        dlg = QInputDialog(self)
        dlg.setObjectName("spend-budget-dialog")
        dlg.setWindowTitle(tr("Monthly budget"))
        dlg.setLabelText(tr("Budget for all spend this month ({currency}); 0 removes it. Warnings at 50, 80 and "
                            "100 %; at 100 % every launch that bills is torn down.").format(
            currency=self.report.currency if self.report else "USD"))
        dlg.setInputMode(QInputDialog.InputMode.DoubleInput)
        dlg.setDoubleRange(0.0, 10_000_000.0)
        dlg.setDoubleDecimals(2)
        if self.report is not None and self.report.monthly is not None:
            dlg.setDoubleValue(self.report.monthly.budget.amount)
        dlg.doubleValueSelected.connect(lambda v: self.set_monthly_budget(v or None))
        dlg.open()

    def selected_launch(self) -> str | None:
        rows = self.table.selectionModel().selectedRows() or self.table.selectionModel().selectedIndexes()
        if not rows:
            return None
        row = self.table.model().mapToSource(rows[0]).row()
        return self.model._rows[row].launch_id if 0 <= row < len(self.model._rows) else None

    def open_report(self):
        """The run report of the selected launch (cost, utilization, advice; HTML and PDF)."""
        launch_id = self.selected_launch()
        if launch_id is None:
            return None
        from workbench.ui.monitor.run_report import RunReportDialog

        dlg = RunReportDialog(self.session, launch_id, self)
        dlg.open()
        return dlg

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
