"""The cost planner in the GUI: N GPUs for H hours on-demand, spot, reserved, savings plans or bought.

The same planner as ``workbench plan`` (``core.money.planner.compare_costs_from_accounts`` on the TaskRunner):
accounts' offers where they answer, the price catalog elsewhere, so it works offline and before
any account exists.  Without a quote of the user's own, the buy row uses the documented reference
price (its source and date in the note).  A bar chart (pyqtgraph) shows the cheapest way per option;
the table lists the cheapest per option and provider, every price with its date.  The chart shows
every option in one currency: the one asked for, or USD where rows are priced in several; rows in
another currency are converted at the user's rate (the rate box) or, without one, at the reference
rate the offers are ordered at, and the axis says which.  Asking for a currency that needs a rate
nobody set points at the rate box; no message here tells a GUI user to type a command.

Main thread only; pyqtgraph is imported when the view is first shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QGridLayout, QHeaderView, QLabel, QPushButton,
                               QSpinBox, QSplitter, QTableView, QVBoxLayout, QWidget)

from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.providers.price_snapshot import describe_date
from workbench.ui.common.format import money, say, say_all
from workbench.ui.common.icons import icon
from workbench.ui.common.inline_messages import InlineMessage
from workbench.ui.common.table_model import RowTableModel
from workbench.ui.i18n import N_, tr

if TYPE_CHECKING:
    from workbench.core.money.planner import CostComparison, CostRow
    from workbench.ui.runtime.session import Session

OPTION_TEXT = {"on-demand": N_("on-demand"), "spot": N_("spot"), "reserved-1y": N_("reserved 1 year"),
               "reserved-3y": N_("reserved 3 years"), "savings-plan-1y": N_("savings plan 1 year"),
               "savings-plan-3y": N_("savings plan 3 years"), "buy": N_("buy")}
PRESETS = ((N_("1 week"), 168), (N_("1 month"), 720), (N_("3 months"), 2160), (N_("6 months"), 4320),
           (N_("1 year"), 8760))
AS_PRICED = ""


def option_text(option: str) -> str:
    return tr(OPTION_TEXT[option]) if option in OPTION_TEXT else option


def _plan(accounts, model: str, gpus: int, hours: float, hardware, display: str | None, rate: float | None):
    """Worker thread: the planner over every account and the catalog."""
    from workbench.core.money.currency import CurrencySettings
    from workbench.core.money.planner import compare_costs_from_accounts

    fx = CurrencySettings(display or "USD", rate) if rate else None
    return compare_costs_from_accounts(accounts, model, gpus, hours, hardware, display=display or None, fx=fx)


def _stored_rate(accounts) -> float | None:
    from workbench.core.money import currency

    return currency.load(accounts.store).cny_per_usd


class PlanModel(RowTableModel):
    """The plan's rows (cheapest per option and provider), each with its price date."""

    columns = (N_("Option"), N_("Provider"), N_("Region"), N_("Type"), N_("Machines"), N_("Per hour (all)"),
               N_("Total"), N_("Prices from"), N_("Note"))

    def set_rows(self, rows: list["CostRow"]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row(self, n: int) -> "CostRow":
        return self._rows[n]

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            note = say_all([*r.notes, *([tr("converted from {currency} at your rate").format(
                currency=r.original_currency)] if r.original_currency else [])])
            return (option_text(r.option), r.provider or "–", r.region or "–", r.instance_type or "–",
                    str(r.machines), money(r.hourly, r.currency), money(r.total, r.currency),
                    say(describe_date(r.price_as_of)) if r.price_as_of else "–",
                    note)[col]
        if role == Qt.ItemDataRole.ToolTipRole and col in (7, 8):
            return f"{say(r.price_source)} ({say(describe_date(r.price_as_of))})\n{say_all(r.notes)}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (4, 5, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class PlannerView(QWidget):
    """Inputs, a chart of the cheapest way per option, and the table (see the module doc)."""

    #: a plan was shown (or failed); tests and screenshots wait on it
    planned = Signal()

    def __init__(self, session: "Session", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("planner-view")
        self.session = session
        self.gpu = QComboBox(objectName="planner-gpu")
        for name in ("V100", "A100", "H100", "L40S", "L4", "A10G", "T4") + tuple(
                sorted(set(GPU_MODELS) - {"V100", "A100", "H100", "L40S", "L4", "A10G", "T4"})):
            self.gpu.addItem(name)
        self.gpus = QSpinBox(objectName="planner-gpus", minimum=1, maximum=512, value=8)
        self.gpus.setSuffix(tr(" GPUs"))
        self.hours = QSpinBox(objectName="planner-hours", minimum=1, maximum=26280, value=2160, singleStep=24)
        self.hours.setSuffix(tr(" hours"))
        self.preset = QComboBox(objectName="planner-preset")
        self.preset.addItem(tr("Duration…"), 0)
        for label, hours in PRESETS:
            self.preset.addItem(tr(label), hours)
        self.preset.activated.connect(self._preset)
        self.currency = QComboBox(objectName="planner-currency")
        self.currency.addItem(tr("as priced"), AS_PRICED)
        self.currency.addItem("USD", "USD")
        self.currency.addItem("CNY", "CNY")
        self.rate = QDoubleSpinBox(objectName="planner-rate", decimals=4, minimum=0.0, maximum=1000.0, value=0.0)
        self.rate.setPrefix(tr("1 USD = "))
        self.rate.setSuffix(" CNY")
        self.rate.setSpecialValueText(tr("no rate set"))
        self.own_quote = QCheckBox(tr("My own quote for buying:"), objectName="planner-own-quote")
        self.buy_price = QDoubleSpinBox(objectName="planner-buy-price", decimals=0, maximum=1e9, value=500000)
        self.buy_currency = QComboBox(objectName="planner-buy-currency")
        self.buy_currency.addItems(["CNY", "USD"])
        self.power = QDoubleSpinBox(objectName="planner-power", decimals=1, maximum=1000, value=3.0, suffix=" kW")
        self.kwh = QDoubleSpinBox(objectName="planner-kwh", decimals=2, maximum=100, value=1.0)
        self.kwh.setSuffix(tr(" per kWh"))
        self.upkeep = QDoubleSpinBox(objectName="planner-upkeep", decimals=0, maximum=1e8, value=50000)
        self.upkeep.setSuffix(tr(" per year"))
        for w in (self.buy_price, self.buy_currency, self.power, self.kwh, self.upkeep):
            w.setEnabled(False)
        self.own_quote.toggled.connect(lambda on: [w.setEnabled(on) for w in (
            self.buy_price, self.buy_currency, self.power, self.kwh, self.upkeep)])
        self.plan_button = QPushButton(icon("refresh"), tr("&Plan"), objectName="planner-run")
        self.plan_button.clicked.connect(self.run_plan)
        self.summary = QLabel(objectName="planner-summary")
        self.summary.setWordWrap(True)
        self.note = InlineMessage("warning", "planner-note")
        self.error = InlineMessage("error", "planner-error")

        grid = QGridLayout()
        grid.addWidget(QLabel(tr("GPU:")), 0, 0)
        grid.addWidget(self.gpu, 0, 1)
        grid.addWidget(self.gpus, 0, 2)
        grid.addWidget(self.hours, 0, 3)
        grid.addWidget(self.preset, 0, 4)
        grid.addWidget(QLabel(tr("Show in:")), 0, 5)
        grid.addWidget(self.currency, 0, 6)
        grid.addWidget(self.rate, 0, 7)
        grid.addWidget(self.plan_button, 0, 8)
        grid.addWidget(self.own_quote, 1, 0, 1, 2)
        grid.addWidget(self.buy_price, 1, 2)
        grid.addWidget(self.buy_currency, 1, 3)
        grid.addWidget(self.power, 1, 4)
        grid.addWidget(self.kwh, 1, 5, 1, 2)
        grid.addWidget(self.upkeep, 1, 7)
        grid.setColumnStretch(9, 1)

        self.model = PlanModel(self)
        self.table = QTableView(objectName="planner-table")
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.plot = None  # pyqtgraph: built when first shown
        self.bars: list[Any] = []
        self.plot_holder = QWidget()
        self.plot_holder.setMinimumHeight(180)
        QVBoxLayout(self.plot_holder).setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot_holder)
        split.addWidget(self.table)
        split.setSizes([240, 260])
        lay = QVBoxLayout(self)
        lay.addLayout(grid)
        lay.addWidget(self.summary)
        lay.addWidget(self.note)
        lay.addWidget(self.error)
        lay.addWidget(split, 1)
        self.plan: "CostComparison | None" = None
        self.chart: list[tuple[str, float, str]] = []  # (option, total, currency) drawn
        self.chart_label = ""  # the value axis' title: the currency, and the rate other currencies took
        self.busy = False
        self._rate_loaded = False

    # -- inputs -------------------------------------------------------------------------
    def _preset(self, index: int) -> None:
        hours = self.preset.itemData(index)
        if hours:
            self.hours.setValue(int(hours))
            self.run_plan()

    def hardware(self):
        if not self.own_quote.isChecked():
            return None
        from workbench.core.money.planner import Hardware

        return Hardware(self.buy_price.value(), self.power.value(), self.kwh.value(), self.upkeep.value(),
                        currency=self.buy_currency.currentText())

    def showEvent(self, event) -> None:  # noqa: N802 (Qt)
        self._ensure_plot()
        super().showEvent(event)
        if not self._rate_loaded and self.session.accounts is not None:
            self._rate_loaded = True
            self.session.run(_stored_rate, self.session.accounts).then(self._got_rate)
        if self.plan is None and not self.busy:
            self.run_plan()

    def _got_rate(self, rate: float | None) -> None:
        if shiboken6.isValid(self) and rate and not self.rate.value():
            self.rate.setValue(rate)

    # -- planning -----------------------------------------------------------------------
    def run_plan(self) -> None:
        if self.session.accounts is None or self.busy:
            return
        self.busy = True
        self.plan_button.setEnabled(False)
        self.error.show_text(None)
        self.summary.setText(tr("Pricing {gpus}× {gpu} for {hours} h…").format(
            gpus=self.gpus.value(), gpu=self.gpu.currentText(), hours=self.hours.value()))
        display = self.currency.currentData() or None
        (self.session.run(_plan, self.session.accounts, self.gpu.currentText(), self.gpus.value(),
                          float(self.hours.value()), self.hardware(), display, self.rate.value() or None)
         .then(self._show).fail(self._failed))

    def _done(self) -> None:
        self.busy = False
        self.plan_button.setEnabled(True)

    def _failed(self, exc: BaseException) -> None:
        from workbench.core.money.planner import RateNeeded

        if not shiboken6.isValid(self):
            return
        self._done()
        if isinstance(exc, RateNeeded):  # the rate box is right there: say so, in the GUI's own words
            text = tr("Some prices are in {source}: enter your exchange rate (1 USD = … CNY) in the box beside "
                      "“Show in” to see every row in {target}.").format(source=exc.source, target=exc.target)
            self.rate.setFocus()
        else:
            text = getattr(exc, "message", str(exc)) + (f" ({exc.hint})" if getattr(exc, "hint", None) else "")
        self.error.show_text(text)
        self.summary.setText(tr("No plan: {reason}").format(reason=text) if isinstance(exc, RateNeeded)
                             else tr("Pricing failed."))
        self.planned.emit()

    def _show(self, result) -> None:
        if not shiboken6.isValid(self):
            return
        from workbench.core.providers.price_snapshot import date_rank, is_stale

        self._done()
        plan, errors = result
        self.plan = plan
        rows = plan.summary()
        self.model.set_rows(rows)
        best = rows[0] if rows else None
        if best is None:
            self.summary.setText(tr("No offer of {gpu} is known.").format(gpu=plan.gpu_model))
        else:
            self.summary.setText(tr("{gpus}× {gpu} for {hours} h: cheapest is {option} at {total} ({where}).").format(
                gpus=plan.gpus, gpu=plan.gpu_model, hours=f"{plan.hours:,.0f}", option=option_text(best.option),
                total=money(best.total, best.currency), where=best.provider or tr("your own hardware")))
        notes = []
        buy = plan.cheapest("buy")
        if buy is not None and not self.own_quote.isChecked():
            # the reference's source is data in English: it goes to the tooltip, the sentence stays translated
            notes.append(tr("Buy: a reference price of {date}, not a vendor quote; tick “My own quote” to enter "
                            "yours.").format(date=buy.price_as_of))
            self.note.setToolTip(buy.price_source)
        old = sorted((r.price_as_of for r in rows if r.option != "buy" and r.price_as_of and is_stale(r.price_as_of)),
                     key=date_rank)
        if old:
            notes.append(tr("Prices from {date}: update them under Compare GPUs.").format(
                date=say(describe_date(old[0]))))
        currencies = sorted({r.currency for r in rows})
        if len(currencies) > 1:
            notes.append(tr("Rows in {currencies}: set “Show in” and your rate to compare them in one currency.")
                         .format(currencies=", ".join(currencies)))
        if errors:
            notes += [f"{name}: {exc.message}" for name, exc in errors]
        self.note.show_text("\n".join(notes) or None)
        self._draw(rows)
        self.planned.emit()

    # -- chart --------------------------------------------------------------------------
    def _ensure_plot(self) -> None:
        if self.plot is not None:
            return
        import pyqtgraph as pg

        class MoneyAxis(pg.AxisItem):
            def tickStrings(self, values, scale, spacing):  # noqa: N802 - "1,500,000", not "1.5e+06"
                return [f"{v * scale:,.0f}" for v in values]

        pal = QGuiApplication.palette()
        self.plot = pg.PlotWidget(background=pal.color(QPalette.ColorRole.Base),
                                  axisItems={"left": MoneyAxis(orientation="left")})
        self.plot.setObjectName("planner-plot")
        self.plot.showGrid(x=False, y=True, alpha=0.3)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot_holder.layout().addWidget(self.plot)
        if self.plan is not None:
            self._draw(self.plan.summary())

    def _chart_currency(self, rows: list["CostRow"]) -> tuple[str, float, bool]:
        """(the chart's currency, CNY per USD to convert with, whether that is the user's own rate)."""
        from workbench.core.offers.order import REFERENCE_CNY_PER_USD

        currencies = {r.currency for r in rows}
        cur = self.currency.currentData() or (next(iter(currencies)) if len(currencies) == 1 else "USD")
        rate = self.rate.value()
        return cur, rate or REFERENCE_CNY_PER_USD, bool(rate)

    def _draw(self, rows: list["CostRow"]) -> None:
        """One bar per option: its cheapest total, every option in the chart's one currency."""
        cur, rate, own = self._chart_currency(rows)

        def value(r: "CostRow") -> float:
            if r.currency == cur:
                return r.total
            return r.total * rate if (r.currency, cur) == ("USD", "CNY") else r.total / rate

        best: dict[str, tuple[float, "CostRow"]] = {}
        for r in rows:
            if r.option not in best or value(r) < best[r.option][0]:
                best[r.option] = (value(r), r)
        converted = any(r.currency != cur for _v, r in best.values())
        self.chart = sorted(((option, v, cur) for option, (v, _r) in best.items()), key=lambda c: c[1])
        if converted and not own:
            self.chart_label = tr("total for the job ({currency}, other currencies ≈ at the reference rate {rate:g} "
                                  "CNY per USD: set yours beside “Show in”)").format(currency=cur, rate=rate)
        elif converted:
            self.chart_label = tr("total for the job ({currency}, converted at your rate)").format(currency=cur)
        else:
            self.chart_label = tr("total for the job ({currency})").format(currency=cur)
        if self.plot is None:
            return
        import pyqtgraph as pg

        for item in self.bars:
            self.plot.removeItem(item)
        self.bars = []
        colors = {"buy": "#ff9800", "spot": "#66bb6a"}
        for n, (option, total, _cur) in enumerate(self.chart):
            bar = pg.BarGraphItem(x=[n], height=[total], width=0.6, brush=colors.get(option, "#42a5f5"))
            self.plot.addItem(bar)
            self.bars.append(bar)
        axis = self.plot.getAxis("bottom")
        axis.setTicks([[(n, option_text(o)) for n, (o, _t, _c) in enumerate(self.chart)]])
        self.plot.setLabel("left", self.chart_label)
        self.plot.enableAutoRange()
