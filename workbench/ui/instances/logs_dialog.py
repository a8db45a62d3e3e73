"""A job's output, followed live: reads new bytes of the job log on a worker every second.

For a cloud machine the log file is filled by the remote job's stream (by byte
offset, see ``workbench.core.remote.logs``); the dialog also shows the remote
job's state and exit code, and "Download results" fetches the spec's outputs
(on a worker, through the same SSH path as ``workbench download``).

A node of a multi-node launch: the "Node" box shows that node's output, another node's, or
every node's at once, each line prefixed ``[node R]`` (``workbench logs ID [--node R]``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase, QTextCursor
from shiboken6 import isValid
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPlainTextEdit,
                               QProgressBar, QPushButton, QVBoxLayout, QWidget)

from workbench.core import paths
from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.models import Instance
from workbench.ui.i18n import tr
from workbench.ui.runtime.session import Session

MAX_BLOCKS = 20_000  # lines kept in the view; the file keeps everything


def _remote_status(launch_id: str) -> str:
    """One line on the remote job: its phase, message and exit code (worker thread)."""
    from workbench.core.remote.job import read_state, recorded_exit_code

    state = read_state(launch_id)
    if not state:
        return ""
    code = recorded_exit_code(launch_id)
    text = tr("Remote job: {phase}").format(phase=state.get("phase", "?"))
    if state.get("message"):
        text += f" — {state['message']}"
    if code is not None:
        text += " · " + tr("exit code {code}").format(code=code)
    return text


def _poll(path: Path, pos: int, launch_id: str, remote: bool) -> tuple[bytes, int, str]:
    data, pos = _read_from(path, pos)
    return data, pos, _remote_status(launch_id) if remote else ""


def download_outputs(accounts, inst: Instance) -> str:
    """Fetch the launch's spec outputs from its machine into the job folder (worker thread)."""
    from workbench.core.domain.errors import NotFoundError
    from workbench.core.domain.jobspec import spec_from_dict
    from workbench.core.remote.job import RemoteJob

    rec = accounts.store.get_launch(inst.launch_id)
    spec = spec_from_dict(rec.spec or {})
    if not spec.outputs:
        raise NotFoundError(tr("the job spec names no outputs"), hint=tr("add 'outputs:' to the spec"))
    job = RemoteJob(accounts, inst, spec)
    conn = job._connect(60, "downloading")
    if conn is None:
        return ""
    with conn:
        job._probe(conn)
        got = job.download_outputs(conn)
    return tr("Downloaded {n} files into {folder}").format(n=sum(len(r.files) for r in got),
                                                           folder=paths.job_dir(inst.launch_id) / "outputs")


def _poll_nodes(tail, launch_id: str, remote: bool) -> tuple[bytes, int, str]:
    """Every node's new complete lines, prefixed by rank (worker thread; ``tail`` keeps the offsets)."""
    import io

    out = io.BytesIO()
    tail.pump(out)
    data = out.getvalue()
    return data, -1, _remote_status(launch_id) if remote else ""


def _read_from(path: Path, pos: int) -> tuple[bytes, int]:
    try:
        with open(path, "rb") as fh:
            fh.seek(pos)
            data = fh.read(1_000_000)
    except FileNotFoundError:
        return b"", pos
    return data, pos + len(data)


def _launch_nodes(session: Session, inst: Instance) -> list[Instance]:
    """The nodes of ``inst``'s launch in rank order ([inst] for a single machine)."""
    snap = getattr(session, "snapshot", None)
    nodes = [i for i in getattr(snap, "instances", ()) if i.launch_id == inst.launch_id]
    if len(nodes) < 2 or not any(node_rank_of(i.extra) for i in nodes):
        return [inst]
    return sorted(nodes, key=lambda i: node_rank_of(i.extra))


class LogsDialog(QDialog):
    """Shows and follows ``paths.job_log(launch_id)``; non-modal, one per launch."""

    def __init__(self, session: Session, inst: Instance, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logs-dialog")
        self.session = session
        self.launch_id = inst.launch_id
        self.nodes = _launch_nodes(session, inst)
        self.node: int | None = node_rank_of(inst.extra) if len(self.nodes) > 1 else 0  # None: every node
        self._tail = None
        self.path = paths.node_log(inst.launch_id, self.node or 0)
        self.setWindowTitle(tr("Logs — {name}").format(name=inst.name or inst.instance_id))
        self.resize(820, 520)
        self._pos = 0
        self._reading = False
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setObjectName("log-text")
        self.text.setMaximumBlockCount(MAX_BLOCKS)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.follow = QCheckBox(tr("&Follow"), checked=True)
        self.where = QLabel(str(self.path))
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        open_btn = QPushButton(tr("Open &folder"))
        open_btn.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path.parent))))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        self.node_box = QComboBox(objectName="log-node")
        if len(self.nodes) > 1:
            self.node_box.addItem(tr("All nodes, by rank"), None)
            for rank in range(len(self.nodes)):
                self.node_box.addItem(tr("node {rank} (head)").format(rank=rank) if rank == 0
                                      else tr("node {rank}").format(rank=rank), rank)
            self.node_box.setCurrentIndex(self.node_box.findData(self.node))
        self.node_box.setVisible(len(self.nodes) > 1)
        self.node_box.currentIndexChanged.connect(self._node_changed)
        row = QHBoxLayout()
        row.addWidget(self.follow)
        row.addWidget(self.node_box)
        row.addWidget(self.where, 1)
        row.addWidget(open_btn)
        self.remote = inst.provider != "local"
        self.instance = inst
        self.status = QLabel()
        self.status.setObjectName("log-remote-status")
        self.status.setWordWrap(True)
        self.download_btn = QPushButton(tr("&Download results"))
        self.download_btn.setObjectName("log-download")
        self.download_btn.clicked.connect(self.download)
        self.download_btn.setVisible(self.remote)
        row.insertWidget(2, self.download_btn)
        lay = QVBoxLayout(self)
        if self.remote and not self.path.exists():
            lay.addWidget(QLabel(tr("Logs from cloud machines stream here once the job runs there.")))
        lay.addWidget(self.status)
        self.progress = QProgressBar()  # the upload (or download) of this launch, fed by the session's events
        self.progress.setObjectName("log-transfer")
        self.progress.hide()
        lay.addWidget(self.progress)
        remote_event = getattr(session, "remote_event", None)
        if remote_event is not None:
            remote_event.connect(self._on_remote_event)
        lay.addWidget(self.text, 1)
        lay.addLayout(row)
        lay.addWidget(buttons)
        self.timer = QTimer(self, interval=1000, timeout=self.poll)
        self.timer.start()
        QTimer.singleShot(0, self.poll)

    def _node_changed(self, row: int) -> None:
        """Another node (or all of them): start over from the beginning of its output."""
        self.node = self.node_box.itemData(row)
        self.path = paths.node_log(self.launch_id, self.node or 0)
        self.where.setText(str(self.path if self.node is not None else self.path.parent))
        self._pos = 0
        self._tail = None
        self._generation = getattr(self, "_generation", 0) + 1
        self.text.clear()
        QTimer.singleShot(0, self.poll)

    def poll(self) -> None:
        if self._reading:
            return
        self._reading = True
        gen = getattr(self, "_generation", 0)
        if self.node is None:
            from workbench.core.remote.node_logs import NodeLogTail

            if self._tail is None:
                self._tail = NodeLogTail(self.launch_id, list(range(len(self.nodes))), prefix=True)
            task = self.session.run(_poll_nodes, self._tail, self.launch_id, self.remote)
        else:
            task = self.session.run(_poll, self.path, self._pos, self.launch_id, self.remote)
        task.then(lambda result: self._append(result) if gen == getattr(self, "_generation", 0) else None) \
            .finally_(self._done)

    def _done(self) -> None:
        self._reading = False

    def _on_remote_event(self, ev) -> None:
        """Upload size before the first byte, then progress; other phases in the status line."""
        if ev.launch_id != self.launch_id or not isValid(self):
            return
        if ev.kind == "phase" and ev.phase == "uploading" and "total" in ev.data:
            self.status.setText(tr("Uploading {files} files, {size} MB…").format(
                files=ev.data.get("files", 0), size=f"{ev.data['total'] / 1e6:.1f}"))
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
            self.progress.show()
        elif ev.kind == "upload":
            total = int(ev.data.get("total") or 0)
            self.progress.show()
            self.progress.setValue(int(1000 * int(ev.data.get("done", 0)) / total) if total else 1000)
            if total and ev.data.get("done") == total:
                self.progress.hide()

    def download(self) -> None:
        """Fetch the spec's outputs from the machine (worker); the result or error shows in the status line."""
        self.download_btn.setEnabled(False)
        self.status.setText(tr("Downloading the outputs…"))
        self.session.run(download_outputs, self.session.accounts, self.instance) \
            .then(lambda text: self.status.setText(text)) \
            .fail(lambda exc: self.status.setText(tr("Download failed: {message}").format(message=exc))) \
            .finally_(lambda: self.download_btn.setEnabled(True))

    def _append(self, result: tuple[bytes, int, str]) -> None:
        data, pos, status = result
        if pos >= 0:
            self._pos = pos
        if status and self.download_btn.isEnabled() and status != self.status.text():  # not over a download
            self.status.setText(status)
        if not data:
            if self._pos == 0 and not self.text.toPlainText():
                self.text.setPlaceholderText(tr("No output yet."))
            return
        bar = self.text.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(data.decode("utf-8", errors="replace"))
        if self.follow.isChecked() and at_end:
            bar.setValue(bar.maximum())

    def closeEvent(self, event) -> None:  # noqa: N802
        self.timer.stop()
        super().closeEvent(event)
