"""ECS (2014-05-26) calls around instances: regions, instance types, stock, prices, spot history, images,
key pairs, security groups, tags, disks.

Shapes from the API reference (www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-…):
DescribeAvailableResource answers ``AvailableZones.AvailableZone[].AvailableResources.AvailableResource[]
.SupportedResources.SupportedResource[]`` with ``Status`` Available/SoldOut and ``StatusCategory``
WithStock/WithoutStock; DescribePrice ``PriceInfo.Price{OriginalPrice,DiscountPrice,TradePrice,Currency}``;
DescribeSpotPriceHistory ``SpotPrices.SpotPriceType[]{ZoneId,SpotPrice,OriginPrice,Timestamp}`` + ``Currency``;
ImportKeyPair returns ``KeyPairName``/``KeyPairFingerPrint``; ListTagResources ``TagResources.TagResource[]``;
TagResources and AuthorizeSecurityGroup answer only a RequestId.
ImportKeyPair accepts RSA keys only here (the documented key types are RSA: see RECIPES).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from . import catalog
from .errors import ApiError
from .idempotency import idempotent
from .state import ecs_tags, iso, parse_iso, tags_match


def describe_regions(ctx: Any) -> dict[str, Any]:
    return {"Regions": {"Region": [
        {"RegionId": r, "LocalName": catalog.REGION_NAMES[r], "RegionEndpoint": f"ecs.{r}.aliyuncs.com",
         "Status": "available"} for r in catalog.REGIONS]}}


def describe_instance_types(ctx: Any) -> dict[str, Any]:
    p = ctx.params
    wanted = set(p.indexed("InstanceTypes"))
    families = set(p.indexed("InstanceTypeFamilies")) | ({p.get("InstanceTypeFamily")} - {None})
    min_gpus = p.int("MinimumGPUAmount", 0) or 0
    rows = []
    for t in catalog.GPU_TYPES:
        rows.append({"InstanceTypeId": t.type_id, "InstanceTypeFamily": t.family, "CpuCoreCount": t.vcpus,
                     "MemorySize": t.memory_gib, "GPUAmount": t.gpu_count, "GPUSpec": t.gpu_spec,
                     "GPUMemorySize": t.gpu_memory_gib, "InstanceBandwidthRx": t.bandwidth_kbps,
                     "InstanceBandwidthTx": t.bandwidth_kbps, "InstanceCategory": "GPU-accelerated",
                     "CpuArchitecture": "X86", "EniQuantity": 4, "LocalStorageAmount": 0,
                     "InstanceFamilyLevel": "EnterpriseLevel"})
    for type_id, family, vcpus, mem, _ in catalog.CPU_TYPES:
        rows.append({"InstanceTypeId": type_id, "InstanceTypeFamily": family, "CpuCoreCount": vcpus,
                     "MemorySize": mem, "GPUAmount": 0, "GPUSpec": "", "GPUMemorySize": 0.0,
                     "InstanceCategory": "General-purpose", "CpuArchitecture": "X86", "EniQuantity": 3,
                     "InstanceFamilyLevel": "EnterpriseLevel"})
    rows = [r for r in rows if (not wanted or r["InstanceTypeId"] in wanted)
            and (not families or r["InstanceTypeFamily"] in families) and r["GPUAmount"] >= min_gpus]
    page, token = ctx.page(rows)
    return {"InstanceTypes": {"InstanceType": page}, "NextToken": token}


def _in_stock(ctx: Any, zone: str, itype: str, market: str) -> bool:
    return not any(z in (zone, "*") and t in (itype, "*") and m in (market, "*") for z, t, m in ctx.knobs.no_stock)


def describe_available_resource(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    if (p.get("DestinationResource") or "") not in ("InstanceType", "Zone"):
        raise ApiError(400, "Invalid.Param", "The DestinationResource parameter is not valid.")
    market = "spot" if (p.get("SpotStrategy") or "NoSpot") != "NoSpot" else "ondemand"
    zones = [z for z in catalog.REGIONS[region] if not p.get("ZoneId") or z == p.get("ZoneId")]
    types = [t for t in catalog.offered(region) if not p.get("InstanceType") or t.type_id == p.get("InstanceType")]
    out = []
    for zone in zones:
        supported = []
        for t in types:
            ok = _in_stock(ctx, zone, t.type_id, market)
            supported.append({"Value": t.type_id, "Status": "Available" if ok else "SoldOut",
                              "StatusCategory": "WithStock" if ok else "WithoutStock"})
        out.append({"RegionId": region, "ZoneId": zone, "Status": "Available", "StatusCategory": "WithStock",
                    "AvailableResources": {"AvailableResource": [
                        {"Type": "InstanceType", "SupportedResources": {"SupportedResource": supported}}]}})
    return {"AvailableZones": {"AvailableZone": out}}


def describe_price(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    if (p.get("ResourceType") or "instance") != "instance":
        raise ApiError(400, "InvalidResourceType.ValueNotSupported", "The test cloud prices instances only.")
    itype = p.need("InstanceType")
    if itype not in {t.type_id for t in catalog.offered(region)}:
        raise ApiError(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType does not exist or "
                       "beyond the permitted range.")
    if (p.get("PriceUnit") or "Hour") != "Hour":
        raise ApiError(400, "InvalidPriceUnit.ValueNotSupported", "The test cloud prices by the hour only.")
    spot = (p.get("SpotStrategy") or "NoSpot") != "NoSpot"
    if spot:
        zones = [p.get("ZoneId")] if p.get("ZoneId") else list(catalog.REGIONS[region])
        compute = min(catalog.spot_price(region, z, itype) for z in zones)
    else:
        compute = catalog.price(region, itype)
    disk = p.struct("SystemDisk")
    rate = catalog.ESSD_CNY_PER_GB_HOUR / (catalog.CNY_PER_USD if catalog.currency(region) == "USD" else 1)
    disk_price = round(int(disk.get("Size") or 40) * rate, 4)
    total = round(compute + disk_price, 4)
    details = [{"Resource": "instanceType", "OriginalPrice": compute, "DiscountPrice": 0.0, "TradePrice": compute},
               {"Resource": "systemDisk", "OriginalPrice": disk_price, "DiscountPrice": 0.0, "TradePrice": disk_price}]
    return {"PriceInfo": {"Price": {"OriginalPrice": total, "DiscountPrice": 0.0, "TradePrice": total,
                                    "Currency": catalog.currency(region), "DetailInfos": {"DetailInfo": details}},
                          "Rules": {"Rule": []}}}


def describe_spot_price_history(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    itype = p.need("InstanceType")
    if itype not in {t.type_id for t in catalog.offered(region)}:
        raise ApiError(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType does not exist or "
                       "beyond the permitted range.")
    end = parse_iso(p.get("EndTime") or "") or ctx.now
    start = parse_iso(p.get("StartTime") or "") or end - 3 * 3600
    if end - start > 30 * 86400:
        raise ApiError(400, "InvalidParameter.TimeRange", "The time range cannot exceed 30 days.")
    zones = [p.get("ZoneId")] if p.get("ZoneId") else list(catalog.REGIONS[region])
    points = []
    step = max(3600.0, (end - start) / 24)
    for zone in zones:
        base = catalog.spot_price(region, zone, itype)
        t = start
        n = 0
        while t <= end:
            wobble = 1.0 + 0.01 * ((n % 3) - 1)  # a little movement, deterministic
            points.append({"ZoneId": zone, "InstanceType": itype, "IoOptimized": "optimized",
                           "NetworkType": p.get("NetworkType") or "vpc", "Timestamp": iso(t),
                           "SpotPrice": round(base * wobble, 4), "OriginPrice": catalog.price(region, itype)})
            t += step
            n += 1
    return {"SpotPrices": {"SpotPriceType": points}, "NextOffset": 0, "Currency": catalog.currency(region)}


def describe_images(ctx: Any) -> dict[str, Any]:
    ctx.region()
    p = ctx.params
    import fnmatch

    found = []
    for img in catalog.IMAGES:
        if p.get("ImageId") and img["ImageId"] != p.get("ImageId"):
            continue
        if p.get("ImageFamily") and img["ImageFamily"] != p.get("ImageFamily"):
            continue
        if p.get("ImageName") and not fnmatch.fnmatchcase(img["ImageName"], p.get("ImageName")):
            continue
        if p.get("OSType") and img["OSType"] != p.get("OSType"):
            continue
        if p.get("ImageOwnerAlias") and img["ImageOwnerAlias"] != p.get("ImageOwnerAlias"):
            continue
        found.append({**img, "Status": "Available", "IsSupportCloudinit": True})
    page, paging = ctx.numbered(found)
    return {"Images": {"Image": page}, **paging, "RegionId": p.get("RegionId")}


# -- key pairs ----------------------------------------------------------------------------------
def _fingerprint(body: str) -> str:
    parts = body.split()
    if len(parts) < 2 or parts[0] != "ssh-rsa":
        raise ApiError(400, "InvalidPublicKeyBody.Malformed", "The specified parameter PublicKeyBody is not valid: "
                       "only RSA public keys (ssh-rsa) are accepted.")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except ValueError:
        raise ApiError(400, "InvalidPublicKeyBody.Malformed", "The specified parameter PublicKeyBody is not "
                       "valid.") from None
    return hashlib.md5(blob).hexdigest()  # noqa: S324 - the fingerprint format ECS shows


def import_key_pair(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    name = ctx.params.need("KeyPairName")
    fp = _fingerprint(ctx.params.need("PublicKeyBody"))
    if (region, name) in ctx.space.keys:
        raise ApiError(400, "KeyPair.AlreadyExist", "The key pair already exist.")
    tags = dict(ctx.params.tags())
    ctx.space.keys[(region, name)] = {"KeyPairName": name, "KeyPairFingerPrint": fp, "CreationTime": iso(ctx.now),
                                      "ResourceGroupId": "", "Tags": ecs_tags(tags), "_region": region, "_tags": tags,
                                      "_public": ctx.params.need("PublicKeyBody")}
    return {"KeyPairName": name, "KeyPairFingerPrint": fp, "KeyPairId": f"kp-{fp[:16]}"}


def describe_key_pairs(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    want = ctx.params.tags()
    name = ctx.params.get("KeyPairName")
    rows = [{k: v for k, v in kp.items() if not k.startswith("_")} for (r, n), kp in ctx.space.keys.items()
            if r == region and (not name or n == name) and tags_match(kp["_tags"], want)]
    page, paging = ctx.numbered(rows)
    return {"KeyPairs": {"KeyPair": page}, **paging}


def delete_key_pairs(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    names = ctx.params.json_list("KeyPairNames") or []
    missing = [n for n in names if (region, n) not in ctx.space.keys]
    if missing:
        raise ApiError(404, "InvalidKeyPair.NotFound", f"The specified KeyPair does not exist: {missing[0]}.")
    for n in names:
        del ctx.space.keys[(region, n)]
    return {}


# -- security groups ----------------------------------------------------------------------------
def create_security_group(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    def make() -> dict[str, Any]:
        vpc_id = ctx.params.need("VpcId")
        vpc = ctx.space.vpcs.get(vpc_id)
        if vpc is None or vpc["_region"] != region:
            raise ApiError(404, "InvalidVpcId.NotFound", "The specified VpcId does not exist.")
        gid = ctx.state.new_id("sg", region)
        tags = dict(ctx.params.tags())
        ctx.space.groups[gid] = {"SecurityGroupId": gid, "SecurityGroupName": ctx.params.get("SecurityGroupName") or "",
                                 "Description": ctx.params.get("Description") or "", "VpcId": vpc_id,
                                 "SecurityGroupType": ctx.params.get("SecurityGroupType") or "normal",
                                 "CreationTime": iso(ctx.now), "Tags": ecs_tags(tags), "_region": region,
                                 "_tags": tags, "_rules": []}
        return {"SecurityGroupId": gid}

    return idempotent(ctx, "CreateSecurityGroup", make)


def _group(ctx: Any, region: str) -> dict[str, Any]:
    gid = ctx.params.need("SecurityGroupId")
    group = ctx.space.groups.get(gid)
    if group is None or group["_region"] != region:
        raise ApiError(404, "InvalidSecurityGroupId.NotFound", "The specified SecurityGroupId does not exist.")
    return group


def authorize_security_group(ctx: Any) -> dict[str, Any]:
    """Inbound rules from a CIDR (``SourceCidrIp``) or from the members of a group (``SourceGroupId``, a group
    of the same VPC, the group itself included); protocol ALL takes PortRange -1/-1.  A rule that exists
    already is not added again (the call still succeeds), as the reference says."""
    region = ctx.region()
    group = _group(ctx, region)
    rules = ctx.params.records("Permissions") or [
        {k: v for k, v in ctx.params.flat.items() if k in ("IpProtocol", "PortRange", "SourceCidrIp", "SourceGroupId",
                                                              "Policy", "Priority", "Description")}]
    for rule in rules:
        if not rule.get("IpProtocol") or not rule.get("PortRange"):
            raise ApiError(400, "MissingParameter", "IpProtocol and PortRange are mandatory.")
        proto = rule["IpProtocol"].upper()
        if proto not in ("TCP", "UDP", "ICMP", "GRE", "ALL"):
            raise ApiError(400, "InvalidIpProtocol.Malformed", "The specified parameter IpProtocol is not valid.")
        if proto in ("ALL", "ICMP", "GRE") and rule["PortRange"] != "-1/-1":
            raise ApiError(400, "InvalidPortRange.Malformed", "The specified parameter PortRange is not valid: "
                           "protocol ALL, ICMP and GRE take -1/-1.")
        source_group = rule.get("SourceGroupId", "")
        if bool(source_group) == bool(rule.get("SourceCidrIp")):
            raise ApiError(400, "MissingParameter", "Exactly one of SourceCidrIp and SourceGroupId is mandatory.")
        if source_group:
            other = ctx.space.groups.get(source_group)
            if other is None or other["_region"] != region:
                raise ApiError(404, "InvalidSecurityGroupId.NotFound", "The specified SourceGroupId does not exist.")
            if other["VpcId"] != group["VpcId"]:
                raise ApiError(400, "InvalidSecurityGroupId.NotMatchVpc", "The source security group and the "
                               "security group are not in the same VPC.")
        row = {"Direction": "ingress", "IpProtocol": proto, "PortRange": rule["PortRange"],
               "SourceCidrIp": rule.get("SourceCidrIp", ""), "SourceGroupId": source_group,
               "Policy": rule.get("Policy") or "Accept", "Priority": rule.get("Priority") or "1",
               "Description": rule.get("Description", "")}
        same = ("IpProtocol", "PortRange", "SourceCidrIp", "SourceGroupId", "Policy")
        if not any(all(r[k].lower() == row[k].lower() for k in same) for r in group["_rules"]):
            group["_rules"].append(row)
    return {}


def describe_security_group_attribute(ctx: Any) -> dict[str, Any]:
    group = _group(ctx, ctx.region())
    return {"SecurityGroupId": group["SecurityGroupId"], "VpcId": group["VpcId"],
            "Permissions": {"Permission": list(group["_rules"])}}


def describe_security_groups(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    ids = p.json_list("SecurityGroupIds")
    want = p.tags()
    rows = [{k: v for k, v in g.items() if not k.startswith("_")} for g in ctx.space.groups.values()
            if g["_region"] == region and (ids is None or g["SecurityGroupId"] in ids)
            and (not p.get("VpcId") or g["VpcId"] == p.get("VpcId")) and tags_match(g["_tags"], want)]
    page, token = ctx.page(rows)
    return {"SecurityGroups": {"SecurityGroup": page}, "NextToken": token, "TotalCount": len(rows)}


def delete_security_group(ctx: Any) -> dict[str, Any]:
    group = _group(ctx, ctx.region())
    gid = group["SecurityGroupId"]
    if any(gid in i["SecurityGroupIds"]["SecurityGroupId"] for i in ctx.space.instances.values()):
        raise ApiError(403, "DependencyViolation", "There is still instance(s) in the specified security group.")
    del ctx.space.groups[gid]
    return {}


# -- tags and disks -------------------------------------------------------------------------------
_TAGGED = {"instance": ("instances", "InstanceId"), "securitygroup": ("groups", "SecurityGroupId"),
           "disk": ("disks", "DiskId"), "keypair": ("keys", "KeyPairName")}


def list_tag_resources(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    kind = (p.need("ResourceType") or "").lower()
    if kind not in _TAGGED:
        raise ApiError(400, "InvalidResourceType.NotSupported", f"The resource type {kind} is not supported here.")
    attr, id_field = _TAGGED[kind]
    ids = set(p.indexed("ResourceId"))
    want = p.tags()
    if not ids and not want:
        raise ApiError(400, "MissingParameter", "Either ResourceId.N or Tag.N is mandatory.")
    rows = []
    for res in getattr(ctx.space, attr).values():
        if res["_region"] != region or (ids and res[id_field] not in ids) or not tags_match(res["_tags"], want):
            continue
        rows += [{"ResourceId": res[id_field], "ResourceType": kind, "TagKey": k, "TagValue": v}
                 for k, v in res["_tags"].items()]
    page, token = ctx.page(rows)
    return {"TagResources": {"TagResource": page}, "NextToken": token}


def tag_resources(ctx: Any) -> dict[str, Any]:
    """TagResources: ``ResourceType``, ``ResourceId.N`` (1-50), ``Tag.N.Key``/``Value`` (1-20); an existing key
    is overwritten; every id must exist (else nothing is tagged)."""
    region = ctx.region()
    p = ctx.params
    kind = (p.need("ResourceType") or "").lower()
    if kind not in _TAGGED:
        raise ApiError(400, "InvalidResourceType.NotSupported", f"The resource type {kind} is not supported here.")
    attr, id_field = _TAGGED[kind]
    ids = p.indexed("ResourceId")
    tags = p.tags()
    if not ids or not tags:
        raise ApiError(400, "MissingParameter", "ResourceId.N and Tag.N are mandatory.")
    if len(ids) > 50 or len(tags) > 20:
        raise ApiError(400, "InvalidParameter.Count", "At most 50 ResourceId.N and 20 Tag.N are allowed.")
    found = {r[id_field]: r for r in getattr(ctx.space, attr).values() if r["_region"] == region}
    missing = [i for i in ids if i not in found]
    if missing:
        raise ApiError(404, "InvalidResourceId.NotFound", f"The specified ResourceId does not exist: {missing[0]}.")
    for rid in ids:
        res = found[rid]
        res["_tags"].update(tags)
        res["Tags"] = ecs_tags(res["_tags"])
    return {}


def describe_disks(ctx: Any) -> dict[str, Any]:
    region = ctx.region()
    p = ctx.params
    ids = p.json_list("DiskIds")
    want = p.tags()
    rows = [{k: v for k, v in d.items() if not k.startswith("_")} for d in ctx.space.disks.values()
            if d["_region"] == region and (ids is None or d["DiskId"] in ids) and tags_match(d["_tags"], want)
            and (not p.get("Status") or d["Status"] == p.get("Status"))
            and (not p.get("InstanceId") or d["InstanceId"] == p.get("InstanceId"))]
    page, token = ctx.page(rows)
    return {"Disks": {"Disk": page}, "NextToken": token, "TotalCount": len(rows)}


def delete_disk(ctx: Any) -> dict[str, Any]:
    did = ctx.params.need("DiskId")
    disk = ctx.space.disks.get(did)
    if disk is None:
        raise ApiError(404, "InvalidDiskId.NotFound", "The specified DiskId does not exist.")
    if disk["Status"] != "Available":
        raise ApiError(403, "IncorrectDiskStatus", "The current disk status does not support this operation.")
    del ctx.space.disks[did]
    return {}


ACTIONS: dict[str, Any] = {
    "DescribeRegions": describe_regions,
    "DescribeInstanceTypes": describe_instance_types,
    "DescribeAvailableResource": describe_available_resource,
    "DescribePrice": describe_price,
    "DescribeSpotPriceHistory": describe_spot_price_history,
    "DescribeImages": describe_images,
    "ImportKeyPair": import_key_pair,
    "DescribeKeyPairs": describe_key_pairs,
    "DeleteKeyPairs": delete_key_pairs,
    "CreateSecurityGroup": create_security_group,
    "AuthorizeSecurityGroup": authorize_security_group,
    "DescribeSecurityGroupAttribute": describe_security_group_attribute,
    "DescribeSecurityGroups": describe_security_groups,
    "DeleteSecurityGroup": delete_security_group,
    "ListTagResources": list_tag_resources,
    "TagResources": tag_resources,
    "DescribeDisks": describe_disks,
    "DeleteDisk": delete_disk,
}
