"""The launch wizard: job → offer → guards → review & launch.

    wiz = LaunchWizard(session, spec_path="train.yaml")
    wiz.launched.connect(on_launched)   # launch id, after a successful launch
    wiz.open()

Pages live in ``launch_job_page``, ``launch_pages`` and ``launch_review``;
they share the wizard's one draft (``wiz.draft``, a
:class:`~workbench.ui.launch.launch_draft.Draft`: spec, offers, chosen offer,
guards) and never touch the wizard or each other; see ``launch_draft`` for
who writes which field and how to add one.  The launch itself is a
:class:`~workbench.ui.launch.launch_run.LaunchRun` started by one explicit
action, the review page's ``launch_action``; the wizard's Launch button (the
Finish button's place) triggers that action instead of finishing the wizard.
The wizard reacts to the run: progress on the review page, the provider's
error (``show_error``), the rollback check, and on success a
``session.notify`` and ``accept()`` (the launch's own refresh follows: ``Session.mutate``).  Cancel (button,
Escape or closing the window) while a launch is in flight does not close the
wizard: it cancels the launch, which is torn down once the provider answers,
and reports what (if anything) is left.  Main thread only.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMessageBox, QWidget, QWizard

from workbench.core.domain.models import Instance, InstanceState, JobSpec, Resource
from workbench.core.lifecycle.launcher import STEP_RUNNING
from workbench.core.offers.query import RankedOffer
from workbench.ui.common.controller_confirm import ask_to_create
from workbench.ui.common.dialogs import error_parts, show_error
from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.launch_job_page import JobPage
from workbench.ui.launch.launch_pages import GuardsPage, OfferPage
from workbench.ui.launch.launch_review import ReviewPage
from workbench.ui.launch.launch_run import Cleanup, LaunchRun
from workbench.ui.runtime.session import Session

log = logging.getLogger("workbench.ui.launch")

PAGE_JOB, PAGE_OFFER, PAGE_GUARDS, PAGE_REVIEW = range(4)


def describe_remains(things: list[Instance | Resource]) -> list[str]:
    """One line per thing still there: what it is, its id, where, and (instances) what it bills."""
    lines = []
    for t in things:
        if isinstance(t, Instance):
            lines.append(tr("• machine {id} ({type}, {region}), {state}, {price}/h").format(
                id=t.instance_id, type=t.instance_type, region=t.region, state=t.state.value,
                price=money(t.price_per_hour, t.currency, 3)))
        else:
            lines.append(tr("• {kind} {id} ({region})").format(kind=t.kind, id=t.resource_id, region=t.region))
    return lines


class LaunchWizard(QWizard):
    """Four pages; ``LaunchWizard(session, spec_path=...)`` then ``next()`` drives it (tests, screenshots).

    The Launch button is the Finish button (``button(QWizard.WizardButton.FinishButton)``), rewired
    to trigger ``review_page.launch_action``; the wizard finishes itself after a successful launch.
    """

    launched = Signal(str)  # launch id

    def __init__(self, session: Session, spec_path: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("launch-wizard")
        self.setWindowTitle(tr("New launch"))
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setButtonText(QWizard.WizardButton.FinishButton, tr("&Launch"))
        self.resize(980, 640)
        self.session = session
        self.draft = Draft(parent=self)
        self.run: LaunchRun | None = None
        self.launched_ok = False
        self.launch_id: str | None = None
        self.error_box: QMessageBox | None = None
        self.job_page = JobPage(self.draft, session=session)
        self.offer_page = OfferPage(self.draft, session)
        self.guards_page = GuardsPage(self.draft)
        self.review_page = ReviewPage(self.draft, session=session)
        self.watch_confirmed = False  # the one-time question about the account's controller was answered yes
        for pid, page in ((PAGE_JOB, self.job_page), (PAGE_OFFER, self.offer_page),
                          (PAGE_GUARDS, self.guards_page), (PAGE_REVIEW, self.review_page)):
            self.setPage(pid, page)
        self.panel = self.review_page.panel
        self.panel.tear_down.clicked.connect(self._tear_down_remains)
        self.review_page.launch_action.triggered.connect(self.start_launch)
        # The Finish button is the Launch button: it triggers the review page's action; QWizard's own
        # finish (accept) is the wizard's to call once the launch has succeeded.
        finish = self.button(QWizard.WizardButton.FinishButton)
        finish.clicked.disconnect()
        finish.clicked.connect(self.review_page.launch_action.trigger)
        self.currentIdChanged.connect(self._page_shown)
        if spec_path:
            self.job_page.load_file(spec_path)

    def _page_shown(self, page_id: int) -> None:
        if page_id == PAGE_REVIEW:
            self.check_storage()

    def check_storage(self) -> None:
        """The review page's storage lines: each mount checked (bucket, access, region, size) off the UI thread."""
        draft = self.draft.value
        spec = draft.launch_spec()
        self.review_page.show_storage(spec, None, checking=bool(spec.storage))
        if not spec.storage or draft.choice is None or self.session.accounts is None:
            return
        accounts, choice = self.session.accounts, draft.choice

        def work():  # type: ignore[no-untyped-def]
            from workbench.core.storage.checks import check_storage

            return check_storage(accounts, spec, accounts.profile(choice.profile), choice.offer)

        self.session.run(work).then(lambda plan: self.review_page.show_storage(spec, plan)).fail(
            lambda exc: self.review_page.show_storage(spec, exc))

    # -- the draft, read-only views for callers ---------------------------------------
    @property
    def spec(self) -> JobSpec:
        """The job as it would be launched now (the draft's spec with the guards page's limits)."""
        return self.draft.value.launch_spec()

    @property
    def choice(self) -> RankedOffer | None:
        return self.draft.value.choice

    # -- state ------------------------------------------------------------------
    def busy(self) -> bool:
        """True while a launch or its cleanup is in flight (the wizard must stay open)."""
        return self.run is not None and (self.run.in_flight or self.run.cleaning)

    def _set_busy_buttons(self, busy: bool) -> None:
        self.review_page.set_run_state(busy, self.launched_ok)  # QWizard recomputes its buttons …
        self.button(QWizard.WizardButton.BackButton).setEnabled(not busy)  # … then Back follows us
        self.button(QWizard.WizardButton.CancelButton).setEnabled(True)
        self.setButtonText(QWizard.WizardButton.CancelButton, tr("Cancel launch") if busy else tr("Close"))

    # -- launching --------------------------------------------------------------
    def start_launch(self) -> None:
        """Launch the draft (a new launch id each time); the review page's ``launch_action`` calls this."""
        draft = self.draft.value
        if not draft.ready or self.busy() or self.launched_ok:
            return
        plan = self.review_page.watch.plan
        if draft.keep_watching and plan is not None and plan.needs_confirmation and not self.watch_confirmed:
            self.error_box = ask_to_create(self, plan.planned, self._watch_yes)  # asked once per account
            return
        if self.run is not None:
            self.run.deleteLater()  # the previous attempt is over (not busy); its callbacks check validity
        run = LaunchRun(self.session, draft, parent=self)
        run.step.connect(self._step)
        run.succeeded.connect(self._succeeded)
        run.failed.connect(self._failed)
        run.cleanup_started.connect(self._cleanup_started)
        run.cleanup_done.connect(self._cleanup_done)
        run.uploading.connect(self.panel.status.setText)
        run.upload_fraction.connect(self.panel.show_fraction)
        self.run = run
        self.launch_id = run.launch_id
        self.panel.begin(f"{run.provider} ({run.profile})")
        self.panel.status.setText(tr("Launch {id}").format(id=run.launch_id))
        run.start()
        self._set_busy_buttons(True)

    def _watch_yes(self) -> None:
        self.watch_confirmed = True
        self.start_launch()

    def _step(self, key: str) -> None:
        if self.run is not None and self.run.cancel_requested:
            return  # the launch goes on only to be torn down: don't show it "running"
        self.panel.reached(key)

    def _succeeded(self, instances: list[Instance]) -> None:
        run = self.run
        assert run is not None
        self.panel.idle()
        started = not any(i.state == InstanceState.PENDING for i in instances)
        if started:
            self.panel.reached(STEP_RUNNING)
        where = tr("{provider} / {profile}, {region}").format(
            provider=run.provider, profile=run.profile, region=run.choice.offer.region)
        message = (tr("{name} is running on {where}.") if started
                   else tr("{name} was created on {where} and is still starting.")).format(
            name=run.spec.name, where=where)
        self.panel.status.setText(message)
        self.launched_ok = True
        self.review_page.set_run_state(False, launched=True)
        self.session.notify.emit(tr("Launch ready"), message, "info")
        if run.draft.keep_watching:  # the controller watches it once its job has started (created first if need be)
            self.session.controller.hand_after_start(run.launch_id, run.profile)
        self.launched.emit(run.launch_id)
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.panel.fail_current()
        message, hint, _ = error_parts(exc)
        self.panel.error.show_text(message + (f"\n{tr('What to do:')} {hint}" if hint else ""))
        self.panel.status.setText(tr("The launch failed."))
        self.error_box = show_error(self, exc, title=tr("Launch failed"))

    def _cleanup_started(self, reason: str) -> None:
        self.panel.busy.setVisible(True)
        self.panel.tear_down.setVisible(False)
        if reason == "cancelled":
            self.panel.stop_after_current()
            self.panel.status.setText(tr("Cancelled: tearing the launch down…"))
        self.panel.rollback.setText(tr("Checking that nothing was left behind…"))
        self._set_busy_buttons(True)

    def _cleanup_done(self, result: Cleanup) -> None:
        self.panel.idle()
        if result.reason == "cancelled":
            self.panel.status.setText(tr("The launch was cancelled and torn down."))
        lines: list[str] = []
        if result.clean:
            lines.append(tr("✓ Nothing was left behind: nothing of this launch is billing."))
        if result.remaining:
            lines.append(tr("Still there (may be billing):"))
            lines.extend(describe_remains(result.remaining))
        for name, exc in result.errors:
            lines.append(tr("Could not check {profile}: {error}").format(profile=name, error=exc.message))
        if result.errors and not result.remaining:
            lines.append(tr("Look in the Instances view, or run Stop all billing to be sure."))
        self.panel.rollback.setText("\n".join(lines))
        self.panel.tear_down.setVisible(bool(result.remaining))
        self._set_busy_buttons(False)

    def _tear_down_remains(self) -> None:
        if self.run is not None and not self.busy():
            self.run.tear_down_remains()

    # -- closing ----------------------------------------------------------------
    def reject(self) -> None:
        """Cancel closes the wizard, except during a launch: then it cancels the launch."""
        if self.run is not None and self.run.in_flight:
            self.run.cancel()
            self.panel.status.setText(tr("Cancelling: waiting for {provider} to answer, then tearing the "
                                         "launch down…").format(provider=self.run.provider))
            self.button(QWizard.WizardButton.CancelButton).setEnabled(False)
            return
        if self.busy():
            return  # the teardown or rollback check is running; its result must be seen
        super().reject()
