"""A job's output, followed live: reads new bytes of the job log on a worker every second."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase, QTextCursor
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPlainTextEdit,
                               QPushButton, QVBoxLayout, QWidget)

from ..core import paths
from ..core.models import Instance
from .i18n import tr
from .session import Session

MAX_BLOCKS = 20_000  # lines kept in the view; the file keeps everything


def _read_from(path: Path, pos: int) -> tuple[bytes, int]:
    try:
        with open(path, "rb") as fh:
            fh.seek(pos)
            data = fh.read(1_000_000)
    except FileNotFoundError:
        return b"", pos
    return data, pos + len(data)


class LogsDialog(QDialog):
    """Shows and follows ``paths.job_log(launch_id)``; non-modal, one per launch."""

    def __init__(self, session: Session, inst: Instance, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logs-dialog")
        self.session = session
        self.launch_id = inst.launch_id
        self.path = paths.job_log(inst.launch_id)
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
        row = QHBoxLayout()
        row.addWidget(self.follow)
        row.addWidget(self.where, 1)
        row.addWidget(open_btn)
        lay = QVBoxLayout(self)
        if inst.provider != "local" and not self.path.exists():
            lay.addWidget(QLabel(tr("Logs from cloud machines stream here once the job runs there.")))
        lay.addWidget(self.text, 1)
        lay.addLayout(row)
        lay.addWidget(buttons)
        self.timer = QTimer(self, interval=1000, timeout=self.poll)
        self.timer.start()
        QTimer.singleShot(0, self.poll)

    def poll(self) -> None:
        if self._reading:
            return
        self._reading = True
        self.session.run(_read_from, self.path, self._pos).then(self._append).finally_(self._done)

    def _done(self) -> None:
        self._reading = False

    def _append(self, result: tuple[bytes, int]) -> None:
        data, self._pos = result
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
