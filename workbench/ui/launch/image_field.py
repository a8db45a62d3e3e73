"""The job page's container image: the spec's ``image:`` as a reference, a registry login, shm size and user.

The reference, the shm size and the user are checked by the spec reader's own rules
(:mod:`workbench.core.domain.jobspec_container`), so the form takes exactly what a spec file may say.  The
registry's password or token is never typed here: the login names a launch secret (``spec.secrets``), whose
value the review page asks for like every secret's, keeps in memory for the launch and never stores.
Main thread only.
"""

from __future__ import annotations

import dataclasses
import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from workbench.core.domain.jobspec_container import REFERENCE_RE, SHM_SIZE_RE, USER_RE
from workbench.core.domain.models import ContainerImage, JobSpec, RegistryAuth
from workbench.ui.i18n import tr

#: the launch secret a new login's password goes to (the user may name another)
DEFAULT_SECRET = "REGISTRY_PASSWORD"
_VARIABLE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what a secret's name must be: an environment variable


def reference_of(text: str) -> str:
    """The reference the field's text means (SkyPilot's ``docker:`` spelling taken, as the spec reader does)."""
    text = text.strip()
    return text[len("docker:"):] if text.startswith("docker:") else text


class ImageBox(QWidget):
    """Image, registry login, shm size and user; ``problem()`` says what is wrong, ``apply()`` writes a spec."""

    #: any field was edited
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("image-box")
        self.image_edit = QLineEdit(objectName="job-image")
        self.image_edit.setPlaceholderText(tr("none, or e.g. nvcr.io/nvidia/pytorch:24.05-py3"))
        self.image_edit.setToolTip(tr("The container image setup and run happen in, with every GPU of the machine "
                                      "(registry/name:tag or name@sha256:…; Docker Hub when no registry is named). "
                                      "Empty: the job runs on the machine itself."))
        self.login = QGroupBox(tr("&Registry login (a private registry)"), objectName="registry-login")
        self.login.setCheckable(True)
        self.login.setChecked(False)
        self.login_user = QLineEdit(objectName="registry-user")
        self.login_secret = QLineEdit(DEFAULT_SECRET, objectName="registry-secret")
        self.login_note = QLabel(tr("The password or token is a launch secret: its value is asked for on the "
                                    "review page, kept in memory for the launch and never saved. Only the secret's "
                                    "name goes into the job."), objectName="registry-note", wordWrap=True)
        login_form = QFormLayout(self.login)
        login_form.addRow(tr("User name:"), self.login_user)
        login_form.addRow(tr("Pass&word secret:"), self.login_secret)
        login_form.addRow(self.login_note)
        self.shm_edit = QLineEdit(objectName="image-shm")
        self.shm_edit.setPlaceholderText(tr("Docker's default (64m), e.g. 16g"))
        self.user_edit = QLineEdit(objectName="image-user")
        self.user_edit.setPlaceholderText(tr("the image's own, e.g. 1000:1000"))
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(tr("Imag&e:"), self.image_edit)
        form.addRow(tr("Shared memory (/dev/s&hm):"), self.shm_edit)
        form.addRow(tr("User in the container:"), self.user_edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.login)
        for edit in (self.image_edit, self.login_user, self.login_secret, self.shm_edit, self.user_edit):
            edit.textChanged.connect(self._changed)
        self.login.toggled.connect(self._changed)
        self._enable()

    def _changed(self) -> None:
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        on = bool(self.image_edit.text().strip())  # the rest is about an image: nothing to say without one
        for w in (self.login, self.shm_edit, self.user_edit):
            w.setEnabled(on)

    def fill(self, image: ContainerImage | None) -> None:
        """Show ``image`` (None: no container)."""
        auth = image.registry_auth if image is not None else None
        self.image_edit.setText(image.name if image is not None else "")
        self.login.setChecked(auth is not None)
        self.login_user.setText(auth.username if auth is not None else "")
        self.login_secret.setText(auth.password_secret if auth is not None else DEFAULT_SECRET)
        self.shm_edit.setText((image.shm_size or "") if image is not None else "")
        self.user_edit.setText((image.user or "") if image is not None else "")

    def problem(self, env: tuple[str, ...] = ()) -> str | None:
        """The first thing wrong, in words (None: fine); ``env`` the spec's env names a secret may not repeat."""
        ref = reference_of(self.image_edit.text())
        if not ref:
            return None
        if not REFERENCE_RE.fullmatch(ref):
            return tr("Image: '{ref}' is not an image reference (registry/name:tag or name@sha256:…)").format(ref=ref)
        shm = self.shm_edit.text().strip()
        if shm and not SHM_SIZE_RE.fullmatch(shm):
            return tr("Shared memory: must be a size like 16g or 512m, got '{size}'").format(size=shm)
        user = self.user_edit.text().strip()
        if user and not USER_RE.fullmatch(user):
            return tr("User in the container: must be a user name, a uid or uid:gid, got '{user}'").format(user=user)
        if not self.login.isChecked():
            return None
        if not self.login_user.text().strip():
            return tr("Registry login: give the user name.")
        secret = self.login_secret.text().strip()
        if not _VARIABLE_RE.fullmatch(secret):
            return tr("Registry login: the password secret '{name}' is not a variable name (letters, digits and "
                      "'_').").format(name=secret)
        if secret in env:
            return tr("Registry login: '{name}' is also set in the spec's env; name another secret.").format(
                name=secret)
        return None

    def image(self) -> ContainerImage | None:
        """The image the fields describe (call when ``problem()`` is None)."""
        ref = reference_of(self.image_edit.text())
        if not ref:
            return None
        auth = None
        if self.login.isChecked():
            auth = RegistryAuth(self.login_user.text().strip(), self.login_secret.text().strip())
        return ContainerImage(ref, auth, self.shm_edit.text().strip() or None, self.user_edit.text().strip() or None)

    def apply(self, spec: JobSpec) -> JobSpec:
        """``spec`` with this image; a login's secret is added to ``spec.secrets`` (asked for at launch)."""
        image = self.image()
        secrets = spec.secrets
        if image is not None and image.registry_auth is not None and image.registry_auth.password_secret not in secrets:
            secrets = (*secrets, image.registry_auth.password_secret)
        return dataclasses.replace(spec, image=image, secrets=secrets)
