"""The table of the Stop-all-billing dialog: every billable thing and how its teardown is going.

:class:`StopAllModel` is filled from an inventory (``set_items``), follows the
teardown's events (``apply``) and its final report (``finish``).  Main thread
only: the dialog re-emits the teardown's worker-thread events through a queued
signal before they reach the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt
from PySide6.QtGui import QBrush, QColor

from workbench.core.domain.models import Instance
from workbench.core.lifecycle.teardown import Billable, TeardownEvent, TeardownReport, hourly_price, item_key
from workbench.ui.common.format import money
from workbench.ui.common.table_model import RowTableModel
from workbench.ui.i18n import N_, tr

GREEN, RED = "#2e7d32", "#c62828"
COLUMNS = (N_("Thing"), N_("Provider / profile"), N_("Region"), N_("$/h"), N_("Status"))
COL_STATUS = 4
STATUS_LABELS = {
    "billing": N_("billing"), "waiting": N_("waiting"), "terminating": N_("terminating…"),
    "terminated": N_("terminated, verifying…"), "deleting": N_("deleting…"),
    "deleted": N_("deleted, verifying…"), "verified": N_("verified gone"),
    "remaining": N_("still billing"), "failed": N_("failed"),
}
FINAL = ("verified", "remaining", "failed")


def describe(item: Billable) -> str:
    """A row's "thing" text: the machine's name and id, or the leftover's kind and id."""
    if isinstance(item, Instance):
        return f"{item.name} ({item.instance_id})" if item.name else item.instance_id
    return tr("leftover {kind} {id}").format(kind=item.kind, id=item.resource_id)


def price_text(item: Billable) -> str:
    price = hourly_price(item)
    currency = item.currency if isinstance(item, Instance) else str(item.extra.get("currency", "USD"))
    return tr("{price}/h").format(price=money(price, currency)) if price is not None else tr("unknown")


@dataclass
class _Row:
    item: Billable
    status: str = "billing"
    message: str = ""


class StopAllModel(RowTableModel):
    """Rows of billable things and their teardown status; main thread only (fed by the dialog)."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._index: dict[tuple, int] = {}

    # -- feeding ----------------------------------------------------------------
    def set_items(self, items: list[Billable]) -> None:
        self.beginResetModel()
        self._rows = [_Row(x) for x in items]
        self._index = {item_key(r.item): n for n, r in enumerate(self._rows)}
        self.endResetModel()

    def restart(self) -> None:
        """Before a (re)run: everything not verified gone is waiting again."""
        for row in self._rows:
            if row.status != "verified":
                row.status, row.message = "waiting", ""
        self._changed_all()

    def apply(self, ev: TeardownEvent) -> None:
        """Move a row along; an item the inventory did not list (e.g. a disk left by a terminate) is added."""
        if ev.item is None:
            if ev.kind == "error":
                for row in self._rows:
                    if (row.item.provider, row.item.profile) == (ev.provider, ev.profile) and row.status not in FINAL:
                        row.status, row.message = "failed", ev.message
                self._changed_all()
            return
        key = item_key(ev.item)
        status = "failed" if ev.kind == "error" else ev.kind
        if key not in self._index:
            self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows))
            self._index[key] = len(self._rows)
            self._rows.append(_Row(ev.item, status, ev.message))
            self.endInsertRows()
            return
        n = self._index[key]
        self._rows[n].status, self._rows[n].message = status, ev.message
        self.dataChanged.emit(self.index(n, 0), self.index(n, COL_STATUS))

    def finish(self, report: TeardownReport) -> None:
        """Settle every row from the report: remaining, failed (its profile erred) or verified gone."""
        left = {item_key(x) for x in report.remaining}
        erred = {name: exc.message for name, exc in report.errors}
        for x in report.remaining:
            if item_key(x) not in self._index:
                self.apply(TeardownEvent("remaining", x.provider, x.profile, x))
        for row in self._rows:
            if item_key(row.item) in left:
                row.status, row.message = "remaining", ""
            elif row.status in FINAL:
                continue
            elif row.item.profile in erred:
                row.status, row.message = "failed", erred[row.item.profile]
            else:
                row.status, row.message = "verified", ""
        self._changed_all()

    def _changed_all(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, COL_STATUS))

    # -- reading ----------------------------------------------------------------
    def items(self, status: str | None = None) -> list[Billable]:
        return [r.item for r in self._rows if status is None or r.status == status]

    def status_of(self, item: Billable) -> str | None:
        n = self._index.get(item_key(item))
        return None if n is None else self._rows[n].status

    def done_count(self) -> int:
        return sum(r.status in FINAL for r in self._rows)

    # -- Qt model -----------------------------------------------------------------
    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            x = row.item
            if col == 0:
                return describe(x)
            if col == 1:
                return f"{x.provider}/{x.profile}"
            if col == 2:
                return x.region
            if col == 3:
                return price_text(x)
            text = tr(STATUS_LABELS[row.status])
            return f"{text}: {row.message}" if row.message else text
        if role == Qt.ItemDataRole.ToolTipRole and col == COL_STATUS and row.message:
            return row.message
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_STATUS:
            if row.status == "verified":
                return QBrush(QColor(GREEN))
            if row.status in ("remaining", "failed"):
                return QBrush(QColor(RED))
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
