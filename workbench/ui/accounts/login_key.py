"""The profile form's line for a login node the app reaches with its own SSH key (a Slurm cluster).

A provider whose machines are the user's own (``own_hardware``) and which the app reaches over SSH
(``runs_jobs_over_ssh``) logs in to a node the user already has: the app's public key must be in that
node's ``~/.ssh/authorized_keys``.  This row shows the key (read-only, one line) with a Copy button and
says where it goes.  Main thread only; the key pair is made on first use (``sshkeys.ensure_keypair``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.contract import Provider
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr


def needs_login_key(cls: type[Provider] | None) -> bool:
    """True for a provider whose login node is the user's own and reached with the app's SSH key."""
    return cls is not None and issubclass(cls, Provider) and cls.own_hardware and cls.runs_jobs_over_ssh


class LoginKeyRow(QWidget):
    """"Add this line to ~/.ssh/authorized_keys on the login node": the app's public key and Copy."""

    def __init__(self, data_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("profile-login-key")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel(tr("The app logs in with its own SSH key: add this line to ~/.ssh/authorized_keys on "
                              "the login node (once)."))
        self.note.setObjectName("profile-login-key-note")
        self.note.setWordWrap(True)
        self.key = QLineEdit()
        self.key.setObjectName("profile-login-key-line")
        self.key.setReadOnly(True)
        self.copy_button = QPushButton(icon("copy"), tr("&Copy"))
        self.copy_button.setObjectName("profile-login-key-copy")
        self.copy_button.setAutoDefault(False)
        self.copy_button.clicked.connect(self.copy)
        try:
            self.key.setText(ensure_keypair(data_dir).public_openssh)
            self.key.setCursorPosition(0)
        except WorkbenchError as exc:  # a data folder that cannot be written: said, the form still works
            self.key.setPlaceholderText(exc.message)
            self.copy_button.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.key, 1)
        row.addWidget(self.copy_button)
        lay.addWidget(self.note)
        lay.addLayout(row)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.key.text())
