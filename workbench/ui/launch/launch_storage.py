"""The job page's "Data and recovery" box: storage mounts (pick a bucket, upload a folder) and the recovery policy.

A mount is a folder on the machine tied to a bucket: ``copy`` brings a dataset in before setup,
``sync`` sends checkpoints out every interval and brings them back when the job is resumed.
"Add a bucket…" lists the buckets of every account with object storage (off the UI thread);
"Upload a folder…" adds a folder of this computer, which the launch uploads to the profile's
bucket first (``storage_uri`` setting), skipping what is already there.  The recovery box turns
on relaunching after a spot interruption (and optionally after a failure), and says plainly that
this needs the app, ``workbench watch`` or the account's controller watching.

The box writes the draft's ``storage`` and ``recovery`` fields (``write_to``) when the job page
is left, and shows an opened spec's own (``fill``).  Main thread only; the bucket listing runs on
the session's read pool.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from workbench.core.domain.jobspec import DEFAULT_SYNC_INTERVAL_S
from workbench.core.domain.models import Recovery, StorageMode, StorageMount
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.ui.i18n import N_, tr
from workbench.ui.common.inline_messages import InlineMessage

COL_PATH, COL_SOURCE, COL_MODE, COL_INTERVAL = range(4)
RECOVERY_NOTE = N_("Recovery relaunches the job while this app, `workbench watch` or the account's controller "
                   "(\"Keep watching while this computer is off\" on the review page) watches it. With none of them, "
                   "an interrupted job stays ended until you open the app again; the machine's own guard still ends "
                   "its bill.")


def list_buckets(accounts) -> tuple[list[tuple[str, str]], list[str]]:
    """(profile, bucket URI) of every account with object storage, and one line per account that failed (worker)."""
    from workbench.core.storage.contract import SupportsObjectStorage

    found, problems = [], []
    for p in accounts.profiles():
        if p.provider == "local":
            continue
        try:
            prov = accounts.provider(p)
            if isinstance(prov, SupportsObjectStorage):
                found += [(p.name, uri) for uri in prov.storage_buckets()]
        except Exception as exc:  # noqa: BLE001 - shown beside the others
            problems.append(f"{p.name}: {getattr(exc, 'message', exc)}")
    return found, problems


class BucketDialog(QDialog):
    """Pick a bucket (listed in the background) and say where under it, and where on the machine."""

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bucket-dialog")
        self.setWindowTitle(tr("Add a bucket"))
        self.list = QListWidget(objectName="bucket-list")
        self.status = QLabel(tr("Listing the buckets of your accounts…"), objectName="bucket-status", wordWrap=True)
        self.address = QLineEdit(objectName="bucket-address")
        self.address.setPlaceholderText(tr("or type an address: s3://BUCKET/PREFIX, "
                                           "https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, oss://…"))
        self.prefix = QLineEdit(objectName="bucket-prefix")
        self.prefix.setPlaceholderText(tr("folder in the bucket, e.g. datasets/imagenet"))
        self.path = QLineEdit("data", objectName="bucket-mount-path")
        self.mode = QComboBox(objectName="bucket-mode")
        self.mode.addItem(tr("copy: bring it to the machine before setup (a dataset)"), StorageMode.COPY.value)
        self.mode.addItem(tr("sync: save the folder there while the job runs (checkpoints)"), StorageMode.SYNC.value)
        self.error = InlineMessage("error", "bucket-error")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        self.list.currentItemChanged.connect(lambda cur, _prev: cur is not None and self.address.setText(
            cur.data(Qt.ItemDataRole.UserRole)))
        lay = QVBoxLayout(self)
        lay.addWidget(self.status)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.address)
        for label, w in ((tr("Folder in the bucket:"), self.prefix), (tr("Folder on the machine:"), self.path),
                         (tr("Mode:"), self.mode)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(w, 1)
            lay.addLayout(row)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.resize(640, 420)
        self.mount: StorageMount | None = None
        if session is not None and session.accounts is not None:
            session.run(list_buckets, session.accounts).then(self._listed).fail(
                lambda exc: self.status.setText(tr("The buckets could not be listed: {error}").format(error=exc)))
        else:
            self.status.setText(tr("Type the bucket's address."))

    def _listed(self, result: tuple[list[tuple[str, str]], list[str]]) -> None:
        found, problems = result
        for profile, uri in found:
            item = QListWidgetItem(f"{uri}  ({profile})")
            item.setData(Qt.ItemDataRole.UserRole, uri)
            self.list.addItem(item)
        text = tr("{n} buckets: choose one, or type an address.").format(n=len(found)) if found else \
            tr("No bucket found in your accounts: type an address.")
        if problems:
            text += "\n" + "\n".join(problems)
        self.status.setText(text)

    def chosen(self) -> StorageMount:
        """The mount the dialog describes; ValueError with the reason when it is incomplete."""
        base = self.address.text().strip()
        prefix = self.prefix.text().strip().strip("/")
        uri = parse_storage_uri(f"{base.rstrip('/')}/{prefix}" if prefix else base)
        if uri.is_local:
            raise ValueError(tr("that is not a bucket address"))
        path = self.path.text().strip()
        if not path or ".." in path.split("/"):
            raise ValueError(tr("give the folder on the machine, e.g. data"))
        mode = StorageMode(self.mode.currentData())
        return StorageMount(path, str(uri), mode, DEFAULT_SYNC_INTERVAL_S)

    def _accept(self) -> None:
        try:
            self.mount = self.chosen()
        except ValueError as exc:
            self.error.show_text(str(exc))
            return
        self.accept()


class StorageBox(QGroupBox):
    """Storage mounts and the recovery policy of the job (see the module docstring)."""

    def __init__(self, session=None, parent: QWidget | None = None) -> None:
        super().__init__(tr("Data and recovery"), parent)
        self.setObjectName("storage-box")
        self.session = session
        self.dialog: QDialog | None = None
        self.table = QTableWidget(0, 4, objectName="storage-table")
        self.table.setHorizontalHeaderLabels([tr("On the machine"), tr("Source"), tr("Mode"), tr("Every (s)")])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(COL_SOURCE, QHeaderView.ResizeMode.Stretch)
        self.table.setMaximumHeight(self.fontMetrics().lineSpacing() * 7)
        self.table.setEditTriggers(QTableWidget.EditTrigger.DoubleClicked)
        self.add_bucket = QPushButton(tr("Add a &bucket…"), objectName="add-bucket")
        self.add_bucket.clicked.connect(self.ask_bucket)
        self.add_folder = QPushButton(tr("&Upload a folder…"), objectName="add-folder")
        self.add_folder.setToolTip(tr("A folder of this computer: the launch uploads it to your account's bucket "
                                      "first (only what changed), then copies it to the machine"))
        self.add_folder.clicked.connect(self.ask_folder)
        self.remove = QPushButton(tr("Remo&ve"), objectName="remove-mount")
        self.remove.clicked.connect(self.remove_selected)
        self.recovery_on = QCheckBox(tr("Relaunch after a spot &interruption, up to"), objectName="recovery-on")
        self.restarts = QSpinBox(objectName="recovery-restarts", minimum=1, maximum=100, value=3, suffix=tr(" times"))
        self.on_failure = QCheckBox(tr("also when the job fails"), objectName="recovery-on-failure")
        self.note = InlineMessage("warning", "recovery-note")
        self.recovery_on.toggled.connect(self._changed)
        buttons = QHBoxLayout()
        for b in (self.add_bucket, self.add_folder, self.remove):
            buttons.addWidget(b)
        buttons.addStretch(1)
        rec = QHBoxLayout()
        rec.addWidget(self.recovery_on)
        rec.addWidget(self.restarts)
        rec.addWidget(self.on_failure)
        rec.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addLayout(buttons)
        lay.addLayout(rec)
        lay.addWidget(self.note)
        self._changed()

    # -- mounts -------------------------------------------------------------------
    def add_mount(self, m: StorageMount) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, COL_PATH, QTableWidgetItem(m.path))
        source = QTableWidgetItem(m.source)
        source.setFlags(source.flags() & ~Qt.ItemFlag.ItemIsEditable)
        if parse_storage_uri(m.source).is_local:
            source.setToolTip(tr("uploaded to your account's bucket when you launch"))
        self.table.setItem(row, COL_SOURCE, source)
        mode = QComboBox()
        mode.addItem(tr("copy"), StorageMode.COPY.value)
        mode.addItem(tr("sync"), StorageMode.SYNC.value)
        mode.setCurrentIndex(0 if m.mode is StorageMode.COPY else 1)
        self.table.setCellWidget(row, COL_MODE, mode)
        every = QSpinBox(minimum=1, maximum=24 * 3600, value=m.interval_s, singleStep=60)
        self.table.setCellWidget(row, COL_INTERVAL, every)
        self._changed()

    def mounts(self) -> tuple[StorageMount, ...]:
        out = []
        for row in range(self.table.rowCount()):
            path = (self.table.item(row, COL_PATH).text() or "").strip() or "data"
            mode = StorageMode(self.table.cellWidget(row, COL_MODE).currentData())
            out.append(StorageMount(path, self.table.item(row, COL_SOURCE).text(), mode,
                                    self.table.cellWidget(row, COL_INTERVAL).value()))
        return tuple(out)

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.table.removeRow(row)
        self._changed()

    def ask_bucket(self) -> None:
        dlg = BucketDialog(self.session, self)
        dlg.accepted.connect(lambda: dlg.mount is not None and self.add_mount(dlg.mount))
        self.dialog = dlg
        dlg.open()

    def ask_folder(self) -> None:
        dlg = QFileDialog(self, tr("Folder to upload"))
        dlg.setObjectName("upload-folder-dialog")
        dlg.setFileMode(QFileDialog.FileMode.Directory)
        dlg.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dlg.fileSelected.connect(self.add_folder_path)
        self.dialog = dlg
        dlg.open()

    def add_folder_path(self, folder: str) -> None:
        if folder and os.path.isdir(folder):
            name = Path(folder).name or "data"
            self.add_mount(StorageMount(name, str(Path(folder).resolve()), StorageMode.COPY, DEFAULT_SYNC_INTERVAL_S))

    # -- recovery ------------------------------------------------------------------
    def recovery(self) -> Recovery | None:
        if not self.recovery_on.isChecked():
            return None
        on = ("preemption", "failure") if self.on_failure.isChecked() else ("preemption",)
        return Recovery(self.restarts.value(), on)

    def fill(self, storage: tuple[StorageMount, ...], recovery: Recovery | None) -> None:
        """Show a spec's own mounts and policy."""
        self.table.setRowCount(0)
        for m in storage:
            self.add_mount(m)
        self.recovery_on.setChecked(recovery is not None)
        if recovery is not None:
            self.restarts.setValue(max(1, recovery.max_restarts))
            self.on_failure.setChecked("failure" in recovery.on)
        self._changed()

    def write_to(self, draft) -> None:
        draft.update(storage=self.mounts(), recovery=self.recovery())

    def _changed(self) -> None:
        on = self.recovery_on.isChecked()
        self.restarts.setEnabled(on)
        self.on_failure.setEnabled(on)
        lines = [tr(RECOVERY_NOTE)] if on else []
        if on and not any(m.mode is StorageMode.SYNC for m in self.mounts()):
            lines.append(tr("Without a sync mount a relaunched job starts from the beginning: add a bucket in "
                            "sync mode for its checkpoints."))
        self.note.show_text("\n".join(lines))
        self.remove.setEnabled(self.table.rowCount() > 0)
