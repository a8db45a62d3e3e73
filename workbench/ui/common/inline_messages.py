"""Inline messages under a form: a red error (blocks the page) and an amber warning (informs).

The label hides itself while it has no text, so a page without problems has
no empty gap.  Main thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QLabel, QWidget


def _dark() -> bool:
    return QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128


class InlineMessage(QLabel):
    """A word-wrapped, selectable label in the colour of its ``kind`` ("error" or "warning")."""

    def __init__(self, kind: str, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.setObjectName(object_name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if kind == "error":
            color = "#ff8a65" if _dark() else "#c62828"
        else:
            color = "#ffca28" if _dark() else "#8a5a00"
        self.setStyleSheet(f"QLabel {{ color: {color}; font-weight: bold; }}")
        self.setVisible(False)

    def show_text(self, text: str | None) -> None:
        """Show ``text`` with a warning sign, or hide the label when it is empty.

        An error gets one sign; a warning one per line (each line is its own
        warning), except bullet lines ("• …") that detail the line above.
        """
        if not text:
            self.setText("")
        elif self.kind == "warning":
            self.setText("\n".join(line if line.startswith("•") else f"⚠ {line}" for line in text.split("\n")))
        else:
            self.setText(f"⚠ {text}")
        self.setVisible(bool(text))
