"""The main window (foundation version): instances table, refresh, Stop all billing.

The full desktop app (launch wizard, monitor, spend, accounts) grows from
here.  The UI thread only draws: reconcile and teardown run on the
TaskRunner, and the refresh timer skips a tick while a refresh is running.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QTableView, QToolBar

from ..core.accounts import Accounts
from ..core.models import Instance
from ..core.reconcile import reconcile
from ..core.spend import burn_rate
from ..core.teardown import teardown
from .tasks import TaskRunner

COLUMNS = ("Name", "Provider/profile", "Region", "Type", "GPUs", "State", "Uptime", "$/h")


def tr(text: str) -> str:
    """Marks user-visible strings for translation (Qt linguist hook comes with the GUI issue)."""
    return text


class InstancesModel(QAbstractTableModel):
    """Thin Qt adapter over a list of core Instance values."""

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[Instance] = []

    def set_instances(self, rows: list[Instance]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt naming)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return tr(COLUMNS[section])
        return None

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid():
            return None
        inst = self._rows[index.row()]
        if role == Qt.DisplayRole:
            up = time.time() - inst.launched_at if inst.launched_at and inst.state.active else None
            return (inst.name or inst.instance_id, f"{inst.provider}/{inst.profile}", inst.region,
                    inst.instance_type, f"{inst.gpu_count}× {inst.gpu_model}" if inst.gpu_count else "-",
                    inst.state.value + (f" (exit {inst.exit_code})" if inst.exit_code is not None else ""),
                    f"{int(up // 60)} min" if up is not None else "-",
                    f"{inst.price_per_hour:.2f}")[index.column()]
        if role == Qt.ForegroundRole and index.column() == 5 and inst.state.billable:
            return QBrush(QColor("#c62828"))
        return None


class MainWindow(QMainWindow):
    def __init__(self, accounts: Accounts | None = None, refresh_ms: int = 10_000) -> None:
        super().__init__()
        self.setWindowTitle(tr("Cloud GPU Workbench"))
        self.resize(1000, 600)
        self.accounts = accounts
        self.runner = TaskRunner(self)
        self.model = InstancesModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.setCentralWidget(self.table)
        self.badge = QLabel(tr("no machines"))
        self.statusBar().addPermanentWidget(self.badge)

        bar = QToolBar(tr("Main"))
        bar.setObjectName("main-toolbar")
        self.addToolBar(bar)
        self.refresh_action = QAction(tr("Refresh"), self, shortcut=QKeySequence.Refresh,
                                      triggered=self.refresh)
        self.stop_all_action = QAction(tr("Stop all billing"), self, shortcut=QKeySequence("Ctrl+Shift+K"),
                                       triggered=self.stop_all)
        bar.addAction(self.refresh_action)
        bar.addAction(self.stop_all_action)
        btn = bar.widgetForAction(self.stop_all_action)
        if btn is not None:
            btn.setStyleSheet("QToolButton { color: white; background: #c62828; font-weight: bold; "
                              "padding: 4px 10px; border-radius: 3px; }")
        self._refreshing = False
        self.timer = QTimer(self, interval=refresh_ms, timeout=self.refresh)
        if accounts is not None:
            self.timer.start()
            QTimer.singleShot(0, self.refresh)

    def refresh(self) -> None:
        if self.accounts is None or self._refreshing:
            return  # skip this tick: the previous refresh is still running
        self._refreshing = True
        self.statusBar().showMessage(tr("Refreshing…"))
        accounts = self.accounts

        def work() -> tuple[list[Instance], list[str]]:
            result = reconcile(accounts)
            return accounts.store.list_instances(), [f"{n}: {e.message}" for n, e in result.errors]

        self.runner.run(work).then(self._show).fail(self._error).finally_(self._refresh_done)

    def _refresh_done(self) -> None:
        self._refreshing = False

    def _show(self, result: tuple[list[Instance], list[str]]) -> None:
        instances, errors = result
        self.model.set_instances(instances)
        billable = [i for i in instances if i.state.billable]
        self.badge.setText(tr(f"{len(billable)} billable · ${burn_rate(instances):.2f}/h"))
        self.statusBar().showMessage("; ".join(errors) if errors else tr("Up to date"), 10_000)

    def _error(self, exc: BaseException) -> None:
        self.statusBar().showMessage(tr(f"Refresh failed: {exc}"), 10_000)

    def stop_all(self) -> None:
        if self.accounts is None:
            return
        billable = [i for i in self.model._rows if i.state.billable]
        rate = burn_rate(billable)
        answer = QMessageBox.warning(
            self, tr("Stop all billing"),
            tr(f"Terminate all {len(billable)} billable machine(s) (${rate:.2f}/h) and delete their leftovers?"),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.stop_all_action.setEnabled(False)
        self.statusBar().showMessage(tr("Stopping all billing…"))
        self.runner.run(teardown, self.accounts, None, lane="teardown").then(self._stopped).fail(
            self._error).finally_(lambda: (self.stop_all_action.setEnabled(True), self.refresh()))

    def _stopped(self, report: Any) -> None:
        if report.remaining:
            QMessageBox.critical(self, tr("Still billing"), tr(
                "These are still billing:\n" + "\n".join(
                    f"{x.provider}/{x.profile} {getattr(x, 'instance_id', getattr(x, 'resource_id', ''))}"
                    for x in report.remaining)))
        else:
            self.statusBar().showMessage(tr(f"Verified: {len(report.terminated)} terminated, nothing billing"),
                                         10_000)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.timer.stop()
        self.runner.shutdown(wait=False)
        super().closeEvent(event)
