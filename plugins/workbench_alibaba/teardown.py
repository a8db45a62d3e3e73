"""Ending things in one region: release instances and wait until they are gone, delete a launch's
network and key, verify.

Order matters: a security group, vSwitch or VPC can only go once no instance uses it (even one
being released: DependencyViolation), and a VPC only after its vSwitches and security groups.
Each deletion retries DependencyViolation / IncorrectStatus answers until a deadline; "not found"
is success everywhere.  Waiting polls every ``poll_s`` and blocks the calling worker thread.

Threading: functions over an :class:`~.clients.Api`.  Errors: workbench errors (raised, or
returned as failures by :func:`delete_all`).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable, Iterable, Sequence

from workbench.core.domain.errors import NotFoundError, TransientError, WorkbenchError
from workbench.core.domain.models import Resource

from .inventory import KIND_DISK, KIND_EIP, KIND_KEY, KIND_SG, KIND_VPC, KIND_VSWITCH, pages

log = logging.getLogger("workbench.alibaba.teardown")
ORDER = {KIND_EIP: 0, KIND_DISK: 1, KIND_SG: 2, KIND_KEY: 3, KIND_VSWITCH: 4, KIND_VPC: 5}


def release(api: Any, region: str, ids: Sequence[str]) -> None:
    """DeleteInstances (Force) for ``ids``; ids already gone are skipped (one by one when a batch fails)."""
    if not ids:
        return
    for start in range(0, len(ids), 100):
        batch = list(ids[start:start + 100])
        try:
            api.ecs("DeleteInstances", region, InstanceId=batch, Force=True)
            continue
        except NotFoundError:
            pass
        for iid in batch:
            try:
                api.ecs("DeleteInstances", region, InstanceId=[iid], Force=True)
            except NotFoundError:
                continue


def still_there(api: Any, region: str, ids: Sequence[str]) -> list[str]:
    if not ids:
        return []
    found = pages(api, "ecs", "DescribeInstances", region, ("Instances", "Instance"),
                  InstanceIds=json.dumps(sorted(ids)), MaxResults=100)
    return sorted(i["InstanceId"] for i in found)


def wait_gone(api: Any, region: str, ids: Sequence[str], timeout_s: float, poll_s: float,
              clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Poll until no id is listed or ``timeout_s`` passes; the ids still listed."""
    deadline = clock() + timeout_s
    pending = list(ids)
    while pending:
        pending = still_there(api, region, pending)
        if not pending or clock() >= deadline:
            break
        sleep(max(0.0, min(poll_s, deadline - clock())))
    return pending


def delete_resource(api: Any, res: Resource) -> None:
    """Delete one leftover; gone already is success."""
    region = res.region
    try:
        if res.kind == KIND_EIP:
            if res.extra.get("instance_id"):
                try:
                    api.vpc("UnassociateEipAddress", region, AllocationId=res.resource_id,
                            InstanceId=res.extra["instance_id"])
                except NotFoundError:
                    pass
            api.vpc("ReleaseEipAddress", region, AllocationId=res.resource_id)
        elif res.kind == KIND_DISK:
            api.ecs("DeleteDisk", region, DiskId=res.resource_id)
        elif res.kind == KIND_SG:
            api.ecs("DeleteSecurityGroup", region, SecurityGroupId=res.resource_id)
        elif res.kind == KIND_KEY:
            api.ecs("DeleteKeyPairs", region, KeyPairNames=json.dumps([res.extra.get("key_name") or res.resource_id]))
        elif res.kind == KIND_VSWITCH:
            api.vpc("DeleteVSwitch", region, VSwitchId=res.resource_id)
        elif res.kind == KIND_VPC:
            api.vpc("DeleteVpc", region, VpcId=res.resource_id)
        else:
            log.warning("not deleting Alibaba resource %s of unknown kind %s", res.resource_id, res.kind)
            return
    except NotFoundError:
        return
    log.info("deleted %s %s (%s, launch %s)", res.kind, res.resource_id, region, res.launch_id)


def delete_all(api: Any, resources: Iterable[Resource], retry_s: float, poll_s: float,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> list[tuple[Resource, WorkbenchError]]:
    """Delete in dependency order; retry "still in use" answers until ``retry_s``; return the failures."""
    failures: list[tuple[Resource, WorkbenchError]] = []
    deadline = clock() + retry_s
    for res in sorted(resources, key=lambda r: ORDER.get(r.kind, 9)):
        while True:
            try:
                delete_resource(api, res)
                break
            except TransientError as exc:  # DependencyViolation, IncorrectStatus, throttling after retries
                if clock() < deadline:
                    sleep(max(0.0, min(poll_s, deadline - clock())))
                    continue
                failures.append((res, exc))
                break
            except WorkbenchError as exc:
                failures.append((res, exc))
                break
    return failures
