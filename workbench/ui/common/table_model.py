"""The shared part of the app's table models: rows in a list, translated column titles."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from workbench.ui.i18n import tr


class RowTableModel(QAbstractTableModel):
    """A table of ``self._rows`` with ``columns`` (N_()-marked English titles, shown through tr()).

    Subclasses implement ``data()``; everything else a read-only table needs is here.
    """

    columns: ClassVar[tuple[str, ...]] = ()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt naming)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(self.columns[section])
        return None
