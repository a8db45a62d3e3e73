"""Stop the bill: terminate, sweep leftovers, verify — re-runnable, in parallel.

1. Reconcile, so the targets come from the providers' tags, not only the store.
2. Terminate the billable instances of the chosen launches, one task per profile.
3. Ask each provider for leftovers (disks, IPs, groups) of those launches and delete them.
4. Verify by listing again until nothing of those launches is billable, or the
   deadline passes; whatever still exists is returned as ``remaining``.

Teardown never stops at the first error: every profile is attempted, and
errors are collected beside what remains billing.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .accounts import Accounts
from .errors import WorkbenchError
from .models import Instance, Profile, Resource
from .reconcile import reconcile

log = logging.getLogger("workbench.teardown")


@dataclass
class TeardownReport:
    terminated: list[Instance] = field(default_factory=list)
    deleted: list[Resource] = field(default_factory=list)
    remaining: list[Instance | Resource] = field(default_factory=list)
    errors: list[tuple[str, WorkbenchError]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.remaining and not self.errors


def _wanted(launch_ids: set[str] | None, launch_id: str | None) -> bool:
    return launch_ids is None or launch_id in launch_ids


def _teardown_profile(accounts: Accounts, p: Profile, launch_ids: set[str] | None, timeout: float,
                      poll: float, report: TeardownReport, clock: Callable[[], float]) -> None:
    prov = accounts.provider(p)
    targets = [i for i in prov.instances() if i.state.billable and _wanted(launch_ids, i.launch_id)]
    if targets:
        prov.terminate(targets)
        report.terminated.extend(targets)
    deadline = clock() + timeout
    while True:
        alive = [i for i in prov.instances() if i.state.billable and _wanted(launch_ids, i.launch_id)]
        extra = [r for r in prov.leftovers() if _wanted(launch_ids, r.launch_id)]
        if extra and not alive:
            # only sweep once instances are gone: a disk still attached cannot be deleted
            prov.delete(extra)
            report.deleted.extend(extra)
            extra = [r for r in prov.leftovers() if _wanted(launch_ids, r.launch_id)]
        for i in alive:
            accounts.store.upsert_instance(i)
        if (not alive and not extra) or clock() >= deadline:
            report.remaining.extend(alive)
            report.remaining.extend(extra)
            return
        time.sleep(poll)


def teardown(accounts: Accounts, launch_ids: Iterable[str] | None = None, timeout: float = 600.0,
             poll: float = 2.0, clock: Callable[[], float] = time.monotonic) -> TeardownReport:
    """Tear down the given launches (None = everything this install created) across all profiles."""
    ids = set(launch_ids) if launch_ids is not None else None
    report = TeardownReport()
    pre = reconcile(accounts)
    report.errors.extend(pre.errors)
    failed = {name for name, _ in pre.errors}
    profiles = [p for p in accounts.profiles() if p.name not in failed]
    if ids is not None:
        # only the profiles that own one of these launches (from the store and the fresh listing)
        owners = {(r.provider, r.profile) for r in accounts.store.list_launches() if r.launch_id in ids}
        profiles = [p for p in profiles if (p.provider, p.name) in owners]
    if profiles:
        with ThreadPoolExecutor(max_workers=min(8, len(profiles)), thread_name_prefix="teardown") as pool:
            futures = [(p, pool.submit(_teardown_profile, accounts, p, ids, timeout, poll, report, clock))
                       for p in profiles]
            for p, fut in futures:
                try:
                    fut.result()
                except WorkbenchError as exc:
                    report.errors.append((p.name, exc))
                except Exception as exc:
                    log.exception("teardown on profile %s failed", p.name)
                    report.errors.append((p.name, WorkbenchError(f"{type(exc).__name__}: {exc}")))
    post = reconcile(accounts, profiles)
    report.errors.extend(e for e in post.errors if e not in report.errors)
    for launch_id in {i.launch_id for i in report.terminated}:
        rec = accounts.store.find_launch(launch_id)
        still = any(getattr(x, "launch_id", None) == launch_id for x in report.remaining)
        if rec is not None and not still and rec.status in ("running", "launching", "recovered", "stopped"):
            accounts.store.update_launch(launch_id, status="terminated")
    log.info("teardown: %d terminated, %d leftovers deleted, %d remaining, %d errors",
             len(report.terminated), len(report.deleted), len(report.remaining), len(report.errors))
    return report
