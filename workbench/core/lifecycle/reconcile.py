"""Merge what the providers say exists with what the store remembers.

The cloud's tags are the truth: an instance a provider lists is upserted
(recovering launches the store never heard of, e.g. after a crash or a
lost database); an instance the store thinks is alive but its provider no
longer lists is marked terminated.  Profiles are asked in parallel; a
profile that fails is reported and its instances are left as they were
(never assumed gone).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable

from workbench.core.applog import first_time
from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance, InstanceState, Profile
from workbench.core.store.database import LaunchRecord, Store

log = logging.getLogger("workbench.reconcile")


@dataclass
class ReconcileResult:
    instances: list[Instance] = field(default_factory=list)
    errors: list[tuple[str, WorkbenchError]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  # launch ids found only in the cloud


def _list(accounts: Accounts, p: Profile) -> list[Instance]:
    return accounts.provider(p).instances()


def reconcile(accounts: Accounts, profiles: Iterable[Profile] | None = None,
              max_workers: int = 8) -> ReconcileResult:
    """Refresh the store from every given profile (default: all); never raises for one profile."""
    store = accounts.store
    chosen = list(profiles if profiles is not None else accounts.profiles())
    result = ReconcileResult()
    if not chosen:
        return result
    with ThreadPoolExecutor(max_workers=min(max_workers, len(chosen)), thread_name_prefix="reconcile") as pool:
        futures = [(p, pool.submit(_list, accounts, p)) for p in chosen]
        for p, fut in futures:
            try:
                listed = fut.result()
            except WorkbenchError as exc:
                result.errors.append((p.name, exc))
                continue
            except Exception as exc:  # plugin bug (or a missing SDK): report, keep the others
                _log_failure(p.name, exc)
                result.errors.append((p.name, WorkbenchError(f"{type(exc).__name__}: {exc}")))
                continue
            _merge(store, p, listed, result)
    for launch_id in {i.launch_id for i in result.instances}:
        _update_launch_status(store, launch_id)
    return result


def _log_failure(profile: str, exc: BaseException) -> None:
    """The traceback once per (profile, error); after that one line per refresh, not a traceback each time.

    (An unusable profile is listed every few seconds: ~5,900 traceback lines in ten minutes otherwise.)
    """
    what = f"{type(exc).__name__}: {exc}"
    if first_time(f"listing {profile}", what):
        log.warning("listing instances of profile %s failed", profile, exc_info=exc)
    else:
        log.warning("listing instances of profile %s failed again: %s", profile, what)


def _merge(store: Store, p: Profile, listed: list[Instance], result: ReconcileResult) -> None:
    seen = set()
    for inst in listed:
        seen.add(inst.instance_id)
        if store.find_launch(inst.launch_id) is None:
            store.add_launch(LaunchRecord(
                launch_id=inst.launch_id, name=inst.name or inst.launch_id, provider=p.provider,
                profile=p.name, region=inst.region, created_at=inst.launched_at or time.time(),
                status="recovered",
            ))
            result.recovered.append(inst.launch_id)
            log.warning("recovered launch %s from %s tags", inst.launch_id, p.name)
        store.upsert_instance(inst)
        result.instances.append(inst)
    for known in store.list_instances(provider=p.provider, profile=p.name):
        if known.instance_id not in seen and known.state != InstanceState.TERMINATED:
            gone = known.with_state(InstanceState.TERMINATED)
            store.upsert_instance(gone)
            result.instances.append(gone)


def _update_launch_status(store: Store, launch_id: str) -> None:
    insts = store.list_instances(launch_id=launch_id)
    rec = store.find_launch(launch_id)
    if rec is None or not insts:
        return
    if any(i.state.billable for i in insts):
        status = "running" if any(i.state.active for i in insts) else "stopped"
    elif rec.status in ("terminated", "failed"):
        return
    else:
        codes = [i.exit_code for i in insts if i.exit_code is not None]
        status = "finished" if codes and all(c == 0 for c in codes) else (
            "failed" if codes else "terminated")
    if status != rec.status:
        store.update_launch(launch_id, status=status)
