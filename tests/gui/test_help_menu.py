"""Help: Getting started, Keyboard shortcuts (from the window's own actions), Report a problem (versions and
the real `workbench doctor`, scrubbed, on the clipboard), About with versions."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication

from workbench import __version__
from workbench.core import applog
from workbench.ui.shell.help_menu import ShortcutsDialog, TextDialog, scrub
from workbench.ui.shell.main_window import MainWindow


def _window(qtbot, accounts) -> MainWindow:
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    return win


def test_help_menu_lists_its_entries_each_with_a_shortcut(qtbot, accounts):
    win = _window(qtbot, accounts)
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Help")
    texts = [a.text() for a in menu.actions() if a.text()]
    assert texts == ["&Getting started", "&Keyboard shortcuts", "&Report a problem…", "Open &log file", "&About"]
    assert all(not a.shortcut().isEmpty() for a in menu.actions() if a.text())


def test_getting_started_and_shortcuts(qtbot, accounts):
    win = _window(qtbot, accounts)
    win.help.getting_started_action.trigger()
    dlg = win.findChild(TextDialog, "getting-started")
    assert dlg.isVisible() and "Quick example" in dlg.text.toPlainText() and "Stop all billing" in dlg.text.toPlainText()
    win.help.shortcuts_action.trigger()
    table = win.findChild(ShortcutsDialog).table
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert rows["Stop all billing"] == "Ctrl+Shift+K" and rows["New launch"] == "Ctrl+N"
    assert rows["Terminate"] == "Del" and rows["Keyboard shortcuts"] == "Ctrl+/"


def test_report_a_problem_puts_versions_and_the_doctor_on_the_clipboard_without_secrets(qtbot, accounts):
    applog.register_secret("tok-report-secret-123")
    assert scrub(f"key tok-report-secret-123 in {Path.home()}/x") == "key **** in ~/x"
    win = _window(qtbot, accounts)
    QGuiApplication.clipboard().setText("")
    win.help.report_action.trigger()
    qtbot.waitUntil(lambda: win.help.report is not None, timeout=120_000)
    text = QGuiApplication.clipboard().text()
    assert text == win.help.report.text.toPlainText()
    assert f"Cloud GPU Workbench: {__version__}" in text and "Python:" in text and "Qt:" in text
    assert "$ workbench doctor" in text and "[ok  ] store:" in text  # the real doctor ran
    assert str(Path.home()) not in text


def test_about_names_the_versions(qtbot, accounts):
    win = _window(qtbot, accounts)
    box = win.help.about()
    assert __version__ in box.informativeText() and "Python" in box.informativeText()
    assert "Qt" in box.informativeText()
