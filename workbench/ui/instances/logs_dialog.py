"""A job's output, followed live: reads new bytes of the job log on a worker every second.

For a cloud machine the log file is filled by the remote job's stream (by byte
offset, see ``workbench.core.remote.logs``); the dialog also shows the remote
job's state and exit code, and "Download results" fetches the spec's outputs
(on a worker, through the same SSH path as ``workbench download``).  Above the log,
the job's outcome ("finished · exit 0", "failed · exit 2", "stopped by you"); below
it, where the outputs are, with Open and Copy (the path is shown where no file
manager can open it).

A node of a multi-node launch: the "Node" box shows that node's output, another node's, or
every node's at once, each line prefixed ``[node R]`` (``workbench logs ID [--node R]``).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontDatabase, QGuiApplication, QTextCursor
from shiboken6 import isValid
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPlainTextEdit,
                               QProgressBar, QPushButton, QVBoxLayout, QWidget)

from workbench.core import paths
from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.models import Instance
from workbench.core.remote.log_tail import FileTail, NodeLogTail
from workbench.core.remote.outputs_folder import outputs_folder
from workbench.ui.common.open_folder import open_folder
from workbench.ui.i18n import tr
from workbench.ui.runtime.session import Session

if TYPE_CHECKING:
    from workbench.core.lifecycle.outcome import Outcome

MAX_BLOCKS = 20_000  # lines kept in the view; the file keeps everything
READ_LIMIT = 1_000_000  # bytes of one node's log shown per poll (the rest comes with the next ones)


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


def _outcome(store, inst: Instance) -> "Outcome | None":
    """The job's outcome as the store knows it now (worker thread)."""
    from workbench.core.lifecycle.outcome import guard_endings, job_outcome, relaunch_of

    fresh = store.get_instance(inst.provider, inst.profile, inst.instance_id) or inst
    launch = store.find_launch(inst.launch_id)
    guard = guard_endings(store.guard_events(inst.launch_id)).get(inst.launch_id)
    return job_outcome(fresh, launch.status if launch else None, guard, relaunch_of(store, inst.launch_id))


def _poll(tail: FileTail | NodeLogTail, launch_id: str, remote: bool, store=None,
          inst: Instance | None = None) -> tuple[bytes, str, "Outcome | None"]:
    """What the log gained (one node's bytes, or every node's complete lines prefixed by rank), the remote job's
    state and the outcome (worker thread; ``tail`` keeps the offsets, so it reads last: what it read is shown)."""
    outcome = _outcome(store, inst) if store is not None and inst is not None else None
    status = _remote_status(launch_id) if remote else ""
    if isinstance(tail, FileTail):
        data = tail.read(READ_LIMIT)
    else:
        out = io.BytesIO()
        tail.pump(out)
        data = out.getvalue()
    return data, status, outcome


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
        self.path = paths.node_log(inst.launch_id, self.node or 0)
        self._tail = self._new_tail()
        self.setWindowTitle(tr("Logs — {name}").format(name=inst.name or inst.instance_id))
        self.resize(820, 520)
        self._reading = False
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setObjectName("log-text")
        self.text.setMaximumBlockCount(MAX_BLOCKS)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.follow = QCheckBox(tr("&Follow"), checked=True)
        self.where = QLabel(str(self.path))
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        open_btn = QPushButton(tr("Open &folder"))
        open_btn.setObjectName("log-open-folder")
        open_btn.clicked.connect(lambda: open_folder(self.path.parent, self))
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
        self.outcome = QLabel()
        self.outcome.setObjectName("log-outcome")
        font = self.outcome.font()
        font.setBold(True)
        self.outcome.setFont(font)
        self.outputs = outputs_folder(inst)
        self.outputs_label = QLabel(tr("Outputs: {path}").format(path=self.outputs))
        self.outputs_label.setObjectName("log-outputs")
        self.outputs_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outputs_label.setWordWrap(True)
        outputs_open = QPushButton(tr("Open &outputs"))
        outputs_open.setObjectName("log-open-outputs")
        outputs_open.clicked.connect(lambda: open_folder(self.outputs, self))
        outputs_copy = QPushButton(tr("Copy &path"))
        outputs_copy.setObjectName("log-copy-outputs")
        outputs_copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(str(self.outputs)))
        outputs_row = QHBoxLayout()
        outputs_row.addWidget(self.outputs_label, 1)
        outputs_row.addWidget(outputs_open)
        outputs_row.addWidget(outputs_copy)
        lay = QVBoxLayout(self)
        lay.addWidget(self.outcome)
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
        lay.addLayout(outputs_row)
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
        self._tail = self._new_tail()
        self._generation = getattr(self, "_generation", 0) + 1
        self.text.clear()
        QTimer.singleShot(0, self.poll)

    def poll(self) -> None:
        if self._reading:
            return
        self._reading = True
        gen = getattr(self, "_generation", 0)
        store = getattr(self.session.accounts, "store", None)
        task = self.session.run(_poll, self._tail, self.launch_id, self.remote, store, self.instance)
        task.then(lambda result: self._append(result) if gen == getattr(self, "_generation", 0) else None) \
            .finally_(self._done)

    def _new_tail(self) -> FileTail | NodeLogTail:
        """One node's log from its start, or every node's (``self.node`` None)."""
        if self.node is None:
            return NodeLogTail(self.launch_id, list(range(len(self.nodes))), prefix=True)
        return FileTail(self.path)

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

    def _show_outcome(self, out: "Outcome | None") -> None:
        if out is None:
            self.outcome.setText(tr("The job is running.") if self.instance.state.active else "")
            self.outcome.setStyleSheet("")
            return
        from workbench.ui.common.job_state import OUTCOME_LOOK, outcome_text

        self.outcome.setText(outcome_text(out))
        self.outcome.setStyleSheet(f"color: {OUTCOME_LOOK[out.kind][0]};")

    def _append(self, result: tuple[bytes, str, "Outcome | None"]) -> None:
        data, status, out = result
        self._show_outcome(out)
        if status and self.download_btn.isEnabled() and status != self.status.text():  # not over a download
            self.status.setText(status)
        if not data:
            if not self.text.toPlainText():
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
