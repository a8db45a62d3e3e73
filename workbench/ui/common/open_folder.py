"""Open a folder in the file manager; where none can, show the path with a Copy button.

``QDesktopServices.openUrl`` returns False when the desktop has no handler for folders (a bare
window manager, a server under Xvfb): the user still learns where the files are and can copy
the path.  Main thread only; the dialog is non-blocking (``open()``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
                               QWidget)

from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr


class PathDialog(QDialog):
    """"No file manager could open it" with the folder's path, selectable, and Copy."""

    def __init__(self, path: Path, parent: QWidget | None = None, why: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("path-dialog")
        self.setWindowTitle(tr("Folder"))
        self.text = QLabel(why or tr("No file manager could open this folder. It is here:"))
        self.text.setWordWrap(True)
        self.path = QLineEdit(str(path))
        self.path.setObjectName("path-dialog-path")
        self.path.setReadOnly(True)
        self.path.setMinimumWidth(min(900, self.path.fontMetrics().horizontalAdvance(str(path)) + 40))
        self.copy_button = QPushButton(icon("copy"), tr("&Copy"))
        self.copy_button.setObjectName("path-dialog-copy")
        self.copy_button.clicked.connect(self.copy)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.copy_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.text)
        lay.addLayout(row)
        lay.addWidget(buttons)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.path.text())
        self.copy_button.setText(tr("Copied"))


def open_folder(path: Path, parent: QWidget | None = None) -> PathDialog | None:
    """Open ``path`` in the file manager; None when it opened, else the dialog that shows the path."""
    if path.is_dir() and QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return None
    why = None if path.is_dir() else tr("This folder does not exist yet. It will be here:")
    dlg = PathDialog(path, parent, why)
    dlg.open()
    return dlg
