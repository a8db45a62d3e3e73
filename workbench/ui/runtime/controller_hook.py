"""The accounts' controllers in the GUI (issue 33): what happened while the app was away, handing launches over,
creating and ending a controller.  The words and widgets live in the views (``accounts/controller_panel``,
``shell/away_notice``, the wizard's review page); this is the mechanics they share.

:class:`ControllerHook` belongs to the Session (which makes it).  After each snapshot it

* reads the boards of the profiles that have launches handed to a controller (``away.catch_up``, lane
  ``AWAY``) when the app opens and then at most once a minute, and emits ``caught_up`` with what it found;
* hands over the launches the wizard asked it to once their job has started (a cloud machine's job says
  "running"; a machine without an SSH job once it runs), creating the profile's controller first when it
  has none.

Creating a controller is ``deploy.up`` (a launch: the profile's lane), then its install started on the machine
(``deploy.start``, which the session's remote jobs do not follow) and its first heartbeat awaited
(``deploy.wait_for_heartbeat``), both on lane ``CONTROLLER``.  Ending it is ``deploy.down`` (verified teardown,
lane ``TEARDOWN``).  Every call that reaches a board or a cloud runs on a worker; the UI thread only starts
them and hands their results on.  ``boards`` (profile name → Board) replaces the profiles' buckets (tests).

Main thread only, except the workers' functions (module level, plain Python).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject, Signal

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import InstanceState
from workbench.ui.common.format import error_words
from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import AWAY, CONTROLLER, TEARDOWN, profile_lane
from workbench.ui.runtime.tasks import Task

if TYPE_CHECKING:
    from workbench.core.remote.job_state import JobEvent

log = logging.getLogger("workbench.ui.controller")

AWAY_EVERY_S = 60.0  # the boards are read when the app opens, then at most once a minute
PLAN_FRESH_S = 300.0  # a profile's plan (offer, price, identity) is asked again after this
HEARTBEAT_WAIT_S = 15 * 60.0  # how long a new controller's first heartbeat is awaited
STARTING_S = 20 * 60.0  # a controller not heard from this long after its launch "does not answer"
#: progress keys of a controller's creation beyond the launcher's steps
STEP_INSTALL, STEP_HEARTBEAT = "install", "heartbeat"


@dataclass(frozen=True)
class ControllerPlan:
    """Whether ``profile`` can have a controller, what it would be, and whether the user said yes already."""

    profile: str
    planned: Any = None  # deploy.Planned, or None with ``error``
    error: BaseException | None = None
    has_controller: bool = False
    confirmed: bool = False
    bucket: bool = True  # the profile names a storage_uri bucket (where the app and the controller meet)

    @property
    def supported(self) -> bool:
        return self.has_controller or self.planned is not None

    @property
    def needs_confirmation(self) -> bool:
        """The one-time question (machine, price, identity) is still to be asked before creating it."""
        return not self.has_controller and not self.confirmed


@dataclass(frozen=True)
class ControllerStatus:
    """A profile's controller as the Accounts page shows it."""

    profile: str
    state: str  # none | starting | answering | silent
    launch_id: str | None = None
    last_heard_s: float | None = None  # seconds since its last heartbeat
    watching: tuple[str, ...] = ()  # the names of the launches handed to it
    cost: Any = None  # ControllerCost, or None with ``cost_error``
    cost_error: str | None = None
    board_error: str | None = None
    identity: dict[str, Any] | None = None


def plan_for(accounts: Any, profile: str) -> ControllerPlan:
    """Worker: ``deploy.plan`` for ``profile`` (its error kept, not raised), and what the store knows."""
    from workbench.core.controller import deploy

    store = accounts.store
    has = bool(deploy.controllers(store, profile))
    confirmed = store.get_setting(deploy.CONFIRMED + profile) is not None
    prof = accounts.profile(profile)
    bucket = bool((prof.settings or {}).get("storage_uri"))
    try:
        planned = deploy.plan(accounts, prof)
    except WorkbenchError as exc:
        return ControllerPlan(profile, None, exc, has, confirmed, bucket)
    return ControllerPlan(profile, planned, None, has, confirmed, bucket)


def read_status(accounts: Any, profile: str, now: float | None = None) -> ControllerStatus:
    """Worker: the profile's controller (``deploy.status``), its price all-in, in the states the page names."""
    from workbench.core.controller import deploy
    from workbench.core.money.controller_cost import controller_cost

    now = time.time() if now is None else now
    prof = accounts.profile(profile)
    st = deploy.status(accounts, prof, now)
    try:
        cost, cost_error = controller_cost(prof.provider, prof.region), None
    except WorkbenchError as exc:
        cost, cost_error = None, exc.message
    store = accounts.store
    names = tuple((getattr(store.find_launch(r), "name", None) or r) for r in st["handed"])
    beat = st["heartbeat"] or {}
    lid = st["launch_id"]
    heard = now - float(beat["ts"]) if beat.get("ts") and beat.get("launch_id") == lid else None
    if lid is None:
        state = "none"
    elif st["reachable"] and heard is not None:
        state = "answering"
    else:
        rec = store.find_launch(lid)
        young = rec is not None and now - float(rec.created_at or 0) < STARTING_S
        state = "starting" if heard is None and young else "silent"
    return ControllerStatus(profile, state, lid, heard, names, cost, cost_error, st["board_error"], st["identity"])


class ControllerHook(QObject):
    """See the module doc.  Signals are delivered on the main thread."""

    caught_up = Signal(object)  # list[away.Away], after each read of the boards
    progress = Signal(str, str)  # profile, a step key (the launcher's STEP_*, STEP_INSTALL, STEP_HEARTBEAT)
    created = Signal(str, object)  # profile, its first heartbeat (None: not heard yet)
    failed = Signal(str, object)  # profile, the exception
    ended = Signal(str, bool)  # profile, verified clean
    handed_over = Signal(str, object)  # launch id, the record written (or the exception)
    released = Signal(str, object)  # launch id, None (or the exception)

    def __init__(self, session: Any, clock: Callable[[], float] = time.time) -> None:
        super().__init__(session if isinstance(session, QObject) else None)
        self.session = session
        self.clock = clock
        self.boards: dict[str, Any] = {}
        self.pending: dict[str, str] = {}  # launch id → profile: hand over once its job started
        self.creating: set[str] = set()
        self.closing = False
        self._away_busy = False
        self._away_at: float | None = None
        self._plans: dict[str, tuple[float, ControllerPlan]] = {}
        session.snapshot_changed.connect(self._snapshot)
        session.remote_event.connect(self._remote_event)

    def _board(self, accounts: Any, profile: str) -> Any:
        from workbench.core.controller import handover

        return self.boards.get(profile) or handover.board_of(accounts, profile)

    # -- while you were away ---------------------------------------------------------------------
    def _snapshot(self, snap: Any) -> None:
        self._hand_started(snap)
        if getattr(snap, "watched", None) and (self._away_at is None or
                                               self.clock() - self._away_at >= AWAY_EVERY_S):
            self.catch_up()

    def catch_up(self) -> Task | None:
        """Read the boards now (lane AWAY); ``caught_up`` follows.  None while a read is under way."""
        if self._away_busy or self.session.accounts is None:
            return None
        from workbench.core.controller import away

        self._away_busy = True
        self._away_at = self.clock()
        return (self.session.run(away.catch_up, self.session.accounts, boards=dict(self.boards) or None, lane=AWAY)
                .then(self._caught_up)
                .fail(lambda exc: log.warning("the controllers' boards could not be read: %s", exc))
                .finally_(self._away_done))

    def _away_done(self) -> None:
        self._away_busy = False

    def _caught_up(self, found: list[Any]) -> None:
        self.caught_up.emit(found)
        if any(a.imported for a in found):  # attempts the controller started: Instances and Spend show them
            self.session.refresh(after_change=True)

    # -- plans and status ------------------------------------------------------------------------
    def cached_plan(self, profile: str) -> ControllerPlan | None:
        got = self._plans.get(profile)
        return got[1] if got is not None and self.clock() - got[0] < PLAN_FRESH_S else None

    def plan(self, profile: str) -> Task:
        """``plan_for`` on the read pool (remembered a few minutes: the review page asks often)."""
        def keep(p: ControllerPlan) -> None:
            self._plans[profile] = (self.clock(), p)

        return self.session.run(plan_for, self.session.accounts, profile).then(keep)

    def status(self, profile: str) -> Task:
        return self.session.run(read_status, self.session.accounts, profile)

    # -- creating, ending ------------------------------------------------------------------------
    def create(self, profile: str, hand: tuple[str, ...] = ()) -> Task:
        """Create ``profile``'s controller (the user said yes), then hand ``hand`` over; see the module doc."""
        accounts = self.session.accounts
        self.creating.add(profile)
        self._plans.pop(profile, None)

        def work() -> tuple[Any, float, list[tuple[str, Any]]]:
            from workbench.core.controller import deploy

            accounts.store.set_setting(deploy.CONFIRMED + profile, repr(time.time()))
            since = time.time()
            res = deploy.up(accounts, accounts.profile(profile), progress=lambda k: self.progress.emit(profile, k))
            return res, since, [self._hand_work(accounts, lid, profile) for lid in hand]

        return (self.session.mutate(work, lane=profile_lane(profile))
                .then(lambda got: self._up_done(profile, *got))
                .fail(lambda exc: self._failed(profile, exc)))

    def _up_done(self, profile: str, res: Any, since: float, hands: list[tuple[str, Any]]) -> None:
        for lid, got in hands:
            self._handed(lid, got)
        accounts = self.session.accounts

        def work() -> Any:
            from workbench.core.controller import deploy

            prof = accounts.profile(profile)
            if not res.already:
                self.progress.emit(profile, STEP_INSTALL)
                deploy.start(accounts, res)
            self.progress.emit(profile, STEP_HEARTBEAT)
            return deploy.wait_for_heartbeat(accounts, prof, res.launch_id, since if not res.already else 0.0,
                                             HEARTBEAT_WAIT_S, should_stop=lambda: self.closing)

        (self.session.run(work, lane=CONTROLLER).then(lambda beat: self._created(profile, beat))
         .fail(lambda exc: self._failed(profile, exc)))

    def _created(self, profile: str, beat: Any) -> None:
        self.creating.discard(profile)
        self.session.notify.emit(tr("Controller"), (tr("The controller of {profile} answers.") if beat else tr(
            "The controller of {profile} was created but has not answered yet.")).format(profile=profile),
            "info" if beat else "warning")
        self.created.emit(profile, beat)

    def _failed(self, profile: str, exc: BaseException) -> None:
        self.creating.discard(profile)
        log.warning("the controller of %s: %s", profile, exc)
        self.session.notify.emit(tr("Controller"), tr("The controller of {profile}: {error}").format(
            profile=profile, error=error_words(exc)), "error")
        self.failed.emit(profile, exc)

    def end(self, profile: str) -> Task:
        """End ``profile``'s controller (verified teardown); ``ended`` says whether nothing of it is left."""
        from workbench.core.controller import deploy

        self._plans.pop(profile, None)
        accounts = self.session.accounts

        def work() -> bool:
            report = deploy.down(accounts, accounts.profile(profile))
            return report is None or bool(report.clean)

        return (self.session.mutate(work, lane=TEARDOWN).then(lambda clean: self._ended(profile, clean))
                .fail(lambda exc: self._failed(profile, exc)))

    def _ended(self, profile: str, clean: bool) -> None:
        self.session.notify.emit(tr("Controller"), (tr("The controller of {profile} is gone (verified).") if clean
                                                    else tr("Something of the controller of {profile} still bills: "
                                                            "see Instances.")).format(profile=profile),
                                 "info" if clean else "error")
        self.ended.emit(profile, clean)

    # -- handing over, taking back ---------------------------------------------------------------
    def hand_after_start(self, launch_id: str, profile: str) -> None:
        """Hand ``launch_id`` over once its job has started (creating the controller first if there is none)."""
        self.pending[launch_id] = profile
        self._hand_started(self.session.snapshot)

    def hand_now(self, launch_id: str, profile: str) -> None:
        """Hand a launch whose job already runs to the controller now (creating it first if there is none)."""
        self.pending[launch_id] = profile
        self._hand_now(launch_id)

    def _remote_event(self, ev: "JobEvent") -> None:
        if ev.launch_id in self.pending and ev.kind == "phase" and ev.phase == "running":
            self._hand_now(ev.launch_id)

    def _hand_started(self, snap: Any) -> None:
        from workbench.core.remote.kinds import is_remote

        for lid in list(self.pending):
            insts = [i for i in getattr(snap, "instances", ()) if i.launch_id == lid]
            if insts and not any(i.state.billable for i in insts):
                self.pending.pop(lid)  # it ended before its job started: nothing to watch
            elif any(i.state == InstanceState.RUNNING and not is_remote(i) for i in insts):
                self._hand_now(lid)  # no SSH job to wait for: it runs

    def _hand_now(self, launch_id: str) -> None:
        profile = self.pending.pop(launch_id)
        accounts = self.session.accounts

        def work() -> tuple[str, Any]:
            from workbench.core.controller import deploy

            if not deploy.controllers(accounts.store, profile):
                return "create", None
            return self._hand_work(accounts, launch_id, profile)

        def done(got: tuple[str, Any]) -> None:
            if got[0] == "create":
                self.create(profile, hand=(launch_id,))
            else:
                self._handed(*got)

        self.session.mutate(work, lane=profile_lane(profile)).then(done).fail(
            lambda exc: self._handed(launch_id, exc))

    def _hand_work(self, accounts: Any, launch_id: str, profile: str) -> tuple[str, Any]:
        """Worker: the hand-over (its error returned, so one launch's refusal does not undo a creation)."""
        from workbench.core.controller import handover
        from workbench.core.providers.sshkeys import ensure_keypair

        try:
            key = ensure_keypair(accounts.store.path.parent).public_openssh
            return launch_id, handover.hand_over(accounts.store, self._board(accounts, profile), launch_id,
                                                 app_public_key=key)
        except WorkbenchError as exc:
            return launch_id, exc

    def _handed(self, launch_id: str, got: Any) -> None:
        if isinstance(got, BaseException):
            self.session.notify.emit(tr("Not handed to the controller"), tr("{id}: {error}").format(
                id=launch_id, error=error_words(got)), "error")
        else:
            self.session.notify.emit(tr("Watched by the controller"), tr(
                "{id} is watched by the controller of {profile}, also while this computer is off.").format(
                id=launch_id, profile=got.get("profile", "")), "info")
        self.handed_over.emit(launch_id, got)

    def release(self, launch_id: str, profile: str) -> Task:
        """The app takes ``launch_id`` back from ``profile``'s controller."""
        from workbench.core.controller import handover

        accounts = self.session.accounts

        def work() -> None:
            handover.release(accounts.store, self._board(accounts, profile), launch_id)

        return (self.session.mutate(work, lane=profile_lane(profile))
                .then(lambda _none: self._released(launch_id, None)).fail(lambda exc: self._released(launch_id, exc)))

    def _released(self, launch_id: str, exc: BaseException | None) -> None:
        if exc is not None:
            self.session.notify.emit(tr("Controller"), tr("{id}: {error}").format(id=launch_id, error=error_words(exc)),
                                     "error")
        else:
            self.session.notify.emit(tr("Controller"), tr("{id} is watched by this app again (while it runs).").format(
                id=launch_id), "info")
        self.released.emit(launch_id, exc)

    def close(self) -> None:
        """The session ends: a heartbeat being awaited stops waiting."""
        self.closing = True
