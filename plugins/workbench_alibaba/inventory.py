"""What exists in one region, found by our tags alone: instances and leftovers.

Everything the plugin creates carries ``workbench:managed=true``, ``workbench:launch=<id>`` and
``workbench:owner=<install id>``; listings filter on managed + owner, so they rebuild the state
after a crash or on a new computer and never touch what others made.  Instances carry extra tags
written at launch (``workbench:price`` per hour at launch, ``workbench:currency``,
``workbench:market`` spot/ondemand, ``workbench:gpu`` "V100:1", ``workbench:ssh-user``,
``workbench:disk-gb``; ``workbench:node-rank`` on the nodes of a multi-node launch, read into
``extra["node_rank"]`` beside ``extra["private_ip"]``), so a listing needs no other source.

States: Pending/Starting → PENDING, Running → RUNNING, Stopping → STOPPING, Stopped → STOPPED
(``StoppedMode`` KeepCharging: compute still bills) or DEALLOCATED (StopCharging, the economical
mode: no compute charge, the disks still bill); a spot instance whose ``OperationLocks`` name
``Recycling`` is being reclaimed ("Spot interrupted").  Released instances are not listed at all.

Leftovers are tagged things of launches with no live instance: security groups, key pairs, VPCs and
vSwitches (found with ListTagResources), disks not in use and Elastic IPs not bound to a live
instance (DescribeDisks / DescribeEipAddresses with tag filters) -- and instances stopped in the
economical mode: not billable as machines (DEALLOCATED) but their disks bill until they are released,
so they are listed as ``stopped-instance`` leftovers priced at their disk, and deleting one releases it.

Threading: functions over an :class:`~.clients.Api` (any thread).  Errors: workbench errors.
"""

from __future__ import annotations

import calendar
import json
import time
from typing import Any, Iterable, Iterator, Mapping

from workbench.core.domain.models import Instance, InstanceState, Resource
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER

TAG_PRICE, TAG_CURRENCY, TAG_MARKET, TAG_GPU, TAG_SSH_USER, TAG_DISK = (
    "workbench:price", "workbench:currency", "workbench:market", "workbench:gpu", "workbench:ssh-user",
    "workbench:disk-gb")
TAG_NODE_RANK = "workbench:node-rank"  # a node of a multi-node launch: 0 = head (see .cluster)
STATES = {"Pending": InstanceState.PENDING, "Starting": InstanceState.PENDING, "Running": InstanceState.RUNNING,
          "Stopping": InstanceState.STOPPING, "Stopped": InstanceState.STOPPED}
KIND_SG, KIND_KEY, KIND_VPC, KIND_VSWITCH, KIND_DISK, KIND_EIP, KIND_STOPPED = (
    "security-group", "key-pair", "vpc", "vswitch", "disk", "eip", "stopped-instance")
#: ESSD PL1 list price, CNY per GiB-month (cn-hangzhou; ECS block storage pricing page), for storage_per_hour
ESSD_CNY_GB_MONTH = 1.0
HOURS_PER_MONTH = 730.0
#: a pay-as-you-go Elastic IP's hourly holding fee in CNY (approximate; only shown for a leftover address)
EIP_CNY_PER_HOUR = 0.02


def owner_tags(install_id: str, launch_id: str | None = None) -> list[dict[str, str]]:
    tags = [{"Key": TAG_MANAGED, "Value": "true"}, {"Key": TAG_OWNER, "Value": install_id}]
    if launch_id:
        tags.append({"Key": TAG_LAUNCH, "Value": launch_id})
    return tags


def ecs_tags_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return {t.get("TagKey", ""): t.get("TagValue", "") for t in ((obj.get("Tags") or {}).get("Tag") or [])}


def vpc_tags_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return {t.get("Key", ""): t.get("Value", "") for t in ((obj.get("Tags") or {}).get("Tag") or [])}


def disk_hourly(size_gb: float, currency: str = "CNY") -> float:
    cny = size_gb * ESSD_CNY_GB_MONTH / HOURS_PER_MONTH
    return round(cny if currency == "CNY" else cny / 7.2, 6)


def _time(text: str | None) -> float | None:
    for fmt in ("%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return float(calendar.timegm(time.strptime(text or "", fmt)))
        except ValueError:
            continue
    return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def to_instance(raw: Mapping[str, Any], provider: str, profile: str, region: str, *,
                fallback_price: float | None = None, currency: str = "CNY") -> Instance:
    tags = ecs_tags_of(raw)
    status = str(raw.get("Status") or "")
    state = STATES.get(status, InstanceState.UNKNOWN)
    locks = [lock.get("LockReason") for lock in ((raw.get("OperationLocks") or {}).get("LockReason") or [])]
    spot = (raw.get("SpotStrategy") or "NoSpot") != "NoSpot" or tags.get(TAG_MARKET) == "spot"
    price = _float(tags.get(TAG_PRICE))
    cur = tags.get(TAG_CURRENCY) or currency
    public = ((raw.get("PublicIpAddress") or {}).get("IpAddress") or []) + \
        [a for a in [(raw.get("EipAddress") or {}).get("IpAddress")] if a]
    private = ((raw.get("VpcAttributes") or {}).get("PrivateIpAddress") or {}).get("IpAddress") or []
    disk_gb = _float(tags.get(TAG_DISK))
    extra: dict[str, Any] = {
        "zone": raw.get("ZoneId", ""), "ssh_user": tags.get(TAG_SSH_USER) or "root", "ssh_key_type": "rsa",
        "spot": spot, "ali_status": status, "image_id": raw.get("ImageId", ""), "key_name": raw.get("KeyPairName", ""),
        "vpc_id": (raw.get("VpcAttributes") or {}).get("VpcId", ""),
        "vswitch_id": (raw.get("VpcAttributes") or {}).get("VSwitchId", ""),
        "security_groups": list((raw.get("SecurityGroupIds") or {}).get("SecurityGroupId") or []),
        "private_ip": private[0] if private else None, "auto_release_time": raw.get("AutoReleaseTime") or None,
        "stopped_mode": raw.get("StoppedMode") or "",
    }
    rank = tags.get(TAG_NODE_RANK, "")
    if rank.isdigit():
        extra["node_rank"] = int(rank)
    if disk_gb:
        extra["storage_per_hour"] = disk_hourly(disk_gb, cur)
    if "Recycling" in locks:
        extra.update(spot_interrupted=True, status_label="Spot interrupted")
    if state == InstanceState.STOPPED:
        if raw.get("StoppedMode") == "StopCharging":
            state = InstanceState.DEALLOCATED
            extra["billing_note"] = "stopped, no compute charge (disks still bill)"
            extra["status_label"] = "stopped, no compute charge"
            extra["economical_stop"] = True
        else:
            extra["billing_note"] = "stopped in standard mode: the instance still bills"
    model, _, count = (tags.get(TAG_GPU) or "").partition(":")
    return Instance(
        provider=provider, profile=profile, instance_id=raw["InstanceId"], launch_id=tags.get(TAG_LAUNCH, ""),
        region=region, instance_type=raw.get("InstanceType", ""), state=state,
        name=raw.get("InstanceName") or tags.get("Name", ""), gpu_model=model or None,
        gpu_count=int(count) if count.isdigit() else int(raw.get("GPUAmount") or 0),
        price_per_hour=price if price is not None else (fallback_price or 0.0), currency=cur, spot=spot,
        launched_at=_time(raw.get("CreationTime")), host=public[0] if public else None, extra=extra)


def pages(api: Any, product: str, action: str, region: str, list_path: tuple[str, str], **params: Any) \
        -> Iterator[dict[str, Any]]:
    """Every item of a listing, following NextToken (or PageNumber for the calls that use it)."""
    token: str | None = None
    number = 1
    while True:
        extra = {"NextToken": token} if token else {}
        if action in ("DescribeVpcs", "DescribeVSwitches", "DescribeKeyPairs", "DescribeEipAddresses", "DescribeImages"):
            extra = {"PageNumber": number, "PageSize": 50}
        body = api.call(product, action, region, {**params, **extra})
        items = (body.get(list_path[0]) or {}).get(list_path[1]) or []
        yield from items
        if "PageNumber" in extra:
            total = int(body.get("TotalCount") or 0)
            if number * int(body.get("PageSize") or 50) >= total or not items:
                return
            number += 1
            continue
        token = body.get("NextToken") or None
        if not token:
            return


def describe_instances(api: Any, region: str, install_id: str, launch_id: str | None = None,
                       ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"Tag": owner_tags(install_id, launch_id), "MaxResults": 100}
    if ids is not None:
        params = {"InstanceIds": json.dumps(sorted(set(ids))), "MaxResults": 100}
    return list(pages(api, "ecs", "DescribeInstances", region, ("Instances", "Instance"), **params))


def _tagged(api: Any, product: str, region: str, kind: str, install_id: str,
            launch_ids: Iterable[str] | None) -> dict[str, dict[str, str]]:
    """ListTagResources → {resource id: its tags} of ours (one call pages per kind)."""
    rows = pages(api, product, "ListTagResources", region, ("TagResources", "TagResource"), ResourceType=kind,
                 Tag=owner_tags(install_id))
    found: dict[str, dict[str, str]] = {}
    for row in rows:
        found.setdefault(row["ResourceId"], {})[row.get("TagKey", "")] = row.get("TagValue", "")
    wanted = set(launch_ids) if launch_ids is not None else None
    return {rid: tags for rid, tags in found.items() if wanted is None or tags.get(TAG_LAUNCH) in wanted}


def list_leftovers(api: Any, region: str, provider: str, profile: str, install_id: str, *,
                   busy: Iterable[str] = (), launch_ids: Iterable[str] | None = None,
                   currency: str = "CNY") -> list[Resource]:
    """Tagged resources in ``region`` of launches without a live instance (``busy``: launches in flight)."""
    live = describe_instances(api, region, install_id)
    live_ids = {i["InstanceId"] for i in live}
    skip = {ecs_tags_of(i).get(TAG_LAUNCH) for i in live} | set(busy)
    launch_ids = list(launch_ids) if launch_ids is not None else None
    out: list[Resource] = []

    def add(kind: str, rid: str, tags: Mapping[str, str], **extra: Any) -> None:
        if tags.get(TAG_LAUNCH) in skip and kind not in (KIND_DISK, KIND_EIP):
            return
        out.append(Resource(provider=provider, profile=profile, resource_id=rid, kind=kind, region=region,
                            launch_id=tags.get(TAG_LAUNCH) or None, extra={"price_per_hour": 0.0, **extra}))

    for kind, product, rtype in ((KIND_SG, "ecs", "securitygroup"), (KIND_KEY, "ecs", "keypair"),
                                 (KIND_VSWITCH, "vpc", "VSWITCH"), (KIND_VPC, "vpc", "VPC")):
        for rid, tags in _tagged(api, product, region, rtype, install_id, launch_ids).items():
            add(kind, rid, tags, **({"key_name": rid} if kind == KIND_KEY else {}))
    for inst in live:
        tags = ecs_tags_of(inst)
        if inst.get("Status") == "Stopped" and inst.get("StoppedMode") == "StopCharging" and \
                (launch_ids is None or tags.get(TAG_LAUNCH) in launch_ids):
            disk_gb = _float(tags.get(TAG_DISK)) or 0.0
            out.append(Resource(provider=provider, profile=profile, resource_id=inst["InstanceId"], kind=KIND_STOPPED,
                                region=region, launch_id=tags.get(TAG_LAUNCH) or None,
                                extra={"price_per_hour": disk_hourly(disk_gb, currency), "currency": currency,
                                       "note": "stopped without compute charge; its disks still bill"}))
    for d in pages(api, "ecs", "DescribeDisks", region, ("Disks", "Disk"), Tag=owner_tags(install_id),
                   Status="Available", MaxResults=100):
        tags = ecs_tags_of(d)
        if launch_ids is None or tags.get(TAG_LAUNCH) in launch_ids:
            add(KIND_DISK, d["DiskId"], tags, size_gb=float(d.get("Size") or 0), category=d.get("Category", ""),
                price_per_hour=disk_hourly(float(d.get("Size") or 0), currency), currency=currency)
    for e in pages(api, "vpc", "DescribeEipAddresses", region, ("EipAddresses", "EipAddress"),
                   Tag=owner_tags(install_id)):
        tags = vpc_tags_of(e)
        if e.get("InstanceId") in live_ids or (launch_ids is not None and tags.get(TAG_LAUNCH) not in launch_ids):
            continue
        add(KIND_EIP, e["AllocationId"], tags, public_ip=e.get("IpAddress", ""), instance_id=e.get("InstanceId") or "",
            price_per_hour=EIP_CNY_PER_HOUR if currency == "CNY" else round(EIP_CNY_PER_HOUR / 7.2, 4),
            currency=currency)
    return out
