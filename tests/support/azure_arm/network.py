"""Microsoft.Network in the ARM test server: NSGs, virtual networks, public IPs, NICs.

Each ``put_*`` validates the body the way ARM does for the fields the plugin
sends (a typo in a field name shows up as a 400, not as silent success), stores
the resource and answers 201/200 with an Azure-AsyncOperation header; the
resource is "Updating" until its operation has been polled to completion.
Deletes refuse resources still in use, as Azure does.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .state import ArmError, ArmState, Ctx, Reply, public

NS = "Microsoft.Network"
PROTOCOLS = {"tcp", "udp", "icmp", "*", "esp", "ah"}


def _bad(message: str, code: str = "InvalidRequestFormat") -> ArmError:
    return ArmError(400, code, message)


def _props(body: dict[str, Any]) -> dict[str, Any]:
    props = body.get("properties")
    if not isinstance(props, dict):
        raise _bad("Cannot parse the request: 'properties' is missing or not an object.")
    return props


def _store_with_lro(state: ArmState, ctx: Ctx, resource: dict[str, Any], existed: bool,
                    location: str, done=lambda: None) -> Reply:
    resource["properties"]["provisioningState"] = "Updating"
    state.store(resource)

    def finish() -> None:
        resource["properties"]["provisioningState"] = "Succeeded"
        done()

    def failed(exc: ArmError) -> None:
        resource["properties"]["provisioningState"] = "Failed"

    op = state.new_operation(ctx, finish, failed)
    return Reply(200 if existed else 201, public(resource), state.async_headers(ctx, NS, location, op))


def _base(rid: str, name: str, rtype: str, body: dict[str, Any]) -> dict[str, Any]:
    if not body.get("location"):
        raise _bad("Resource has no location.", "LocationRequired")
    return {"id": rid, "name": name, "type": rtype, "location": body["location"], "etag": 'W/"1"',
            "tags": dict(body.get("tags") or {})}


def put_nsg(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    props = _props(body)
    rules = []
    for rule in props.get("securityRules") or []:
        rp = rule.get("properties") or {}
        rname = rule.get("name")
        if not rname:
            raise _bad("Security rule has no name.")
        if str(rp.get("protocol", "")).lower() not in PROTOCOLS:
            raise _bad(f"Security rule {rname} has invalid Protocol {rp.get('protocol')!r}.", "SecurityRuleInvalidProtocol")
        if rp.get("access") not in ("Allow", "Deny") or rp.get("direction") not in ("Inbound", "Outbound"):
            raise _bad(f"Security rule {rname} needs access Allow/Deny and direction Inbound/Outbound.")
        if not isinstance(rp.get("priority"), int) or not 100 <= rp["priority"] <= 4096:
            raise _bad(f"Security rule {rname} has invalid Priority. Value provided: {rp.get('priority')}. "
                       "Allowed range 100-4096.", "SecurityRuleInvalidPriority")
        sources = rp.get("sourceAddressPrefixes") or ([rp["sourceAddressPrefix"]] if rp.get("sourceAddressPrefix") else [])
        if not sources:
            raise _bad(f"Security rule {rname} has no source address prefix.", "SecurityRuleInvalidAddressPrefix")
        for prefix in sources:
            if prefix not in ("*", "Internet", "VirtualNetwork", "AzureLoadBalancer"):
                try:
                    ipaddress.ip_network(prefix, strict=False)
                except ValueError:
                    raise _bad(f"Security rule {rname} has invalid Address prefix {prefix}.",
                               "SecurityRuleInvalidAddressPrefix") from None
        if not (rp.get("destinationPortRange") or rp.get("destinationPortRanges")):
            raise _bad(f"Security rule {rname} has no destination port range.", "SecurityRuleInvalidPortRange")
        rules.append({"id": f"{rid}/securityRules/{rname}", "name": rname,
                      "type": "Microsoft.Network/networkSecurityGroups/securityRules",
                      "properties": {**rp, "provisioningState": "Succeeded"}})
    existing = state.find(rid)
    res = _base(rid, name, "Microsoft.Network/networkSecurityGroups", body)
    res["properties"] = {"securityRules": rules, "resourceGuid": "00000000-0000-0000-0000-000000000001",
                         "networkInterfaces": (existing or {}).get("properties", {}).get("networkInterfaces", [])}
    return _store_with_lro(state, ctx, res, existing is not None, body["location"])


def put_vnet(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    props = _props(body)
    spaces = ((props.get("addressSpace") or {}).get("addressPrefixes")) or []
    if not spaces:
        raise _bad("Virtual network has no address space.", "InvalidAddressSpace")
    nets = [ipaddress.ip_network(s) for s in spaces]
    subnets = []
    for sn in props.get("subnets") or []:
        sp = sn.get("properties") or {}
        prefix = sp.get("addressPrefix")
        if not sn.get("name") or not prefix:
            raise _bad("Subnet needs a name and properties.addressPrefix.")
        net = ipaddress.ip_network(prefix)
        if not any(net.subnet_of(n) for n in nets):
            raise _bad(f"Subnet '{sn['name']}' is not valid because its IP address range is outside the IP "
                       "address range of virtual network.", "NetcfgSubnetRangeOutsideVnet")
        subnets.append({"id": f"{rid}/subnets/{sn['name']}", "name": sn["name"],
                        "type": "Microsoft.Network/virtualNetworks/subnets",
                        "properties": {**sp, "provisioningState": "Succeeded"}})
    existing = state.find(rid)
    if existing:
        used = {ip["subnet"] for ip in existing.get("_used", [])}
        missing = used - {s["id"].lower() for s in subnets}
        if missing:
            raise _bad("Subnet is in use and cannot be deleted.", "InUseSubnetCannotBeDeleted")
    res = _base(rid, name, "Microsoft.Network/virtualNetworks", body)
    res["properties"] = {"addressSpace": {"addressPrefixes": spaces}, "subnets": subnets}
    res["_used"] = (existing or {}).get("_used", [])
    return _store_with_lro(state, ctx, res, existing is not None, body["location"])


def put_public_ip(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    props = body.get("properties") or {}
    sku = (body.get("sku") or {}).get("name", "Basic")
    method = props.get("publicIPAllocationMethod", "Dynamic")
    if sku == "Standard" and method != "Static":
        raise _bad("Standard sku publicIp /subscriptions/.../publicIPAddresses/" + name + " must have "
                   "AllocationMethod set to Static.", "StandardSkuPublicIPAddressesMustBeStatic")
    existing = state.find(rid)
    res = _base(rid, name, "Microsoft.Network/publicIPAddresses", body)
    res["sku"] = {"name": sku, "tier": (body.get("sku") or {}).get("tier", "Regional")}
    if body.get("zones"):
        res["zones"] = list(body["zones"])
    res["properties"] = {"publicIPAllocationMethod": method,
                         "publicIPAddressVersion": props.get("publicIPAddressVersion", "IPv4"),
                         "idleTimeoutInMinutes": 4,
                         "ipAddress": (existing or {}).get("properties", {}).get("ipAddress") or state.next_ip()}
    if existing and existing["properties"].get("ipConfiguration"):
        res["properties"]["ipConfiguration"] = existing["properties"]["ipConfiguration"]
    return _store_with_lro(state, ctx, res, existing is not None, body["location"])


def _private_ip(state: ArmState, subnet: dict[str, Any], nic_id: str, index: int) -> str:
    """The NIC's address in ``subnet``: kept on a re-PUT, else the lowest one no other NIC holds
    (Azure keeps the first four of a subnet and the last for itself)."""
    import ipaddress

    taken: dict[str, str] = {}
    for r in state.resources.values():
        if r.get("type") != "Microsoft.Network/networkInterfaces":
            continue
        for cfg in r["properties"].get("ipConfigurations", []):
            if cfg["properties"]["subnet"]["id"].lower() == subnet["id"].lower():
                taken[cfg["properties"]["privateIPAddress"]] = cfg["id"].lower()
    mine = [address for address, cfg_id in taken.items() if cfg_id.startswith(f"{nic_id}/ipConfigurations/".lower())]
    if index < len(mine):
        return mine[index]
    net = ipaddress.ip_network(subnet["properties"].get("addressPrefix", "10.0.0.0/24"), strict=False)
    for host in list(net.hosts())[3:-1]:
        if str(host) not in taken:
            return str(host)
    raise _bad(f"Subnet {subnet['id']} has no free address.", "SubnetIsFull")


def _subnet(state: ArmState, subnet_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    vnet_id = subnet_id.rsplit("/subnets/", 1)[0]
    vnet = state.find(vnet_id)
    for sn in (vnet or {}).get("properties", {}).get("subnets", []):
        if sn["id"].lower() == subnet_id.lower():
            return vnet, sn
    raise _bad(f"Resource {subnet_id} referenced by resource was not found.", "InvalidResourceReference")


def put_nic(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any], require) -> Reply:
    props = _props(body)
    configs = props.get("ipConfigurations") or []
    if not configs:
        raise _bad("Network interface must have at least one IP configuration.", "NetworkInterfaceMustHaveIpConfiguration")
    existing = state.find(rid)
    out_configs = []
    for n, cfg in enumerate(configs):
        cp = cfg.get("properties") or {}
        sub_id = (cp.get("subnet") or {}).get("id")
        if not sub_id:
            raise _bad("IP configuration has no subnet.", "InvalidRequestFormat")
        vnet, subnet = _subnet(state, sub_id)
        require("Microsoft.Network/virtualNetworks/subnets/join/action", sub_id)
        if vnet["location"] != body["location"]:
            raise _bad(f"Subnet {sub_id} is in location {vnet['location']}; the NIC is in {body['location']}.",
                       "InvalidResourceReference")
        cfg_id = f"{rid}/ipConfigurations/{cfg.get('name') or f'ipconfig{n + 1}'}"
        out = {"id": cfg_id, "name": cfg.get("name") or f"ipconfig{n + 1}",
               "type": "Microsoft.Network/networkInterfaces/ipConfigurations",
               "properties": {"subnet": {"id": sub_id}, "privateIPAddress": _private_ip(state, subnet, rid, n),
                              "privateIPAllocationMethod": cp.get("privateIPAllocationMethod", "Dynamic"),
                              "primary": n == 0, "provisioningState": "Succeeded"}}
        pip_ref = cp.get("publicIPAddress")
        if pip_ref:
            pip = state.find(pip_ref.get("id", ""))
            if pip is None:
                raise _bad(f"Resource {pip_ref.get('id')} referenced by resource {rid} was not found.",
                           "InvalidResourceReference")
            require("Microsoft.Network/publicIPAddresses/join/action", pip["id"])
            owner = pip["properties"].get("ipConfiguration")
            if owner and owner["id"].lower() != cfg_id.lower():
                raise _bad(f"Resource {pip['id']} is already in use by {owner['id']}.", "PublicIPAddressInUse")
            delete_option = (pip_ref.get("properties") or {}).get("deleteOption", "Detach")
            if delete_option not in ("Delete", "Detach"):
                raise _bad(f"Invalid deleteOption {delete_option!r}.", "InvalidParameter")
            out["properties"]["publicIPAddress"] = {"id": pip["id"], "properties": {"deleteOption": delete_option}}
            pip["properties"]["ipConfiguration"] = {"id": cfg_id}
        out_configs.append(out)
        vnet.setdefault("_used", []).append({"subnet": sub_id.lower(), "nic": rid.lower()})
    res = _base(rid, name, "Microsoft.Network/networkInterfaces", body)
    res["properties"] = {"ipConfigurations": out_configs,
                         "enableAcceleratedNetworking": bool(props.get("enableAcceleratedNetworking")),
                         "macAddress": "00-0D-3A-00-00-01", "primary": True,
                         "virtualMachine": (existing or {}).get("properties", {}).get("virtualMachine")}
    nsg_ref = props.get("networkSecurityGroup")
    if nsg_ref:
        nsg = state.find(nsg_ref.get("id", ""))
        if nsg is None:
            raise _bad(f"Resource {nsg_ref.get('id')} referenced by resource {rid} was not found.",
                       "InvalidResourceReference")
        require("Microsoft.Network/networkSecurityGroups/join/action", nsg["id"])
        res["properties"]["networkSecurityGroup"] = {"id": nsg["id"]}
        nics = nsg["properties"].setdefault("networkInterfaces", [])
        if not any(x["id"].lower() == rid.lower() for x in nics):
            nics.append({"id": rid})
    return _store_with_lro(state, ctx, res, existing is not None, body["location"])


def release_nic(state: ArmState, nic: dict[str, Any], delete_ips: bool) -> None:
    """Forget a deleted NIC everywhere it is referenced; delete its public IPs whose deleteOption says so."""
    rid = nic["id"].lower()
    for cfg in nic["properties"]["ipConfigurations"]:
        ref = cfg["properties"].get("publicIPAddress")
        pip = state.find(ref["id"]) if ref else None
        if pip is not None:
            if delete_ips and ref["properties"].get("deleteOption") == "Delete":
                state.remove(pip["id"])
            else:
                pip["properties"].pop("ipConfiguration", None)
        vnet = state.find(cfg["properties"]["subnet"]["id"].rsplit("/subnets/", 1)[0])
        if vnet is not None:
            vnet["_used"] = [u for u in vnet.get("_used", []) if u["nic"] != rid]
    nsg_ref = nic["properties"].get("networkSecurityGroup")
    nsg = state.find(nsg_ref["id"]) if nsg_ref else None
    if nsg is not None:
        nsg["properties"]["networkInterfaces"] = [x for x in nsg["properties"].get("networkInterfaces", [])
                                                  if x["id"].lower() != rid]
    state.remove(nic["id"])


def delete(state: ArmState, ctx: Ctx, res: dict[str, Any]) -> Reply:
    """DELETE of a network resource: refused while in use, else 202 + async operation."""
    t = res["type"]
    p = res["properties"]
    if t == "Microsoft.Network/networkInterfaces" and p.get("virtualMachine"):
        raise _bad(f"Network Interface {res['id']} is used by existing resource {p['virtualMachine']['id']}.",
                   "NicInUse")
    if t == "Microsoft.Network/publicIPAddresses" and p.get("ipConfiguration"):
        raise _bad(f"Public IP address {res['id']} can not be deleted since it is still allocated to resource "
                   f"{p['ipConfiguration']['id']}.", "PublicIPAddressCannotBeDeleted")
    if t == "Microsoft.Network/virtualNetworks" and res.get("_used"):
        raise _bad("Subnet default is in use and cannot be deleted.", "InUseSubnetCannotBeDeleted")
    if t == "Microsoft.Network/networkSecurityGroups" and p.get("networkInterfaces"):
        raise _bad(f"Network security group {res['id']} cannot be deleted because it is in use.",
                   "InUseNetworkSecurityGroupCannotBeDeleted")

    def done() -> None:
        if t == "Microsoft.Network/networkInterfaces":
            release_nic(state, res, delete_ips=False)
        else:
            state.remove(res["id"])

    op = state.new_operation(ctx, done)
    return Reply(202, None, state.async_headers(ctx, NS, res["location"], op, location_header=True))
