"""Open and close the main window once: the GUI part of `workbench --self-test`."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from .main_window import MainWindow


def open_and_close_main_window() -> str:
    """Show the main window (no accounts: nothing touches the network), pump events, close it."""
    app = QApplication.instance() or QApplication(["workbench-self-test"])
    win = MainWindow(accounts=None)
    win.show()
    app.processEvents()
    if not win.isVisible():
        raise RuntimeError("the main window did not become visible")
    title = win.windowTitle()
    win.close()
    app.processEvents()
    return title
