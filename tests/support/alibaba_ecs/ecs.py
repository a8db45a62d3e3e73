"""ECS (2014-05-26) instance calls: RunInstances, DescribeInstances, DeleteInstances, StopInstances,
ModifyInstanceAutoReleaseTime.  Catalogue, key, group, tag and disk calls live in :mod:`.ecs_more`.
RunInstances into a vSwitch that is not Available yet (CreateVSwitch is asynchronous) fails with
IncorrectVSwitchStatus 400 "The current status of virtual switch does not support this operation." (the
error tables of RunInstances and CreateInstance).

Shapes and error codes from the API reference pages (www.alibabacloud.com/help/en/ecs/developer-reference/
api-ecs-2014-05-26-<action>): RunInstances answers ``InstanceIdSets.InstanceIdSet[]``; DescribeInstances
``Instances.Instance[]`` with ``Tags.Tag[]{TagKey,TagValue}``, ``OperationLocks.LockReason[]``,
``VpcAttributes``, ``PublicIpAddress.IpAddress[]``; ModifyInstanceAutoReleaseTime takes UTC
``yyyy-MM-ddTHH:mm:ssZ`` (seconds are dropped: the release happens at the start of that minute), at least
half an hour ahead and at most three years (InvalidAutoReleaseTime.Malformed otherwise).
Handlers run under ``state.lock`` and return the answer's body without RequestId.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import itertools
import secrets
from typing import Any

from . import catalog, ecs_more
from .errors import ApiError, not_found
from .idempotency import idempotent
from .state import ecs_tags, iso, parse_iso, tags_match

MAX_USERDATA = 32 * 1024  # bytes of base64 text (RunInstances: "UserData … cannot exceed 32 KB")
NO_STOCK = ApiError(403, "OperationDenied.NoStock", "The requested resource is sold out in the specified zone; try "
                    "other types of resources or other regions and zones.")


def _instance_view(inst: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in inst.items() if not k.startswith("_")}


def check_release_time(ctx: Any, raw: str) -> float:
    """An AutoReleaseTime as POSIX seconds (start of its minute); InvalidAutoReleaseTime.Malformed otherwise."""
    at = parse_iso(raw)
    if at is None:
        raise ApiError(400, "InvalidAutoReleaseTime.Malformed", "The specified parameter autoReleaseTime is not valid.")
    at -= at % 60
    if at < ctx.now + 30 * 60 or at > ctx.now + 3 * 365 * 86400:
        raise ApiError(400, "InvalidAutoReleaseTime.Malformed", "The specified parameter autoReleaseTime is not "
                       "valid: it must be at least 30 minutes and at most 3 years after the current time.")
    return at


def _private_ip(space: Any, vsw: dict[str, Any]) -> str:
    """The next free address of the vSwitch's CIDR (skipping the first few, as ECS reserves some), unique
    among its instances."""
    used = {a for i in space.instances.values() if i["VpcAttributes"]["VSwitchId"] == vsw["VSwitchId"]
            for a in i["VpcAttributes"]["PrivateIpAddress"]["IpAddress"]}
    hosts = itertools.islice(ipaddress.ip_network(vsw["CidrBlock"]).hosts(), 9, None)
    free = next((str(h) for h in hosts if str(h) not in used), None)
    if free is None:
        raise ApiError(403, "InvalidVSwitchId.IpNotEnough", "The specified vSwitch has no free private address.")
    return free


def _ram_role(ctx: Any, name: str | None) -> str | None:
    """RunInstances' ``RamRoleName``: the caller may pass roles (ram:PassRole), the role exists and ECS may
    assume it (the RunInstances error table: InvalidUser.PassRoleForbidden, InvalidRamRole.NotFound/.NotEcsRole)."""
    if not name:
        return None
    from .ram import role_named, trusted_services

    if not ctx.account.may("ram:PassRole"):
        raise ApiError(403, "InvalidUser.PassRoleForbidden", "The RAM user does not have the privilege to pass a RAM "
                       "role.")
    role = role_named(ctx.state, ctx.account.account_id, name)
    if role is None:
        raise ApiError(404, "InvalidRamRole.NotFound", "The specified RAMRoleName does not exist.")
    if "ecs.aliyuncs.com" not in trusted_services(role):
        raise ApiError(401, "InvalidRamRole.NotEcsRole", "The specified ram role is not authorized for ecs, please "
                       "check your role policy.")
    return name


def run_instances(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    return idempotent(ctx, "RunInstances", lambda: _run(ctx, region))


def _run(ctx: Any, region: str) -> dict[str, Any]:
    p, space = ctx.params, ctx.space
    itype = p.need("InstanceType")
    image_id = p.need("ImageId")
    vsw_id = p.need("VSwitchId")
    types = {t.type_id: t for t in catalog.offered(region)}
    if itype not in types:
        raise ApiError(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType does not exist or "
                       "beyond the permitted range.")
    if not any(i["ImageId"] == image_id for i in catalog.IMAGES):
        raise ApiError(404, "InvalidImageId.NotFound", "The specified ImageId does not exist.")
    vsw = space.vswitches.get(vsw_id)
    if vsw is None or vsw["_region"] != region:
        raise ApiError(404, "InvalidVSwitchId.NotFound", "Specified virtual switch does not exist.")
    zone = p.get("ZoneId") or vsw["ZoneId"]
    if zone != vsw["ZoneId"]:
        raise ApiError(400, "InvalidParameter.Mismatch", "Specified virtual switch is not in the specified zone.")
    if vsw["Status"] != "Available":  # CreateVSwitch is asynchronous: a Pending vSwitch takes no instance yet
        raise ApiError(400, "IncorrectVSwitchStatus", "The current status of virtual switch does not support this "
                       "operation.")
    group_ids = [p.get("SecurityGroupId")] if p.get("SecurityGroupId") else p.indexed("SecurityGroupIds")
    if not group_ids:
        raise ApiError(400, "MissingParameter", "The input parameter \"SecurityGroupId\" that is mandatory for "
                       "processing this request is not supplied.")
    for gid in group_ids:
        group = space.groups.get(gid)
        if group is None:
            raise ApiError(404, "InvalidSecurityGroupId.NotFound", "The specified SecurityGroupId does not exist.")
        if group["VpcId"] != vsw["VpcId"]:
            raise ApiError(400, "InvalidSecurityGroupId.NotMatchVpc", "The specified security group and the vSwitch "
                           "are not in the same VPC.")
    key = p.get("KeyPairName")
    if key and (region, key) not in space.keys:
        raise ApiError(404, "InvalidKeyPairName.NotFound", "The specified KeyPairName does not exist.")
    charge = p.get("InstanceChargeType") or "PostPaid"
    if charge != "PostPaid":
        raise ApiError(400, "InvalidInstanceChargeType.ValueNotSupported", "The test cloud sells PostPaid only.")
    spot = p.get("SpotStrategy") or "NoSpot"
    if spot not in ("NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"):
        raise ApiError(400, "InvalidSpotStrategy", "The specified SpotStrategy is not valid.")
    limit = p.float("SpotPriceLimit")
    if spot == "SpotWithPriceLimit":
        if limit is None:
            raise ApiError(400, "MissingParameter", "The input parameter \"SpotPriceLimit\" that is mandatory for "
                           "processing this request is not supplied.")
        if limit < catalog.spot_price(region, zone, itype):
            raise ApiError(400, "InvalidSpotPriceLimit.LowerThanPublicPrice", "The specified parameter "
                           "spotPriceLimit can't be lower than current public price.")
    market = "spot" if spot != "NoSpot" else "ondemand"
    if any(z in (zone, "*") and t in (itype, "*") and m in (market, "*") for z, t, m in ctx.knobs.no_stock):
        raise NO_STOCK
    disk = p.struct("SystemDisk")
    category = disk.get("Category") or "cloud_efficiency"
    if category not in ("cloud_essd", "cloud_auto", "cloud_ssd", "cloud_efficiency"):
        raise ApiError(400, "InvalidSystemDiskCategory.ValueNotSupported", "The specified parameter "
                       "SystemDisk.Category is not valid.")
    image = next(i for i in catalog.IMAGES if i["ImageId"] == image_id)
    size = int(disk.get("Size") or image["Size"])
    if size < int(image["Size"]):
        raise ApiError(400, "InvalidSystemDiskSize.LessThanImageSize", "The specified parameter SystemDisk.Size is "
                       "less than the image size.")
    user_data = p.get("UserData") or ""
    if len(user_data) > MAX_USERDATA:
        raise ApiError(400, "InvalidUserData.SizeExceeded", "The specified parameter UserData exceeds the size.")
    if user_data:
        try:
            base64.b64decode(user_data, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "InvalidUserData.Base64FormatInvalid", "The specified UserData is not valid: it must "
                           "be base64-encoded.") from None
    release_at = check_release_time(ctx, p.get("AutoReleaseTime")) if p.get("AutoReleaseTime") else None
    role = _ram_role(ctx, p.get("RamRoleName"))
    amount = p.int("Amount", 1) or 1
    least = p.int("MinAmount", amount) or amount
    if not 1 <= least <= amount:
        raise ApiError(400, "InvalidParameter.MinAmount", "MinAmount must be between 1 and Amount.")
    left = ctx.knobs.stock.get((zone, itype))
    if left is not None:
        if left < least:
            raise NO_STOCK
        amount = min(amount, left)
    t = types[itype]
    used = sum(catalog.BY_ID[i["InstanceType"]].vcpus for i in space.instances.values()
               if i["_region"] == region and not i.get("_release_at") and i["InstanceType"] in catalog.BY_ID)
    if used + amount * t.vcpus > ctx.knobs.vcpu_quota:
        raise ApiError(403, "QuotaExceed.ElasticQuota", f"The number of vCPUs assigned to the ECS instances has "
                       f"exceeded the quota in the region: {used} of {ctx.knobs.vcpu_quota} are in use.")
    tags = dict(p.tags())
    bandwidth = p.int("InternetMaxBandwidthOut", 0) or 0
    if p.bool("DryRun"):
        raise ApiError(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
    if left is not None:
        ctx.knobs.stock[(zone, itype)] = left - amount
    ids = []
    for n in range(amount):
        iid = ctx.state.new_id("i", region)
        ids.append(iid)
        # documentation addresses (TEST-NET-2): never a real machine on the internet
        public = [f"198.51.100.{secrets.randbelow(250) + 1}"] if bandwidth > 0 else []
        name = p.get("InstanceName") or iid
        inst = {
            "InstanceId": iid, "InstanceName": name, "HostName": p.get("HostName") or f"iZ{iid[2:]}Z",
            "InstanceType": itype, "InstanceTypeFamily": t.family, "Cpu": t.vcpus, "Memory": int(t.memory_gib * 1024),
            "GPUAmount": t.gpu_count, "GPUSpec": t.gpu_spec, "RegionId": region, "ZoneId": zone,
            "Status": "Pending", "CreationTime": iso(ctx.now, minutes=True), "StartTime": "",
            "ImageId": image_id, "OSName": image["OSName"], "OSType": "linux",
            "InstanceChargeType": "PostPaid", "InternetChargeType": p.get("InternetChargeType") or "PayByTraffic",
            "InternetMaxBandwidthOut": bandwidth, "SpotStrategy": spot, "SpotPriceLimit": limit or 0.0,
            "SpotInterruptionBehavior": p.get("SpotInterruptionBehavior") or "Terminate",
            "AutoReleaseTime": iso(release_at) if release_at else "", "_ram_role": role,
            "KeyPairName": key or "", "StoppedMode": "Not-applicable", "InstanceNetworkType": "vpc",
            "VpcAttributes": {"VpcId": vsw["VpcId"], "VSwitchId": vsw_id, "NatIpAddress": "",
                              "PrivateIpAddress": {"IpAddress": [_private_ip(ctx.space, vsw)]}},
            "PublicIpAddress": {"IpAddress": public}, "EipAddress": {"IpAddress": "", "AllocationId": ""},
            "SecurityGroupIds": {"SecurityGroupId": list(group_ids)},
            "OperationLocks": {"LockReason": []}, "ExpiredTime": "2099-12-31T15:59Z",
            "Tags": ecs_tags(tags), "Description": p.get("Description") or "",
            "_region": region, "_since": ctx.now, "_tags": dict(tags), "_user_data": user_data,
            "_auto_release_at": release_at, "_system_disk": {"Category": category, "Size": size,
                                                              "Encrypted": disk.get("Encrypted") == "true"},
        }
        ctx.space.instances[iid] = inst
        did = ctx.state.new_id("d", region)
        ctx.space.disks[did] = {
            "DiskId": did, "Type": "system", "Category": category, "Size": size, "Status": "In_use",
            "Encrypted": disk.get("Encrypted") == "true", "InstanceId": iid, "ZoneId": zone, "RegionId": region,
            "DeleteWithInstance": True, "CreationTime": iso(ctx.now), "Tags": ecs_tags(tags),
            "_region": region, "_tags": dict(tags)}
    price = catalog.price(region, itype) * amount
    return {"InstanceIdSets": {"InstanceIdSet": ids}, "OrderId": "", "TradePrice": round(price, 4)}


def describe_instances(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    wanted_ids = p.json_list("InstanceIds")
    wanted_tags = p.tags()
    status = p.get("Status")
    found = []
    for inst in ctx.space.instances.values():
        if inst["_region"] != region:
            continue
        if wanted_ids is not None and inst["InstanceId"] not in wanted_ids:
            continue
        if not tags_match(inst["_tags"], wanted_tags):
            continue
        if status and inst["Status"] != status:
            continue
        if p.get("VpcId") and inst["VpcAttributes"]["VpcId"] != p.get("VpcId"):
            continue
        found.append(_instance_view(inst))
    if p.get("NextToken") is not None or p.get("MaxResults") is not None or p.get("PageNumber") is None:
        page, token = ctx.page(found)
        return {"Instances": {"Instance": page}, "NextToken": token, "TotalCount": len(found),
                "PageSize": len(page), "PageNumber": 1}
    page, paging = ctx.numbered(found)
    return {"Instances": {"Instance": page}, **paging}


def _mine(ctx: Any, region: str, iid: str) -> dict[str, Any]:
    inst = ctx.space.instances.get(iid)
    if inst is None or inst["_region"] != region:
        raise not_found("InstanceId", iid)
    return inst


def delete_instances(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    ids = ctx.params.indexed("InstanceId")
    if not ids:
        raise ApiError(400, "MissingParameter", "The input parameter \"InstanceId\" that is mandatory for processing "
                       "this request is not supplied.")
    force = ctx.params.bool("Force")
    insts = [_mine(ctx, region, iid) for iid in ids]
    for inst in insts:
        if inst.get("_release_at") is not None:
            continue
        if not force and inst["Status"] != "Stopped":
            raise ApiError(403, "IncorrectInstanceStatus", "The current status of the resource does not support "
                           "this operation.")
    for inst in insts:
        ctx.state.release(ctx.account.account_id, inst["InstanceId"], "Delete")
    return {}


def delete_instance(ctx: Any) -> dict[str, Any]:
    ctx.params.flat["InstanceId.1"] = ctx.params.need("InstanceId")
    ctx.params.flat["RegionId"] = ctx.params.get("RegionId") or \
        (ctx.space.instances.get(ctx.params.need("InstanceId")) or {}).get("_region", "cn-hangzhou")
    return delete_instances(ctx)


def stop_instances(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    mode = ctx.params.get("StoppedMode") or "KeepCharging"
    if mode not in ("StopCharging", "KeepCharging"):
        raise ApiError(400, "InvalidStoppedMode.ValueNotSupported", "The specified StoppedMode is not valid.")
    answers = []
    for iid in ctx.params.indexed("InstanceId"):
        inst = _mine(ctx, region, iid)
        before = inst["Status"]
        if before != "Running" or inst.get("_release_at"):
            raise ApiError(403, "IncorrectInstanceStatus", "The current status of the resource does not support "
                           "this operation.")
        inst.update(Status="Stopping", _since=ctx.now, StoppedMode=mode)
        if mode == "StopCharging":
            inst["PublicIpAddress"] = {"IpAddress": []}  # economical mode gives the address back
        answers.append({"InstanceId": iid, "Code": "200", "Message": "success", "PreviousStatus": before,
                        "CurrentStatus": "Stopping"})
    return {"InstanceResponses": {"InstanceResponse": answers}}


def modify_auto_release_time(ctx: Any) -> dict[str, Any]:
    region = ctx.params.get("RegionId") or "cn-hangzhou"
    inst = _mine(ctx, region, ctx.params.need("InstanceId"))
    raw = ctx.params.get("AutoReleaseTime")
    if not raw:
        inst["_auto_release_at"], inst["AutoReleaseTime"] = None, ""
        return {}
    at = check_release_time(ctx, raw)
    inst["_auto_release_at"], inst["AutoReleaseTime"] = at, iso(at)
    return {}


def describe_user_data(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    inst = _mine(ctx, region, ctx.params.need("InstanceId"))
    return {"InstanceId": inst["InstanceId"], "RegionId": region, "UserData": inst["_user_data"]}


ACTIONS: dict[str, Any] = {
    "RunInstances": run_instances,
    "DescribeInstances": describe_instances,
    "DeleteInstances": delete_instances,
    "DeleteInstance": delete_instance,
    "StopInstances": stop_instances,
    "ModifyInstanceAutoReleaseTime": modify_auto_release_time,
    "DescribeUserData": describe_user_data,
}
ACTIONS.update(ecs_more.ACTIONS)
