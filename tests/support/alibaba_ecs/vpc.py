"""VPC (2016-04-28) calls: VPCs, vSwitches, Elastic IP addresses, tags.

Shapes and error codes from the API reference (www.alibabacloud.com/help/en/vpc/developer-reference/
api-vpc-2016-04-28-<action>): tags are ``Tags.Tag[]{Key,Value}`` (not ECS's TagKey/TagValue).

Asynchronous calls, as their reference pages say ("an asynchronous operation … runs the task in the
background"): CreateVpc and CreateVSwitch answer at once with an id whose resource is ``Pending``, then
``Available`` (``Knobs.vpc_pending_s`` / ``vswitch_pending_s``); only an Available VPC takes vSwitches
(IncorrectVpcStatus) and only an Available vSwitch takes instances (RunInstances: IncorrectVSwitchStatus,
see :mod:`.ecs`).  DeleteVSwitch deletes only an Available vSwitch (IncorrectVSwitchStatus 400), not while
another vSwitch of its VPC is being created or deleted (OperationDenied.OtherSubnetProcessing 400), and the
vSwitch shows ``Pending`` until it is gone (``vswitch_delete_s``); DeleteVpc deletes only an Available VPC
(IncorrectVpcStatus), which shows ``Deleting`` until gone (``vpc_delete_s``).
DeleteVpc refuses with DependencyViolation.VSwitch / .SecurityGroup / .Instance ("Specified object has
dependent resources", help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-deletevpc error table);
DeleteVSwitch with DependencyViolation.Instance while an instance (even one being released) uses it.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any

from .errors import ApiError
from .idempotency import idempotent
from .state import CloudState, iso, tags_match, vpc_tags


def _view(res: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in res.items() if not k.startswith("_")}


VSWITCH_STATUS = ApiError(400, "IncorrectVSwitchStatus", "The current status of virtual switch does not support this "
                          "operation.")
VPC_STATUS = ApiError(400, "IncorrectVpcStatus", "Current VPC status does not support this operation.")


def create_vpc(ctx: Any) -> dict[str, Any]:
    region = ctx.region()

    def make() -> dict[str, Any]:
        cidr = ctx.params.get("CidrBlock") or "172.16.0.0/12"
        try:
            net = ipaddress.ip_network(cidr)
        except ValueError:
            raise ApiError(400, "InvalidCidrBlock.Malformed", "Specified CIDR block is not valid.") from None
        vid = ctx.state.new_id("vpc", region)
        tags = dict(ctx.params.tags())
        ctx.space.vpcs[vid] = {"VpcId": vid, "RegionId": region, "VpcName": ctx.params.get("VpcName") or "",
                               "Description": ctx.params.get("Description") or "", "CidrBlock": str(net),
                               "Status": "Pending", "IsDefault": False, "CreationTime": iso(ctx.now),
                               "VRouterId": ctx.state.new_id("vrt", region), "VSwitchIds": {"VSwitchId": []},
                               "Tags": vpc_tags(tags), "_region": region, "_tags": tags, "_since": ctx.now}
        return {"VpcId": vid, "VRouterId": ctx.space.vpcs[vid]["VRouterId"],
                "RouteTableId": ctx.state.new_id("vtb", region), "ResourceGroupId": "rg-default"}

    return idempotent(ctx, "CreateVpc", make)


def describe_vpcs(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    ids = set((ctx.params.get("VpcId") or "").split(",")) - {""}
    want = ctx.params.tags()
    rows = [_view(v) for v in ctx.space.vpcs.values()
            if v["_region"] == region and (not ids or v["VpcId"] in ids) and tags_match(v["_tags"], want)]
    page, paging = ctx.numbered(rows)
    return {"Vpcs": {"Vpc": page}, **paging}


def create_vswitch(ctx: Any) -> dict[str, Any]:
    region = ctx.region()

    def make() -> dict[str, Any]:
        vpc = ctx.space.vpcs.get(ctx.params.need("VpcId"))
        if vpc is None or vpc["_region"] != region:
            raise ApiError(404, "InvalidVpcId.NotFound", "Specified VPC does not exist.")
        if vpc["Status"] != "Available":
            raise VPC_STATUS
        zone = ctx.params.need("ZoneId")
        from .catalog import REGIONS

        if zone not in REGIONS[region]:
            raise ApiError(400, "InvalidZoneId.NotFound", "The specified zone does not exist.")
        try:
            net = ipaddress.ip_network(ctx.params.need("CidrBlock"))
        except ValueError:
            raise ApiError(400, "InvalidCidrBlock.Malformed", "Specified CIDR block is not valid.") from None
        if not net.subnet_of(ipaddress.ip_network(vpc["CidrBlock"])):
            raise ApiError(400, "InvalidCidrBlock.Mismatch", "The vSwitch CIDR block is not inside the VPC's.")
        wid = ctx.state.new_id("vsw", region)
        tags = dict(ctx.params.tags())
        ctx.space.vswitches[wid] = {"VSwitchId": wid, "VpcId": vpc["VpcId"], "ZoneId": zone, "CidrBlock": str(net),
                                    "Status": "Pending", "VSwitchName": ctx.params.get("VSwitchName") or "",
                                    "AvailableIpAddressCount": net.num_addresses - 4, "CreationTime": iso(ctx.now),
                                    "Tags": vpc_tags(tags), "_region": region, "_tags": tags, "_since": ctx.now}
        vpc["VSwitchIds"]["VSwitchId"].append(wid)
        return {"VSwitchId": wid}

    return idempotent(ctx, "CreateVSwitch", make)


def describe_vswitches(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    want = p.tags()
    rows = [_view(w) for w in ctx.space.vswitches.values()
            if w["_region"] == region and (not p.get("VpcId") or w["VpcId"] == p.get("VpcId"))
            and (not p.get("VSwitchId") or w["VSwitchId"] == p.get("VSwitchId"))
            and (not p.get("ZoneId") or w["ZoneId"] == p.get("ZoneId")) and tags_match(w["_tags"], want)]
    page, paging = ctx.numbered(rows)
    return {"VSwitches": {"VSwitch": page}, **paging}


def delete_vswitch(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    wid = ctx.params.need("VSwitchId")
    vsw = ctx.space.vswitches.get(wid)
    if vsw is None or vsw["_region"] != region:
        raise ApiError(404, "InvalidVSwitchId.NotFound", "Specified virtual switch does not exist.")
    if vsw["Status"] != "Available":  # being created or being deleted
        raise VSWITCH_STATUS
    if any(w["Status"] == "Pending" for w in ctx.space.vswitches.values() if w["VpcId"] == vsw["VpcId"]):
        raise ApiError(400, "OperationDenied.OtherSubnetProcessing", "other subnet is processing.")
    if any(i["VpcAttributes"]["VSwitchId"] == wid for i in ctx.space.instances.values()):
        raise ApiError(400, "DependencyViolation.Instance", "Specified object has dependent resources.")
    if ctx.knobs.vswitch_delete_s > 0:
        vsw["Status"], vsw["_gone_at"] = "Pending", ctx.now + ctx.knobs.vswitch_delete_s
        return {}
    del ctx.space.vswitches[wid]
    vpc = ctx.space.vpcs.get(vsw["VpcId"])
    if vpc is not None:
        vpc["VSwitchIds"]["VSwitchId"].remove(wid)
    return {}


def delete_vpc(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    vid = ctx.params.need("VpcId")
    vpc = ctx.space.vpcs.get(vid)
    if vpc is None or vpc["_region"] != region:
        raise ApiError(404, "InvalidVpcId.NotFound", "Specified VPC does not exist.")
    if vpc["Status"] != "Available":  # being created or being deleted
        raise VPC_STATUS
    if any(w["VpcId"] == vid for w in ctx.space.vswitches.values()):
        raise ApiError(400, "DependencyViolation.VSwitch", "Specified object has dependent resources.")
    if any(g["VpcId"] == vid for g in ctx.space.groups.values()):
        raise ApiError(400, "DependencyViolation.SecurityGroup", "Specified object has dependent resources "
                       "SecurityGroup.")
    if any(i["VpcAttributes"]["VpcId"] == vid for i in ctx.space.instances.values()):
        raise ApiError(400, "DependencyViolation.Instance", "Specified object has dependent resources.")
    if ctx.knobs.vpc_delete_s > 0:
        vpc["Status"], vpc["_gone_at"] = "Deleting", ctx.now + ctx.knobs.vpc_delete_s
        return {}
    del ctx.space.vpcs[vid]
    return {}


# -- Elastic IP addresses ----------------------------------------------------------------------
def allocate_eip(state: CloudState, account_id: str, region: str, tags: dict[str, str]) -> str:
    with state.lock:
        aid = state.new_id("eip", region)
        state.spaces[account_id].eips[aid] = {
            "AllocationId": aid, "IpAddress": f"203.0.113.{secrets.randbelow(250) + 1}",
            "Status": "Available", "InstanceId": "", "InstanceType": "", "RegionId": region, "Bandwidth": "5",
            "InternetChargeType": "PayByTraffic", "ChargeType": "PostPaid", "AllocationTime": iso(state.now(account_id)),
            "Tags": vpc_tags(tags), "_region": region, "_tags": dict(tags)}
        return aid


def describe_eip_addresses(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    want = ctx.params.tags()
    aid = ctx.params.get("AllocationId")
    rows = [_view(e) for e in ctx.space.eips.values()
            if e["_region"] == region and (not aid or e["AllocationId"] == aid) and tags_match(e["_tags"], want)]
    page, paging = ctx.numbered(rows)
    return {"EipAddresses": {"EipAddress": page}, **paging}


def _eip(ctx: Any) -> dict[str, Any]:
    aid = ctx.params.need("AllocationId")
    eip = ctx.space.eips.get(aid)
    if eip is None:
        raise ApiError(404, "InvalidAllocationId.NotFound", "Specified allocation ID is not found.")
    return eip


def unassociate_eip_address(ctx: Any) -> dict[str, Any]:
    eip = _eip(ctx)
    eip["InstanceId"], eip["Status"] = "", "Available"
    return {}


def release_eip_address(ctx: Any) -> dict[str, Any]:
    eip = _eip(ctx)
    if eip["Status"] != "Available":
        raise ApiError(400, "IncorrectEipStatus", "The current status of the resource does not support this "
                       "operation.")
    del ctx.space.eips[eip["AllocationId"]]
    return {}


_TAGGED = {"VPC": ("vpcs", "VpcId"), "VSWITCH": ("vswitches", "VSwitchId"), "EIP": ("eips", "AllocationId")}


def list_tag_resources(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    kind = ctx.params.need("ResourceType").upper()
    if kind not in _TAGGED:
        raise ApiError(400, "InvalidResourceType.NotSupported", f"The resource type {kind} is not supported here.")
    attr, id_field = _TAGGED[kind]
    ids = set(ctx.params.indexed("ResourceId"))
    want = ctx.params.tags()
    rows = []
    for res in getattr(ctx.space, attr).values():
        if res["_region"] != region or (ids and res[id_field] not in ids) or not tags_match(res["_tags"], want):
            continue
        rows += [{"ResourceId": res[id_field], "ResourceType": kind, "TagKey": k, "TagValue": v}
                 for k, v in res["_tags"].items()]
    page, token = ctx.page(rows)
    return {"TagResources": {"TagResource": page}, "NextToken": token}


ACTIONS: dict[str, Any] = {
    "CreateVpc": create_vpc,
    "DescribeVpcs": describe_vpcs,
    "DeleteVpc": delete_vpc,
    "CreateVSwitch": create_vswitch,
    "DescribeVSwitches": describe_vswitches,
    "DeleteVSwitch": delete_vswitch,
    "DescribeEipAddresses": describe_eip_addresses,
    "UnassociateEipAddress": unassociate_eip_address,
    "ReleaseEipAddress": release_eip_address,
    "ListTagResources": list_tag_resources,
}
