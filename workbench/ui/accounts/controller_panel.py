"""The Accounts page's Controller section: the selected cloud profile's controller (issue 33).

Its state (none / starting / answering, last heard N s ago / does not answer), what it watches, its price
all-in (the parts in the tooltip), and "Create controller…" (the one-time question, then creating it on the
workers with its progress here) and "End controller…" (verified teardown).

Threading: the status, the plan and every change run through the session's controller hook
(``ui.runtime.controller_hook``) on workers; this widget only draws what they return.  Failure rules: an
error is a red line in the panel, in the app's words (``error_words``), and a notification.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QLabel, QMessageBox, QProgressBar, QPushButton,
                               QVBoxLayout, QWidget)
from shiboken6 import isValid

from workbench.core.domain.models import Profile
from workbench.core.lifecycle.launcher import STEP_PROVIDER, STEP_RECORD, STEP_RUNNING, STEP_WAIT
from workbench.ui.accounts.credentials_form import set_status
from workbench.ui.common.controller_confirm import ask_to_create, price_parts, price_text
from workbench.ui.common.format import duration, error_words
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr
from workbench.ui.runtime.controller_hook import STEP_HEARTBEAT, STEP_INSTALL, ControllerPlan, ControllerStatus
from workbench.ui.runtime.session import Session

STATUS_EVERY_S = 30.0  # while the page is shown, the status is read again after a refresh at most this often


def state_words(st: ControllerStatus) -> str:
    """none / starting / answering, last heard N s ago / does not answer."""
    if st.state == "none":
        return tr("none")
    if st.state == "starting":
        return tr("starting (installing the workbench on its machine)")
    heard = duration(st.last_heard_s) if st.last_heard_s is not None else None
    if st.state == "answering":
        return tr("answering, last heard {age} ago").format(age=heard or tr("0 s"))
    if heard:
        return tr("does not answer (last heard {age} ago): this app relaunches its launches while it runs").format(
            age=heard)
    return tr("does not answer: this app relaunches its launches while it runs")


def step_words(key: str) -> str:
    return {STEP_RECORD: tr("Creating the controller: recording the launch…"),
            STEP_PROVIDER: tr("Creating the controller: asking the cloud for its machine…"),
            STEP_WAIT: tr("Creating the controller: waiting for its machine to start…"),
            STEP_RUNNING: tr("Creating the controller: its machine runs…"),
            STEP_INSTALL: tr("Creating the controller: installing the workbench on its machine…"),
            STEP_HEARTBEAT: tr("Creating the controller: waiting for its first heartbeat…")}.get(
        key, tr("Creating the controller…"))


class ControllerPanel(QGroupBox):
    """See the module doc; ``set_profile`` follows the Accounts tree's selection."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(tr("Controller (watches your launches while this computer is off)"), parent)
        self.setObjectName("controller-panel")
        self.session = session
        self.hook = session.controller
        self.profile: str | None = None
        self.status: ControllerStatus | None = None
        self.loading = False
        self._read_at = 0.0
        self.box: QMessageBox | None = None
        self.state = QLabel(objectName="controller-state", wordWrap=True)
        self.watching = QLabel(objectName="controller-watching", wordWrap=True)
        self.price = QLabel(objectName="controller-price", wordWrap=True)
        form = QFormLayout()
        form.addRow(tr("State:"), self.state)
        form.addRow(tr("Watches:"), self.watching)
        form.addRow(tr("Price:"), self.price)
        self.create_button = QPushButton(icon("launch"), tr("Create &controller…"), objectName="create-controller")
        self.end_button = QPushButton(icon("terminate"), tr("E&nd controller…"), objectName="end-controller")
        self.create_button.clicked.connect(self.create)
        self.end_button.clicked.connect(self.end)
        self.busy = QProgressBar(objectName="controller-busy", minimum=0, maximum=0, textVisible=False)
        self.busy.setMaximumWidth(120)
        self.busy.hide()
        self.message = QLabel(objectName="controller-message", wordWrap=True)
        row = QHBoxLayout()
        row.addWidget(self.create_button)
        row.addWidget(self.end_button)
        row.addWidget(self.busy)
        row.addWidget(self.message, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(row)
        self.hook.progress.connect(self._progress)
        self.hook.created.connect(lambda p, _beat: self._changed(p))
        self.hook.failed.connect(self._failed)
        self.hook.ended.connect(self._ended)
        session.snapshot_changed.connect(self._snapshot)
        self.hide()

    # -- the selected profile ------------------------------------------------------------------
    def set_profile(self, prof: Profile | None) -> None:
        """Show ``prof``'s controller (hidden for no profile or this computer's)."""
        name = prof.name if prof is not None and prof.provider != "local" else None
        if name == self.profile and name is not None:
            return
        self.profile = name
        self.status = None
        self.setVisible(name is not None)
        if name is None:
            return
        self.state.setText(tr("checking…"))
        self.watching.setText("")
        self.price.setText("")
        self.price.setToolTip("")
        self.message.setText("")
        self.reload()

    def reload(self) -> None:
        if self.profile is None or self.loading or self.session.accounts is None:
            return
        self.loading = True
        self._read_at = time.monotonic()
        profile = self.profile
        task = self.hook.status(profile)
        task.alive = lambda: isValid(self)
        task.then(lambda st: self._show(profile, st)).fail(lambda exc: self._show_error(profile, exc)).finally_(
            self._loaded)
        self._buttons()

    def _loaded(self) -> None:
        self.loading = False
        self._buttons()

    def _snapshot(self, _snap: Any) -> None:
        if self.isVisible() and time.monotonic() - self._read_at >= STATUS_EVERY_S:
            self.reload()

    def _show(self, profile: str, st: ControllerStatus) -> None:
        if profile != self.profile:
            return
        self.status = st
        self.state.setText(state_words(st))
        self.watching.setText(", ".join(st.watching) if st.watching else tr("nothing handed to it"))
        if st.cost is not None:
            self.price.setText(price_text(st.cost))
            self.price.setToolTip(price_parts(st.cost))
        else:
            self.price.setText(tr("unknown: {reason}").format(reason=st.cost_error or "?"))
        if st.board_error and profile not in self.hook.creating:
            set_status(self.message, tr("Its records cannot be read: {error}").format(error=st.board_error), False)

    def _show_error(self, profile: str, exc: BaseException) -> None:
        if profile == self.profile:
            self.state.setText(tr("unknown"))
            set_status(self.message, error_words(exc), False)

    def _buttons(self) -> None:
        st = self.status
        busy = self.profile in self.hook.creating
        self.busy.setVisible(busy or self.loading)
        self.create_button.setEnabled(not busy and st is not None and st.launch_id is None)
        self.end_button.setEnabled(not busy and st is not None and st.launch_id is not None)

    # -- create ----------------------------------------------------------------------------------
    def create(self) -> None:
        """Plan (worker), ask once per account, then create it (the hook's workers)."""
        profile = self.profile
        if profile is None or profile in self.hook.creating:
            return
        set_status(self.message, tr("Pricing the controller's machine…"), None)
        self.busy.show()
        task = self.hook.plan(profile)
        task.alive = lambda: isValid(self)
        task.then(lambda plan: self._planned(profile, plan)).fail(lambda exc: self._failed(profile, exc))

    def _planned(self, profile: str, plan: ControllerPlan) -> None:
        self.busy.hide()
        if plan.has_controller:
            self.message.setText("")
            self._changed(profile)
        elif plan.error is not None:
            self._failed(profile, plan.error)
        elif plan.needs_confirmation:
            self.message.setText("")
            self.box = ask_to_create(self, plan.planned, lambda: self._create(profile))
        else:
            self._create(profile)

    def _create(self, profile: str) -> None:
        set_status(self.message, step_words(""), None)
        self.hook.create(profile)
        self._buttons()

    def _progress(self, profile: str, key: str) -> None:
        if profile == self.profile:
            set_status(self.message, step_words(key), None)
            self._buttons()

    def _failed(self, profile: str, exc: BaseException) -> None:
        if profile == self.profile:
            self.busy.hide()
            set_status(self.message, error_words(exc) + (f"\n{exc.hint}" if getattr(exc, "hint", None) else ""),
                       False)
            self._changed(profile, keep_message=True)

    def _changed(self, profile: str, keep_message: bool = False) -> None:
        if profile == self.profile:
            if not keep_message:
                self.message.setText("")
            self.loading = False
            self.reload()

    # -- end -------------------------------------------------------------------------------------
    def end(self) -> None:
        profile = self.profile
        if profile is None or self.status is None or self.status.launch_id is None:
            return
        box = QMessageBox(QMessageBox.Icon.Warning, tr("End controller"),
                          tr("End the controller of {profile}? The launches it watches go back to this app, which "
                             "relaunches them only while it runs.").format(profile=profile),
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("end-controller-confirm")
        yes = box.addButton(tr("E&nd controller"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        yes.clicked.connect(lambda: self._end(profile))
        self.box = box
        box.open()

    def _end(self, profile: str) -> None:
        set_status(self.message, tr("Ending the controller and checking nothing of it is left…"), None)
        self.busy.show()
        self.hook.end(profile)

    def _ended(self, profile: str, clean: bool) -> None:
        if profile == self.profile:
            self.busy.hide()
            set_status(self.message, tr("The controller is gone (verified).") if clean else
                       tr("Something of the controller still bills: see Instances."), clean)
            self._changed(profile, keep_message=True)
