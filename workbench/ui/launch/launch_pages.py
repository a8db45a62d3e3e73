"""Wizard pages 2 and 3: choose an offer, set the guards that end the bill.

The offer page asks every configured profile for offers in the background
(``catalog.collect`` on the session's read pool) with a busy indicator; a
provider that fails is listed with its message while the others' offers are
shown.  Results of an older request (the user went back and changed the job)
are dropped by a generation counter.  Both pages read the job from the
wizard's draft and write their own fields to it when the user moves on
(:mod:`workbench.ui.launch.launch_draft`).  Main thread only.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QItemSelectionModel, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDoubleSpinBox, QGridLayout, QHBoxLayout, QHeaderView,
                               QLabel, QProgressBar, QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget,
                               QWizardPage)

from workbench.core.offers.find import WHEN_NOTHING_LAUNCHABLE, Found, find_offers
from workbench.core.offers.query import OfferQuery, RankedOffer
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Guards, Resources
from workbench.ui.common.format import duration, plural
from workbench.ui.common.icons import icon
from workbench.ui.i18n import N_, tr
from workbench.ui.common.inline_messages import InlineMessage
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.offers_model import COL_AVAILABILITY, COL_NETWORK, COL_SPOT, COL_TOTAL, OFFER_ROLE, OffersModel
from workbench.ui.runtime.session import Session

MAX_RUNTIME_LIMIT_MIN = 30 * 24 * 60
MAX_NODES = 64


class OfferPage(QWizardPage):
    """A table of matching offers across all profiles and regions, cheapest first."""

    #: emitted when a fetch finished (offers shown, errors listed)
    offers_loaded = Signal()

    def __init__(self, draft: Draft, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.session = session
        self.setObjectName("launch-offer-page")
        self.setTitle(tr("Machine"))
        self.setSubTitle(tr("Matching offers from all your accounts, cheapest first. "
                            "Offers marked ⚠ cannot be chosen on this account."))
        self.model = OffersModel(self)
        self.table = QTableView(objectName="offers-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        header = self.table.horizontalHeader()
        for n, col in enumerate((COL_TOTAL, COL_AVAILABILITY, COL_NETWORK)):  # beside the prices they are about
            header.moveSection(header.visualIndex(col), COL_SPOT + 1 + n)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self.completeChanged.emit())
        self.table.doubleClicked.connect(self._double_clicked)
        self.progress = QProgressBar(objectName="offers-progress", minimum=0, maximum=0, textVisible=False)
        self.status = QLabel(objectName="offers-status")
        self.refresh_button = QPushButton(icon("refresh"), tr("&Refresh offers"), objectName="refresh-offers")
        self.refresh_button.clicked.connect(self.fetch)
        self.errors = InlineMessage("warning", "offer-errors")
        self.empty = InlineMessage("error", "offers-empty")
        # how many machines of the offer: a multi-node job (resources are per machine)
        self.nodes = QSpinBox(objectName="launch-nodes", minimum=1, maximum=MAX_NODES)
        self.nodes.setToolTip(tr("Several machines run one job together (torchrun, DeepSpeed, MPI); each gets the "
                                 "resources of one offer, and they are placed close together on a fast network."))
        nodes_label = QLabel(tr("&Machines:"))
        nodes_label.setBuddy(self.nodes)
        self.nodes_note = QLabel(objectName="launch-nodes-note")
        self.nodes.valueChanged.connect(self._nodes_changed)
        self._nodes_from: int | None = None  # the spec's num_nodes the spin box was filled from

        top = QHBoxLayout()
        top.addWidget(nodes_label)
        top.addWidget(self.nodes)
        top.addWidget(self.nodes_note)
        top.addSpacing(12)
        top.addWidget(self.status, 1)
        top.addWidget(self.progress)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty)
        layout.addWidget(self.errors)
        self.query: OfferQuery | None = None
        self._asked: object = None  # what the shown offers were asked for (the query and any alternatives)
        self.loading = False
        self.failed: list[tuple[str, WorkbenchError]] = []
        self._generation = 0
        self.progress.setVisible(False)

    def initializePage(self) -> None:  # noqa: N802 (Qt naming)
        spec = self.draft.value.spec
        if spec.num_nodes != self._nodes_from:  # a (new) spec: its num_nodes; the same one: keep the user's choice
            self._nodes_from = spec.num_nodes
            self.nodes.setValue(spec.num_nodes)
        self._nodes_changed(self.nodes.value())
        q = OfferQuery.from_spec(spec)
        asked = (q, spec.alternatives, spec.choose)
        if asked != self._asked or (not self.loading and self.model.rowCount() == 0):
            self.query = q
            self._asked = asked
            self.fetch()

    def fetch(self) -> None:
        """Ask every profile for offers off the UI thread (for each of the spec's alternatives, if any)."""
        spec = self.draft.value.spec
        q = self.query or OfferQuery.from_spec(spec)
        self._generation += 1
        gen = self._generation
        self.loading = True
        self.model.set_offers([], q.spot)
        self.progress.setVisible(True)
        self.refresh_button.setEnabled(False)
        self.empty.show_text(None)
        self.errors.show_text(None)
        self.status.setText(tr("Asking your accounts for offers…"))
        self.completeChanged.emit()
        (self.session.run(find_offers, self.session.accounts, spec, catalog=WHEN_NOTHING_LAUNCHABLE)
         .then(lambda result: self._loaded(gen, q, result))
         .fail(lambda exc: self._load_failed(gen, exc)))

    def _loaded(self, gen: int, q: OfferQuery, result: Found) -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return  # a newer request is on its way
        ranked, errors = result.ranked, result.errors
        self.loading = False
        self.failed = list(errors)
        self.progress.setVisible(False)
        self.refresh_button.setEnabled(True)
        self.model.set_offers(ranked, q.spot)
        usable = sum(1 for r in ranked if r.offer.available)
        self.status.setText(plural(len(ranked), N_("1 matching offer, {usable} can be chosen."),
                                   N_("{count} matching offers, {usable} can be chosen.")).format(
            count=len(ranked), usable=usable))
        if not ranked:  # the real reason: nothing offers it, no account, or the price lists failed
            self.empty.show_text(tr("No offer matches this job: {reason}").format(
                reason=result.reason.detail if result.reason else tr("unknown")))
        elif not usable and any(r.needs_account for r in ranked):
            self.empty.show_text(tr("These prices come from the price catalog: no account of yours can launch "
                                    "them yet. Add an account in Accounts for one of these clouds."))
        elif not usable:
            self.empty.show_text(tr("Every matching offer is blocked by quota or capacity: request a quota "
                                    "increase, or go back and ask for another machine."))
        if errors:
            lines = [tr("Some accounts could not be asked; their offers are missing:")]
            for name, exc in errors:
                lines.append(f"• {name}: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            self.errors.show_text("\n".join(lines))
        spec = self.draft.value.spec
        row = self.model.first_available_row(spec.providers, spec.regions)
        if row >= 0:
            self.select_row(row)
        self.completeChanged.emit()
        self.offers_loaded.emit()

    def _load_failed(self, gen: int, exc: BaseException) -> None:
        if not shiboken6.isValid(self) or gen != self._generation:
            return
        self.loading = False
        self.progress.setVisible(False)
        self.refresh_button.setEnabled(True)
        message = exc.message if isinstance(exc, WorkbenchError) else f"{type(exc).__name__}: {exc}"
        self.status.setText("")
        self.empty.show_text(tr("Offers could not be fetched: {error}").format(error=message))
        self.offers_loaded.emit()

    def _nodes_changed(self, n: int) -> None:
        self.model.set_nodes(n)
        self.table.setColumnHidden(COL_TOTAL, n <= 1)
        self.nodes_note.setText(tr("per machine: prices below are for one; the total is for all {n}").format(n=n)
                                if n > 1 else "")

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)

    def selected(self) -> RankedOffer | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        choice = rows[0].data(OFFER_ROLE)
        return choice if choice is not None and choice.offer.available else None

    def _double_clicked(self, index) -> None:
        if index.isValid() and self.selected() is not None and self.wizard() is not None:
            self.wizard().next()

    def isComplete(self) -> bool:  # noqa: N802
        return not self.loading and self.selected() is not None

    def validatePage(self) -> bool:  # noqa: N802
        choice = self.selected()
        if choice is None:
            return False
        offers = tuple(self.model.offers())
        self.draft.update(offers=offers, choice=choice, nodes=self.nodes.value(),
                          alternatives=sum(1 for r in offers if r.offer.available) - 1)
        return True


class GuardsPage(QWizardPage):
    """Max runtime, idle-GPU shutdown and budget; an unticked limit shows a visible warning.

    What fits the chosen offer: a cloud machine's disk size (not for a job on this computer), and
    the idle-GPU shutdown only when the job gets GPUs.
    """

    def __init__(self, draft: Draft, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.setObjectName("launch-guards-page")
        self.setTitle(tr("Guards"))
        self.setSubTitle(tr("Limits that end the bill even if you forget the job. They are enforced on the "
                            "machine itself, so they work while this app is closed."))
        self.max_runtime_on = QCheckBox(tr("Stop after a &maximum runtime of"), objectName="max-runtime-on")
        self.max_runtime = QSpinBox(objectName="max-runtime", minimum=1, maximum=MAX_RUNTIME_LIMIT_MIN,
                                    suffix=tr(" min"), singleStep=30)
        self.max_runtime_text = QLabel(objectName="max-runtime-text")
        self.idle_on = QCheckBox(tr("Shut down when the GPUs are &idle for"), objectName="idle-on")
        self.idle_minutes = QSpinBox(objectName="idle-minutes", minimum=1, maximum=24 * 60, suffix=tr(" min"))
        self.idle_util = QDoubleSpinBox(objectName="idle-util", minimum=0.5, maximum=100, decimals=1,
                                        suffix=" %", prefix=tr("below "))
        self.budget_on = QCheckBox(tr("Stop when a bud&get of"), objectName="budget-on")
        self.budget = QDoubleSpinBox(objectName="budget", minimum=0.01, maximum=1_000_000, decimals=2,
                                     prefix="$", value=10.0)
        self.warning = InlineMessage("warning", "guards-warning")
        self.disk_label = QLabel(tr("Machine &disk:"))
        self.disk = QSpinBox(objectName="disk-gb", minimum=1, maximum=65536, value=Resources().disk_gb, suffix=" GB")
        self.disk_label.setBuddy(self.disk)
        self.disk_note = QLabel(tr("the cloud machine's disk (billed while the machine exists)"))

        grid = QGridLayout()
        grid.addWidget(self.max_runtime_on, 0, 0)
        grid.addWidget(self.max_runtime, 0, 1)
        grid.addWidget(self.max_runtime_text, 0, 2)
        grid.addWidget(self.idle_on, 1, 0)
        grid.addWidget(self.idle_minutes, 1, 1)
        grid.addWidget(self.idle_util, 1, 2)
        grid.addWidget(self.budget_on, 2, 0)
        grid.addWidget(self.budget, 2, 1)
        grid.addWidget(QLabel(tr("is spent (estimated)")), 2, 2)
        grid.addWidget(self.disk_label, 3, 0)
        grid.addWidget(self.disk, 3, 1)
        grid.addWidget(self.disk_note, 3, 2)
        grid.setColumnStretch(3, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.warning)
        layout.addStretch(1)
        self._prefilled_from: Guards | None = None  # the job page's guards the page was filled from
        for box in (self.max_runtime_on, self.idle_on, self.budget_on):
            box.toggled.connect(self._changed)
        self.max_runtime.valueChanged.connect(self._changed)
        self.here, self.gpus = False, True  # what the chosen offer is: this computer? with GPUs?
        self.fill(Guards())

    def initializePage(self) -> None:  # noqa: N802
        # Prefill from the spec, but keep the user's edits when they come back with the same spec.
        d = self.draft.value
        guards = d.spec.guards
        if guards != self._prefilled_from:
            self._prefilled_from = guards
            self.fill(guards)
            self.disk.setValue(d.disk_gb or d.spec.resources.disk_gb)
        self.fit(d.on_this_computer, d.has_gpu)

    def fit(self, here: bool, gpus: bool) -> None:
        """Ask only what fits the chosen offer: no disk on this computer, no idle-GPU rule without GPUs."""
        self.here, self.gpus = here, gpus
        for w in (self.disk_label, self.disk, self.disk_note):
            w.setVisible(not here)
        for w in (self.idle_on, self.idle_minutes, self.idle_util):
            w.setVisible(gpus)
        self.setSubTitle(tr("Limits that end the job even if you forget it.") if here else tr(
            "Limits that end the bill even if you forget the job. They are enforced on the "
            "machine itself, so they work while this app is closed."))
        self._changed()

    def fill(self, g: Guards) -> None:
        """Show ``g`` on the page (a limit that is None is shown unticked, with its warning)."""
        defaults = Guards()
        self.max_runtime_on.setChecked(g.max_runtime_minutes is not None)
        self.max_runtime.setValue(g.max_runtime_minutes or defaults.max_runtime_minutes or 24 * 60)
        self.idle_on.setChecked(g.idle_minutes is not None)
        self.idle_minutes.setValue(g.idle_minutes or defaults.idle_minutes or 30)
        self.idle_util.setValue(g.idle_util_below)
        self.budget_on.setChecked(g.budget_usd is not None)
        if g.budget_usd is not None:
            self.budget.setValue(g.budget_usd)
        self._changed()

    def guards(self) -> Guards:
        """The limits as set on the page."""
        return Guards(
            max_runtime_minutes=self.max_runtime.value() if self.max_runtime_on.isChecked() else None,
            idle_minutes=self.idle_minutes.value() if self.idle_on.isChecked() and self.gpus else None,
            idle_util_below=self.idle_util.value(),
            budget_usd=self.budget.value() if self.budget_on.isChecked() else None,
        )

    def warnings(self) -> list[str]:
        """One sentence per limit that is off, saying what that means for the bill."""
        g = self.guards()
        out = []
        if g.max_runtime_minutes is None:
            out.append(tr("No runtime limit: the job runs until it ends or you stop it.") if self.here else tr(
                "No runtime limit: the machine keeps billing until the job ends, another guard stops it, or you "
                "stop it."))
        if self.here:
            return out  # a job on this computer bills nothing: the budget and idle rules are about money
        if g.idle_minutes is None and self.gpus:
            out.append(tr("No idle shutdown: a stuck job keeps the GPUs billing while doing nothing."))
        if g.budget_usd is None:
            if g.max_runtime_minutes is None:
                out.append(tr("No budget and no runtime limit: nothing caps the cost."))
            else:
                out.append(tr("No budget: the cost is capped only by the maximum runtime."))
        return out

    def _changed(self) -> None:
        self.max_runtime.setEnabled(self.max_runtime_on.isChecked())
        self.max_runtime_text.setText("= " + duration(self.max_runtime.value() * 60)
                                      if self.max_runtime_on.isChecked() else "")
        self.idle_minutes.setEnabled(self.idle_on.isChecked())
        self.idle_util.setEnabled(self.idle_on.isChecked())
        self.budget.setEnabled(self.budget_on.isChecked())
        self.warning.show_text("\n".join(self.warnings()))

    def validatePage(self) -> bool:  # noqa: N802
        self.draft.update(guards=self.guards(), disk_gb=None if self.here else self.disk.value())
        return True
