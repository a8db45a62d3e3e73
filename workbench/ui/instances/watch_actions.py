"""Instances' "Keep watching while this computer is off" and "Stop the controller watching" (issue 33).

The first hands the selected launch to its profile's controller (the one-time question first when the
account has none and was never asked; the controller is then created before the hand-over); the second takes
it back (the app relaunches it again, while it runs).  The work runs on the session's controller hook
(``ui.runtime.controller_hook``: workers, the profile's lane); this only decides what is offered.
Main thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from workbench.core.domain.models import Instance
from workbench.ui.common.controller_confirm import ask_to_create
from workbench.ui.common.format import error_words
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr


class WatchActions:
    """Two actions of the Instances view; ``update(selected, snapshot)`` enables them."""

    def __init__(self, view: QWidget, session: Any) -> None:
        self.view = view
        self.session = session
        self.hand_action = QAction(icon("clock"), tr("&Keep watching while this computer is off"), view)
        self.hand_action.setObjectName("hand-to-controller")
        self.release_action = QAction(icon("stop-billing"), tr("Stop the controller &watching"), view)
        self.release_action.setObjectName("release-from-controller")
        self.hand_action.triggered.connect(self.hand)
        self.release_action.triggered.connect(self.release)
        self.target: Instance | None = None
        self.box: Any = None

    def update(self, selected: list[Instance], snap: Any) -> None:
        one = selected[0] if len(selected) == 1 else None
        self.target = one
        controllers = getattr(snap, "controllers", frozenset())
        watched = getattr(snap, "watched", {})
        mine = one is not None and one.launch_id not in controllers
        self.hand_action.setEnabled(bool(mine and one.state.billable and one.provider != "local"
                                         and one.launch_id not in watched))
        self.release_action.setEnabled(bool(mine and one.launch_id in watched))

    def hand(self) -> None:
        inst = self.target
        if inst is None or self.session.accounts is None:
            return
        hook = self.session.controller
        task = hook.plan(inst.profile)
        task.alive = lambda: isValid(self.view)
        task.then(lambda plan: self._planned(inst, plan)).fail(lambda exc: self._refused(inst, exc))

    def _planned(self, inst: Instance, plan: Any) -> None:
        hook = self.session.controller
        if not plan.supported:
            self._refused(inst, plan.error or tr("this cloud has no controller"))
        elif plan.needs_confirmation:
            self.box = ask_to_create(self.view, plan.planned, lambda: hook.hand_now(inst.launch_id, inst.profile))
        else:
            hook.hand_now(inst.launch_id, inst.profile)

    def _refused(self, inst: Instance, exc: Any) -> None:
        self.session.notify.emit(tr("Not handed to the controller"), tr("{id}: {error}").format(
            id=inst.launch_id, error=error_words(exc)), "error")

    def release(self) -> None:
        inst = self.target
        if inst is None:
            return
        profile = self.session.snapshot.watched.get(inst.launch_id)
        if profile is not None:
            self.session.controller.release(inst.launch_id, profile)
