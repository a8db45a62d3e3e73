"""The Launch view: three big ways in (new, open a spec, quick local example) and the recent launches.

The recent-launches table follows ``session.snapshot_changed`` (no provider
calls here).  The wizard opens window-modal and non-blocking (``open()``);
the view keeps it in ``self.wizard`` and re-emits its ``launched`` signal so
the main window can switch to the instances.  Main thread only.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QAbstractItemView, QCommandLinkButton, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QTableView, QVBoxLayout, QWidget)

from workbench.core import paths
from workbench.core.store.database import LaunchRecord
from workbench.ui.common.format import money
from workbench.ui.common.table_model import RowTableModel
from workbench.ui.i18n import N_, tr
from workbench.ui.common.icons import icon
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session, Snapshot

QUICK_EXAMPLE = "local-smoke.yaml"
COLUMNS = (N_("Name"), N_("Provider / profile"), N_("Region"), N_("Status"), N_("Created"), N_("Projected cost"))
STATUS_LABELS = {
    "launching": N_("launching"), "running": N_("running"), "finished": N_("finished"), "failed": N_("failed"),
    "terminated": N_("terminated"), "recovered": N_("recovered"), "stopped": N_("stopped"),
}


def quick_example_path() -> str:
    """The few-second local job behind "Quick example"."""
    return str(paths.resources_dir() / "examples" / QUICK_EXAMPLE)


class RecentLaunchesModel(RowTableModel):
    """Launch records of the latest snapshot, newest first."""

    columns = COLUMNS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[LaunchRecord] = []

    def set_snapshot(self, snap: Snapshot) -> None:
        self.beginResetModel()
        self._rows = sorted(snap.launches.values(), key=lambda r: -r.created_at)
        self.endResetModel()

    def record(self, row: int) -> LaunchRecord:
        return self._rows[row]

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            status = STATUS_LABELS.get(r.status)
            return (
                r.name,
                f"{r.provider} / {r.profile}",
                r.region or "–",
                tr(status) if status else r.status,
                time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
                money(r.projected_cost, r.currency),
            )[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = tr("launch {id}").format(id=r.launch_id)
            return tip + (f"\n{r.error}" if r.error else "")
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() == 5:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class LaunchView(QWidget):
    """Entry points to the launch wizard and a table of recent launches."""

    launched = Signal(str)  # launch id, re-emitted from the wizard

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("launch-view")
        self.session = session
        self.wizard: LaunchWizard | None = None
        self.file_dialog: QFileDialog | None = None

        title = QLabel(tr("Launch a job"), objectName="launch-title")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        self.new_button = QCommandLinkButton(tr("&New launch…"), tr("Describe the job in a short form."),
                                             objectName="new-launch")
        self.open_button = QCommandLinkButton(tr("&Open job spec…"), tr("Launch a job described in a YAML file."),
                                              objectName="open-spec")
        self.quick_button = QCommandLinkButton(
            tr("&Quick example: run a short job on this computer"),
            tr("A few seconds, no cloud account, no bill: see how a launch works."), objectName="quick-example")
        self.new_button.setIcon(icon("add"))
        self.open_button.setIcon(icon("open"))
        self.quick_button.setIcon(icon("launch"))
        self.new_button.clicked.connect(lambda: self.start_wizard())
        self.open_button.clicked.connect(self.open_spec)
        self.quick_button.clicked.connect(self.quick_example)

        self.model = RecentLaunchesModel(self)
        self.table = QTableView(objectName="recent-launches")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        recent = QLabel(tr("&Recent launches"))
        recent.setBuddy(self.table)

        buttons = QHBoxLayout()
        for b in (self.new_button, self.open_button, self.quick_button):
            buttons.addWidget(b, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addLayout(buttons)
        layout.addSpacing(12)
        layout.addWidget(recent)
        layout.addWidget(self.table, 1)

        session.snapshot_changed.connect(self.model.set_snapshot)
        self.model.set_snapshot(session.snapshot)

    def start_wizard(self, spec_path: str | None = None) -> LaunchWizard:
        """Open the wizard (on ``spec_path``'s job when given); a wizard mid-launch is only raised."""
        if self.wizard is not None and self.wizard.isVisible():
            if self.wizard.busy():
                self.wizard.raise_()
                self.wizard.activateWindow()
                return self.wizard
            self.wizard.close()
        if self.wizard is not None and not self.wizard.busy():
            self.wizard.deleteLater()  # a finished or closed wizard is not needed again
        self.wizard = LaunchWizard(self.session, spec_path=spec_path, parent=self)
        self.wizard.launched.connect(self.launched)
        self.wizard.open()
        return self.wizard

    def open_spec(self) -> None:
        """Pick a YAML job spec (non-blocking dialog), then open the wizard on it."""
        dlg = QFileDialog(self, tr("Open job spec"), str(paths.resources_dir() / "examples"),
                          tr("Job specs, SkyPilot and dstack files (*.yaml *.yml);;All files (*)"))
        dlg.setObjectName("open-spec-dialog")
        dlg.setFileMode(QFileDialog.FileMode.ExistingFile)
        dlg.fileSelected.connect(self.start_wizard)
        self.file_dialog = dlg
        dlg.open()

    def quick_example(self) -> LaunchWizard:
        return self.start_wizard(quick_example_path())
