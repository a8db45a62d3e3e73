"""Ending things in one region: terminate and wait, delete leftovers, sweep a launch, verify.

Order matters on AWS: a security group can only be deleted once no network
interface uses it, i.e. after its instances reached ``terminated``; volumes
with DeleteOnTermination go with their instance, others become "available"
and are deleted here; Elastic IPs are disassociated, then released.

"Already gone" is success everywhere (``*.NotFound`` answers).  Waiting polls
``describe_instances`` every ``poll_s`` up to a deadline; it blocks the calling
worker thread (never a UI thread: the app calls providers through its task
runner).

Threading: functions over a client the caller owns.  Failure rules: botocore
errors other than "not found" propagate to the caller, which translates them.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable, Sequence

from workbench.core.domain.models import Resource

from .codes import error_code, is_not_found
from .consistency import NEW_INSTANCE, SETTLE_S, settled
from .cluster import KIND_PLACEMENT_GROUP, delete_group
from .inventory import KIND_EIP, KIND_KEY, KIND_SG, KIND_VOLUME

log = logging.getLogger("workbench.aws.teardown")


def terminate_ids(ec2: Any, ids: Sequence[str]) -> None:
    """Ask AWS to terminate ``ids``; ids that no longer exist are skipped (one by one if needed)."""
    if not ids:
        return
    try:
        ec2.terminate_instances(InstanceIds=list(ids))
        return
    except Exception as exc:  # noqa: BLE001 - a batch with one vanished id fails as a whole
        if not is_not_found(exc):
            raise
    for iid in ids:
        try:
            ec2.terminate_instances(InstanceIds=[iid])
        except Exception as exc:  # noqa: BLE001
            if not is_not_found(exc):
                raise


def terminate_new(ec2: Any, ids: Sequence[str], poll_s: float) -> None:
    """TerminateInstances for ids RunInstances gave moments ago: InvalidInstanceID.NotFound then means
    "not propagated yet", not "gone" (the EC2 eventual-consistency page says so), so it is asked again."""
    if ids:
        settled(lambda: ec2.terminate_instances(InstanceIds=list(ids)), NEW_INSTANCE, poll_s)


def launched_lately(launched_at: float | None, now: float | None = None) -> bool:
    """Launched so recently that its id may not have reached every EC2 endpoint yet."""
    return launched_at is not None and (time.time() if now is None else now) - launched_at < SETTLE_S


def states_of(ec2: Any, ids: Sequence[str]) -> dict[str, str]:
    """AWS state name per id; ids AWS no longer knows are reported "terminated"."""
    out: dict[str, str] = {}
    if not ids:
        return out
    try:
        pages = list(ec2.get_paginator("describe_instances").paginate(InstanceIds=list(ids)))
    except Exception as exc:  # noqa: BLE001
        if not is_not_found(exc):
            raise
        pages = []
        for iid in ids:  # find which ones vanished
            try:
                pages.extend(ec2.get_paginator("describe_instances").paginate(InstanceIds=[iid]))
            except Exception as inner:  # noqa: BLE001
                if not is_not_found(inner):
                    raise
    for page in pages:
        for reservation in page.get("Reservations") or []:
            for i in reservation.get("Instances") or []:
                out[i["InstanceId"]] = i["State"]["Name"]
    return {iid: out.get(iid, "terminated") for iid in ids}


def wait_terminated(ec2: Any, ids: Sequence[str], timeout_s: float, poll_s: float,
                    clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Poll until every id is terminated or ``timeout_s`` passes; returns the ids still not terminated."""
    deadline = clock() + timeout_s
    pending = list(ids)
    while pending:
        states = states_of(ec2, pending)
        pending = [iid for iid, state in states.items() if state != "terminated"]
        if not pending or clock() >= deadline:
            break
        sleep(max(0.0, min(poll_s, deadline - clock())))
    return pending


def delete_resource(ec2: Any, res: Resource) -> None:
    """Delete one leftover; gone already is success.  Unknown kinds are ignored (not ours to judge)."""
    try:
        if res.kind == KIND_VOLUME:
            ec2.delete_volume(VolumeId=res.resource_id)
        elif res.kind == KIND_EIP:
            association = res.extra.get("association_id")
            if association:
                try:
                    ec2.disassociate_address(AssociationId=association)
                except Exception as exc:  # noqa: BLE001
                    if not is_not_found(exc):
                        raise
            ec2.release_address(AllocationId=res.resource_id)
        elif res.kind == KIND_SG:
            ec2.delete_security_group(GroupId=res.resource_id)
        elif res.kind == KIND_KEY:
            name = res.extra.get("key_name") or ("" if res.resource_id.startswith("key-") else res.resource_id)
            if name:  # by name: every EC2 implementation (moto too) knows it; ids came later
                ec2.delete_key_pair(KeyName=name)
            else:
                ec2.delete_key_pair(KeyPairId=res.resource_id)
        elif res.kind == KIND_PLACEMENT_GROUP:
            delete_group(ec2, res.extra.get("group_name") or res.resource_id)
        else:
            log.warning("not deleting AWS resource %s of unknown kind %s", res.resource_id, res.kind)
            return
    except Exception as exc:  # noqa: BLE001
        if is_not_found(exc) or error_code(exc) in ("InvalidPermission.NotFound", "InvalidPlacementGroup.Unknown"):
            return
        raise
    log.info("deleted %s %s (%s, launch %s)", res.kind, res.resource_id, res.region, res.launch_id)


def delete_all(ec2: Any, resources: Iterable[Resource], retry_dependency_s: float = 0.0, poll_s: float = 1.0,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> list[tuple[Resource, BaseException]]:
    """Delete in a safe order (volumes and IPs before groups and keys); returns the failures.

    A security group still held by a just-terminated instance's interface
    (DependencyViolation) is retried until ``retry_dependency_s`` has passed.
    """
    order = {KIND_VOLUME: 0, KIND_EIP: 1, KIND_SG: 2, KIND_KEY: 3, KIND_PLACEMENT_GROUP: 4}
    failures: list[tuple[Resource, BaseException]] = []
    for res in sorted(resources, key=lambda r: order.get(r.kind, 9)):
        deadline = clock() + retry_dependency_s
        while True:
            try:
                delete_resource(ec2, res)
                break
            except Exception as exc:  # noqa: BLE001 - collected; the others still go
                # a group still held by a just-terminated instance (its interface, or its placement)
                if error_code(exc) in ("DependencyViolation", "InvalidPlacementGroup.InUse") and clock() < deadline:
                    sleep(max(0.0, min(poll_s, deadline - clock())))
                    continue
                failures.append((res, exc))
                break
    return failures
