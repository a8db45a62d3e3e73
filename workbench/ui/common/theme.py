"""Light and dark: follow the system's colour scheme, or the user's choice in settings.

The system's scheme comes from ``QStyleHints.colorScheme()`` (Qt asks the
desktop: GNOME/KDE portal, Windows, macOS).  A dark scheme gets an explicit
Fusion palette, because not every platform theme supplies one (offscreen,
xcb without a portal); light uses the style's standard palette.  Icons,
plots and state colours read the palette when they are made, so the window
is right from the start; a switch while running recolours the main window's
icons (see MainWindow.changeEvent), other views at their next start.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

_follow: list[bool] = [False]
_current: list[str] = ["system"]


def dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor("#1e2227"), QColor("#2b3036"), QColor("#e6e6e6")
    disabled = QColor("#7d848c")
    for role, color in ((QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
                        (QPalette.ColorRole.Base, base), (QPalette.ColorRole.AlternateBase, QColor("#262b31")),
                        (QPalette.ColorRole.ToolTipBase, window), (QPalette.ColorRole.ToolTipText, text),
                        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.Button, window),
                        (QPalette.ColorRole.ButtonText, text), (QPalette.ColorRole.BrightText, QColor("#ff6e6e")),
                        (QPalette.ColorRole.Link, QColor("#6cb4ff")), (QPalette.ColorRole.Highlight, QColor("#2f6db5")),
                        (QPalette.ColorRole.HighlightedText, QColor("#ffffff")),
                        (QPalette.ColorRole.PlaceholderText, disabled), (QPalette.ColorRole.Mid, QColor("#3a4048")),
                        (QPalette.ColorRole.Dark, QColor("#16191d")), (QPalette.ColorRole.Light, QColor("#3d434b"))):
        p.setColor(role, color)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


def wants_dark(setting: str) -> bool:
    if setting in ("light", "dark"):
        return setting == "dark"
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply(setting: str) -> bool:
    """Apply ``"system"``, ``"light"`` or ``"dark"``; returns True when the result is dark."""
    app = QApplication.instance()
    if app is None:
        return False
    _current[0] = setting
    dark = wants_dark(setting)
    if dark or setting == "light":
        app.setStyle("Fusion")  # native styles ignore a custom palette on some platforms
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    if setting == "system" and not _follow[0]:
        _follow[0] = True  # follow the desktop when it switches while the app runs
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _s: apply("system") if _current[0] == "system" else None)
    return dark


def is_dark() -> bool:
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
