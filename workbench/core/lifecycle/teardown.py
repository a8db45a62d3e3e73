"""Stop the bill: list what bills, terminate, sweep leftovers, verify — re-runnable, in parallel.

:func:`inventory` answers "what is billing right now?": it reconciles every
profile and asks each provider for its leftovers, all in parallel, and
collects per-profile errors without stopping (a profile that cannot be
listed may still be billing, so it is reported, never skipped silently).

:func:`teardown` ends the bill:

1. Reconcile, so the targets come from the providers' tags, not only the store.
2. Terminate the billable instances of the chosen launches, one task per profile.
3. Ask each provider for leftovers (disks, IPs, groups) of those launches and delete them.
4. Verify by listing again until nothing of those launches is billable, or the
   deadline passes; whatever still exists is returned as ``remaining``.

Ordering: each profile's part runs inside that profile's gate
(:mod:`workbench.core.lifecycle.launch_gate`): it first waits for (or has the provider cancel)
the launches in flight there, in this process or another one, so what they made is found and
ended too, and only then verifies.  A launch it covers that has not started does not start.

Teardown never stops at the first error: every profile is attempted, and
errors are collected beside what remains billing.  An optional ``progress``
callback receives a :class:`TeardownEvent` for every step; it is called from
the worker threads (one per profile), so a GUI must hand events over to its
own thread before touching widgets.  A callback that raises is logged and
ignored: progress display never stops a teardown.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Iterable, Literal, Sequence

from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance, Profile, Resource
from workbench.core.lifecycle.endings import note_teardown  # ended on purpose: never relaunched
from workbench.core.lifecycle.launch_gate import ProfileGate
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.money.billing_status import launched_on

log = logging.getLogger("workbench.teardown")

Billable = Instance | Resource
EventKind = Literal["waiting", "terminating", "terminated", "deleting", "deleted", "remaining", "verified",
                    "error"]


# -- values -------------------------------------------------------------------
@dataclass
class TeardownReport:
    terminated: list[Instance] = field(default_factory=list)
    deleted: list[Resource] = field(default_factory=list)
    remaining: list[Instance | Resource] = field(default_factory=list)
    errors: list[tuple[str, WorkbenchError]] = field(default_factory=list)
    #: per profile with an error: the launches the app started there that may still bill (store)
    launched: dict[str, list[str]] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.remaining and not self.errors

    @property
    def settled(self) -> bool:
        """Nothing remains, and every profile that could not be checked had nothing of ours left billing."""
        return not self.remaining and not any(self.launched.get(name) for name, _ in self.errors)

    def may_bill(self, profile: str) -> bool:
        """True when ``profile`` could not be checked and the app launched something there."""
        return bool(self.launched.get(profile))


@dataclass(frozen=True)
class TeardownEvent:
    """One step of a teardown, for progress displays.

    ``kind``: "waiting" (launches in flight on the profile are awaited first; ``message``
    names them), "terminating" / "deleting" (request about to be sent), "terminated" /
    "deleted" (the provider accepted the request; not yet verified), "verified"
    (a fresh listing no longer shows it billing), "remaining" (still billing when
    the deadline passed), "error" (``message`` says why).  ``item`` is the instance
    or leftover concerned; None for profile-wide events (an "error" listing or
    terminating a profile, a "verified" profile with nothing left).
    """

    kind: EventKind
    provider: str
    profile: str
    item: Billable | None = None
    message: str = ""


Progress = Callable[[TeardownEvent], None]


@dataclass
class ProfileInventory:
    """What one profile bills for; ``error`` set when (part of) its listing failed."""

    profile: Profile
    instances: list[Instance] = field(default_factory=list)
    leftovers: list[Resource] = field(default_factory=list)
    error: WorkbenchError | None = None
    #: launches inside their provider call right now (a teardown waits for them, then ends what they made)
    launching: list[str] = field(default_factory=list)
    #: when ``error`` is set: launches the app started here that may still bill (from the store)
    launched: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[Billable]:
        return [*self.instances, *self.leftovers]


@dataclass
class Inventory:
    """Everything billable the app knows of, per profile (see :func:`inventory`)."""

    profiles: list[ProfileInventory] = field(default_factory=list)

    @property
    def items(self) -> list[Billable]:
        return [x for p in self.profiles for x in p.items]

    @property
    def errors(self) -> list[tuple[str, WorkbenchError]]:
        return [(p.profile.name, p.error) for p in self.profiles if p.error is not None]

    @property
    def hourly_total(self) -> float:
        """Sum of the known hourly prices (see ``unpriced`` for the rest)."""
        return sum(p for p in (hourly_price(x) for x in self.items) if p is not None)

    @property
    def unpriced(self) -> list[Billable]:
        return [x for x in self.items if hourly_price(x) is None]

    @property
    def unchecked(self) -> list[tuple[str, WorkbenchError, list[str]]]:
        """(profile, why it could not be listed, launches of ours there that may bill) per failed profile."""
        return [(p.profile.name, p.error, p.launched) for p in self.profiles if p.error is not None]

    @property
    def launching(self) -> list[tuple[Profile, str]]:
        """(profile, launch id) of every launch in flight."""
        return [(p.profile, lid) for p in self.profiles for lid in p.launching]

    @property
    def nothing_billing(self) -> bool:
        """True only when every profile answered, none bills for anything and no launch is in flight."""
        return not self.items and not self.errors and not self.launching


def item_key(item: Billable) -> tuple[str, str, str, str]:
    """A stable identity for an instance or leftover across listings."""
    if isinstance(item, Instance):
        return ("instance", item.provider, item.profile, item.instance_id)
    return ("resource", item.provider, item.profile, item.resource_id)


def hourly_price(item: Billable) -> float | None:
    """What the item costs per hour; None when unknown.

    Instances carry their price; a leftover's price is known only when its provider
    puts a number in ``extra["price_per_hour"]``.
    """
    if isinstance(item, Instance):
        return item.price_per_hour
    raw = item.extra.get("price_per_hour")
    try:
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _as_error(exc: Exception, what: str) -> WorkbenchError:
    if isinstance(exc, WorkbenchError):
        return exc
    log.error("%s failed with an unexpected error", what, exc_info=exc)
    return WorkbenchError(f"{type(exc).__name__}: {exc}")


def _wanted(launch_ids: set[str] | None, launch_id: str | None, keep: Collection[str] = ()) -> bool:
    if launch_ids is None:
        return launch_id not in keep if launch_id else True
    return launch_id in launch_ids


# -- inventory ------------------------------------------------------------------
def inventory(accounts: Accounts, launch_ids: Iterable[str] | None = None, max_workers: int = 8) -> Inventory:
    """List every billable instance and leftover, per profile, in parallel (blocks; run on a worker).

    Reconciles the store on the way.  Never raises for one profile: its error is
    kept in its :class:`ProfileInventory` beside whatever could be listed.
    """
    ids = set(launch_ids) if launch_ids is not None else None
    profiles = accounts.profiles()
    if not profiles:
        return Inventory()

    def leftovers_of(p: Profile) -> list[Resource]:
        return accounts.provider(p).leftovers()

    with ThreadPoolExecutor(max_workers=min(max_workers, len(profiles)) + 1, thread_name_prefix="inventory") as pool:
        # the instance listing (inside reconcile) and the leftover listings run side by side
        rec_future = pool.submit(reconcile, accounts, profiles, max_workers)
        left_futures = [(p, pool.submit(leftovers_of, p)) for p in profiles]
        rec = rec_future.result()
        listing_errors = dict(rec.errors)
        result = Inventory()
        for p, fut in left_futures:
            pi = ProfileInventory(p, error=listing_errors.get(p.name))
            if pi.error is None:
                pi.instances = [i for i in rec.instances if i.provider == p.provider and i.profile == p.name
                                and i.state.billable and _wanted(ids, i.launch_id)]
            try:
                pi.leftovers = [r for r in fut.result() if _wanted(ids, r.launch_id)]
            except Exception as exc:  # noqa: BLE001 - one profile never stops the others
                pi.error = pi.error or _as_error(exc, f"listing leftovers of {p.name}")
            pi.launching = ProfileGate.of(accounts, p.provider, p.name).in_flight()
            if pi.error is not None:
                pi.launched = launched_on(accounts.store, p.name, p.provider)
            result.profiles.append(pi)
    log.info("inventory: %d billable item(s), %d profile error(s)", len(result.items), len(result.errors))
    return result


# -- teardown -------------------------------------------------------------------
class _Run:
    """Shared state of one teardown; report lists are appended under a lock (one thread per profile)."""

    def __init__(self, accounts: Accounts, ids: set[str] | None, timeout: float, poll: float,
                 clock: Callable[[], float], progress: Progress | None, keep: frozenset[str] = frozenset()) -> None:
        self.accounts, self.ids, self.timeout, self.poll, self.clock = accounts, ids, timeout, poll, clock
        self.keep = keep
        self.report = TeardownReport()
        self._progress = progress
        self._lock = threading.Lock()

    def emit(self, kind: EventKind, p: Profile, item: Billable | None = None, message: str = "") -> None:
        if self._progress is None:
            return
        try:
            self._progress(TeardownEvent(kind, p.provider, p.name, item, message))
        except Exception:  # noqa: BLE001 - a progress display must never stop a teardown
            log.exception("teardown progress callback failed")

    def each(self, kind: EventKind, p: Profile, items: Sequence[Billable]) -> None:
        for x in items:
            self.emit(kind, p, x)

    def error(self, p: Profile, exc: WorkbenchError) -> None:
        with self._lock:
            self.report.errors.append((p.name, exc))
        self.emit("error", p, None, exc.message)

    def add(self, target: list, items: Sequence[Billable]) -> None:
        with self._lock:
            target.extend(items)


def _teardown_profile(run: _Run, p: Profile, targets: list[Instance]) -> None:
    """Terminate, sweep and verify one profile; blocks until verified or the deadline passes."""
    prov = run.accounts.provider(p)
    attempted: dict[tuple, Instance] = {}
    swept: dict[tuple, Resource] = {}
    verified: set[tuple] = set()
    deadline = run.clock() + run.timeout
    broken = False  # after a failed terminate/delete: one more look, then report what remains

    def terminate(batch: list[Instance]) -> None:
        nonlocal broken, deadline
        attempted.update((item_key(i), i) for i in batch)
        run.each("terminating", p, batch)
        try:
            prov.terminate(batch)
        except Exception as exc:  # noqa: BLE001 - collected, the rest goes on
            run.error(p, _as_error(exc, f"terminate on {p.name}"))
            broken, deadline = True, run.clock()
            return
        run.add(run.report.terminated, batch)
        run.each("terminated", p, batch)

    def settle(known: dict[tuple, Billable], still: Sequence[Billable]) -> None:
        now = {item_key(x) for x in still}
        for k, x in known.items():
            if k not in now and k not in verified:
                verified.add(k)
                run.emit("verified", p, x)

    if targets:
        terminate(targets)
    while True:
        alive = [i for i in prov.instances() if i.state.billable and _wanted(run.ids, i.launch_id, run.keep)]
        settle(attempted, alive)
        fresh = [i for i in alive if item_key(i) not in attempted]  # e.g. a launch that was in flight
        if fresh and not broken:
            terminate(fresh)
        extra = [r for r in prov.leftovers() if _wanted(run.ids, r.launch_id, run.keep)]
        if extra and not alive and not broken:
            # only sweep once instances are gone: a disk still attached cannot be deleted
            swept.update((item_key(r), r) for r in extra)
            run.each("deleting", p, extra)
            try:
                prov.delete(extra)
            except Exception as exc:  # noqa: BLE001 - collected, the rest goes on
                run.error(p, _as_error(exc, f"delete on {p.name}"))
                broken, deadline = True, run.clock()
            else:
                run.add(run.report.deleted, extra)
                run.each("deleted", p, extra)
            extra = [r for r in prov.leftovers() if _wanted(run.ids, r.launch_id, run.keep)]
        settle(swept, extra)
        for i in alive:
            run.accounts.store.upsert_instance(i)
        if (not alive and not extra) or run.clock() >= deadline:
            run.add(run.report.remaining, [*alive, *extra])
            run.each("remaining", p, [*alive, *extra])
            if not alive and not extra:
                run.emit("verified", p)
            return
        time.sleep(run.poll)


#: called with (data folder, report) after every teardown (see :func:`on_machines_ended`)
_ended_listeners: list[Callable[[Path, TeardownReport], None]] = []


def on_machines_ended(listener: Callable[[Path, TeardownReport], None]) -> None:
    """Call ``listener(data_dir, report)`` after every teardown, whichever path ran it (idempotent).

    How what lives above this package hears of ended machines without this package knowing it:
    :mod:`workbench.core.remote.ssh_cleanup` takes them out of the app's ssh config and known_hosts
    (installed by the CLI and the GUI when they open their accounts).  A listener that raises is
    logged: the bill matters more.
    """
    if listener not in _ended_listeners:
        _ended_listeners.append(listener)


def _tell_listeners(data_dir: Path, report: TeardownReport) -> None:
    for listener in list(_ended_listeners):
        try:
            listener(data_dir, report)
        except Exception:  # noqa: BLE001
            log.warning("a teardown listener failed", exc_info=True)


def _teardown_gated(run: _Run, p: Profile, targets: list[Instance]) -> None:
    """``_teardown_profile`` inside the profile's gate: launches in flight there return first."""
    def waiting(ids: list[str]) -> None:
        run.emit("waiting", p, None, ", ".join(ids))

    gate = ProfileGate.of(run.accounts, p.provider, p.name)
    with gate.stopping(run.ids, run.keep, timeout=run.timeout, on_wait=waiting, clock=run.clock):
        _teardown_profile(run, p, targets)


def teardown(accounts: Accounts, launch_ids: Iterable[str] | None = None, timeout: float = 600.0,
             poll: float = 2.0, clock: Callable[[], float] = time.monotonic,
             progress: Progress | None = None, keep: Iterable[str] = ()) -> TeardownReport:
    """Tear down the given launches (None = everything this install created, but ``keep``) across all profiles.

    Blocks (run it on a worker).  ``progress`` gets a :class:`TeardownEvent` per step,
    from worker threads.  Never raises for one profile; see the report's ``errors``.
    ``keep``: launch ids an everything-teardown leaves alone (Stop all's unticked Local jobs).
    """
    ids = set(launch_ids) if launch_ids is not None else None
    run = _Run(accounts, ids, timeout, poll, clock, progress, frozenset(keep))
    report = run.report
    by_name = {p.name: p for p in accounts.profiles()}
    note_teardown(accounts.store, ids if ids is not None else  # (the kept Local jobs are not ended)
                  {i.launch_id for i in accounts.store.list_instances() if i.state.billable} - run.keep)
    pre = reconcile(accounts)
    for name, exc in pre.errors:
        run.error(by_name.get(name) or Profile(name, "?"), exc)
    failed = {name for name, _ in pre.errors}
    profiles = [p for p in by_name.values() if p.name not in failed]
    if ids is not None:
        # only the profiles that own one of these launches (from the store and the fresh listing)
        owners = {(r.provider, r.profile) for r in accounts.store.list_launches() if r.launch_id in ids}
        profiles = [p for p in profiles if (p.provider, p.name) in owners]
    listed: dict[str, list[Instance]] = {}
    for i in pre.instances:  # the listing reconcile just made: no second round trip for the targets
        if i.state.billable and _wanted(ids, i.launch_id, run.keep):
            listed.setdefault(i.profile, []).append(i)
    if profiles:
        with ThreadPoolExecutor(max_workers=min(8, len(profiles)), thread_name_prefix="teardown") as pool:
            futures = [(p, pool.submit(_teardown_gated, run, p, listed.get(p.name, []))) for p in profiles]
            for p, fut in futures:
                try:
                    fut.result()
                except Exception as exc:  # noqa: BLE001 - a listing failed: report it, keep the others
                    run.error(p, _as_error(exc, f"teardown on profile {p.name}"))
    post = reconcile(accounts, profiles)
    for name, exc in post.errors:
        if (name, exc) not in report.errors:
            run.error(by_name[name], exc)
    for launch_id in {i.launch_id for i in report.terminated}:
        rec = accounts.store.find_launch(launch_id)
        still = any(getattr(x, "launch_id", None) == launch_id for x in report.remaining)
        if rec is not None and not still and rec.status in ("running", "launching", "recovered", "stopped"):
            accounts.store.update_launch(launch_id, status="terminated")
    for name in {name for name, _ in report.errors}:
        report.launched[name] = launched_on(accounts.store, name)
    _tell_listeners(accounts.store.path.parent, report)
    log.info("teardown: %d terminated, %d leftovers deleted, %d remaining, %d errors",
             len(report.terminated), len(report.deleted), len(report.remaining), len(report.errors))
    return report
