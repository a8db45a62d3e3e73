"""The job page's container image: the spec's ``image:`` as a reference, a registry login, shm size and user.

The reference, the shm size and the user are checked by the spec reader's own rules
(:mod:`workbench.core.domain.jobspec_container`), so the form takes exactly what a spec file may say.  The
registry's password or token is never typed here: the login names a launch secret (``spec.secrets``), whose
value the review page asks for like every secret's, keeps in memory for the launch and never stores — unless
"Save for next time" is ticked: then the launch saves it in the keyring for the image's registry
(:mod:`workbench.core.providers.registry_logins`).  When the keyring has a login for the image's registry
("workbench registry login"), "Use the password saved for HOST" makes the login ``password: keyring``: nothing
is asked, the launch reads it.  Which registries have a saved login is read from the logins' list (a small file),
never from the keyring, so the page does not wait on it.  Main thread only.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit

from workbench.core.domain.jobspec_container import REFERENCE_RE, SHM_SIZE_RE, USER_RE
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import REGISTRY_KEYRING, ContainerImage, JobSpec, RegistryAuth
from workbench.core.providers.registry_logins import RegistryLogin, RegistryLogins
from workbench.ui.i18n import tr

#: the launch secret a new login's password goes to (the user may name another)
DEFAULT_SECRET = "REGISTRY_PASSWORD"
_VARIABLE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what a secret's name must be: an environment variable


def reference_of(text: str) -> str:
    """The reference the field's text means (SkyPilot's ``docker:`` spelling taken, as the spec reader does)."""
    text = text.strip()
    return text[len("docker:"):] if text.startswith("docker:") else text


def saved_login(registry: str) -> RegistryLogin | None:
    """The login saved for ``registry`` on this computer (from the logins' list; None when none or unreadable)."""
    try:
        return RegistryLogins(None).saved(registry)
    except WorkbenchError:
        return None


class ImageBox(QObject):
    """Image, registry login, shm size and user as rows of the job page's form (``add_rows``); ``problem()`` says
    what is wrong, ``apply()`` writes them into a spec."""

    #: any field was edited
    changed = Signal()

    def __init__(self, parent: QObject | None = None,
                 saved: Callable[[str], RegistryLogin | None] = saved_login) -> None:
        super().__init__(parent)
        self._saved_lookup = saved
        self._form: QFormLayout | None = None
        self._saved_cache: dict[str, RegistryLogin | None] = {}
        self.image_edit = QLineEdit(objectName="job-image")
        self.image_edit.setPlaceholderText(tr("none, or e.g. nvcr.io/nvidia/pytorch:24.05-py3"))
        self.image_edit.setToolTip(tr("The container image setup and run happen in, with every GPU of the machine "
                                      "(registry/name:tag or name@sha256:…; Docker Hub when no registry is named). "
                                      "Empty: the job runs on the machine itself."))
        note = tr("The password or token is a launch secret: its value is asked for on the review page and kept in "
                  "memory for the launch; it is saved (in this computer's keyring) only when you tick Save for next "
                  "time. Only the secret's name goes into the job.")
        self.login = QCheckBox(tr("&Registry login:"), objectName="registry-login")
        self.login.setToolTip(note)
        self.login_user = QLineEdit(objectName="registry-user")
        self.login_user.setPlaceholderText(tr("user name"))
        self.login_secret = QLineEdit(DEFAULT_SECRET, objectName="registry-secret")
        self.login_secret.setToolTip(note)
        self.shm_edit = QLineEdit(objectName="image-shm")
        self.shm_edit.setPlaceholderText(tr("default: 64m"))
        self.user_edit = QLineEdit(objectName="image-user")
        self.user_edit.setPlaceholderText(tr("the image's own"))
        self.user_edit.setToolTip(tr("Who setup and run are inside the container: a user name, a uid or uid:gid"))
        self.use_saved = QCheckBox(objectName="registry-use-saved")
        self.use_saved.setToolTip(tr("Log in with the password saved on this computer (workbench registry login): "
                                     "nothing is asked at launch."))
        self.save_login = QCheckBox(tr("Save for next time"), objectName="registry-save")
        self.save_login.setToolTip(tr("Keep the password typed on the review page in this computer's keyring for "
                                      "this registry (saved when you launch); later jobs can use it."))
        self.labels = (QLabel(tr("Shared memory (/dev/s&hm):")), QLabel(tr("User in the container:")),
                       QLabel(tr("password from the launch secret")))
        for label, buddy in zip(self.labels, (self.shm_edit, self.user_edit, self.login_secret)):
            label.setBuddy(buddy)
        for edit in (self.image_edit, self.login_user, self.login_secret, self.shm_edit, self.user_edit):
            edit.textChanged.connect(self._changed)
        self.login.toggled.connect(self._changed)
        self.use_saved.toggled.connect(self._use_saved_toggled)
        self.save_login.toggled.connect(self._changed)
        self._enable()

    def add_rows(self, form: QFormLayout) -> None:
        """The image's three rows at the end of ``form``: the reference; shm size and user; the registry login."""
        em = self.image_edit.fontMetrics().horizontalAdvance("M")
        self.shm_edit.setMaximumWidth(em * 8)
        self.user_edit.setMaximumWidth(em * 12)
        self.login_user.setMaximumWidth(em * 12)
        self.login_secret.setMaximumWidth(em * 16)
        options, login = QHBoxLayout(), QHBoxLayout()
        for row, widgets in ((options, (self.labels[0], self.shm_edit, self.labels[1], self.user_edit)),
                             (login, (self.login, self.login_user, self.labels[2], self.login_secret,
                                      self.save_login))):
            for w in widgets:
                row.addWidget(w)
            row.addStretch(1)
        form.addRow(tr("Imag&e:"), self.image_edit)
        form.addRow("", options)
        form.addRow("", login)
        form.addRow("", self.use_saved)  # a row of its own, shown only when a login is saved (no empty gap)
        self._form = form
        self._enable()

    def _changed(self) -> None:
        self._enable()
        self.changed.emit()

    def saved(self) -> RegistryLogin | None:
        """The login saved for the image's registry (looked up once per registry)."""
        ref = reference_of(self.image_edit.text())
        if not ref or not REFERENCE_RE.fullmatch(ref):
            return None
        registry = ContainerImage(ref).registry
        if registry not in self._saved_cache:
            self._saved_cache[registry] = self._saved_lookup(registry)
        return self._saved_cache[registry]

    def using_saved(self) -> bool:
        """The login takes the password saved for the image's registry (``password: keyring``)."""
        return self.login.isChecked() and self.use_saved.isChecked() and self.saved() is not None

    def save_wanted(self) -> bool:
        """"Save for next time": the launch saves the password typed for this login in the keyring."""
        return bool(reference_of(self.image_edit.text())) and self.login.isChecked() and not self.using_saved() \
            and self.save_login.isChecked()

    def _use_saved_toggled(self, on: bool) -> None:
        saved = self.saved()
        if on and saved is not None and not self.login_user.text().strip():
            self.login_user.setText(saved.username)  # the saved login's user
        self._changed()

    def _enable(self) -> None:
        on = bool(self.image_edit.text().strip())  # the rest is about an image: nothing to say without one
        for w in (self.login, self.shm_edit, self.user_edit, *self.labels[:2]):
            w.setEnabled(on)
        login = on and self.login.isChecked()
        saved = self.saved() if login else None
        ref = reference_of(self.image_edit.text())
        # shown when a login is saved, or when the opened spec asks for one (so it can be unticked)
        shown = saved is not None or (login and self.use_saved.isChecked())
        if self._form is not None:
            self._form.setRowVisible(self.use_saved, shown)
        else:
            self.use_saved.setVisible(shown)
        if login and REFERENCE_RE.fullmatch(ref):
            self.use_saved.setText(tr("Use the password saved for {registry}").format(
                registry=ContainerImage(ref).registry))
        keyring = login and self.use_saved.isChecked()
        self.login_user.setEnabled(login)
        for w in (self.login_secret, self.labels[2], self.save_login):
            w.setEnabled(login and not keyring)

    def fill(self, image: ContainerImage | None) -> None:
        """Show ``image`` (None: no container)."""
        auth = image.registry_auth if image is not None else None
        self.image_edit.setText(image.name if image is not None else "")
        self.login.setChecked(auth is not None)
        self.login_user.setText(auth.username if auth is not None else "")
        keyring = auth is not None and auth.from_keyring
        self.login_secret.setText(auth.password_secret if auth is not None and not keyring else DEFAULT_SECRET)
        self.use_saved.setChecked(keyring)
        self.save_login.setChecked(False)
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
        if self.use_saved.isChecked() and self.saved() is None:
            return tr("Registry login: no password is saved for {registry} (workbench registry login); type one at "
                      "launch instead.").format(registry=ContainerImage(ref).registry)
        if self.using_saved():
            saved = self.saved()
            assert saved is not None
            if saved.username != self.login_user.text().strip():
                return tr("Registry login: the password saved for {registry} is {user}'s; log in as {user}, or "
                          "untick it and type a password at launch.").format(registry=saved.registry,
                                                                             user=saved.username)
            return None
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
            auth = RegistryAuth(self.login_user.text().strip(),
                                REGISTRY_KEYRING if self.using_saved() else self.login_secret.text().strip())
        return ContainerImage(ref, auth, self.shm_edit.text().strip() or None, self.user_edit.text().strip() or None)

    def apply(self, spec: JobSpec) -> JobSpec:
        """``spec`` with this image; a login's secret is added to ``spec.secrets`` (asked for at launch), unless
        it comes from the keyring."""
        image = self.image()
        secrets = spec.secrets
        auth = image.registry_auth if image is not None else None
        if auth is not None and not auth.from_keyring and auth.password_secret not in secrets:
            secrets = (*secrets, auth.password_secret)
        return dataclasses.replace(spec, image=image, secrets=secrets)
