"""What exists in one region, found by our tags alone: instances and billable leftovers.

Everything the plugin creates carries ``workbench:managed=true``,
``workbench:launch=<id>`` and ``workbench:owner=<install id>``; the listings
here filter on managed + owner, so they rebuild the state from AWS after a
crash or on a new computer with the same account, and never touch what other
installs (or people) made.

Extra tags on instances (written at launch) make a listing self-sufficient:
``workbench:price`` (USD/h at launch), ``workbench:market`` (spot/on-demand),
``workbench:gpu`` ("V100:1"), ``workbench:ssh-user`` and ``workbench:disk-gb``.

Leftovers are tagged things no live instance uses: available (detached)
volumes, Elastic IPs not associated with a live instance, and the security
groups, key pairs and (multi-node) placement groups of launches without a live instance.  Stopped instances
are not leftovers: ``instances()`` reports them as STOPPED (billable), with
``price_per_hour`` the machine's running price and ``extra["storage_per_hour"]``
its root volume's EBS price, which the billing rule charges while stopped.

Threading: pure functions over a client the caller owns (one per thread).
Failure rules: botocore errors propagate; callers translate them.
"""

from __future__ import annotations

import datetime
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping

from workbench.core.domain.models import Instance, InstanceState, Resource
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER

from .cluster import KIND_PLACEMENT_GROUP, TAG_INTERCONNECT, TAG_NODE_RANK

TAG_PRICE, TAG_MARKET, TAG_GPU, TAG_SSH_USER, TAG_DISK = (
    "workbench:price", "workbench:market", "workbench:gpu", "workbench:ssh-user", "workbench:disk-gb")
LIVE_STATES = ("pending", "running", "shutting-down", "stopping", "stopped")
ALL_STATES = LIVE_STATES + ("terminated",)
STATES = {
    "pending": InstanceState.PENDING, "running": InstanceState.RUNNING, "stopping": InstanceState.STOPPING,
    "stopped": InstanceState.STOPPED, "shutting-down": InstanceState.TERMINATING,
    "terminated": InstanceState.TERMINATED,
}
#: EBS USD per GB-month in us-east-1 (public price list); other regions are within ~15 %
EBS_GB_MONTH = {"gp3": 0.08, "gp2": 0.10, "io1": 0.125, "io2": 0.125, "st1": 0.045, "sc1": 0.015, "standard": 0.05}
HOURS_PER_MONTH = 730.0
#: every public IPv4 address (Elastic IP or not) bills USD 0.005/h since February 2024
PUBLIC_IPV4_HOURLY = 0.005
SPOT_INTERRUPTION_CODES = ("Server.SpotInstanceTermination", "Server.SpotInstanceShutdown")

KIND_VOLUME, KIND_EIP, KIND_SG, KIND_KEY = "volume", "elastic-ip", "security-group", "key-pair"


def tags_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in obj.get("Tags") or []}


def owner_filters(install_id: str, launch_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    filters = [{"Name": f"tag:{TAG_MANAGED}", "Values": ["true"]},
               {"Name": f"tag:{TAG_OWNER}", "Values": [install_id]}]
    if launch_ids is not None:
        filters.append({"Name": f"tag:{TAG_LAUNCH}", "Values": sorted(set(launch_ids))})
    return filters


def ebs_hourly(size_gb: float, volume_type: str = "gp3") -> float:
    return round(size_gb * EBS_GB_MONTH.get(volume_type, EBS_GB_MONTH["gp3"]) / HOURS_PER_MONTH, 6)


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def _gpu(tag: str | None) -> tuple[str | None, int]:
    model, _, count = (tag or "").partition(":")
    return (model or None), (int(count) if count.isdigit() else 0)


def to_instance(raw: Mapping[str, Any], provider: str, profile: str, region: str,
                fallback_price: float | None = None) -> Instance:
    """One describe_instances / run_instances entry → Instance (state, price, host, extras)."""
    tags = tags_of(raw)
    aws_state = str((raw.get("State") or {}).get("Name", ""))
    state = STATES.get(aws_state, InstanceState.UNKNOWN)
    spot = raw.get("InstanceLifecycle") == "spot" or tags.get(TAG_MARKET) == "spot"
    price = _float(tags.get(TAG_PRICE))
    if price is None:
        price = fallback_price or 0.0
    disk_gb = _float(tags.get(TAG_DISK))
    reason = (raw.get("StateReason") or {}).get("Code", "")
    extra: dict[str, Any] = {
        "az": (raw.get("Placement") or {}).get("AvailabilityZone", ""),
        "ssh_user": tags.get(TAG_SSH_USER) or "ubuntu",
        "spot": spot,
        "aws_state": aws_state,
        "image_id": raw.get("ImageId", ""),
        "key_name": raw.get("KeyName", ""),
        "security_groups": [g.get("GroupId") for g in raw.get("SecurityGroups") or []],
        "private_ip": raw.get("PrivateIpAddress"),
    }
    rank = tags.get(TAG_NODE_RANK, "")
    if rank.isdigit():
        extra["node_rank"] = int(rank)
    if tags.get(TAG_INTERCONNECT):
        extra["interconnect"] = tags[TAG_INTERCONNECT]
    if reason:
        extra["state_reason"] = reason
    if spot and reason in SPOT_INTERRUPTION_CODES:
        extra["spot_interrupted"] = True
        extra["status_label"] = "spot interrupted"
    if disk_gb:
        # the root volume (gp3): what the spend book charges in every storage state, stopped included
        extra["storage_per_hour"] = ebs_hourly(disk_gb)
    if state == InstanceState.STOPPED:
        extra["billing_note"] = "stopped: the machine does not bill, its EBS storage does"
    model, count = _gpu(tags.get(TAG_GPU))
    launched = raw.get("LaunchTime")
    return Instance(
        provider=provider, profile=profile, instance_id=raw["InstanceId"],
        launch_id=tags.get(TAG_LAUNCH, ""), region=region, instance_type=raw.get("InstanceType", ""),
        state=state, name=tags.get("Name", ""), gpu_model=model, gpu_count=count, price_per_hour=price,
        currency="USD", spot=spot,
        launched_at=launched.timestamp() if isinstance(launched, datetime.datetime) else None,
        host=raw.get("PublicIpAddress") or raw.get("PublicDnsName") or None, extra=extra,
    )


def describe_instances(ec2: Any, install_id: str, launch_ids: Iterable[str] | None = None,
                       states: Iterable[str] = LIVE_STATES) -> list[dict[str, Any]]:
    """Raw instances of this install (optionally only some launches) in the given states."""
    filters = owner_filters(install_id, launch_ids)
    filters.append({"Name": "instance-state-name", "Values": list(states)})
    out = []
    for page in ec2.get_paginator("describe_instances").paginate(Filters=filters):
        for reservation in page.get("Reservations") or []:
            out.extend(reservation.get("Instances") or [])
    return out


def describe_by_ids(ec2: Any, ids: list[str]) -> list[dict[str, Any]]:
    """These instances in any state (terminated ones stay described for about an hour); unknown ids skipped."""
    out: list[dict[str, Any]] = []
    for iid in ids:  # one by one: a single unknown id fails a batched call
        try:
            answer = ec2.describe_instances(InstanceIds=[iid])
        except Exception as exc:  # noqa: BLE001 - only "not found" is expected here
            if "InvalidInstanceID" in str(getattr(exc, "response", {}).get("Error", {}).get("Code", "")):
                continue
            raise
        for reservation in answer.get("Reservations") or []:
            out.extend(reservation.get("Instances") or [])
    return out


def _resource(kind: str, rid: str, region: str, provider: str, profile: str, tags: Mapping[str, str],
              **extra: Any) -> Resource:
    return Resource(provider=provider, profile=profile, resource_id=rid, kind=kind, region=region,
                    launch_id=tags.get(TAG_LAUNCH) or None, extra={"name": tags.get("Name", ""), **extra})


def list_region(ec2: Any, region: str, provider: str, profile: str, install_id: str,
                skip_launches: Iterable[str] = (), launch_ids: Iterable[str] | None = None,
                ) -> tuple[list[dict[str, Any]], list[Resource] | None, Exception | None]:
    """The live instances (raw) and the leftovers of ``region``, each thing asked once.

    The five listings (instances, volumes, addresses, security groups, key pairs) are
    independent: they are asked side by side on one shared client (boto3 clients are
    thread-safe), so a region costs one round trip.  The instance listing raises; a
    leftover listing that fails comes back as the third value (leftovers None), so the
    instances are still good for reconcile.
    """
    filters = owner_filters(install_id, launch_ids)
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="aws-listing") as pool:
        live_f = pool.submit(describe_instances, ec2, install_id, launch_ids)
        volumes_f = pool.submit(lambda: list(ec2.get_paginator("describe_volumes").paginate(
            Filters=filters + [{"Name": "status", "Values": ["available"]}])))
        addresses_f = pool.submit(lambda: ec2.describe_addresses(Filters=filters).get("Addresses") or [])
        groups_f = pool.submit(lambda: list(ec2.get_paginator("describe_security_groups").paginate(Filters=filters)))
        keys_f = pool.submit(lambda: ec2.describe_key_pairs(Filters=filters).get("KeyPairs") or [])
        placement_f = pool.submit(lambda: ec2.describe_placement_groups(Filters=filters).get("PlacementGroups") or [])
        live = live_f.result()
        try:
            volume_pages, addresses, group_pages, keys, placements = (
                volumes_f.result(), addresses_f.result(), groups_f.result(), keys_f.result(), placement_f.result())
        except Exception as exc:  # noqa: BLE001 - the caller reports it beside the instances
            return live, None, exc
    return live, _leftovers(live, volume_pages, addresses, group_pages, keys, placements, region, provider,
                            profile, skip_launches), None


def list_leftovers(ec2: Any, region: str, provider: str, profile: str, install_id: str,
                   skip_launches: Iterable[str] = (), launch_ids: Iterable[str] | None = None) -> list[Resource]:
    """Billable (or clutter) tagged resources in ``region`` that no live instance of ours uses.

    ``skip_launches``: launches in flight in this process (their group and key are about to be used).
    """
    _, found, error = list_region(ec2, region, provider, profile, install_id, skip_launches, launch_ids)
    if error is not None:
        raise error
    return found or []


def _leftovers(live: list[dict[str, Any]], volume_pages: list[Mapping[str, Any]], addresses: list[Mapping[str, Any]],
               group_pages: list[Mapping[str, Any]], keys: list[Mapping[str, Any]],
               placements: list[Mapping[str, Any]], region: str, provider: str, profile: str,
               skip_launches: Iterable[str]) -> list[Resource]:
    live_ids = {i["InstanceId"] for i in live}
    busy = {tags_of(i).get(TAG_LAUNCH) for i in live} | set(skip_launches)
    found: list[Resource] = []
    for page in volume_pages:
        for v in page.get("Volumes") or []:
            size, vtype = float(v.get("Size") or 0), v.get("VolumeType") or "gp3"
            found.append(_resource(KIND_VOLUME, v["VolumeId"], region, provider, profile, tags_of(v),
                                   size_gb=size, volume_type=vtype, az=v.get("AvailabilityZone", ""),
                                   encrypted=bool(v.get("Encrypted")), price_per_hour=ebs_hourly(size, vtype)))
    for a in addresses:
        if a.get("InstanceId") and a["InstanceId"] in live_ids:
            continue
        found.append(_resource(KIND_EIP, a["AllocationId"], region, provider, profile, tags_of(a),
                               public_ip=a.get("PublicIp", ""), association_id=a.get("AssociationId") or "",
                               price_per_hour=PUBLIC_IPV4_HOURLY))
    for page in group_pages:
        for g in page.get("SecurityGroups") or []:
            tags = tags_of(g)
            if tags.get(TAG_LAUNCH) in busy:
                continue
            found.append(_resource(KIND_SG, g["GroupId"], region, provider, profile, tags,
                                   group_name=g.get("GroupName", ""), vpc_id=g.get("VpcId", ""), price_per_hour=0.0))
    for k in keys:
        tags = tags_of(k)
        if tags.get(TAG_LAUNCH) in busy:
            continue
        found.append(_resource(KIND_KEY, k.get("KeyPairId") or k["KeyName"], region, provider, profile, tags,
                               key_name=k.get("KeyName", ""), price_per_hour=0.0))
    for g in placements:
        tags = tags_of(g)
        if tags.get(TAG_LAUNCH) in busy:
            continue
        found.append(_resource(KIND_PLACEMENT_GROUP, g["GroupName"], region, provider, profile, tags,
                               group_name=g["GroupName"], group_id=g.get("GroupId", ""), price_per_hour=0.0))
    return found
