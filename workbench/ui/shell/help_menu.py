"""The Help menu: Getting started, Keyboard shortcuts, Report a problem, the log file, About.

* **Getting started**: the first steps in a few lines (the free example, prices, an account, Stop all).
* **Keyboard shortcuts**: read from the window's own actions, so the list is never out of date.
* **Report a problem**: the app's versions and ``workbench doctor``'s output (run in a child process,
  off the UI thread), scrubbed of secrets, the home folder and the user name, copied to the clipboard
  and shown for the user to read before pasting it anywhere.
* **About**: the versions of the app, Python, Qt and the cloud SDKs.

Main thread only (the doctor runs on the session's TaskRunner).
"""

from __future__ import annotations

import getpass
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QMenu, QMessageBox, QPlainTextEdit, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from workbench.core import applog
from workbench.ui.common.dialogs import log_file_url
from workbench.ui.i18n import tr

#: distributions whose versions a report names (missing ones are said to be missing)
REPORTED = ("cloud-gpu-workbench", "PySide6-Essentials", "PySide6", "boto3", "azure-mgmt-compute", "azure-identity",
            "alibabacloud-ecs20140526", "keyring", "paramiko", "pyqtgraph", "numpy")


def app_version() -> str:
    try:
        return metadata.version("cloud-gpu-workbench")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "dev"


def versions() -> list[tuple[str, str]]:
    """(what, version) for the app, Python, the OS and the libraries that matter in a report."""
    from PySide6 import QtCore

    rows = [(tr("Cloud GPU Workbench"), app_version()), ("Python", platform.python_version()),
            (tr("System"), platform.platform()), ("Qt", QtCore.qVersion())]
    for dist in REPORTED[1:]:
        try:
            rows.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            continue
    return rows


def scrub(text: str) -> str:
    """Secrets the app knows (applog), the home folder and the user name out of a text meant for others."""
    text = applog.scrub(text).replace(str(Path.home()), "~")
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name to hide
        user = ""
    return text.replace(user, "<user>") if len(user) >= 3 else text


def _self_argv(*args: str) -> list[str]:
    return [sys.executable, *args] if getattr(sys, "frozen", False) else [sys.executable, "-m", "workbench", *args]


def problem_report() -> str:
    """The text of a problem report (worker thread: the doctor takes seconds)."""
    lines = [f"{what}: {version}" for what, version in versions()]
    try:
        proc = subprocess.run(_self_argv("doctor"), capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        doctor = proc.stdout + (proc.stderr if proc.returncode else "")
    except (OSError, subprocess.TimeoutExpired) as exc:
        doctor = f"workbench doctor could not run: {exc}"
    return scrub("\n".join(["Cloud GPU Workbench problem report", "", *lines, "", "$ workbench doctor", doctor.rstrip()]))


class TextDialog(QDialog):
    """A heading and a read-only text (the report, the getting-started steps)."""

    def __init__(self, title: str, heading: str, text: str, parent: QWidget | None = None,
                 name: str = "help-text") -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.heading = QLabel(heading)
        self.heading.setWordWrap(True)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)
        self.resize(720, 460)


def getting_started_text() -> str:
    return "\n\n".join([
        tr("1. Try it for free: Launch (Ctrl+N) → Quick example runs a short job on this computer. "
           "Watch it in Instances, Logs (Ctrl+L) and Monitor (Ctrl+M)."),
        tr("2. Compare GPU prices: the offers list every cloud's prices with their source and date, "
           "even before you have an account."),
        tr("3. Add an account: Accounts → Add (AWS, Azure …). Secrets go to the system keyring only; "
           "Test shows who you are or exactly why not."),
        tr("4. Launch on a cloud: pick an offer, keep the guards (max runtime, idle GPU, budget), launch. "
           "The badge shows what bills now."),
        tr("5. Stop the bill: the red Stop all billing button (Ctrl+Shift+K) ends every machine and says "
           "\"0 billable resources remain\" only after checking with each provider."),
    ])


def shortcuts(win: QWidget) -> list[tuple[str, str]]:
    """(action, key) for every action of the window that has a shortcut, as the user would press it."""
    seen: dict[str, str] = {}
    for a in win.findChildren(QAction):
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts())
        text = a.text().replace("&", "").rstrip("…").strip()
        if keys and text and text not in seen:
            seen[text] = keys
    return sorted(seen.items(), key=lambda kv: kv[0].lower())


class ShortcutsDialog(QDialog):
    def __init__(self, win: QWidget) -> None:
        super().__init__(win)
        self.setObjectName("shortcuts-dialog")
        self.setWindowTitle(tr("Keyboard shortcuts"))
        rows = shortcuts(win)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels([tr("Action"), tr("Keys")])
        self.table.verticalHeader().setVisible(False)
        for n, (text, keys) in enumerate(rows):
            self.table.setItem(n, 0, QTableWidgetItem(text))
            self.table.setItem(n, 1, QTableWidgetItem(keys))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(buttons)
        self.resize(520, 480)


class HelpMenu:
    """Fills the window's Help menu; keeps the dialogs it opened (tests and screenshots find them)."""

    def __init__(self, win: Any, menu: QMenu) -> None:  # win: the main window
        self.win = win
        self.report: TextDialog | None = None
        self.getting_started_action = menu.addAction(tr("&Getting started"))
        self.getting_started_action.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
        self.getting_started_action.triggered.connect(self.getting_started)
        self.shortcuts_action = menu.addAction(tr("&Keyboard shortcuts"))
        self.shortcuts_action.setShortcut(QKeySequence("Ctrl+/"))
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        self.report_action = menu.addAction(tr("&Report a problem…"))
        self.report_action.setShortcut(QKeySequence("Ctrl+Shift+F1"))
        self.report_action.triggered.connect(self.report_problem)
        menu.addSeparator()
        menu.addAction(win.log_action)
        self.about_action = menu.addAction(tr("&About"))
        self.about_action.setShortcut(QKeySequence("Ctrl+F1"))
        self.about_action.triggered.connect(self.about)
        for a in (self.getting_started_action, self.shortcuts_action, self.report_action, self.about_action):
            win.addAction(a)  # the shortcuts work while the menu is closed

    def getting_started(self) -> TextDialog:
        dlg = TextDialog(tr("Getting started"), tr("Cloud GPU Workbench in five steps"), getting_started_text(),
                         self.win, "getting-started")
        dlg.open()
        return dlg

    def show_shortcuts(self) -> ShortcutsDialog:
        dlg = ShortcutsDialog(self.win)
        dlg.open()
        return dlg

    def report_problem(self) -> None:
        """Collect the report off the UI thread, copy it, and show what was copied."""
        self.win.statusBar().showMessage(tr("Collecting what a problem report needs…"))
        self.win.session.run(problem_report).then(self._reported).fail(
            lambda exc: self._reported(scrub(f"{tr('The report could not be collected')}: {exc}")))

    def _reported(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.win.statusBar().showMessage(tr("The problem report is on the clipboard."), 10_000)
        self.report = TextDialog(tr("Report a problem"), tr(
            "This report (versions and the health checks, without your secrets, home folder or user name) "
            "is on the clipboard: paste it into your message. Attach the log file if you can."), text, self.win,
            "problem-report")
        open_log = self.report.findChild(QDialogButtonBox).addButton(tr("Open log file"),
                                                                      QDialogButtonBox.ButtonRole.ActionRole)
        open_log.clicked.connect(lambda: QDesktopServices.openUrl(log_file_url()))
        self.report.open()

    def about(self) -> QMessageBox:
        rows = "".join(f"<tr><td>{what}&nbsp;&nbsp;</td><td>{version}</td></tr>" for what, version in versions())
        box = QMessageBox(QMessageBox.Icon.Information, tr("About Cloud GPU Workbench"),
                          tr("Rent GPU machines, watch them train, stop the bill with one click."), parent=self.win)
        box.setObjectName("about-dialog")
        box.setInformativeText(f"<table>{rows}</table>")
        box.open()
        return box
