"""Light and dark: follow the system's colour scheme, or the user's choice in settings.

Qt 6.8+ can be told the scheme (``QStyleHints.setColorScheme``) and then gives
the Fusion style a matching palette; the app re-reads colours (icons, plots,
state colours) from the palette, so one switch updates everything.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

SCHEMES = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}


def apply(setting: str) -> None:
    """``"system"`` follows the desktop; ``"light"``/``"dark"`` force a scheme."""
    app = QApplication.instance()
    if app is None:
        return
    if app.style().name().lower() not in ("fusion",) and setting != "system":
        app.setStyle("Fusion")  # native styles ignore a forced scheme on some platforms
    hints = QGuiApplication.styleHints()
    if setting in SCHEMES:
        hints.setColorScheme(SCHEMES[setting])
    else:
        hints.unsetColorScheme()


def is_dark() -> bool:
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
