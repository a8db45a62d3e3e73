"""Open and close the main window once: the GUI part of `workbench --self-test`."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from workbench.ui.shell.main_window import MainWindow


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


def draw_a_plot() -> str:
    """Draw a pyqtgraph plot off screen (the monitor builds its plots on first use); returns versions."""
    import numpy
    import pyqtgraph as pg

    QApplication.instance() or QApplication(["workbench-self-test"])
    plot = pg.PlotWidget()
    plot.plot(numpy.arange(10.0), numpy.arange(10.0) ** 2)
    plot.grab()  # renders it
    plot.deleteLater()
    return f"pyqtgraph {pg.__version__}, numpy {numpy.__version__}"


def qt_translations_dir() -> str:
    """Where Qt looks for its own catalogues (qtbase_<lang>.qm)."""
    from PySide6.QtCore import QLibraryInfo

    return QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
