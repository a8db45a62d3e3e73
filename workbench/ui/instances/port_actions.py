"""Instances ▸ "Open port…": a launch's ports (the spec's ``ports:``) forwarded over SSH to 127.0.0.1 here.

The dialog lists the spec's ports with their known services (Jupyter, TensorBoard, a VS Code server, HTTP);
"Open in browser" (an HTTP service) or "Forward" starts the forward on the ``PORTS`` lane (it connects over
SSH: never on the UI thread) and opens the URL (Jupyter's with the token from the job's log).  The forwards
live while the app runs: they stop when the launch's machines end (a teardown, or a refresh that finds none
running) and when the app quits.  Main thread only; the work runs on the session's workers.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem, QPushButton,
                               QVBoxLayout, QWidget)
from shiboken6 import isValid

from workbench.core import paths
from workbench.core.domain.models import Instance, InstanceState, JobSpec, Port
from workbench.core.remote.forwards import Forwards
from workbench.core.remote.port_services import find_url, is_http
from workbench.ui.common.format import error_words
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import PORTS

log = logging.getLogger("workbench.ui.ports")

PORT_ROLE = Qt.ItemDataRole.UserRole + 41
JUPYTER_WAIT_S = 30.0


def _label(port: Port) -> str:
    service = {"jupyter": "Jupyter", "tensorboard": "TensorBoard", "vscode": tr("VS Code server"),
               "http": "HTTP"}.get(port.name or "")
    text = tr("Port {port} ({service})").format(port=port.port, service=service) if service else (
        tr("Port {port} ({name})").format(port=port.port, name=port.name) if port.name else
        tr("Port {port}").format(port=port.port))
    return text + (tr(" · every node") if port.node == "all" else "")


class PortActions:
    """The "Open port…" action of the Instances view and the forwards the app holds."""

    def __init__(self, view: QWidget, session: Any) -> None:
        self.view, self.session = view, session
        self.open_action = QAction(icon("export"), tr("Open &port…"), view)
        self.open_action.setObjectName("open-port")
        self.open_action.triggered.connect(self.open_dialog)
        self.target: Instance | None = None
        self.forwards: Forwards | None = None
        self.dialog: OpenPortDialog | None = None
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.close)

    # -- what is offered ------------------------------------------------------
    def spec_of(self, launch_id: str) -> JobSpec | None:
        rec = self.session.snapshot.launches.get(launch_id)
        try:
            from workbench.core.domain.jobspec import spec_from_dict  # the YAML reader: not before the first paint

            return spec_from_dict(rec.spec) if rec is not None and isinstance(rec.spec, dict) else None
        except Exception:  # noqa: BLE001 - an old or damaged spec offers no ports
            return None

    def update(self, selected: list[Instance], snap: Any) -> None:
        one = selected[0] if len(selected) == 1 else None
        spec = self.spec_of(one.launch_id) if one is not None else None
        self.target = one if spec is not None and spec.ports else None
        ok = bool(self.target is not None and one.state == InstanceState.RUNNING and one.provider != "local")
        self.open_action.setEnabled(ok)
        self.open_action.setToolTip(tr("Forward a port of the job to this computer (127.0.0.1 only) and open it")
                                    if ok or one is None or spec is None or not spec.ports else
                                    tr("The job lists no ports, or its machine is not running"))

    def sync(self, snap: Any) -> None:
        """After a refresh: the launches without a running machine lose their forwards (on the lane)."""
        if self.forwards is None:
            return
        running = {i.launch_id for i in snap.instances if i.state == InstanceState.RUNNING}
        ended = {o.launch_id for o in self.forwards.list()} - running
        if ended:
            fw = self.forwards
            self.session.run(lambda: [fw.stop(lid) for lid in ended], lane=PORTS).then(lambda _r: self._changed())

    def open_ports(self) -> dict[str, str]:
        """launch id → its open ports as the Instances tooltip says them (``8888 → 127.0.0.1:51234``)."""
        out: dict[str, list[str]] = {}
        for o in self.forwards.list() if self.forwards is not None else []:
            out.setdefault(o.launch_id, []).append(f"{o.port} → {o.local_address}")
        return {lid: ", ".join(items) for lid, items in out.items()}

    # -- the dialog and the work ----------------------------------------------
    def open_dialog(self) -> "OpenPortDialog | None":
        inst = self.target
        spec = self.spec_of(inst.launch_id) if inst is not None else None
        if inst is None or spec is None or not spec.ports or self.session.accounts is None:
            return None
        self.dialog = OpenPortDialog(self, inst, spec, self.view)
        self.dialog.open()
        return self.dialog

    def _ensure(self) -> Forwards:
        if self.forwards is None:
            self.forwards = Forwards(self.session.accounts.store.path.parent)
            self.forwards.stop_with_teardown()
        return self.forwards

    def start(self, inst: Instance, port: Port) -> Any:
        """Forward ``port`` of ``inst``'s launch on the PORTS lane; the Task gives (local addresses, URL)."""
        fw = self._ensure()
        nodes = [i for i in self.session.snapshot.instances
                 if i.launch_id == inst.launch_id and i.state == InstanceState.RUNNING]

        def work() -> tuple[list[str], str | None]:
            opened = fw.open(inst.launch_id, nodes, port)
            url = find_url(fw, inst.launch_id, port, opened[0], paths.job_log(inst.launch_id),
                           wait_s=JUPYTER_WAIT_S if port.name == "jupyter" else 0.0)
            return [o.local_address for o in opened], url

        task = self.session.run(work, lane=PORTS)
        task.then(lambda _r: self._changed())
        return task

    def _changed(self) -> None:
        model = getattr(self.view, "model", None)
        if model is not None and isValid(self.view):
            model.open_ports = self.open_ports()
            rows, cols = model.rowCount(), model.columnCount()
            if rows and cols:  # only the tooltips changed (a layout change would upset the sort proxy)
                model.dataChanged.emit(model.index(0, 0), model.index(rows - 1, cols - 1),
                                       [Qt.ItemDataRole.ToolTipRole])

    def close(self) -> None:
        """The app quits: every forward stops (idempotent)."""
        if self.forwards is not None:
            self.forwards.close()


class OpenPortDialog(QDialog):
    """The launch's ports; Open in browser (HTTP services) or Forward (any port)."""

    def __init__(self, actions: PortActions, inst: Instance, spec: JobSpec, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("open-port-dialog")
        self.setWindowTitle(tr("Open port · {name}").format(name=inst.name or inst.launch_id))
        self.actions, self.inst = actions, inst
        self.ports = QListWidget()
        self.ports.setObjectName("open-port-list")
        for p in spec.ports:
            item = QListWidgetItem(_label(p))
            item.setData(PORT_ROLE, p)
            self.ports.addItem(item)
        self.ports.setCurrentRow(0)
        self.message = QLabel(tr("Forwarded over SSH to 127.0.0.1 on this computer only; nothing is opened to "
                                 "the internet. The forward ends with the launch, or when the app quits."))
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.browser = QPushButton(tr("Open in &browser"))
        self.browser.setObjectName("open-port-browser")
        self.forward = QPushButton(tr("&Forward"))
        self.forward.setObjectName("open-port-forward")
        self.copy = QPushButton(tr("&Copy address"))
        self.copy.setEnabled(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        for b in (self.browser, self.forward, self.copy):
            buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.browser.clicked.connect(lambda: self._go(browse=True))
        self.forward.clicked.connect(lambda: self._go(browse=False))
        self.copy.clicked.connect(self._copy)
        self.ports.currentItemChanged.connect(lambda *_a: self._enable())
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(tr("Ports of launch {id}:").format(id=inst.launch_id)))
        lay.addWidget(self.ports)
        lay.addWidget(self.message)
        lay.addWidget(buttons)
        self.address: str | None = None
        self.url: str | None = None
        self._enable()

    def port(self) -> Port | None:
        item = self.ports.currentItem()
        return item.data(PORT_ROLE) if item is not None else None

    def _enable(self, busy: bool = False) -> None:
        p = self.port()
        self.browser.setEnabled(not busy and p is not None and is_http(p))
        self.forward.setEnabled(not busy and p is not None)

    def _go(self, browse: bool) -> None:
        port = self.port()
        if port is None:
            return
        self._enable(busy=True)
        self.message.setText(tr("Forwarding port {port}…").format(port=port.port))
        task = self.actions.start(self.inst, port)
        task.alive = lambda: isValid(self)
        task.then(lambda got: self._opened(port, got, browse)).fail(self._failed)

    def _opened(self, port: Port, got: tuple[list[str], str | None], browse: bool) -> None:
        addresses, url = got
        self.address, self.url = addresses[0], url
        self.copy.setEnabled(True)
        self._enable()
        text = tr("Port {port} is forwarded to {address}.").format(port=port.port, address=", ".join(addresses))
        if port.name == "jupyter" and url is None:
            text += " " + tr("Jupyter has not printed its address with a token in the job's log yet.")
        self.message.setText(text)
        if browse:
            QDesktopServices.openUrl(QUrl(url or f"http://{self.address}/"))

    def _failed(self, exc: BaseException) -> None:
        self._enable()
        self.message.setText(tr("Not forwarded: {error}").format(error=error_words(exc)))

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.url or f"http://{self.address}/")
