"""The Instances view: every machine the app knows, with row actions.

Actions (toolbar, context menu, keyboard): Monitor, Logs, Copy SSH command,
Open terminal, Extend max runtime, Open port… (``port_actions``), Terminate.  Terminate asks first, naming the machine(s) and the
$/h it stops, then runs the core teardown for that launch (terminate, sweep
leftovers, verify) on the teardown lane; the result is reported, never assumed.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QTableView, QVBoxLayout, QWidget)

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.money.spend import burn_rate
from workbench.ui.common.dialogs import show_error
from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.ui.common.icons import icon
from workbench.ui.instances.instances_model import COL_STATE, INSTANCE_ROLE, InstancesFilter, InstancesModel
from workbench.ui.instances.remote_access import open_terminal, ssh_command
from workbench.ui.instances.port_actions import PortActions
from workbench.ui.instances.watch_actions import WatchActions
from workbench.ui.runtime.session import Session, Snapshot
from workbench.ui.runtime.lanes import TEARDOWN

if TYPE_CHECKING:  # loaded when first used (after the first paint: the window paints sooner)
    from PySide6.QtWidgets import QMessageBox

    from workbench.core.lifecycle.teardown import TeardownReport


@functools.lru_cache(maxsize=None)
def provider_can_stop(provider_id: str) -> bool:
    """True when the provider's plugin implements SupportsStop (Local does not)."""
    if provider_id == "local":
        return False
    from workbench.core.providers.contract import SupportsStop
    from workbench.core.providers.registry import discover

    entry = discover().get(provider_id)
    return entry is not None and entry.cls is not None and issubclass(entry.cls, SupportsStop)


class InstancesView(QWidget):
    """Table of instances with filter, sort and row actions; state comes from the session."""

    monitor_requested = Signal(object)  # Instance
    logs_requested = Signal(object)  # Instance

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("instances-view")
        self.session = session
        self.model = InstancesModel(self)
        self.proxy = InstancesFilter(self)
        self.proxy.setSourceModel(self.model)

        self.filter = QLineEdit(placeholderText=tr("Filter by name, provider, region, type, state…"))
        self.filter.setObjectName("instances-filter")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.billable_only = QCheckBox(tr("&Billable only"))
        self.billable_only.toggled.connect(self.proxy.set_billable_only)
        self.summary = QLabel()
        self.summary.setObjectName("instances-summary")

        self.table = QTableView()
        self.table.setObjectName("instances-table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.keep_state_column_fitting()
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.doubleClicked.connect(lambda _i: self.monitor_action.trigger())

        self.empty = QLabel(tr("No machines yet. Start one from Launch (Ctrl+N) — "
                               "the quick example runs a short job on this computer for free."))
        self.empty.setObjectName("instances-empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)

        self.columns_sized = False  # set when the main window restored a saved column layout
        self._make_actions()
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.billable_only)
        top.addWidget(self.summary)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.empty, 1)
        self.table.selectionModel().selectionChanged.connect(self._update_actions)
        session.snapshot_changed.connect(self.set_snapshot)
        self.clock = QTimer(self, interval=1000, timeout=self.model.tick)
        self.clock.start()
        self.set_snapshot(session.snapshot)

    # -- actions --------------------------------------------------------------
    def _make_actions(self) -> None:
        def act(text: str, name: str, shortcut: str | QKeySequence, slot) -> QAction:
            a = QAction(icon(name), text, self)
            a.setProperty("icon_name", name)  # recoloured on a dark/light switch
            a.setShortcut(QKeySequence(shortcut))
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.monitor_action = act(tr("&Monitor"), "monitor", "Ctrl+M", self._monitor)
        self.logs_action = act(tr("&Logs"), "logs", "Ctrl+L", self._logs)
        self.copy_ssh_action = act(tr("&Copy SSH command"), "copy", "Ctrl+Shift+C", self._copy_ssh)
        self.terminal_action = act(tr("Open &terminal"), "terminal", "Ctrl+T", self._terminal)
        self.outputs_action = act(tr("Open &outputs"), "folder", "Ctrl+Shift+O", self.open_outputs)
        self.report_action = act(tr("Run &report…"), "export", "Ctrl+Shift+R", self.open_report)
        self.extend_action = act(tr("E&xtend max runtime…"), "clock", "Ctrl+Shift+E", self.extend_selected)
        self.stop_action = act(tr("&Stop (deallocate)…"), "stop-billing", "Ctrl+Shift+S", self.stop_selected)
        self.terminate_action = act(tr("Te&rminate…"), "terminate", "Del",
                                    self.terminate_selected)
        self.watch = WatchActions(self, self.session)  # hand to / take back from the account's controller
        self.ports = PortActions(self, self.session)  # a job's ports forwarded here (Open port…)
        self.row_actions = [self.monitor_action, self.logs_action, self.copy_ssh_action, self.terminal_action,
                            self.outputs_action, self.report_action, self.extend_action, self.stop_action,
                            self.terminate_action]
        self._update_actions()

    def selected(self) -> list[Instance]:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return [r.data(INSTANCE_ROLE) for r in rows]

    def current(self) -> Instance | None:
        sel = self.selected()
        return sel[0] if sel else None

    def _update_actions(self, *_args) -> None:
        sel = self.selected()
        one = sel[0] if len(sel) == 1 else None
        self.monitor_action.setEnabled(one is not None)
        self.logs_action.setEnabled(one is not None)
        has_ssh = one is not None and ssh_command(one) is not None
        self.copy_ssh_action.setEnabled(has_ssh)
        self.copy_ssh_action.setToolTip(tr("Copy SSH command") if has_ssh or one is None
                                        else tr("No SSH for this machine (it runs on this computer or has no address yet)"))
        self.terminal_action.setEnabled(one is not None and (one.provider == "local" or has_ssh))
        self.terminate_action.setEnabled(any(i.state.billable for i in sel))
        self.report_action.setEnabled(one is not None)
        self.outputs_action.setEnabled(one is not None)
        self.stop_action.setEnabled(bool(self._stoppable(sel)))
        self.extend_action.setEnabled(one is not None and one.state == InstanceState.RUNNING)
        self.watch.update(sel, self.session.snapshot)
        self.ports.update(sel, self.session.snapshot)

    def extend_selected(self):
        """"Extend max runtime…" for the selected machine's launch (the dialog runs it on the worker)."""
        inst = self.current()
        if inst is None or inst.state != InstanceState.RUNNING or self.session.accounts is None:
            return None
        from workbench.ui.instances.extend_dialog import ExtendDialog

        dlg = ExtendDialog(self.session, inst, self)
        dlg.finished.connect(lambda _r: self._update_actions())
        dlg.open()
        return dlg

    def _context_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            return
        if not self.table.selectionModel().isRowSelected(index.row(), QModelIndex()):
            self.table.selectRow(index.row())
        from PySide6.QtWidgets import QMenu

        menu = QMenu(self)
        for a in self.row_actions[:-1]:
            menu.addAction(a)
        menu.addAction(self.ports.open_action)
        menu.addSeparator()
        menu.addAction(self.watch.hand_action)
        menu.addAction(self.watch.release_action)
        menu.addSeparator()
        menu.addAction(self.terminate_action)
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def _monitor(self) -> None:
        if (inst := self.current()) is not None:
            self.monitor_requested.emit(inst)

    def open_report(self):
        """The run report of the selected machine's launch (cost, utilization, advice; HTML and PDF)."""
        if (inst := self.current()) is None:
            return None
        from workbench.ui.monitor.run_report import RunReportDialog

        dlg = RunReportDialog(self.session, inst.launch_id, self)
        dlg.open()
        return dlg

    def open_outputs(self):
        """The selected launch's outputs folder (a cloud job's: once downloaded); the path where none opens it."""
        if (inst := self.current()) is None:
            return None
        from workbench.core.remote.outputs_folder import outputs_folder
        from workbench.ui.common.open_folder import open_folder

        return open_folder(outputs_folder(inst), self)

    def _logs(self) -> None:
        if (inst := self.current()) is not None:
            self.logs_requested.emit(inst)

    def _copy_ssh(self) -> None:
        inst = self.current()
        cmd = ssh_command(inst) if inst else None
        if cmd:
            QGuiApplication.clipboard().setText(cmd)
            self.session.notify.emit(tr("Copied"), cmd, "info")

    def _terminal(self) -> None:
        inst = self.current()
        if inst is None:
            return
        try:
            open_terminal(inst)
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
            show_error(self, exc)

    # -- stop / deallocate ---------------------------------------------------------
    @staticmethod
    def _stoppable(instances: list[Instance]) -> list[Instance]:
        """Running machines, and Stopped ones that still bill for compute (Azure), whose provider can stop."""
        return [i for i in instances if i.state in (InstanceState.RUNNING, InstanceState.STOPPED)
                and provider_can_stop(i.provider)]

    def _with_nodes(self, instances: list[Instance]) -> list[Instance]:
        """``instances`` and every other node of their multi-node launches (a launch stops as one)."""
        out: dict[tuple[str, str, str], Instance] = {}
        for inst in instances:
            for node in self.model.nodes_of(inst):
                out.setdefault((node.provider, node.profile, node.instance_id), node)
        return list(out.values())

    def stop_selected(self) -> QMessageBox | None:
        """Ask, then stop (Azure: deallocate) the selected machines (every node of a multi-node launch):
        compute stops billing, disks stay."""
        from PySide6.QtWidgets import QMessageBox

        targets = self._stoppable(self._with_nodes(self.selected()))
        if not targets or self.session.accounts is None:
            return None
        names = "\n".join(f"• {i.name or i.instance_id} ({i.provider}/{i.profile}, {i.region}) — "
                          f"{money(i.price_per_hour, i.currency)}/h" for i in targets)
        box = QMessageBox(QMessageBox.Icon.Question, tr("Stop"),
                          tr("Stop {count} machine(s), stopping {rate}/h of compute?").format(
                              count=len(targets), rate=money(burn_rate(targets))),
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("stop-confirm")
        box.setInformativeText(names + "\n\n" + tr("Their disks are kept (and still bill a little); the job is "
                                                   "interrupted. Terminate deletes everything instead."))
        yes = box.addButton(tr("Stop"), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        yes.clicked.connect(lambda: self._stop(targets))
        box.open()
        return box

    def _stop(self, targets: list[Instance]) -> None:
        accounts = self.session.accounts
        self.stop_action.setEnabled(False)

        def work() -> None:
            by_profile: dict[str, list[Instance]] = {}
            for inst in targets:
                by_profile.setdefault(inst.profile, []).append(inst)
            for profile, insts in by_profile.items():
                prov = accounts.provider(accounts.profile(profile))
                prov.stop(insts)  # type: ignore[attr-defined]  # _stoppable checked SupportsStop

        (self.session.mutate(work, lane=TEARDOWN, parent=self)
         .then(lambda _ok: self.session.notify.emit(
             tr("Stopped"), tr("{count} machine(s) stopped; their disks are kept.").format(count=len(targets)), "info"))
         .finally_(self._update_actions))

    def keep_state_column_fitting(self) -> None:
        """The state ("failed · exit 2", "stopped by a guard: …") always fits its column: never clipped."""
        self.table.horizontalHeader().setSectionResizeMode(COL_STATE, QHeaderView.ResizeMode.ResizeToContents)

    # -- terminate --------------------------------------------------------------
    def terminate_selected(self) -> QMessageBox | None:
        """Ask, naming the machines and the $/h they stop; then tear their launches down."""
        from PySide6.QtWidgets import QMessageBox

        targets = [i for i in self.selected() if i.state.billable]
        if not targets or self.session.accounts is None:
            return None
        launch_ids = sorted({i.launch_id for i in targets})
        siblings = [i for i in self.session.snapshot.billable if i.launch_id in launch_ids]
        names = "\n".join(f"• {i.name or i.instance_id} ({i.provider}/{i.profile}, {i.region}) — "
                          f"{money(i.price_per_hour, i.currency)}/h" for i in siblings)
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Terminate"),
                          tr("Terminate {count} machine(s), stopping {rate}/h?").format(
                              count=len(siblings), rate=money(burn_rate(siblings))),
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("terminate-confirm")
        box.setInformativeText(names + "\n\n" + tr("Their disks and addresses are deleted too. This cannot be undone."))
        yes = box.addButton(tr("Terminate"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        yes.clicked.connect(lambda: self._terminate(launch_ids))
        box.open()
        return box

    def _terminate(self, launch_ids: list[str]) -> None:
        self.terminate_action.setEnabled(False)
        self.session.notify.emit(tr("Terminating"), ", ".join(launch_ids), "info")
        from workbench.core.lifecycle.teardown import teardown

        (self.session.mutate(teardown, self.session.accounts, launch_ids, lane=TEARDOWN, parent=self)
         .then(self._terminated).finally_(self._update_actions))

    def _terminated(self, report: TeardownReport) -> None:
        if report.remaining or report.errors:
            what = [getattr(x, "instance_id", getattr(x, "resource_id", "?")) for x in report.remaining]
            what += [f"{name}: {e.message}" for name, e in report.errors]
            self.session.notify.emit(tr("Still billing"), "\n".join(what), "error")
        else:
            self.session.notify.emit(tr("Terminated"), tr("Verified: nothing of it is billing any more."), "info")

    # -- data -------------------------------------------------------------------
    def set_snapshot(self, snap: Snapshot) -> None:
        keys = {(i.provider, i.profile, i.instance_id) for i in self.selected()}
        self.model.set_snapshot(snap)
        self.ports.sync(snap)
        if keys:
            sm = self.table.selectionModel()
            for row in range(self.proxy.rowCount()):
                inst = self.proxy.index(row, 0).data(INSTANCE_ROLE)
                if (inst.provider, inst.profile, inst.instance_id) in keys:
                    sm.select(self.proxy.index(row, 0), sm.SelectionFlag.Select | sm.SelectionFlag.Rows)
        has_rows = self.model.rowCount() > 0
        if has_rows and not self.columns_sized:
            self.columns_sized = True  # fit the first rows once; after that the user's widths rule
            self.table.resizeColumnsToContents()
            for col in range(self.model.columnCount() - 1):
                self.table.setColumnWidth(col, min(260, self.table.columnWidth(col) + 12))
        self.empty.setVisible(not has_rows)
        self.table.setVisible(has_rows)
        paying = snap.paying  # money: a free job on this computer is running, not billing
        self.summary.setText(tr("{count} billing · {rate}/h").format(count=len(paying), rate=money(burn_rate(paying))))
        self._update_actions()
