"""Compare GPUs and prices across every cloud, before any account exists.

A GPU model, a count and on-demand / spot: the view asks every account for offers and prices the
clouds without one from the price catalog (``core.offers.find``, on the session's read pool),
cheapest first, each with its price source and date.  Catalog rows say "add an account to launch";
selecting one enables "Add an account to launch here", which asks the window to open the Accounts
view on that cloud.  Prices older than 90 days carry a "Prices from <date>" warning with an
"Update prices" button that reads the public price lists (``core.providers.price_update``) on a
worker, then compares again.  When nothing matches, the real reason is shown.

Main thread only; every provider call runs on the TaskRunner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QProgressBar, QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget)

from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.offers.query import OfferQuery
from workbench.ui.common.format import money
from workbench.ui.common.icons import icon
from workbench.ui.common.inline_messages import InlineMessage
from workbench.ui.i18n import tr
from workbench.ui.launch.offers_model import COL_AVAILABILITY, COL_SPOT, OFFER_ROLE, OffersModel, your_cluster
from workbench.ui.runtime.lanes import PRICES

if TYPE_CHECKING:
    from workbench.core.offers.find import Found
    from workbench.ui.runtime.session import Session

ANY = ""
COMMON_GPUS = ("V100", "A100", "H100", "L4", "L40S", "A10G", "T4")


class CompareModel(OffersModel):
    """The wizard's offers table, but every row can be selected (to add an account for a catalog row)."""

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def _browse(accounts, q: OfferQuery):  # worker thread
    from workbench.core.offers.find import find_offers

    return find_offers(accounts, q)


def _update_prices(accounts, urls, regions):  # worker thread: network, minutes for AWS
    from workbench.core.providers.price_update import update

    return update(accounts.entries, regions=regions, urls=urls)


class CompareView(QWidget):
    """GPU offers of every cloud, with or without an account (see the module doc)."""

    #: the user wants an account of this provider ("Add an account to launch here")
    add_account_requested = Signal(str)
    #: a comparison finished (offers shown or the reason why none)
    compared = Signal()
    #: a price update finished (results, or the error)
    prices_updated = Signal(object)

    def __init__(self, session: "Session", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare-view")
        self.session = session
        self.gpu = QComboBox(objectName="compare-gpu")
        self.gpu.addItem(tr("Any GPU"), ANY)
        for name in COMMON_GPUS + tuple(sorted(set(GPU_MODELS) - set(COMMON_GPUS))):
            self.gpu.addItem(name, name)
        self.gpu.setCurrentIndex(self.gpu.findData("V100"))
        self.count = QSpinBox(objectName="compare-count", minimum=1, maximum=64, value=1)
        self.count.setToolTip(tr("The fewest GPUs one machine must have"))
        self.spot = QCheckBox(tr("Spot prices"), objectName="compare-spot")
        self.compare_button = QPushButton(icon("refresh"), tr("&Compare"), objectName="compare-button")
        self.compare_button.clicked.connect(self.compare)
        self.update_button = QPushButton(icon("refresh"), tr("&Update prices"), objectName="update-prices")
        self.update_button.setToolTip(tr("Read the clouds' public price lists (no account needed) into your "
                                         "price cache"))
        self.update_button.clicked.connect(self.update_prices)
        self.add_account = QPushButton(icon("add"), tr("Add an account to launch here"), objectName="add-account-here")
        self.add_account.setEnabled(False)
        self.add_account.clicked.connect(self._add_account)
        self.progress = QProgressBar(objectName="compare-progress", minimum=0, maximum=0, textVisible=False)
        self.progress.setVisible(False)
        self.status = QLabel(objectName="compare-status")
        self.status.setWordWrap(True)
        self.stale = InlineMessage("warning", "compare-stale")
        self.empty = InlineMessage("error", "compare-empty")
        self.errors = InlineMessage("warning", "compare-errors")

        self.model = CompareModel(self)
        self.table = QTableView(objectName="compare-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        header = self.table.horizontalHeader()  # beside the prices (a cluster's "free now: 3 of 8 nodes")
        header.moveSection(header.visualIndex(COL_AVAILABILITY), COL_SPOT + 1)
        self.table.clicked.connect(lambda _i: self._selection())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection())

        form = QHBoxLayout()
        form.addWidget(QLabel(tr("GPU:")))
        form.addWidget(self.gpu)
        form.addWidget(QLabel(tr("GPUs per machine, at least:")))
        form.addWidget(self.count)
        form.addWidget(self.spot)
        form.addWidget(self.compare_button)
        form.addStretch(1)
        form.addWidget(self.progress)
        form.addWidget(self.update_button)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.add_account)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.stale)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.empty)
        lay.addWidget(self.errors)
        lay.addLayout(bottom)
        self.result: "Found | None" = None
        self.busy = False
        #: provider → base URL of its public price list (a mirror; tests point it at a local server)
        self.price_list_urls: dict[str, str] = {}
        #: the regions to refresh (None: every region of the catalog)
        self.price_regions: list[str] | None = None
        self._generation = 0
        for w in (self.gpu, ):
            w.activated.connect(lambda _i: self.compare())
        self.spot.toggled.connect(lambda _on: self.compare())
        self.count.editingFinished.connect(self.compare)

    def query(self) -> OfferQuery:
        model = self.gpu.currentData() or None
        return OfferQuery(gpu_model=model, gpu_count=self.count.value() if model or self.count.value() > 1 else None,
                          spot=self.spot.isChecked())

    def showEvent(self, event) -> None:  # noqa: N802 (Qt)
        super().showEvent(event)
        if self.result is None and not self.busy:
            self.compare()

    # -- comparing ----------------------------------------------------------------------
    def compare(self) -> None:
        """Ask every account and the price catalog (off the UI thread)."""
        if self.session.accounts is None:
            return
        q = self.query()
        self._generation += 1
        gen = self._generation
        self._busy(True, tr("Comparing prices…"))
        (self.session.run(_browse, self.session.accounts, q)
         .then(lambda result: self._shown(gen, q, result))
         .fail(lambda exc: self._failed(gen, exc)))

    def _busy(self, on: bool, text: str = "") -> None:
        self.busy = on
        self.progress.setVisible(on)
        self.compare_button.setEnabled(not on)
        if text:
            self.status.setText(text)

    def _shown(self, gen: int, q: OfferQuery, result: "Found") -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return
        from workbench.core.providers.price_snapshot import STALE_AFTER_DAYS, is_stale

        self._busy(False)
        self.result = result
        self.model.set_offers(result.ranked, q.spot)
        clouds = sorted({r.offer.provider for r in result.ranked})
        priced = [r for r in result.ranked if r.price is not None and not your_cluster(r.offer)]  # what a rent costs
        if priced:
            # the table's first priced row: offers come ranked at the user's rate across currencies (a
            # min() of the raw figures would weigh ¥19.73 above $3.06)
            best = priced[0]
            self.status.setText(tr("{count} offers from {clouds}; cheapest {price}/h: {provider} {type} in {region}.")
                                .format(count=len(result.ranked), clouds=", ".join(clouds),
                                        price=money(best.price, best.offer.prices.currency), provider=best.offer.provider,
                                        type=best.offer.instance_type, region=best.offer.region))
        else:
            self.status.setText(tr("{count} offers.").format(count=len(result.ranked)))
        oldest = result.oldest_price
        if oldest and is_stale(oldest):
            self.stale.show_text(tr("Prices from {date} (older than {days} days): press Update prices for the "
                                    "current public prices.").format(date=oldest[:10], days=STALE_AFTER_DAYS))
        else:
            self.stale.show_text(None)
        self.empty.show_text(tr("No offer matches: {reason}").format(reason=result.reason.detail)
                             if result.reason else None)
        if result.errors:
            lines = [tr("Some accounts could not be asked; their clouds are priced from the catalog:")]
            lines += [f"• {name}: {exc.message}" + (f" ({exc.hint})" if exc.hint else "") for name, exc in result.errors]
            self.errors.show_text("\n".join(lines))
        else:
            self.errors.show_text(None)
        self._selection()
        self.compared.emit()

    def _failed(self, gen: int, exc: BaseException) -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return
        self._busy(False)
        self.empty.show_text(tr("Prices could not be compared: {error}").format(error=getattr(exc, "message", exc)))
        self.compared.emit()

    # -- selection -> add an account ---------------------------------------------------
    def selected(self):
        rows = self.table.selectionModel().selectedRows()
        return self.model.data(rows[0], OFFER_ROLE) if rows else None

    def _selection(self) -> None:
        r = self.selected()
        self.add_account.setEnabled(bool(r is not None and r.needs_account))
        if r is not None and r.needs_account:
            self.add_account.setToolTip(tr("Add a {provider} account to launch {type} in {region}").format(
                provider=r.offer.provider, type=r.offer.instance_type, region=r.offer.region))

    def _add_account(self) -> None:
        r = self.selected()
        if r is not None:
            self.add_account_requested.emit(r.offer.provider)

    # -- updating prices ---------------------------------------------------------------
    def update_prices(self) -> None:
        if self.session.accounts is None or not self.update_button.isEnabled():
            return
        self.update_button.setEnabled(False)
        self._busy(True, tr("Reading the public price lists (this can take minutes)…"))
        (self.session.run(_update_prices, self.session.accounts, dict(self.price_list_urls), self.price_regions,
                          lane=PRICES)
         .then(self._updated).fail(self._update_failed))

    def _updated(self, results) -> None:
        if not shiboken6.isValid(self):
            return
        self.update_button.setEnabled(True)
        self._busy(False)
        failed = [r for r in results if not r.ok]
        done = [r for r in results if r.ok]
        text = [tr("{provider}: {rows} prices as of {date}").format(provider=r.provider, rows=r.rows, date=r.as_of)
                for r in done]
        text += [tr("{provider}: not updated ({error})").format(provider=r.provider, error=r.error.message)
                 for r in failed]
        self.status.setText("; ".join(text))
        self.prices_updated.emit(results)
        self.compare()

    def _update_failed(self, exc: BaseException) -> None:
        if not shiboken6.isValid(self):
            return
        self.update_button.setEnabled(True)
        self._busy(False)
        self.status.setText(tr("Prices were not updated: {error}").format(error=getattr(exc, "message", exc)))
        self.prices_updated.emit(exc)
