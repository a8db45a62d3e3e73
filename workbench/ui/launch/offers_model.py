"""Qt table model over ranked offers (a thin adapter over core ``RankedOffer`` values, no item widgets).

Rows keep the order :func:`workbench.core.offers.order.rank` gave them: cheapest
first, unavailable ones last.  An offer the account may not launch (no quota,
no capacity: ``Offer.available`` False) is shown with its note and is neither
enabled nor selectable, so the view cannot choose it.  Main thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPalette

from workbench.core.domain.models import Offer
from workbench.core.offers.query import RankedOffer, interconnect, interconnect_note
from workbench.core.providers.price_snapshot import describe_date
from workbench.core.money.billing_status import is_own_hardware
from workbench.ui.common.format import money, say
from workbench.ui.common.table_model import RowTableModel
from workbench.ui.i18n import N_, tr

OFFER_ROLE = Qt.ItemDataRole.UserRole + 1

COLUMNS = (N_("Provider / profile"), N_("Region"), N_("Type"), N_("GPUs"), N_("GPU memory"), N_("vCPUs"),
           N_("RAM"), N_("On-demand /h"), N_("Spot /h"), N_("Price source"), N_("Availability"),
           N_("All machines /h"), N_("Network"))
#: the last two were added for multi-node jobs; the offer page shows them right after the prices
COL_ON_DEMAND, COL_SPOT, COL_SOURCE, COL_AVAILABILITY, COL_TOTAL, COL_NETWORK = 7, 8, 9, 10, 11, 12
_RIGHT = (3, 4, 5, 6, 7, 8, 11)


def warning_color() -> QColor:
    """A red that stays readable on light and dark palettes."""
    dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
    return QColor("#ff8a65" if dark else "#c62828")


def your_cluster(o: Offer) -> bool:
    """An offer of the user's own cluster (not this computer) without a price per hour."""
    return not o.prices.on_demand and o.provider != "local" and is_own_hardware(o.provider)


def _gb(value: float) -> str:
    return tr("{n} GB").format(n=f"{value:g}")


class OffersModel(RowTableModel):
    """Ranked offers; ``spot`` says which price the job pays (that column is shown bold); ``nodes`` how many
    machines the job takes (the total column, and a note where the network is slow for several)."""

    columns = COLUMNS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[RankedOffer] = []
        self._cells: list[tuple[str, ...]] = []  # the display texts, made once per row (views ask often)
        self.spot = False
        self.nodes = 1

    def set_nodes(self, nodes: int) -> None:
        """How many machines the job takes: the total and network cells change with it."""
        nodes = max(1, nodes)
        if nodes != self.nodes:
            self.nodes = nodes
            self._cells = [tuple(self._display(r, c) for c in range(len(self.columns))) for r in self._rows]
            if self._rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def set_offers(self, rows: list[RankedOffer], spot: bool) -> None:
        self.beginResetModel()
        self.spot = spot  # the source cell names the price the job pays
        self._rows = list(rows)
        self._cells = [tuple(self._display(r, c) for c in range(len(self.columns))) for r in self._rows]
        self._warn = QBrush(warning_color())
        self._dim = QGuiApplication.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        self._bold = QFont()
        self._bold.setBold(True)
        self.endResetModel()

    def offer(self, row: int) -> RankedOffer:
        return self._rows[row]

    def offers(self) -> list[RankedOffer]:
        return list(self._rows)

    def first_available_row(self, prefer_providers: tuple[str, ...] = (), prefer_regions: tuple[str, ...] = ()) -> int:
        """The row to preselect: the cheapest available offer, preferring the spec's providers/regions."""
        usable = [n for n, r in enumerate(self._rows) if r.offer.available]
        for n in usable:
            o = self._rows[n].offer
            if ((not prefer_providers or o.provider in prefer_providers)
                    and (not prefer_regions or o.region in prefer_regions or o.provider == "local")):
                return n
        return usable[0] if usable else -1

    # -- Qt model API -----------------------------------------------------------
    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid() or not self._rows[index.row()].offer.available:
            return Qt.ItemFlag.NoItemFlags  # no quota / no capacity: cannot be chosen
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def _display(self, r: RankedOffer, col: int) -> str:
        o = r.offer
        cur = o.prices.currency
        if col == COL_AVAILABILITY:
            if o.available and "nodes_free" in o.extra and "nodes_total" in o.extra:  # a cluster's partition
                return tr("free now: {free} of {total} nodes").format(free=o.extra["nodes_free"],
                                                                       total=o.extra["nodes_total"])
            if o.available:  # a note on an available offer qualifies it ("no stock in cn-hangzhou-h")
                return tr("available") + (f" · {o.availability_note}" if o.availability_note else "")
            return "⚠ " + (say(o.availability_note) or tr("no quota or capacity"))
        if col in (COL_ON_DEMAND, COL_TOTAL) and your_cluster(o):
            return tr("your cluster")  # no rate set: the user's own cluster, not "$0.000"
        if col == COL_TOTAL:
            return money(None if r.price is None else r.price * self.nodes, cur, 3) + (
                f" (×{self.nodes})" if self.nodes > 1 else "")
        if col == COL_NETWORK:
            text = interconnect(o).replace("speed unknown", tr("speed unknown"))
            if self.nodes > 1 and interconnect_note(o):
                return "⚠ " + tr("{network}: no fast interconnect").format(network=text)
            return text
        return (
            f"{o.provider} / {r.profile}" if r.profile else tr("{provider} (no account)").format(provider=o.provider),
            o.region,
            o.instance_type,
            f"{o.gpu_count}× {o.gpu_model or '?'}" if o.gpu_count else tr("none (CPU)"),
            _gb(o.gpu_memory_gb) if o.gpu_count else "–",
            str(o.vcpus),
            _gb(o.memory_gb),
            money(o.prices.on_demand, cur, 3),
            money(o.prices.spot, cur, 3),
            self._source(o),
        )[col]

    def _source(self, o: Offer) -> str:
        """Where the job's price was read (snapshot, cache, live) and its date; the source itself is the
        tooltip (a long name, often in English)."""
        d = o.prices.hourly_detail(self.spot)
        when = say(describe_date(d.as_of)) if d.as_of else ""
        return f"{say(o.prices.source)} · {when}" if when else say(o.prices.source)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        col = index.column()
        if role == OFFER_ROLE:
            return r
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][col]
        if role == Qt.ItemDataRole.ForegroundRole and not r.offer.available:
            return self._warn if col == COL_AVAILABILITY else self._dim
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_NETWORK and self.nodes > 1 \
                and interconnect_note(r.offer):
            return self._warn
        if role == Qt.ItemDataRole.FontRole and (col == (COL_SPOT if self.spot else COL_ON_DEMAND)
                                                 or (col == COL_TOTAL and self.nodes > 1)):
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == COL_SOURCE:
                d = r.offer.prices.hourly_detail(self.spot)
                return " · ".join(x for x in (d.source, say(d.basis) if d.basis else "",
                                              say(describe_date(d.as_of)) if d.as_of else "") if x)
            if not r.offer.available:
                return tr("Cannot be chosen: {note}").format(
                    note=r.offer.availability_note or tr("no quota or capacity"))
            if col == COL_NETWORK and self.nodes > 1 and interconnect_note(r.offer):
                return tr("{n} machines talk over this network: without RDMA (InfiniBand, EFA) or 100 Gbps, "
                          "multi-node training waits on it").format(n=self.nodes)
            if self.nodes > 1:
                return tr("This job pays {price} per hour per machine, {total} for all {n} ({term})").format(
                    price=money(r.price, r.offer.prices.currency, 3), n=self.nodes,
                    total=money(None if r.price is None else r.price * self.nodes, r.offer.prices.currency, 3),
                    term=tr("spot") if self.spot else tr("on-demand"))
            return tr("This job pays {price} per hour ({term})").format(
                price=money(r.price, r.offer.prices.currency, 3),
                term=tr("spot") if self.spot else tr("on-demand"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in _RIGHT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
