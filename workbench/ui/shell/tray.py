"""The tray icon (where the platform has one): burn rate in the tooltip, a menu, notifications.

Notifications fall back to the status bar when there is no tray (the main
window connects both), so nothing is lost on desktops without one.
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from workbench.ui.i18n import tr
from workbench.ui.common.icons import icon
from workbench.ui.runtime.session import Snapshot
from workbench.ui.shell.badge import badge_text

_LEVELS = {"info": QSystemTrayIcon.MessageIcon.Information, "warning": QSystemTrayIcon.MessageIcon.Warning,
           "error": QSystemTrayIcon.MessageIcon.Critical}


class Tray(QSystemTrayIcon):
    """Tray icon with Show window / Stop all billing / Quit."""

    def __init__(self, window: QWidget, stop_all: QAction, quit_action: QAction) -> None:
        super().__init__(icon("app"), window)
        self.window = window
        menu = QMenu(window)
        show = menu.addAction(tr("Show Cloud GPU Workbench"))
        show.triggered.connect(self.show_window)
        menu.addSeparator()
        menu.addAction(stop_all)
        menu.addSeparator()
        menu.addAction(quit_action)
        self.menu = menu
        self.setContextMenu(menu)
        self.activated.connect(self._activated)
        self.setToolTip(tr("Cloud GPU Workbench"))

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.show_window()

    def show_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def update_snapshot(self, snap: Snapshot) -> None:
        """The tooltip counts money: free jobs on this computer are running, not billing."""
        self.setToolTip(tr("Cloud GPU Workbench — {state}").format(state=badge_text(snap)[0]))

    def notify(self, title: str, message: str, level: str) -> None:
        if self.isVisible() and self.supportsMessages():
            self.showMessage(title, message, _LEVELS.get(level, _LEVELS["info"]), 8000)
