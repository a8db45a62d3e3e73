"""Routing of ARM paths to the handlers in :mod:`.state`, :mod:`.compute`, :mod:`.network`,
:mod:`.extensions` and :mod:`.costs`; list paging (``nextLink``) and ``$filter`` on listings.

Called by :meth:`.server.ArmServer.handle` with the state lock held.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Any

from . import authz, compute, costs, extensions, network, odata, storage
from .state import ArmError, Ctx, Reply, public

if TYPE_CHECKING:
    from .server import ArmServer

PAGE_SIZE = 10  # ARM list pages (small, so paging is exercised)


def _page(server: ArmServer, ctx: Ctx, segs: list[str], query: dict[str, str], items: list[dict[str, Any]]) -> Reply:
    skip = int(query.get("$skiptoken", "0") or 0)
    out: dict[str, Any] = {"value": items[skip:skip + PAGE_SIZE]}
    if skip + PAGE_SIZE < len(items):
        q = dict(query, **{"$skiptoken": str(skip + PAGE_SIZE)})
        out["nextLink"] = f"{server.url}/{'/'.join(urllib.parse.quote(s) for s in segs)}?" \
                          f"{urllib.parse.urlencode(q, quote_via=urllib.parse.quote)}"
    return Reply(200, out)


#: types a resource listing never shows (extension resources, authorization objects)
_EXTENSIONS = {extensions.ROLE_TYPE, authz.ROLE_DEF_TYPE}
_TAG_FILTER = re.compile(r"^\s*tagName eq '([^']*)'(?:\s+and\s+tagValue eq '([^']*)')?\s*$", re.IGNORECASE)


def _filtered(items: list[dict[str, Any]], flt: str | None) -> list[dict[str, Any]]:
    if not flt:
        return items
    m = _TAG_FILTER.match(flt)
    if m:
        name, value = m.group(1), m.group(2)
        return [i for i in items if any(k.lower() == name.lower() and (value is None or v == value)
                                        for k, v in (i.get("tags") or {}).items())]
    try:
        pred = odata.parse(flt, ignore_case=True)
    except ValueError as exc:
        raise ArmError(400, "InvalidFilterInQueryString", f"Invalid $filter '{flt}': {exc}") from None
    return [i for i in items if pred(i)]


def _listed(r: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "name", "type", "location", "tags", "managedBy", "sku", "kind", "zones", "identity")
    return {k: r[k] for k in keys if r.get(k) is not None}


def route(server: ArmServer, ctx: Ctx, method: str, segs: list[str], query: dict[str, str],
           data: dict[str, Any], require) -> Reply:
    st = server.state
    low = [s.lower() for s in segs]
    if low == ["subscriptions"]:
        return Reply(200, {"value": [st.subscriptions[s] for s in ctx.client.subscriptions]})
    sub = segs[1]
    if len(low) == 2:
        return Reply(200, st.subscriptions[sub])
    rest, rlow = segs[2:], low[2:]
    if rlow == ["resourcegroups"]:
        return _page(server, ctx, segs, query, _filtered(st.list_groups(sub), query.get("$filter")))
    if rlow[0] == "resourcegroups" and len(rest) == 2:
        if method == "GET":
            return Reply(200, st.group(sub, rest[1]))
        if method == "HEAD":
            st.group(sub, rest[1])
            return Reply(204)
        if method == "PUT":
            return st.put_group(ctx, rest[1], data)
        if method == "PATCH":
            g = st.group(sub, rest[1])
            if "tags" in data:
                g["tags"] = dict(data["tags"] or {})
            return Reply(200, g)
        if method == "DELETE":
            return st.delete_group(ctx, rest[1])
    if rlow == ["resources"]:
        items = [_listed(r) for r in st.in_subscription(sub) if r["type"] not in _EXTENSIONS]
        return _page(server, ctx, segs, query, _filtered(items, query.get("$filter")))
    if rlow[0] == "resourcegroups" and rlow[2:] == ["resources"]:
        st.group(sub, rest[1])
        items = [_listed(r) for r in st.in_group(sub, rest[1]) if r["type"] not in _EXTENSIONS]
        return _page(server, ctx, segs, query, _filtered(items, query.get("$filter")))
    if rlow[0] == "operationresults" and len(rest) == 2:
        op = st.poll(rest[1])
        if op.status == "InProgress":
            return Reply(202, None, {"Location": f"{server.url}/{'/'.join(segs)}?api-version={ctx.api_version}",
                                     "Retry-After": "0"})
        if op.status == "Failed":
            return Reply(409, {"error": {"code": op.error.code, "message": op.error.message}})
        return Reply(200)
    if rlow[0] == "providers":
        return _subscription_provider(server, ctx, method, segs, rest, rlow, query, data)
    if rlow[0] == "resourcegroups" and len(rest) == 5 and rlow[2] == "providers" and method == "GET":
        st.group(sub, rest[1])  # a listing of one type in one group (virtualMachines.list(group))
        kind = f"{rlow[3]}/{rlow[4]}"
        items = [compute.vm_json(r, False) if kind == "microsoft.compute/virtualmachines" else public(r)
                 for r in st.in_group(sub, rest[1]) if r["type"].lower() == kind]
        return _page(server, ctx, segs, query, items)
    if rlow[0] == "resourcegroups" and len(rest) >= 6 and rlow[2] == "providers":
        return _resource(server, ctx, method, segs, rest, rlow, data, require)
    raise ArmError(404, "InvalidResourceType", f"Unknown path /{'/'.join(segs)}.")


def _subscription_provider(server: ArmServer, ctx: Ctx, method: str, segs, rest, rlow, query,
                           data: dict[str, Any]) -> Reply:
    st = server.state
    ns = rlow[1]
    if rlow[1:] == ["microsoft.compute", "skus"]:
        flt = query.get("$filter") or ""
        m = re.match(r"^\s*location eq '([^']+)'\s*$", flt)
        if flt and not m:
            raise ArmError(400, "InvalidFilter", f"Unsupported $filter '{flt}' for resource SKUs.")
        return Reply(200, {"value": compute.skus(st, ctx.sub, m.group(1) if m else None)})
    if rlow[1:3] == ["microsoft.compute", "locations"] and rlow[4:] == ["usages"]:
        return Reply(200, {"value": compute.usages(st, ctx.sub, rlow[3])})
    if rlow[1:] == ["microsoft.compute", "virtualmachines"]:
        with_view = query.get("statusOnly") == "true"
        vms = [compute.vm_json(r, with_view) for r in st.in_subscription(ctx.sub) if r["type"] == compute.VM_TYPE]
        return _page(server, ctx, segs, query, vms)
    if rlow[1] == "microsoft.authorization" and len(rlow) == 4:
        return _authorization(server, ctx, method, "/" + "/".join(segs), rlow[2], rest[3],
                              f"/subscriptions/{ctx.sub}", data)
    if rlow[1:] == ["microsoft.costmanagement", "query"] and method == "POST":
        return costs.query(st, ctx, data, f"{server.url}/{'/'.join(segs)}")
    if len(rlow) == 3 and rlow[1] in ("microsoft.network", "microsoft.compute", "microsoft.storage"):  # list_all
        items = [public(r) for r in st.in_subscription(ctx.sub) if r["type"].lower() == f"{rlow[1]}/{rlow[2]}"]
        return _page(server, ctx, segs, query, items)
    if len(rlow) == 6 and rlow[2] == "locations" and rlow[4] in ("operations", "operationresults"):
        op = st.poll(rest[5])
        if rlow[4] == "operations":
            body: dict[str, Any] = {"name": op.id, "status": op.status, "startTime": "2025-01-01T00:00:00Z"}
            if op.error:
                body["error"] = {"code": op.error.code, "message": op.error.message}
            return Reply(200, body, {"Retry-After": "1"} if st.held(op) else {})
        if op.status == "InProgress":
            return Reply(202, None, {"Location": f"{server.url}/{'/'.join(segs)}?api-version={ctx.api_version}"})
        if op.status == "Failed":
            return Reply(409, {"error": {"code": op.error.code, "message": op.error.message}})
        return Reply(204)
    raise ArmError(404, "InvalidResourceType", f"The resource type '{ns}/{'/'.join(rlow[2:])}' could not be found.")


def _resource(server: ArmServer, ctx: Ctx, method: str, segs, rest, rlow, data, require) -> Reply:
    st = server.state
    group = rest[1]
    ns, rtype, name, tail = rest[3], rest[4], rest[5], rlow[6:]
    rid = "/" + "/".join(segs[:8])
    kind = f"{ns}/{rtype}".lower()
    if method != "DELETE" or kind != "microsoft.compute/virtualmachines":
        st.group(ctx.sub, group)
    scope = "/" + "/".join(segs[:4])
    if kind == "microsoft.authorization/roleassignments" and method != "PUT" and not tail:
        return _authorization(server, ctx, method, rid, "roleassignments", name, scope, data)
    if len(tail) == 4 and tail[:3] == ["providers", "microsoft.authorization", "roleassignments"]:
        st.get(rid)  # an extension resource on an existing resource (a storage account)
        return _authorization(server, ctx, method, "/" + "/".join(segs), "roleassignments", segs[-1], rid, data)
    if kind == "microsoft.managedidentity/userassignedidentities" and not tail:
        if method == "PUT":
            return authz.put_identity(st, ctx, rid, name, data)
        if method == "DELETE":
            return authz.delete_identity(st, st.find(rid), rid)
    if method == "PUT" and not tail:
        if kind == "microsoft.network/networksecuritygroups":
            return network.put_nsg(st, ctx, rid, name, data)
        if kind == "microsoft.network/virtualnetworks":
            return network.put_vnet(st, ctx, rid, name, data)
        if kind == "microsoft.network/publicipaddresses":
            return network.put_public_ip(st, ctx, rid, name, data)
        if kind == "microsoft.network/networkinterfaces":
            return network.put_nic(st, ctx, rid, name, data, require)
        if kind == "microsoft.compute/virtualmachines":
            return compute.put_vm(st, ctx, rid, name, data, require)
        if kind == "microsoft.compute/disks":
            return compute.put_disk(st, ctx, rid, name, data)
        if kind == "microsoft.compute/proximityplacementgroups":
            return compute.put_ppg(st, ctx, rid, name, data)
        if kind == "microsoft.authorization/roleassignments":
            return extensions.put_role_assignment(st, ctx, rid, name, scope, data)
        if kind == "microsoft.devtestlab/schedules":
            return extensions.put_schedule(st, ctx, rid, name, data)
        raise ArmError(400, "InvalidResourceType", f"The resource type '{ns}/{rtype}' is not supported here.")
    res = st.get(rid, "NotFound" if kind.startswith("microsoft.network") else "ResourceNotFound")
    if method == "GET" and not tail:
        if kind == "microsoft.compute/virtualmachines":
            return Reply(200, compute.vm_json(res, (ctx.query.get("$expand") or "").lower() == "instanceview"))
        return Reply(200, public(res))
    if method == "GET" and tail == ["instanceview"] and kind == "microsoft.compute/virtualmachines":
        return Reply(200, compute.vm_json(res, True)["properties"]["instanceView"])
    if method == "PATCH" and not tail and kind == "microsoft.compute/disks":
        return compute.patch_disk(st, ctx, res, data)
    if method == "POST" and tail == ["listkeys"] and kind == "microsoft.storage/storageaccounts":
        return storage.list_keys(res)
    if method == "POST" and len(tail) == 1 and kind == "microsoft.compute/virtualmachines":
        return compute.vm_action(st, ctx, res, tail[0])
    if method == "DELETE" and not tail:
        if kind == "microsoft.compute/virtualmachines":
            return compute.delete_vm(st, ctx, res)
        if kind == "microsoft.compute/disks":
            return compute.delete_disk(st, ctx, res)
        if kind == "microsoft.compute/proximityplacementgroups":
            return compute.delete_ppg(st, ctx, res)
        if kind.startswith("microsoft.network/"):
            return network.delete(st, ctx, res)
        st.remove(rid)
        return Reply(200)
    raise ArmError(405, "MethodNotAllowed", f"{method} is not supported on {'/'.join(rlow)}.")


def _authorization(server: ArmServer, ctx: Ctx, method: str, rid: str, kind: str, name: str, scope: str,
                   data: dict[str, Any]) -> Reply:
    """Role definitions and role assignments at any scope (subscription, group, a resource)."""
    st = server.state
    if kind == "roledefinitions":
        if method == "PUT":
            return authz.put_role_definition(st, ctx, rid, name, scope, data)
        if method == "GET":
            return authz.get_role_definition(st, rid, name)
        if method == "DELETE":
            return authz.delete_role_definition(st, rid)
    if kind == "roleassignments":
        if method == "PUT":
            return extensions.put_role_assignment(st, ctx, rid, name, scope, data)
        if method == "GET":
            return authz.get_role_assignment(st, rid)
        if method == "DELETE":
            return authz.delete_role_assignment(st, rid)
    raise ArmError(405, "MethodNotAllowed", f"{method} is not supported on {rid}.")
