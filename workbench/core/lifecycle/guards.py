"""App-side guards: budget cap, max runtime, idle GPU, job finished → verified teardown.

These run in the app (the GUI through ``workbench.ui.runtime.guard_loop``, the CLI in
``workbench watch``).  Their counterpart on the rented machine, which works while the app is
closed, is the instance-side guard ``resources/guard/workbench_guard.py``, installed by the
boot script (``workbench.core.providers.bootscript``).

One :meth:`GuardEngine.poll` looks at every launch that still bills and decides:

* **max runtime** -- now ≥ launch start + ``max_runtime_minutes``: tear down.
* **budget** -- the launch's budget (or the global monthly one) reaches 50 / 80 /
  100 %: a warning each time (once per threshold and period); at 100 % an
  enforced budget tears down (the monthly one: every launch that bills).
* **idle GPU** -- every GPU sample of the launch's machines in the last
  ``idle_minutes`` is below ``idle_util_below`` %, the samples reach back to
  the start of that window and are fresh: tear down.  Only ``kind == "gpu"``
  samples count: a machine without GPU telemetry is never called idle.
* **job finished** -- an instance reports an exit code while it still bills: a
  notification with a grace period (``finish_grace_s``); unless someone calls
  :meth:`GuardEngine.keep_running` before it ends, ``on_finish: terminate``
  tears down and ``on_finish: stop`` stops (``keep`` only notifies).

A decision is taken at the first poll at or after its threshold, judged by the
engine's ``clock`` (injectable: tests drive a manual clock, no sleeps).
Teardowns go through :func:`workbench.core.lifecycle.teardown.teardown`, which verifies
by listing again; the result ("verified" or "still billing") is an event too.

Several processes (the GUI and ``workbench watch``) may run engines on one
store: warnings and teardowns are claimed through the store's guard events,
so each happens once (teardowns are retried every ``retry_s`` while something
still bills).  Threading: ``poll`` blocks on providers and must run on a
worker; one engine must not poll from two threads at once.  ``on_event`` is
called on the polling thread.  ``poll`` never raises for one launch or one
provider: failures become "error" events.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from workbench.core.money import budgets
from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.models import Guards, Instance, InstanceState, OnFinish
from workbench.core.providers.contract import SupportsBatchJobs, SupportsStop, SupportsTelemetry
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.money.spend import SpendBook
from workbench.core.store.database import LaunchRecord
from workbench.core.store.money import GuardRecord
from workbench.core.lifecycle.teardown import TeardownReport, teardown

log = logging.getLogger("workbench.guards")

MAX_RUNTIME, BUDGET, MONTHLY_BUDGET, IDLE, FINISHED = "max_runtime", "budget", "monthly_budget", "idle", "finished"


@dataclass(frozen=True)
class GuardEvent:
    """Something a guard noticed or did.

    ``action``: "warn" (budget threshold), "pending" (job finished, grace running
    until ``deadline``), "notice" (finished with on_finish keep), "teardown" /
    "stop" (started), "verified" (nothing bills any more), "still_billing",
    "kept" (the user chose keep running), "error".
    """

    launch_id: str  # '' for account-wide events
    guard: str
    action: str
    level: str  # info | warning | error
    message: str
    ts: float
    deadline: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"launch_id": self.launch_id, "guard": self.guard, "action": self.action, "level": self.level,
                "message": self.message, "ts": self.ts, "deadline": self.deadline}


@dataclass(frozen=True)
class LaunchGuards:
    """The limits in force for one launch (from its stored job spec; safe defaults without one)."""

    max_runtime_s: float | None
    idle_s: float | None
    idle_below: float
    on_finish: OnFinish
    name: str

    @classmethod
    def of(cls, rec: LaunchRecord | None, launch_id: str) -> "LaunchGuards":
        spec = (rec.spec if rec is not None else None) or {}
        g = spec.get("guards") or {}
        d = Guards()
        runtime = g.get("max_runtime_minutes", d.max_runtime_minutes) if g else d.max_runtime_minutes
        idle = g.get("idle_minutes", d.idle_minutes) if g else d.idle_minutes
        try:
            on_finish = OnFinish(spec.get("on_finish", OnFinish.TERMINATE.value))
        except ValueError:
            on_finish = OnFinish.TERMINATE
        return cls(max_runtime_s=None if runtime is None else float(runtime) * 60.0,
                   idle_s=None if idle is None else float(idle) * 60.0,
                   idle_below=float(g.get("idle_util_below", d.idle_util_below)), on_finish=on_finish,
                   name=(rec.name if rec is not None else "") or launch_id)


def finished_nodes(insts: list[Instance]) -> list[Instance]:
    """The running instances whose job has ended, the one that decides first.

    One machine: it, once it reports an exit code.  A multi-node launch: the head's exit is the
    job's, so the head (node rank 0) once it has ended, or any node that ended with a failure
    (which fails the launch); a worker that ended cleanly before the head does not end the job.
    """
    done = [i for i in insts if i.exit_code is not None and i.state.active]
    if len({node_rank_of(i.extra) for i in insts}) <= 1:
        return done
    heads = [i for i in done if node_rank_of(i.extra) == 0]
    return heads + [i for i in done if i.exit_code != 0 and i not in heads]


@dataclass(frozen=True)
class _Decision:
    launch_id: str
    guard: str
    action: str  # teardown | stop
    reason: str


class GuardEngine:
    """Evaluates the guards of every billing launch on each :meth:`poll` (see the module docstring)."""

    def __init__(self, accounts: Accounts, clock: Callable[[], float] = time.time,
                 on_event: Callable[[GuardEvent], None] | None = None, finish_grace_s: float = 600.0,
                 collect_samples: bool = True, retry_s: float = 300.0, sample_slack_s: float = 120.0,
                 teardown_timeout_s: float = 600.0, teardown_poll_s: float = 2.0,
                 teardown_fn: Callable[..., TeardownReport] = teardown,
                 only: Callable[[], set[str]] | None = None) -> None:
        self.accounts = accounts
        #: the launch ids this engine guards (the controller: the launches handed to it); None: every launch
        self.only = only
        self.clock = clock
        self.on_event = on_event
        self.finish_grace_s = finish_grace_s
        self.collect_samples = collect_samples
        self.retry_s = retry_s
        self.sample_slack_s = sample_slack_s
        self.teardown_timeout_s = teardown_timeout_s
        self.teardown_poll_s = teardown_poll_s
        self._teardown = teardown_fn

    @property
    def store(self):
        return self.accounts.store

    # -- events -----------------------------------------------------------------
    def _emit(self, out: list[GuardEvent], ev: GuardEvent, key: str | None = None) -> bool:
        """Record ``ev`` (once per ``key`` when given) and hand it on; False if already recorded."""
        rec = GuardRecord(ev.launch_id, ev.guard, key or f"{ev.action}:{ev.ts!r}", ev.ts, ev.level, ev.message)
        try:
            if not self.store.claim_event(rec):
                return False
        except WorkbenchError as exc:
            log.warning("could not record guard event: %s", exc)
        log.log(logging.WARNING if ev.level != "info" else logging.INFO, "guard %s %s %s: %s",
                ev.guard, ev.action, ev.launch_id, ev.message)
        out.append(ev)
        if self.on_event is not None:
            try:
                self.on_event(ev)
            except Exception:  # noqa: BLE001 - a display must never stop a guard
                log.exception("guard event callback failed")
        return True

    def keep_running(self, launch_id: str) -> bool:
        """The user answered "keep running" to a job-finished notification: the finish guard stands down."""
        now = self.clock()
        return self.store.claim_event(GuardRecord(launch_id, FINISHED, "keep", now, "info",
                                                  "kept running at the user's request"))

    # -- one poll -----------------------------------------------------------------
    def poll(self, refresh: bool = True) -> list[GuardEvent]:
        """Evaluate every guard once and act; returns the events of this poll (blocks).

        ``refresh`` reconciles with the providers first (states, exit codes); the
        GUI passes False because it polls right after its own refresh.
        """
        now = self.clock()
        events: list[GuardEvent] = []
        if refresh:
            for name, exc in reconcile(self.accounts).errors:
                self._emit(events, GuardEvent("", "guards", "error", "warning",
                                              f"profile {name} could not be listed: {exc.message}", now))
        live: dict[str, list[Instance]] = {}
        allowed = self.only() if self.only is not None else None
        for inst in self.store.list_instances():
            if inst.state.billable and (allowed is None or inst.launch_id in allowed):
                live.setdefault(inst.launch_id, []).append(inst)
        if self.collect_samples:
            self._collect([i for insts in live.values() for i in insts if i.state.active])
        book = SpendBook.load(self.store)
        decisions: dict[str, _Decision] = {}
        for lid, insts in live.items():
            try:
                d = self._check_launch(lid, insts, book, now, events)
            except WorkbenchError as exc:
                self._emit(events, GuardEvent(lid, "guards", "error", "error", f"guard check failed: {exc}", now))
                continue
            if d is not None:
                decisions[lid] = d
        for d in self._check_budgets(book, now, set(live), events):
            decisions.setdefault(d.launch_id, d)
        for d in decisions.values():
            self._act(d, live[d.launch_id], now, events)
        return events

    def _check_launch(self, lid: str, insts: list[Instance], book: SpendBook, now: float,
                      events: list[GuardEvent]) -> _Decision | None:
        rec = book.launches.get(lid)
        g = LaunchGuards.of(rec, lid)
        if not any(i.state.active for i in insts):
            return None  # stopped / deallocated: only its disks bill, and only the budget guards them
        started = rec.created_at if rec is not None else min((i.launched_at or now) for i in insts)
        if all(self._queued(i) for i in insts):
            # a batch job's runtime starts when the scheduler starts it: the days it may wait in the queue are free
            begun = [i.launched_at for i in insts if i.state == InstanceState.RUNNING and i.launched_at]
            if not begun:
                return None
            started = min(begun)
        if g.max_runtime_s is not None and now >= started + g.max_runtime_s:
            return _Decision(lid, MAX_RUNTIME, "teardown",
                             f"{g.name} reached its maximum runtime of {g.max_runtime_s / 3600:g} h")
        if g.idle_s is not None and self._idle(insts, now, g.idle_s, g.idle_below):
            return _Decision(lid, IDLE, "teardown", f"{g.name}: every GPU below {g.idle_below:g} % for "
                                                    f"{g.idle_s / 60:g} min")
        return self._check_finished(lid, insts, g, now, events)

    def _queued(self, inst: Instance) -> bool:
        """A batch job in a scheduler's queue (Slurm): its provider ``SupportsBatchJobs``."""
        try:
            return isinstance(self.accounts.provider(self.accounts.profile(inst.profile)), SupportsBatchJobs)
        except WorkbenchError:
            return False

    def _check_finished(self, lid: str, insts: list[Instance], g: LaunchGuards, now: float,
                        events: list[GuardEvent]) -> _Decision | None:
        done = finished_nodes(insts)
        if not done:
            return None
        code = done[0].exit_code
        if g.on_finish == OnFinish.KEEP:
            self._emit(events, GuardEvent(lid, FINISHED, "notice", "info",
                                          f"{g.name} finished (exit {code}); on_finish is keep, so it keeps "
                                          "running and billing until a guard or you stop it", now), key="notice")
            return None
        if self.store.has_event(lid, FINISHED, "keep"):
            return None
        pending = [e for e in self.store.guard_events(lid) if e.guard == FINISHED and e.key == "pending"]
        what = "stopped" if g.on_finish == OnFinish.STOP else "torn down"
        if not pending:
            deadline = now + self.finish_grace_s
            self._emit(events, GuardEvent(lid, FINISHED, "pending", "info" if code == 0 else "warning",
                                          f"{g.name} finished (exit {code}); it will be {what} at "
                                          f"{time.strftime('%H:%M', time.localtime(deadline))} unless you keep "
                                          "it running", now, deadline), key="pending")
            if self.finish_grace_s > 0:
                return None
            pending_ts = now
        else:
            pending_ts = pending[0].ts
        if now >= pending_ts + self.finish_grace_s:
            action = "stop" if g.on_finish == OnFinish.STOP else "teardown"
            return _Decision(lid, FINISHED, action, f"{g.name} finished (exit {code}) and nobody kept it running")
        return None

    def _idle(self, insts: list[Instance], now: float, idle_s: float, below: float) -> bool:
        """Every GPU of every running node idle for the whole window (a multi-node launch: all nodes)."""
        window_start = now - idle_s
        per_node = [[s for s in self.store.samples(i.instance_id, since=window_start - self.sample_slack_s)
                     if s.kind == "gpu" and s.ts <= now] for i in insts if i.state.active]
        if len(per_node) > 1 and not all(per_node):
            return False  # a node without readings may be the one doing the work
        samples = [s for node in per_node for s in node]
        if not samples:
            return False
        if min(s.ts for s in samples) > window_start:
            return False  # readings do not yet cover the whole window: not idle *for N minutes* yet
        if max(s.ts for s in samples) < now - self.sample_slack_s:
            return False  # stale: no recent evidence either way
        inside = [s for s in samples if s.ts >= window_start]
        return bool(inside) and all(s.util_percent < below for s in inside)

    def _check_budgets(self, book: SpendBook, now: float, live: set[str],
                       events: list[GuardEvent]) -> list[_Decision]:
        out: list[_Decision] = []
        for st in budgets.statuses(self.store, book, now, launch_ids=live):
            b = st.budget
            lid = b.launch_id or ""
            guard = BUDGET if lid else MONTHLY_BUDGET
            if st.spent is None:
                self._emit(events, GuardEvent(lid, guard, "warn", "warning",
                                              f"budget {b.scope} cannot be checked: no exchange rate to "
                                              f"{b.currency} is set", now), key=f"norate:{st.period}")
                continue
            for t in budgets.THRESHOLDS:
                if st.reached >= t:
                    what = f"launch {lid}" if lid else f"this month ({st.period})"
                    self._emit(events, GuardEvent(
                        lid, guard, "warn", "error" if t >= 100 else "warning",
                        f"{t} % of the budget for {what} used: {st.spent:,.2f} of {b.amount:,.2f} {b.currency}",
                        now), key=f"{b.scope}:{st.period}:{t}")
            if st.reached >= 100 and b.enforce:
                reason = f"budget of {b.amount:,.2f} {b.currency} reached ({st.spent:,.2f} spent)"
                targets = [lid] if lid else sorted(live)
                out.extend(_Decision(t, guard, "teardown", reason) for t in targets if t in live)
        return out

    # -- acting ---------------------------------------------------------------------
    def _act(self, d: _Decision, insts: list[Instance], now: float, events: list[GuardEvent]) -> None:
        bucket = int(now // self.retry_s) if self.retry_s > 0 else now
        if not self.store.claim_event(GuardRecord(d.launch_id, "act", f"{d.action}:{bucket}", now, "info", d.reason)):
            return  # this process or another one acted on it moments ago
        self._emit(events, GuardEvent(d.launch_id, d.guard, d.action, "warning", d.reason, now))
        try:
            if d.action == "stop":
                still = self._stop(insts)
                errors: list[str] = []
            else:
                report = self._teardown(self.accounts, [d.launch_id], timeout=self.teardown_timeout_s,
                                        poll=self.teardown_poll_s)
                still = [getattr(x, "instance_id", None) or getattr(x, "resource_id", "?") for x in report.remaining]
                errors = [f"{name}: {exc.message}" for name, exc in report.errors]
        except WorkbenchError as exc:
            still, errors = [i.instance_id for i in insts], [exc.message]
        if still or errors:
            detail = "; ".join([*(f"still billing: {x}" for x in still), *errors])
            self._emit(events, GuardEvent(d.launch_id, d.guard, "still_billing", "error",
                                          f"{d.action} of {d.launch_id} not verified: {detail}", self.clock()))
        else:
            done = "stopped (its disks still bill)" if d.action == "stop" else "torn down; nothing of it bills any more"
            self._emit(events, GuardEvent(d.launch_id, d.guard, "verified", "info",
                                          f"{d.launch_id} {done}", self.clock()))

    def _stop(self, insts: list[Instance]) -> list[str]:
        """Stop the instances where the provider can; returns the ids still running afterwards."""
        remaining: list[str] = []
        by_profile: dict[str, list[Instance]] = {}
        for i in insts:
            by_profile.setdefault(i.profile, []).append(i)
        for name, group in by_profile.items():
            prov = self.accounts.provider(self.accounts.profile(name))
            if not isinstance(prov, SupportsStop):
                report = self._teardown(self.accounts, [group[0].launch_id], timeout=self.teardown_timeout_s,
                                        poll=self.teardown_poll_s)
                remaining += [getattr(x, "instance_id", "?") for x in report.remaining]
                continue
            prov.stop(group)
            ids = {i.instance_id for i in group}
            for i in prov.instances():
                if i.instance_id in ids:
                    self.store.upsert_instance(i)
                    if i.state.active:
                        remaining.append(i.instance_id)
        return remaining

    def _collect(self, active: list[Instance]) -> None:
        """One round of telemetry for the idle guard; failures are logged, never fatal."""
        for inst in active:
            try:
                prov = self.accounts.provider(self.accounts.profile(inst.profile))
                if isinstance(prov, SupportsTelemetry):
                    self.store.add_samples(prov.samples(inst))
            except WorkbenchError as exc:
                log.info("no telemetry for %s: %s", inst.instance_id, exc)
            except Exception:  # noqa: BLE001 - a plugin bug must not stop the guards
                log.exception("telemetry of %s failed", inst.instance_id)
