"""The "Prices" view: compare GPUs across clouds and plan a job's cost, with or without an account.

Two tabs over the same session: :class:`~workbench.ui.prices.compare_view.CompareView` (offers of every
cloud, priced from the catalog where no account answers, "Add an account to launch here") and
:class:`~workbench.ui.money.planner_view.PlannerView` (on-demand, spot, reserved, savings plans and
buying, with a chart).  ``add_account_requested`` carries a provider id to the main window, which
opens the Accounts view on it.  Main thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from workbench.ui.i18n import tr
from workbench.ui.money.planner_view import PlannerView
from workbench.ui.prices.compare_view import CompareView

if TYPE_CHECKING:
    from workbench.ui.runtime.session import Session


class PricesView(QWidget):
    """Compare GPUs | Plan a job's cost."""

    add_account_requested = Signal(str)

    def __init__(self, session: "Session", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("prices-view")
        self.session = session
        self.compare = CompareView(session)
        self.planner = PlannerView(session)
        self.tabs = QTabWidget(objectName="prices-tabs")
        self.tabs.addTab(self.compare, tr("Compare GPUs"))
        self.tabs.addTab(self.planner, tr("Plan a job's cost"))
        self.compare.add_account_requested.connect(self.add_account_requested)
        self.compare.prices_updated.connect(lambda _r: self.planner.plan is not None and self.planner.run_plan())
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)

    def show_planner(self) -> None:
        self.tabs.setCurrentWidget(self.planner)
