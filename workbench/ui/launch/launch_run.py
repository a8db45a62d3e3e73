"""One launch attempt from the wizard, off the UI thread, with cancel and the rollback check.

    run = LaunchRun(session, draft)   # the wizard's LaunchDraft value (launch_draft.py)
    run.step.connect(...); run.succeeded.connect(...); run.failed.connect(...)
    run.cleanup_started.connect(...); run.cleanup_done.connect(...)
    run.start()

* The launch (``plan_offer`` + ``execute``) is a change (``session.mutate``) in the
  profile's lane (``lanes.profile_lane``), after that profile's earlier launches and
  account changes; core's launch gate orders it with the profile's teardowns.
* ``execute`` reports its steps from the worker; ``step`` is a Qt signal, so
  the connection to this main-thread object is queued and slots run on the UI
  thread.
* A provider call cannot be interrupted.  ``cancel()`` asks the wait loop to
  stop and, once the provider has answered, tears the launch down (core
  ``teardown`` with this launch id, a change on the teardown lane).
* After a failure the provider has rolled back; ``remains`` (read pool)
  confirms nothing of this launch id is left, and ``cleanup_done`` says what
  is (with any error that kept us from checking).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import shiboken6
from PySide6.QtCore import QObject, Signal

from workbench.core.domain.errors import WorkbenchError
from workbench.core.lifecycle.launcher import execute, new_launch_id, plan_offer, remains
from workbench.core.domain.models import Instance, Resource
from workbench.core.lifecycle.teardown import teardown
from workbench.core.providers.contract import SupportsCancelLaunch
from workbench.ui.i18n import tr
from workbench.ui.launch.launch_draft import LaunchDraft
from workbench.ui.runtime.lanes import TEARDOWN, Lane, profile_lane
from workbench.ui.runtime.session import Session

if TYPE_CHECKING:
    from workbench.core.lifecycle.launch_storage import MountProgress
    from workbench.core.storage.checks import MountCheck
    from workbench.core.storage.upload import UploadProgress

log = logging.getLogger("workbench.ui.launch")

WAIT_FOR_START_S = 300.0  # how long the wizard waits for a PENDING machine before handing over
POLL_S = 2.0
TEARDOWN_TIMEOUT_S = 180.0


@dataclass
class Cleanup:
    """What a rollback check or a cancel's teardown found: ``remaining`` empty and no errors = clean."""

    reason: str  # "failed" (rollback check) or "cancelled" (teardown)
    remaining: list[Instance | Resource] = field(default_factory=list)
    errors: list[tuple[str, WorkbenchError]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.remaining and not self.errors


class LaunchRun(QObject):
    """Drives one launch; all signals are delivered on the main thread."""

    step = Signal(str)  # a launcher STEP_* key
    succeeded = Signal(object)  # list[Instance]
    failed = Signal(object)  # the provider's exception
    cleanup_started = Signal(str)  # "failed" | "cancelled"
    cleanup_done = Signal(object)  # Cleanup
    uploading = Signal(str)  # a line about a storage folder's upload (before anything is launched)
    upload_fraction = Signal(float)  # how much of that upload's bytes were sent, 0..1

    def __init__(self, session: Session, draft: LaunchDraft, wait_s: float = WAIT_FOR_START_S,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        if draft.choice is None:
            raise ValueError("LaunchRun needs a draft with a chosen offer")
        self.session = session
        self.draft = draft
        self.spec = draft.launch_spec()
        self.choice = draft.choice
        self.alternatives = draft.alternatives
        self.wait_s = wait_s
        self.launch_id = new_launch_id(self.spec.name)
        self.provider = self.choice.offer.provider
        self.profile = self.choice.profile
        self.in_flight = False
        self.cleaning = False
        self.cancel_requested = False
        self.instances: list[Instance] = []

    @property
    def lane(self) -> Lane:
        return profile_lane(self.profile)

    def start(self) -> None:
        self.in_flight = True
        accounts = self.session.accounts

        def work() -> list[Instance]:
            from workbench.core.lifecycle.launch_storage import prepare_launch_storage  # a worker's import

            if self.draft.save_registry_login:  # "Save for next time": the password typed for the registry login
                _save_registry_login(accounts, self.spec, self.draft.secret_env)
            lp = plan_offer(accounts, self.spec, self.choice, self.alternatives, launch_id=self.launch_id)
            lp = prepare_launch_storage(accounts, lp, upload_progress(self.uploading.emit, self.upload_fraction.emit),
                                        lambda: self.cancel_requested)
            return execute(accounts, lp, progress=self.step.emit, wait_s=self.wait_s, poll_s=POLL_S,
                           should_stop=lambda: self.cancel_requested, secret_env=self.draft.secret_env)

        log.info("launch %s on %s/%s (%s)", self.launch_id, self.provider, self.profile, self.choice.offer.instance_type)
        self.session.mutate(work, lane=self.lane).then(self._launched).fail(self._failed)

    def cancel(self) -> None:
        """Tear the launch down as soon as the provider has answered (a no-op when nothing is running).

        A provider that SupportsCancelLaunch (Azure: a launch waits minutes for its VM) is
        also asked, off the UI thread, to stop early; it then rolls back and raises.
        """
        if self.in_flight and not self.cancel_requested:
            log.info("launch %s: cancel requested", self.launch_id)
            self.cancel_requested = True
            self.session.run(self._interrupt_provider)

    def _interrupt_provider(self) -> None:  # worker thread
        accounts = self.session.accounts
        prov = accounts.provider(accounts.profile(self.profile))
        if isinstance(prov, SupportsCancelLaunch):
            prov.cancel_launch(self.launch_id)

    # -- outcomes -------------------------------------------------------------
    def _launched(self, instances: list[Instance]) -> None:
        if not shiboken6.isValid(self):
            return
        self.in_flight = False
        self.instances = list(instances)
        if self.cancel_requested:
            self._tear_down("cancelled")
        else:
            self.succeeded.emit(self.instances)

    def _failed(self, exc: BaseException) -> None:
        if not shiboken6.isValid(self):
            return
        self.in_flight = False
        if self.cancel_requested:  # the provider stopped early because it was asked to: a cancel, not a failure
            self._tear_down("cancelled")
            return
        self.failed.emit(exc)
        self.check_remains()

    def check_remains(self) -> None:
        """Ask the provider what of this launch still exists (after the provider rolled back)."""
        self.cleaning = True
        self.cleanup_started.emit("failed")
        accounts = self.session.accounts

        def work() -> Cleanup:
            try:
                return Cleanup("failed", remaining=remains(accounts, self.profile, self.launch_id))
            except WorkbenchError as exc:
                return Cleanup("failed", errors=[(self.profile, exc)])

        self.session.run(work).then(self._cleaned).fail(
            lambda exc: self._cleaned(Cleanup("failed", errors=[(self.profile, _as_workbench_error(exc))])))

    def tear_down_remains(self) -> None:
        """Tear down whatever a check found (the user asked for it)."""
        self._tear_down("failed")

    def _tear_down(self, reason: str) -> None:
        self.cleaning = True
        self.cleanup_started.emit(reason)
        accounts = self.session.accounts

        def work() -> Cleanup:
            report = teardown(accounts, [self.launch_id], timeout=TEARDOWN_TIMEOUT_S, poll=0.5)
            # teardown also reports other profiles' listing errors; only this launch's profile matters here
            errors = [(name, exc) for name, exc in report.errors if name == self.profile]
            return Cleanup(reason, remaining=list(report.remaining), errors=errors)

        self.session.mutate(work, lane=TEARDOWN).then(self._cleaned).fail(
            lambda exc: self._cleaned(Cleanup(reason, errors=[(self.profile, _as_workbench_error(exc))])))

    def _cleaned(self, result: Cleanup) -> None:
        if not shiboken6.isValid(self):
            return
        self.cleaning = False
        log.info("launch %s: %s, cleanup %s", self.launch_id, result.reason,
                 "clean" if result.clean else f"{len(result.remaining)} remaining, {len(result.errors)} errors")
        self.cleanup_done.emit(result)


def upload_progress(say: Callable[[str], None],
                    fraction: Callable[[float], None] | None = None) -> "MountProgress":
    """How the wizard shows a storage upload: a line per report to ``say``, the share of bytes sent (0..1) to
    ``fraction``.  Called from the upload's transfer threads (hand it signals' ``emit``)."""

    def show(mount: "MountCheck", p: "UploadProgress") -> None:
        pct = min(100.0 * p.bytes_done / p.bytes_total if p.bytes_total else 100.0, 100.0)
        if fraction is not None:
            fraction(pct / 100.0)
        say(tr("Uploading {folder}: {pct} % ({done} of {total} files; {skipped} unchanged)").format(
            folder=mount.upload_from, pct=f"{pct:.0f}", done=p.files_done, total=p.files_total,
            skipped=p.skipped_files))

    return show


def _as_workbench_error(exc: BaseException) -> WorkbenchError:
    if isinstance(exc, WorkbenchError):
        return exc
    log.error("cleanup check failed unexpectedly: %s: %s", type(exc).__name__, exc)
    return WorkbenchError(f"{type(exc).__name__}: {exc}")


def _save_registry_login(accounts, spec, secret_env) -> None:  # worker thread (the keyring blocks)
    """Save the password typed for the image's registry login in the keyring; a keyring that refuses is logged,
    not a failed launch (the password was typed: the launch has what it needs)."""
    from workbench.core.providers.registry_logins import save_typed_login  # a worker's import

    try:
        if save_typed_login(accounts.credentials, spec, secret_env):
            log.info("saved the registry login of %s for next time", spec.image.registry if spec.image else "-")
    except WorkbenchError as exc:
        log.warning("could not save the registry login for next time: %s", exc.message)
