"""The main window: toolbar with Stop all billing and the burn badge, six views, tray, quit guard.

Views (sidebar + stack, Ctrl+1…6): Instances, Launch, Monitor, Spend, Accounts, Prices.
The window owns nothing that touches a provider: the Session refreshes on the
TaskRunner and every view listens to its snapshot.  Geometry, toolbar/dock
state, the last view and the instances table's column layout persist in
QSettings.  Quitting while something bills asks: keep running (the
instance-side guards still hold), tear everything down, or cancel.
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (QApplication, QLabel, QListWidget, QListWidgetItem, QMainWindow,
                               QHBoxLayout, QSizePolicy, QStackedWidget, QSystemTrayIcon, QToolBar, QVBoxLayout,
                               QWidget)

from workbench.core.providers.accounts import Accounts
from workbench.core.domain.models import Instance
from workbench.ui.common.dialogs import log_file_url
from workbench.ui.common.format import money, unchecked_text
from workbench.ui.i18n import LANGUAGES, N_, tr
from workbench.ui.common.icons import icon
from workbench.ui.instances.instances_view import InstancesView
from workbench.ui.accounts.mfa import MfaPrompter
from workbench.ui.runtime.session import Session, Snapshot
from workbench.ui.runtime.settings import UiSettings
from workbench.ui.shell.badge import badge_text
from workbench.ui.shell.away_notice import AwayNotice
from workbench.ui.shell.tray import Tray

if TYPE_CHECKING:
    from workbench.ui.accounts.accounts_view import AccountsView
    from workbench.ui.launch.launch_view import LaunchView
    from workbench.ui.instances.logs_dialog import LogsDialog
    from workbench.ui.monitor.monitor_view import MonitorView
    from workbench.ui.money.spend_view import SpendView
    from PySide6.QtWidgets import QMessageBox

    from workbench.ui.instances.stop_all import StopAllDialog

log = logging.getLogger("workbench.ui")

VIEWS = (("instances", N_("Instances"), "instances"), ("launch", N_("Launch"), "launch"),
         ("monitor", N_("Monitor"), "monitor"), ("spend", N_("Spend"), "spend"),
         ("accounts", N_("Accounts"), "accounts"), ("prices", N_("Prices"), "prices"))

# Views other than Instances are built (and their modules, with numpy, pyqtgraph and keyring,
# imported) the first time they are shown: the window paints sooner.
LAZY_VIEWS = {"launch": ("workbench.ui.launch.launch_view", "LaunchView"),
              "monitor": ("workbench.ui.monitor.monitor_view", "MonitorView"),
              "spend": ("workbench.ui.money.spend_view", "SpendView"),
              "accounts": ("workbench.ui.accounts.accounts_view", "AccountsView"),
              "prices": ("workbench.ui.prices.prices_view", "PricesView")}

BADGE_STYLE = ("QLabel#burn-badge {{ border-radius: 10px; padding: 3px 10px; font-weight: bold; "
               "color: {fg}; background: {bg}; }}")


def preload_views() -> threading.Thread:
    """Import the lazily built views' modules on a background thread once the window is up.

    Their imports (numpy, the wizard, keyring…) are most of a view's first-show cost; done here
    they no longer stall the event loop when the user first opens Launch or Monitor.  Only
    module code runs on this thread: every widget is still made on the main thread.
    """
    def work() -> None:
        for module, _name in LAZY_VIEWS.values():
            try:
                importlib.import_module(module, __package__)
            except Exception:  # noqa: BLE001 - the view reports its own import error when shown
                log.debug("preloading %s failed", module, exc_info=True)
        from workbench.ui.runtime.session import freeze_loaded_modules

        freeze_loaded_modules()  # the views' modules are here for good: later collections skip them

    thread = threading.Thread(target=work, name="preload-views", daemon=True)
    thread.start()
    return thread


def _open_log_file() -> None:
    from PySide6.QtGui import QDesktopServices

    QDesktopServices.openUrl(log_file_url())


class _FirstPaint(QObject):
    """Calls ``then`` (on the next event-loop turn) once ``window`` has painted for the first time."""

    def __init__(self, window: QWidget, then) -> None:
        super().__init__(window)
        self.then = then
        window.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt)
        if event.type() == QEvent.Type.Paint:
            obj.removeEventFilter(self)
            QTimer.singleShot(0, self.then)
            self.deleteLater()
        return False


class MainWindow(QMainWindow):
    """The app's main face; ``accounts=None`` builds an offline window (self-test)."""

    def __init__(self, accounts: Accounts | None = None, refresh_ms: int | None = None,
                 settings: UiSettings | None = None, session: Session | None = None) -> None:
        super().__init__()
        self.setObjectName("main-window")
        self.setWindowTitle(tr("Cloud GPU Workbench"))
        self.setWindowIcon(icon("app"))
        self.settings = settings or UiSettings()
        self.session = session or Session(accounts, self.settings, parent=self)
        self.accounts = accounts
        self._quitting = False
        self._logs: dict[str, "LogsDialog"] = {}

        self.instances_view = InstancesView(self.session)
        self.views: dict[str, QWidget] = {"instances": self.instances_view}  # built so far
        self.model = self.instances_view.model  # the instances table model (tests, benchmarks)

        self.stack = QStackedWidget()
        self.nav = QListWidget()
        self.nav.setObjectName("nav")
        self.nav.setIconSize(QSize(22, 22))
        self.nav.setSpacing(2)
        for key, label, icon_name in VIEWS:
            item = QListWidgetItem(icon(icon_name), tr(label))
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setData(Qt.ItemDataRole.UserRole + 1, icon_name)
            self.nav.addItem(item)
            self.stack.addWidget(self.views.get(key) or QWidget())  # a placeholder until first shown
        self.nav.setFixedWidth(max(150, self.nav.sizeHintForColumn(0) + 28))
        self.nav.currentRowChanged.connect(self._view_changed)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(6, 6, 6, 0)
        self.away = AwayNotice(self.session, self)  # "while you were away" (issue 33): a banner above the views
        column.addWidget(self.away.banner)
        row = QHBoxLayout()
        column.addLayout(row, 1)
        row.addWidget(self.nav)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self._make_actions()
        self._make_toolbar()
        self._make_menus()
        self.tray: Tray | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = Tray(self, self.stop_all_action, self.quit_action)
            self.tray.show()

        self.instances_view.monitor_requested.connect(self.show_monitor)
        self.instances_view.logs_requested.connect(self.show_logs)
        self.session.snapshot_changed.connect(self._snapshot)
        self.session.refresh_started.connect(lambda: self.statusBar().showMessage(tr("Refreshing…")))
        self.session.refresh_failed.connect(self._refresh_failed)
        self.session.notify.connect(self._notify)
        self.mfa = MfaPrompter(self.session, self)
        self._restore_layout()
        self._snapshot(self.session.snapshot)
        if accounts is not None:
            self.session.start(refresh_ms if refresh_ms is not None else self.settings.refresh_seconds * 1000)

    # -- actions / bars -----------------------------------------------------------
    def _action(self, text: str, icon_name: str | None, shortcut: Any, slot, tip: str = "") -> QAction:
        a = QAction(icon(icon_name) if icon_name else QIcon(), text, self)
        a.setProperty("icon_name", icon_name or "")
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setToolTip(tip)
            a.setStatusTip(tip)
        a.triggered.connect(slot)
        self.addAction(a)
        return a

    def _make_actions(self) -> None:
        self.new_launch_action = self._action(tr("&New launch…"), "launch", "Ctrl+N", self.new_launch,
                                              tr("Start a job on this computer or a cloud GPU"))
        self.open_spec_action = self._action(tr("&Open job spec…"), "open", "Ctrl+O", self.open_spec,
                                             tr("Launch a job from a YAML spec"))
        self.refresh_action = self._action(tr("&Refresh"), "refresh", "F5",
                                           self.refresh, tr("Ask every provider what is running"))
        self.stop_all_action = self._action(tr("Stop all billing"), None, "Ctrl+Shift+K", self.stop_all,
                                            tr("Terminate every machine and delete every leftover, then verify"))
        self.stop_all_action.setIcon(icon("stop-billing", "#ffffff"))
        self.stop_all_action.setProperty("icon_name", "stop-billing")
        self.stop_all_action.setProperty("icon_color", "#ffffff")
        self.stop_all_action.setObjectName("stop-all-billing")
        self.quit_action = self._action(tr("&Quit"), "quit", "Ctrl+Q", self.quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.refresh_action.setShortcuts([QKeySequence("F5"), QKeySequence("Ctrl+R")])
        self.log_action = self._action(tr("Open &log file"), "logs", "Ctrl+Shift+L", _open_log_file)
        self.view_actions: list[QAction] = []
        for n, (key, label, icon_name) in enumerate(VIEWS, start=1):
            a = self._action(tr(label), icon_name, f"Ctrl+{n}", lambda _=False, k=key: self.show_view(k))
            self.view_actions.append(a)

    def _make_toolbar(self) -> None:
        bar = QToolBar(tr("Main toolbar"))
        bar.setObjectName("main-toolbar")
        bar.setIconSize(QSize(20, 20))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        bar.setMovable(False)
        self.addToolBar(bar)
        bar.addAction(self.new_launch_action)
        bar.addAction(self.refresh_action)
        bar.addSeparator()
        v = self.instances_view
        for a in (v.monitor_action, v.logs_action, v.copy_ssh_action, v.terminal_action, v.terminate_action):
            bar.addAction(a)
            btn = bar.widgetForAction(a)
            if btn is not None and a is not v.terminate_action:
                btn.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        self.badge = QLabel()
        self.badge.setObjectName("burn-badge")
        self.badge.setToolTip(tr("What everything billing costs now, and what today cost so far"))
        bar.addWidget(self.badge)
        bar.addAction(self.stop_all_action)
        btn = bar.widgetForAction(self.stop_all_action)
        if btn is not None:
            btn.setObjectName("stop-all-button")
            btn.setStyleSheet("QToolButton { color: white; background: #c62828; font-weight: bold; "
                              "padding: 5px 12px; border-radius: 4px; margin-left: 6px; }"
                              "QToolButton:hover { background: #b71c1c; }"
                              "QToolButton:disabled { background: #9e6b6b; }")
        self.toolbar = bar

    def _make_menus(self) -> None:
        mb = self.menuBar()
        m = mb.addMenu(tr("&File"))
        m.addAction(self.new_launch_action)
        m.addAction(self.open_spec_action)
        m.addSeparator()
        m.addAction(self.quit_action)
        m = mb.addMenu(tr("&View"))
        for a in self.view_actions:
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.refresh_action)
        m = mb.addMenu(tr("&Machines"))
        for a in self.instances_view.row_actions:
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.stop_all_action)
        m = mb.addMenu(tr("&Settings"))
        lang = m.addMenu(tr("&Language (after restart)"))
        group = QActionGroup(self)
        for code, name in [("system", tr("System default")), *LANGUAGES.items()]:
            a = lang.addAction(name)
            a.setCheckable(True)
            a.setChecked(self.settings.language == code)
            a.triggered.connect(lambda _=False, c=code: self._set_language(c))
            group.addAction(a)
        theme = m.addMenu(tr("&Appearance"))
        tgroup = QActionGroup(self)
        for code, name in (("system", tr("Follow the system")), ("light", tr("Light")), ("dark", tr("Dark"))):
            a = theme.addAction(name)
            a.setCheckable(True)
            a.setChecked(self.settings.theme == code)
            a.triggered.connect(lambda _=False, c=code: self._set_theme(c))
            tgroup.addAction(a)
        from workbench.ui.shell.help_menu import HelpMenu  # Getting started, shortcuts, report, About

        self.help = HelpMenu(self, mb.addMenu(tr("&Help")))

    # -- views ------------------------------------------------------------------
    def show_view(self, key: str) -> None:
        keys = [k for k, _, _ in VIEWS]
        self.nav.setCurrentRow(keys.index(key) if key in keys else 0)

    def current_view(self) -> str:
        item = self.nav.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item else "instances"

    def _view_changed(self, row: int) -> None:
        self.view(self.current_view())
        self.stack.setCurrentIndex(max(0, row))
        self.settings.last_view = self.current_view()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt)
        super().showEvent(event)
        if not getattr(self, "_warmed", False):
            self._warmed = True
            self._first_paint = _FirstPaint(self, self._after_first_paint)

    def _after_first_paint(self) -> None:
        """What the first window does not need, once it is on screen: the other views' modules."""
        self._first_paint = None
        preload_views()

    def view(self, key: str) -> QWidget:
        """The view ``key``, built on first use in place of its placeholder."""
        made = self.views.get(key)
        if made is not None:
            return made
        module, name = LAZY_VIEWS[key]
        made = getattr(importlib.import_module(module, __package__), name)(self.session)
        index = [k for k, _, _ in VIEWS].index(key)
        placeholder = self.stack.widget(index)
        current = self.stack.currentIndex()
        self.stack.insertWidget(index, made)
        self.stack.removeWidget(placeholder)
        placeholder.deleteLater()
        self.stack.setCurrentIndex(current)
        self.views[key] = made
        if key == "launch":
            made.launched.connect(lambda _id: self.show_view("instances"))
        if key == "prices":  # "Add an account to launch here"
            made.add_account_requested.connect(self._add_account_for)
        return made

    def _add_account_for(self, provider_id: str) -> None:
        self.show_view("accounts")
        self.accounts_view.add_profile_for(provider_id)

    @property
    def launch_view(self) -> "LaunchView":
        return self.view("launch")  # type: ignore[return-value]

    @property
    def monitor_view(self) -> "MonitorView":
        return self.view("monitor")  # type: ignore[return-value]

    @property
    def spend_view(self) -> "SpendView":
        return self.view("spend")  # type: ignore[return-value]

    @property
    def accounts_view(self) -> "AccountsView":
        return self.view("accounts")  # type: ignore[return-value]

    def show_monitor(self, inst: Instance) -> None:
        self.show_view("monitor")
        self.monitor_view.show_instance(inst)

    def show_logs(self, inst: Instance) -> "LogsDialog":
        dlg = self._logs.get(inst.launch_id)
        if dlg is None or not dlg.isVisible():
            from workbench.ui.instances.logs_dialog import LogsDialog

            dlg = LogsDialog(self.session, inst, self)
            dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dlg.destroyed.connect(lambda *_a, k=inst.launch_id: self._logs.pop(k, None))
            self._logs[inst.launch_id] = dlg
        dlg.show()
        dlg.raise_()
        return dlg

    def new_launch(self) -> None:
        self.show_view("launch")
        self.launch_view.start_wizard()

    def open_spec(self) -> None:
        self.show_view("launch")
        self.launch_view.open_spec()  # a non-blocking file dialog, then the wizard

    # -- refresh / badge ----------------------------------------------------------
    def refresh(self) -> None:
        self.session.refresh()

    def _snapshot(self, snap: Snapshot) -> None:
        text, bg = badge_text(snap)
        self.badge.setText(text)
        self.badge.setStyleSheet(BADGE_STYLE.format(bg=bg, fg="#ffffff"))
        self.badge.setToolTip("\n".join([tr("What everything billing costs now, and what today cost so far"),
                                         *(unchecked_text(n, e, n in snap.may_bill) for n, e in snap.errors)]))
        if self.tray is not None:
            self.tray.update_snapshot(snap)
        if snap.taken_at:
            if snap.errors:
                self.statusBar().showMessage("; ".join(unchecked_text(name, e, name in snap.may_bill)
                                                       for name, e in snap.errors), 15_000)
            else:
                self.statusBar().showMessage(tr("Up to date"), 5000)

    def _refresh_failed(self, exc: BaseException) -> None:
        msg = getattr(exc, "message", str(exc))
        retry = self.session.backoff_ms // 1000
        text = tr("Refresh failed: {error}").format(error=msg)
        if retry:
            text += " — " + tr("retrying in {seconds} s").format(seconds=retry)
        self.statusBar().showMessage(text, 30_000)

    def _notify(self, title: str, message: str, level: str) -> None:
        self.statusBar().showMessage(f"{title}: {message}", 10_000)
        if self.tray is not None and self.settings.notifications:
            self.tray.notify(title, message, level)

    # -- stop all billing ---------------------------------------------------------
    def stop_all(self) -> "StopAllDialog | None":
        if self.session.accounts is None:
            return None
        self.show()  # also reachable from the tray while the window is hidden
        from workbench.ui.instances.stop_all import StopAllDialog

        return StopAllDialog.open_for(self.session, self)

    # -- settings -----------------------------------------------------------------
    def _set_language(self, code: str) -> None:
        self.settings.language = code
        self.statusBar().showMessage(tr("The language changes when the app is restarted."), 10_000)

    def _set_theme(self, code: str) -> None:
        from workbench.ui.common import theme
        self.settings.theme = code
        theme.apply(code)

    def _restore_layout(self) -> None:
        s = self.settings
        geo = s.bytes("window/geometry")
        if geo is None or not self.restoreGeometry(geo):
            self.resize(1180, 720)
        state = s.bytes("window/state")
        if state is not None:
            self.restoreState(state)
        header = s.bytes("instances/header")
        if header is not None and self.instances_view.table.horizontalHeader().restoreState(header):
            self.instances_view.columns_sized = True
            self.instances_view.keep_state_column_fitting()  # a saved layout must not clip the job's outcome
        self.show_view(s.last_view)

    def save_layout(self) -> None:
        s = self.settings
        s.set_bytes("window/geometry", self.saveGeometry())
        s.set_bytes("window/state", self.saveState())
        s.set_bytes("instances/header", self.instances_view.table.horizontalHeader().saveState())
        s.last_view = self.current_view()
        s.sync()

    # -- quitting -----------------------------------------------------------------
    def quit(self) -> None:
        self.close()

    def quit_dialog(self) -> "QMessageBox":
        """Keep running / Tear everything down / Cancel, naming what bills and the guards that hold."""
        from workbench.ui.shell.quit_guard import quit_dialog

        return quit_dialog(self)

    def _quit_now(self) -> None:
        self._quitting = True
        self.close()

    def _quit_after_teardown(self) -> None:
        from workbench.ui.shell.quit_guard import quit_after_teardown

        quit_after_teardown(self)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.PaletteChange:
            self.recolor_icons()
        super().changeEvent(event)

    def recolor_icons(self) -> None:
        """Redraw the toolbar, menu and sidebar icons in the current palette (dark/light switch)."""
        for a in self.findChildren(QAction):
            name = a.property("icon_name")
            if name:
                a.setIcon(icon(name, a.property("icon_color") or None))
        for row in range(self.nav.count()):
            item = self.nav.item(row)
            item.setIcon(icon(item.data(Qt.ItemDataRole.UserRole + 1)))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        snap = self.session.snapshot
        if not self._quitting and self.session.accounts is not None and (snap.paying or snap.may_bill):
            event.ignore()
            self.quit_dialog()
            return
        self.save_layout()
        self.session.shutdown()
        if self.tray is not None:
            self.tray.hide()
        for dlg in list(self._logs.values()):
            dlg.close()
        super().closeEvent(event)
        app = QApplication.instance()
        if app is not None and self._quitting:
            app.quit()
