"""How a SkyPilot or dstack job file was read: one row per field (mapped, ignored, refused).

Shown on the wizard's job page under an opened file that is not our own spec; the rows are
the importer's notes (``workbench.core.domain.importers``), the same that ``workbench convert``
prints as comments.  Main thread only.
"""

from __future__ import annotations

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGroupBox, QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from workbench.core.domain.importers import IGNORED, KIND_DSTACK, KIND_SKYPILOT, MAPPED, REFUSED, ImportResult
from workbench.ui.i18n import N_, tr

STATUS_TEXT = {MAPPED: N_("mapped"), IGNORED: N_("ignored"), REFUSED: N_("refused")}
KIND_TEXT = {KIND_SKYPILOT: N_("a SkyPilot task"), KIND_DSTACK: N_("a dstack task")}


class ImportNotesPanel(QGroupBox):
    """The field notes of an imported job file; hidden for our own specs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("How this file was read"), parent)
        self.setObjectName("import-notes-panel")
        self.summary = QLabel(objectName="import-summary", wordWrap=True)
        self.tree = QTreeWidget(objectName="import-notes")
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels([tr("Line"), tr("Field"), tr("Status"), tr("What it became, or why")])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        header = self.tree.header()
        for col in (0, 1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        self.setVisible(False)

    def show_result(self, result: ImportResult | None) -> None:
        """Show ``result``'s notes, or hide the panel (None, or our own spec)."""
        self.tree.clear()
        if result is None or result.kind not in KIND_TEXT:
            self.setVisible(False)
            return
        counts = {s: sum(1 for n in result.notes if n.status == s) for s in STATUS_TEXT}
        self.summary.setText(tr("Read as {kind}: {mapped} fields mapped, {ignored} ignored (no effect here), "
                                "{refused} refused (cannot run here yet).").format(
            kind=tr(KIND_TEXT[result.kind]), mapped=counts[MAPPED], ignored=counts[IGNORED],
            refused=counts[REFUSED]))
        for n in result.notes:
            item = QTreeWidgetItem([str(n.line), n.field, tr(STATUS_TEXT[n.status]), n.detail])
            item.setToolTip(3, n.detail)
            if n.status == REFUSED:
                for col in range(4):
                    item.setForeground(col, QBrush(QColor("#c62828")))
            elif n.status == IGNORED:
                for col in range(4):
                    item.setForeground(col, QBrush(QColor("#7a7a7a")))
            self.tree.addTopLevelItem(item)
        self.setVisible(True)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The rows as shown (tests, screenshots)."""
        return [tuple(self.tree.topLevelItem(i).text(c) for c in range(4))  # type: ignore[misc]
                for i in range(self.tree.topLevelItemCount())]
