"""Automatic recovery: a launch whose machine was taken back (or whose job failed) runs again.

One :meth:`RecoveryEngine.poll` looks at the latest attempt of every launch whose spec has a
``recovery`` policy and, once that attempt has ended, decides (:func:`classify`):

* **preemption** -- the cloud took the machine back: AWS reports a spot interruption
  (``Server.SpotInstanceTermination``), Azure an eviction, or the machine's storage agent heard
  the notice and wrote ``interrupted`` (copied to the launch's folder; on Local, written there);
* **failure** -- ``run`` exited non-zero, or the machine vanished without a reason;
* nothing -- the job finished (exit 0), the app or the user ended it (teardown, guards), or the
  machine ended itself (its own guard or on_finish: AWS ``Client.InstanceInitiatedShutdown``).

When the reason is in ``recovery.on`` and restarts are left, it sweeps what is left of the old
attempt (teardown: leftovers included, verified), then relaunches the stored spec as a new launch
(``<root>-a<N>-<hex>``) on the cheapest offer still allowed: any profile of the spec's
``providers`` (else the first attempt's profile) in any of the spec's ``regions`` (else any region
the profile offers).  The new spec carries ``WORKBENCH_ATTEMPT=N`` and ``WORKBENCH_RESUME=1`` (the
storage agent restores the ``sync`` mounts before ``run``), the *remaining* max runtime (counted
from the first attempt's start) and the *remaining* budget (what earlier attempts spent is
subtracted).  The attempt is recorded in the store's attempts table with its end reason, so the
launch's history lists every attempt with its machine, reason and cost.

The app must run for this to happen: the GUI (after each refresh) or ``workbench watch``.  While
neither runs, nothing relaunches; the machine's own guard still ends its bill.

Several processes may poll one store: a relaunch is claimed (:mod:`.relaunch_claims`) through a guard
event per attempt and retry period (``retry_s``), so it happens once; a relaunch that fails (no capacity
anywhere) is retried the next period.  A launch handed to the account's controller is claimed on the board
both the app and the controller see (``claims`` picks the claims of a launch; the controller's are
:class:`workbench.core.controller.claims.BoardClaims`).  Threading: ``poll`` blocks on providers; run it on a worker, one poll at a
time per engine.  It never raises for one launch: failures become events.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from workbench.core import paths
from workbench.core.domain.errors import CapacityError, NotFoundError, QuotaError, WorkbenchError
from workbench.core.domain.jobspec import spec_from_dict
from workbench.core.domain.models import Instance, JobSpec, Profile
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.endings import GUARD, ended_by_app, note_teardown  # noqa: F401 - re-exported
from workbench.core.lifecycle.relaunch_claims import StoreClaims, Ticket
from workbench.core.lifecycle.teardown import teardown
from workbench.core.money import budgets
from workbench.core.money.spend import SpendBook
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.offers.query import RankedOffer
from workbench.core.providers.contract import SupportsEndReason
from workbench.core.storage.machine import interruption
from workbench.core.store.attempts import FAILURE, FINISHED, PREEMPTION, STOPPED, AttemptRecord
from workbench.core.store.database import LaunchRecord, Store
from workbench.core.store.money import GuardRecord
from workbench.core.store.launches import launch_to_json
from workbench.core.lifecycle.attempts import attempt_of  # noqa: F401 - re-exported (views, the CLI)

log = logging.getLogger("workbench.recovery")

MIN_RUNTIME_LEFT_MIN = 5  # no relaunch with less max runtime left than this
MAX_OFFER_TRIES = 4  # offers tried in one relaunch (no capacity: the next cheapest)
SELF_ENDED_CODES = ("Client.InstanceInitiatedShutdown",)


@dataclass(frozen=True)
class RecoveryEvent:
    """What recovery noticed or did: ``action`` ended | relaunched | relaunch_failed | gave_up | not_recovered."""

    root_id: str
    launch_id: str
    attempt: int
    action: str
    level: str
    message: str
    ts: float

    def to_json(self) -> dict[str, object]:
        return {"root_id": self.root_id, "launch_id": self.launch_id, "attempt": self.attempt, "action": self.action,
                "level": self.level, "message": self.message, "ts": self.ts}


def classify(store: Store, rec: LaunchRecord, insts: list[Instance], on: Iterable[str]) -> tuple[str, str] | None:
    """(reason, detail) once the launch's attempt has ended in a way recovery acts on or records; else None.

    Reasons: preemption, failure, finished, stopped (ended by the app or by the machine itself).
    A running attempt is None, except one whose job exited non-zero while ``failure`` is wanted.
    """
    if not insts:
        return None
    codes = [i.exit_code for i in insts if i.exit_code is not None]
    active = [i for i in insts if i.state.active]
    marker = interruption(rec.launch_id)
    if active:
        if marker is not None and marker.get("saved") is not None and any(i.extra.get("spot") or i.spot
                                                                           for i in insts):
            return None  # the notice came, the machine is about to go: wait for it
        if codes and any(c != 0 for c in codes) and "failure" in on:
            return FAILURE, f"run exited with code {next(c for c in codes if c != 0)}"
        return None
    cloud_said = next((i for i in insts if i.extra.get("spot_interrupted") or i.extra.get("evicted")), None)
    if cloud_said is not None:
        what = "evicted (Azure took the spot VM back)" if cloud_said.extra.get("evicted") else \
            f"spot interruption ({cloud_said.extra.get('state_reason', 'AWS')})"
        return PREEMPTION, f"{what} of {cloud_said.instance_type} in {cloud_said.region}"
    if marker is not None:
        return PREEMPTION, f"interruption notice: {marker.get('source', 'the cloud')}"
    if codes:
        bad = [c for c in codes if c != 0]
        return (FAILURE, f"run exited with code {bad[0]}") if bad else (FINISHED, "run exited with code 0")
    if ended_by_app(store, rec.launch_id):
        return STOPPED, "ended by the app (terminate, a guard or on_finish)"
    self_ended = next((i for i in insts if i.extra.get("state_reason") in SELF_ENDED_CODES), None)
    if self_ended is not None:
        return STOPPED, "the machine ended itself (its own guard or on_finish)"
    gone = insts[0]
    why = gone.extra.get("reason") or gone.extra.get("state_reason") or "no reason given"
    return FAILURE, f"the machine was lost ({why})"


class RecoveryEngine:
    """Relaunches interrupted launches (see the module docstring)."""

    def __init__(self, accounts, clock: Callable[[], float] = time.time,
                 on_event: Callable[[RecoveryEvent], None] | None = None, retry_s: float = 300.0,
                 teardown_timeout_s: float = 600.0, teardown_poll_s: float = 2.0,
                 claims: Callable[[LaunchRecord], StoreClaims | None] | None = None) -> None:
        self.accounts = accounts
        self._local_claims = StoreClaims(accounts.store, retry_s, clock)
        #: the claims of a launch (its root's record): the board's for a launch a controller watches, else local
        self.claims_of = claims
        self.clock = clock
        self.on_event = on_event
        self.retry_s = retry_s
        self.teardown_timeout_s = teardown_timeout_s
        self.teardown_poll_s = teardown_poll_s

    @property
    def store(self) -> Store:
        return self.accounts.store

    def _emit(self, out: list[RecoveryEvent], ev: RecoveryEvent, key: str | None = None) -> None:
        try:
            if key is not None and not self.store.claim_event(GuardRecord(ev.root_id, GUARD, key, ev.ts, ev.level,
                                                                          ev.message)):
                return
        except WorkbenchError as exc:
            log.warning("could not record a recovery event: %s", exc)
        log.log(logging.INFO if ev.level == "info" else logging.WARNING, "recovery %s %s: %s", ev.action,
                ev.launch_id, ev.message)
        out.append(ev)
        if self.on_event is not None:
            try:
                self.on_event(ev)
            except Exception:  # noqa: BLE001 - a display must never stop recovery
                log.exception("recovery event callback failed")

    # -- one poll ------------------------------------------------------------------
    def poll(self) -> list[RecoveryEvent]:
        """Act on every launch whose latest attempt ended (blocks; reconcile first: the guards' poll does)."""
        events: list[RecoveryEvent] = []
        for rec in self.store.list_launches():
            spec = rec.spec or {}
            if not spec.get("recovery"):
                continue
            try:
                self._check(rec, events)
            except WorkbenchError as exc:
                self._emit(events, RecoveryEvent(rec.launch_id, rec.launch_id, 0, "error", "error",
                                                 f"recovery of {rec.launch_id} failed: {exc.message}", self.clock()))
            except Exception as exc:  # noqa: BLE001 - one launch must not stop the others
                log.exception("recovery of %s crashed", rec.launch_id)
                self._emit(events, RecoveryEvent(rec.launch_id, rec.launch_id, 0, "error", "error",
                                                 f"recovery of {rec.launch_id} failed: {type(exc).__name__}: {exc}",
                                                 self.clock()))
        return events

    def _check(self, rec: LaunchRecord, events: list[RecoveryEvent]) -> None:
        store = self.store
        mine = store.attempt_of(rec.launch_id)
        root_id, n = (mine.root_id, mine.attempt) if mine else (rec.launch_id, 1)
        root = store.find_launch(root_id) or rec
        claims = (self.claims_of(root) if self.claims_of is not None else None) or self._local_claims
        if mine is not None and mine.status == "launching" and n > 1 and claims.abandoned(root_id, n):
            self._redo(root, mine, claims, events)  # its relauncher died half way: relaunch it again
            return
        if any(a.attempt > n and a.status != "launch_failed" for a in store.attempts(root_id)):
            return  # a later attempt exists
        if mine is not None and (mine.ended_at is not None or mine.status == "launch_failed"):
            return  # decided already
        spec = spec_from_dict(rec.spec or {})
        policy = spec.recovery
        assert policy is not None
        insts = self._with_end_reasons(store.list_instances(launch_id=rec.launch_id))
        verdict = classify(store, rec, insts, policy.on)
        if verdict is None:
            return
        reason, detail = verdict
        now = self.clock()
        if mine is None:
            store.add_attempt(AttemptRecord(rec.launch_id, root_id, 1, rec.created_at, "running"))
        if reason not in policy.on:
            if store.end_attempt(rec.launch_id, reason, detail, now) and reason in (PREEMPTION, FAILURE):
                self._emit(events, RecoveryEvent(root_id, rec.launch_id, n, "not_recovered", "warning",
                                                 f"{rec.name} attempt {n} ended: {detail}; recovery.on does not list "
                                                 f"{reason}, so it is not relaunched", now))
            return
        why_not = self._limits(root, spec, n, policy.max_restarts, now)
        if why_not:
            if store.end_attempt(rec.launch_id, reason, detail, now):
                self._emit(events, RecoveryEvent(root_id, rec.launch_id, n, "gave_up", "error",
                                                 f"{rec.name} attempt {n} ended: {detail}; not relaunched: {why_not}",
                                                 now))
            return
        ticket = claims.take(root_id, n + 1, detail)
        if ticket is None:
            return  # this process or another one is on it (or tried moments ago, or did it)
        self._relaunch(root, rec, spec, n, reason, detail, events, claims, ticket)

    def _redo(self, root: LaunchRecord, mine: AttemptRecord, claims: StoreClaims, events: list[RecoveryEvent]) -> None:
        """Relaunch attempt ``mine.attempt`` again: the process that claimed it died half way (what it made goes)."""
        store = self.store
        prev = next((a for a in store.attempts(root.launch_id) if a.attempt == mine.attempt - 1
                     and a.status != "launch_failed"), None)
        prev_rec = store.find_launch(prev.launch_id) if prev is not None else None
        if prev is None or prev_rec is None or not prev_rec.spec:
            return
        detail = prev.detail or "the previous relaunch died half way"
        ticket = claims.take(root.launch_id, mine.attempt, detail)
        if ticket is None:
            return
        self._relaunch(root, prev_rec, spec_from_dict(prev_rec.spec), mine.attempt - 1, prev.end_reason or FAILURE,
                       detail, events, claims, ticket)

    def _with_end_reasons(self, insts: list[Instance]) -> list[Instance]:
        """Ended machines without a known reason: ask their cloud why (and keep the answer in the store)."""
        unknown = [i for i in insts if not i.state.active and not i.state.billable and i.exit_code is None
                   and not (i.extra.get("state_reason") or i.extra.get("evicted") or i.extra.get("reason"))]
        if not unknown:
            return insts
        by_profile: dict[str, list[Instance]] = {}
        for i in unknown:
            by_profile.setdefault(i.profile, []).append(i)
        found: dict[str, Instance] = {}
        for name, group in by_profile.items():
            prov = self.accounts.provider(self.accounts.profile(name))
            if isinstance(prov, SupportsEndReason):
                for got in prov.ended_instances(group):
                    found[got.instance_id] = got
        out = []
        for i in insts:
            got = found.get(i.instance_id)
            if got is not None and not got.state.active:
                i = i.with_state(got.state, extra={**i.extra, **got.extra})
                self.store.upsert_instance(i)
            out.append(i)
        return out

    def _limits(self, root: LaunchRecord, spec: JobSpec, n: int, max_restarts: int, now: float) -> str | None:
        if n - 1 >= max_restarts:
            return f"all {max_restarts} restart(s) of recovery.max_restarts are used"
        left = self._runtime_left(root, spec, now)
        if left is not None and left < MIN_RUNTIME_LEFT_MIN:
            return "the maximum runtime (counted from the first attempt) is used up"
        remaining = self._budget_left(root, now)
        if remaining is not None and remaining[0] <= 0:
            return "the launch's budget is used up"
        return None

    def _runtime_left(self, root: LaunchRecord, spec: JobSpec, now: float) -> float | None:
        first = spec_from_dict(root.spec) if root.spec else spec
        limit = first.guards.max_runtime_minutes
        return None if limit is None else limit - (now - root.created_at) / 60.0

    def _budget_left(self, root: LaunchRecord, now: float) -> tuple[float, str, bool] | None:
        """(amount left, currency, enforce) of the root's budget after every attempt's spend; None without one."""
        budget = budgets.launch_budget(self.store, root)
        if budget is None:
            return None
        book = SpendBook.load(self.store)
        ids = {root.launch_id} | {a.launch_id for a in self.store.attempts(root.launch_id)}
        spent = 0.0
        for key in book.entries:
            if book.launch_of(key) in ids:
                amount = book.cost(key, now).total
                converted = book.currency.convert(amount, book.currency_of(key), budget.currency)
                spent += converted if converted is not None else amount
        return budget.amount - spent, budget.currency, budget.enforce

    # -- relaunch --------------------------------------------------------------------
    def _relaunch(self, root: LaunchRecord, rec: LaunchRecord, spec: JobSpec, n: int, reason: str, detail: str,
                  events: list[RecoveryEvent], claims: StoreClaims, ticket: Ticket) -> None:
        from workbench.core.lifecycle.launcher import execute, plan_offer

        now = self.clock()
        # a relaunch that died half way (its claim taken over): what it made goes first, with the old attempt
        ended = [rec.launch_id] + ([ticket.abandoned] if ticket.abandoned else [])
        old = teardown(self.accounts, ended, timeout=self.teardown_timeout_s, poll=self.teardown_poll_s)
        if ticket.abandoned and self.store.attempt_of(ticket.abandoned) is not None:
            self.store.update_attempt(ticket.abandoned, status="launch_failed", detail="abandoned mid-relaunch")
        if not old.clean:
            left = ", ".join(getattr(x, "instance_id", None) or getattr(x, "resource_id", "?") for x in old.remaining)
            claims.failed(ticket, "what is left of the old attempt could not be removed")
            self._emit(events, RecoveryEvent(root.launch_id, rec.launch_id, n, "relaunch_failed", "error",
                                             f"{rec.name}: what is left of attempt {n} could not be removed ({left or '; '.join(e.message for _, e in old.errors)}); "
                                             f"retrying in {self.retry_s:.0f} s", now))
            return
        store = self.store
        store.end_attempt(rec.launch_id, reason, detail, now)
        new_spec = self._next_spec(root, spec, n + 1, now)
        self._log(rec.launch_id, f"attempt {n} ended: {detail}; relaunching as attempt {n + 1}")
        failures: list[str] = []
        try:
            offers = self._choose(rec, new_spec)
        except WorkbenchError as exc:
            offers, failures = [], [exc.message]
        for choice in offers[:MAX_OFFER_TRIES]:
            lid = f"{root.launch_id}-a{n + 1}-{secrets.token_hex(2)}"
            try:
                lp = plan_offer(self.accounts, new_spec, choice, len(offers) - 1, launch_id=lid)
                claims.planned(ticket, lid)
                store.add_attempt(AttemptRecord(lid, root.launch_id, n + 1, self.clock(), "launching", detail=detail))
                if not self._over_ssh(lp.profile):
                    self._log(lid, f"attempt {n + 1} of {root.launch_id}, after attempt {n} ended: {detail}; "
                                   "WORKBENCH_RESUME=1")
                # a spec's secrets live only in the memory of the process that launched it (never stored)
                secret_env = launch_secrets.values(rec.launch_id) or launch_secrets.values(root.launch_id)
                execute(self.accounts, lp, secret_env=secret_env)
            except (CapacityError, QuotaError) as exc:  # no room there: the next cheapest offer
                failures.append(f"{choice.offer.region} {choice.offer.instance_type}: {exc.message}")
                store.update_attempt(lid, status="launch_failed", detail=exc.message)
                continue
            except WorkbenchError as exc:
                failures.append(exc.message)
                store.update_attempt(lid, status="launch_failed", detail=exc.message)
                break
            store.update_attempt(lid, status="running")
            self._carry_budget(root, lid, now)
            made = store.find_launch(lid)
            mine = store.attempt_of(lid)
            claims.launched(ticket, {"launch_id": lid, "launch": launch_to_json(made) if made else None,
                                     "attempt": mine.to_json() if mine else None,
                                     "ended": {"launch_id": rec.launch_id, "reason": reason, "detail": detail,
                                               "ts": now}})
            self._log(rec.launch_id, f"attempt {n + 1} runs as {lid} on {lp.profile.name} {choice.offer.region} "
                                     f"{choice.offer.instance_type}")
            self._emit(events, RecoveryEvent(
                root.launch_id, lid, n + 1, "relaunched", "warning",
                f"{rec.name}: attempt {n} ended ({detail}); attempt {n + 1} runs as {lid} on "
                f"{lp.profile.provider}/{lp.profile.name} {choice.offer.region} {choice.offer.instance_type} "
                f"({'spot' if new_spec.resources.spot else 'on-demand'}, {_price(choice)})", self.clock()))
            return
        claims.failed(ticket, "; ".join(failures) or "no offer")
        self._emit(events, RecoveryEvent(root.launch_id, rec.launch_id, n, "relaunch_failed", "error",
                                         f"{rec.name}: attempt {n} ended ({detail}); relaunching failed: "
                                         f"{'; '.join(failures) or 'no offer'}; retrying in {self.retry_s:.0f} s", now))

    def _over_ssh(self, profile: Profile) -> bool:
        return self.accounts.provider(profile).runs_jobs_over_ssh

    def _next_spec(self, root: LaunchRecord, spec: JobSpec, attempt: int, now: float) -> JobSpec:
        env = {**spec.env, "WORKBENCH_ATTEMPT": str(attempt), "WORKBENCH_RESUME": "1"}
        guards = spec.guards
        left = self._runtime_left(root, spec, now)
        if left is not None:
            guards = dataclasses.replace(guards, max_runtime_minutes=max(MIN_RUNTIME_LEFT_MIN, int(math.ceil(left))))
        remaining = self._budget_left(root, now)
        if remaining is not None and remaining[1] == "USD":
            guards = dataclasses.replace(guards, budget_usd=round(max(remaining[0], 0.01), 2))
        return dataclasses.replace(spec, env=env, guards=guards)

    def _carry_budget(self, root: LaunchRecord, lid: str, now: float) -> None:
        remaining = self._budget_left(root, now)
        if remaining is not None and remaining[1] != "USD":
            budgets.set_launch(self.store, lid, max(remaining[0], 0.01), remaining[1], remaining[2])

    def _choose(self, rec: LaunchRecord, spec: JobSpec) -> list[RankedOffer]:
        """Available offers the spec allows (profiles of its providers, its regions, its alternatives), best first.

        Best as the launch chose: cheapest (prices in two currencies compared at the user's rate), or
        with ``choose: in_order`` the first alternative that has an offer.
        """
        accounts = self.accounts
        if spec.providers:
            profiles = [p for p in accounts.profiles() if p.provider in spec.providers]
        else:
            profiles = [accounts.profile(rec.profile)]
        # each profile's offers for the spec's resources, or for each of its alternatives, in the spec's order
        found = find_offers(accounts, spec, profiles=profiles, catalog=NEVER)
        regions = set(spec.regions)
        usable = [r for r in found.ranked if r.offer.available and (not regions or r.offer.region in regions
                                                                    or r.offer.provider == "local")]
        if not usable:
            if found.errors:
                raise found.errors[0][1]
            raise CapacityError(f"no offer the spec allows is available for {spec.name} now",
                                hint="recovery tries again; widen providers/regions in the spec to give it more room")
        return usable

    def _log(self, launch_id: str, line: str) -> None:
        """A line in the launch's own log (the job's output), so the Logs view shows the story."""
        try:
            stamp = time.strftime("%H:%M:%S", time.localtime(self.clock()))
            with open(paths.job_log(launch_id), "a", encoding="utf-8") as fh:
                fh.write(f"[workbench] {stamp} {line}\n")
        except (OSError, WorkbenchError) as exc:
            log.info("could not write to the log of %s: %s", launch_id, exc)


def _price(choice: RankedOffer) -> str:
    return f"{choice.price:.3f} {choice.offer.prices.currency}/h" if choice.price is not None else "price unknown"


def history(store: Store, launch_id: str) -> list[dict[str, object]]:
    """Every attempt of the launch ``launch_id`` belongs to: machine, reason, cost (first attempt first).

    ``launch_id`` may be any attempt's id.  A launch without recovery has one row (itself).
    """
    mine = store.attempt_of(launch_id)
    root_id = mine.root_id if mine else launch_id
    rows = store.attempts(root_id)
    if not rows:
        root = store.find_launch(root_id)
        if root is None:
            raise NotFoundError(f"no launch with id {launch_id!r}", hint="list them with `workbench status`")
        rows = [AttemptRecord(root_id, root_id, 1, root.created_at, "running")]
    book = SpendBook.load(store)
    now = time.time()
    out = []
    for a in rows:
        rec = store.find_launch(a.launch_id)
        insts = store.list_instances(launch_id=a.launch_id)
        cost = sum(book.cost(k, now).total for k in book.entries if book.launch_of(k) == a.launch_id)
        machine = insts[0] if insts else None
        out.append({
            **a.to_json(),
            "provider": rec.provider if rec else None, "profile": rec.profile if rec else None,
            "region": machine.region if machine else (rec.region if rec else None),
            "instance_type": machine.instance_type if machine else None,
            "instance_id": machine.instance_id if machine else None,
            "spot": bool(machine.spot) if machine else None,
            "state": machine.state.value if machine else None,
            "cost": round(cost, 6), "currency": rec.currency if rec else "USD",
            "launch_status": rec.status if rec else None,
        })
    return out
