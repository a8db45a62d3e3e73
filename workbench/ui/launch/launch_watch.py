"""The review page's "Keep watching while this computer is off" (issue 33): hand the launch to the account's
controller once its job has started.

Offered with the controller's price ("+ $0.011/h while it watches") when the chosen profile can have one (a
cloud profile whose ``storage_uri`` bucket the controller and the app share: ``deploy.plan`` did not fail, asked
on a worker through the session's controller hook); checked by default for a launch with ``recovery`` or a max
runtime over :data:`DEFAULT_OVER_MIN` minutes, until the user sets it; disabled with the reason as its tooltip
otherwise.  Writes the draft's ``keep_watching``; the wizard reads the plan (:attr:`WatchOption.plan`) to ask
the one-time question before the launch.  Main thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget
from shiboken6 import isValid

from workbench.core.domain.models import JobSpec
from workbench.ui.common.controller_confirm import price_parts
from workbench.ui.common.format import error_words, money
from workbench.ui.i18n import tr
from workbench.ui.launch.launch_draft import Draft, LaunchDraft

DEFAULT_OVER_MIN = 4 * 60  # a max runtime longer than this (minutes) offers the controller by default


def wanted_by_default(spec: JobSpec) -> bool:
    """A launch that recovers or runs for hours is the one a closed laptop hurts."""
    minutes = spec.guards.max_runtime_minutes
    return spec.recovery is not None or (minutes is not None and minutes > DEFAULT_OVER_MIN)


def plan_reason(plan: Any) -> str | None:
    """Why ``plan`` (a ControllerPlan) cannot have a controller, in words; None when it can."""
    if plan.supported:
        return None
    if not plan.bucket:
        return tr("needs the profile's storage_uri bucket, where the app and the controller meet (Accounts ▸ Edit)")
    return error_words(plan.error) if plan.error is not None else tr("this cloud has no controller")


class WatchOption(QWidget):
    """The checkbox and its price; ``show_for(draft value)`` whenever the review page shows the draft."""

    def __init__(self, draft: Draft, session: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("watch-option")
        self.draft = draft
        self.session = session
        self.plan: Any = None  # the chosen profile's ControllerPlan, once the hook answered
        self.user_set = False  # the user ticked or cleared it: the default no longer applies
        self._asking: str | None = None
        self.check = QCheckBox(tr("Keep watching while this computer is off"), objectName="keep-watching")
        self.price = QLabel(objectName="keep-watching-price", wordWrap=True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.check)
        row.addWidget(self.price, 1)
        self._setting = False  # the code sets the box (the default, disabled): not the user's choice
        self.check.toggled.connect(self._toggled)

    def _toggled(self, on: bool) -> None:
        self.user_set = self.user_set or not self._setting
        self.draft.update(keep_watching=bool(on and self.check.isEnabled()))

    def _set_checked(self, on: bool) -> None:
        self._setting = True
        try:
            self.check.setChecked(on)
        finally:
            self._setting = False

    def show_for(self, d: LaunchDraft) -> None:
        spec, choice = d.launch_spec(), d.choice
        self.setVisible(choice is not None)
        if choice is None:
            return
        if d.on_this_computer:
            return self._off(tr("a job on this computer stops when the computer does: there is nothing to watch"))
        if spec.secrets:
            return self._off(tr("a job with launch secrets cannot be handed over: their values live only in this "
                                "app's memory"))
        profile = choice.profile
        hook = getattr(self.session, "controller", None)
        plan = hook.cached_plan(profile) if hook is not None else None
        if plan is None or plan.profile != profile:
            self.plan = None
            if hook is None or self.session.accounts is None:
                return self._off(tr("no controller can be asked here"))
            self._off(tr("checking whether {profile} can have a controller…").format(profile=profile), checking=True)
            if self._asking != profile:
                self._asking = profile
                task = hook.plan(profile)
                task.alive = lambda: isValid(self)
                task.then(lambda _p: self._answered()).fail(lambda exc: self._failed(profile, exc))
            return
        self.plan = plan
        why = plan_reason(plan)
        if why is not None:
            return self._off(why)
        self.check.setEnabled(True)
        self.check.setToolTip(tr("Hands the launch to the controller of {profile} once its job has started: it "
                                 "relaunches and ends it while this computer is off.").format(profile=profile))
        cost = getattr(plan.planned, "cost", None)
        self.price.setText(tr("+ {price}/h while it watches").format(price=money(cost.total_per_h, cost.currency, 3))
                           if cost is not None else tr("(the controller of {profile} runs already)").format(
                               profile=profile))
        self.price.setToolTip(price_parts(cost) if cost is not None else "")
        self.price.setEnabled(True)
        if not self.user_set:
            self._set_checked(wanted_by_default(spec))
        self.draft.update(keep_watching=self.check.isChecked())

    def _answered(self) -> None:
        self._asking = None
        self.show_for(self.draft.value)

    def _failed(self, profile: str, exc: BaseException) -> None:
        self._asking = None
        if self.draft.value.choice is not None and self.draft.value.choice.profile == profile:
            self._off(error_words(exc))

    def _off(self, why: str, checking: bool = False) -> None:
        self.check.setEnabled(False)
        self._set_checked(False)
        self.check.setToolTip(why)
        self.price.setText(why if checking else tr("(unavailable: {why})").format(why=why))
        self.price.setToolTip(why)
        self.price.setEnabled(False)
        self.draft.update(keep_watching=False)
