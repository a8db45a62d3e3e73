"""RAM (2015-05-01) calls: the roles and custom policies of the controller's identity (issue 33).

RPC calls on ram.aliyuncs.com, answered in the shapes the ``alibabacloud_ram20150501`` models read
(www.alibabacloud.com/help/en/ram/developer-reference/api-ram-2015-05-01-<action>):

* CreateRole (``RoleName`` 1–64 of letters, digits, ``.-``; ``AssumeRolePolicyDocument`` a trust policy:
  Version "1", Statement[] of Effect / Action ``sts:AssumeRole`` / Principal{Service|RAM}; ``Description``;
  ``MaxSessionDuration`` 3600–43200) → ``Role{RoleId, RoleName, Arn, AssumeRolePolicyDocument, CreateDate,
  MaxSessionDuration}``; EntityAlreadyExists.Role (409) for a name in use, InvalidParameter.PolicyDocument
  (400) for a bad trust policy.
* GetRole → ``Role``; EntityNotExist.Role (404).
* CreatePolicy (``PolicyName``, ``PolicyDocument`` a permission policy, ``Description``) → ``Policy{PolicyName,
  PolicyType: Custom, DefaultVersion: v1, CreateDate}``; EntityAlreadyExists.Policy (409).
* GetPolicy (``PolicyName``, ``PolicyType``) → ``Policy`` and ``DefaultPolicyVersion{VersionId,
  PolicyDocument, IsDefaultVersion}``; EntityNotExist.Policy (404).
* AttachPolicyToRole (``PolicyType``, ``PolicyName``, ``RoleName``): EntityNotExist.Role / .Policy (404),
  EntityAlreadyExists.Role.Policy (409) when attached already.
* ListPoliciesForRole (``RoleName``) → ``Policies{Policy[]{PolicyName, PolicyType, AttachDate, …}}``.

A refused call answers NoPermission (403), RAM's own code (server.py).  A role created here is also one
STS AssumeRole knows (``account.roles``), with the actions of the custom policies attached to it, and
one RunInstances may pass (``RamRoleName``: ram:PassRole, the role trusted by ecs.aliyuncs.com).
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from .errors import ApiError
from .state import iso

_NAME = re.compile(r"^[A-Za-z0-9.-]{1,64}$")
_POLICY_NAME = re.compile(r"^[A-Za-z0-9-]{1,128}$")


def space(ctx: Any) -> dict[str, Any]:
    """The account's RAM objects: roles by name, policies by name, attachments role → policy names."""
    return ctx.state.ram.setdefault(ctx.account.account_id, {"roles": {}, "policies": {}, "attached": {}})


def role_named(state: Any, account_id: str, name: str) -> dict[str, Any] | None:
    return state.ram.get(account_id, {}).get("roles", {}).get(name)


def trusted_services(role: dict[str, Any]) -> set[str]:
    doc = json.loads(role["AssumeRolePolicyDocument"])
    out: set[str] = set()
    for st in doc.get("Statement", []):
        svc = (st.get("Principal") or {}).get("Service") or []
        if st.get("Effect") == "Allow" and "sts:AssumeRole" in _list(st.get("Action")):
            out |= set(_list(svc))
    return out


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v] if v else []


def _document(text: str | None, trust: bool) -> dict[str, Any]:
    try:
        doc = json.loads(text or "")
        ok = doc.get("Version") == "1" and isinstance(doc.get("Statement"), list) and doc["Statement"] and all(
            st.get("Effect") in ("Allow", "Deny") and st.get("Action")
            and (st.get("Principal") if trust else st.get("Resource")) for st in doc["Statement"])
    except (ValueError, AttributeError):
        ok = False
    if not ok or len(text or "") > (2048 if trust else 6144):
        raise ApiError(400, "InvalidParameter.PolicyDocument", "The parameter PolicyDocument is invalid.")
    return doc


def create_role(ctx: Any) -> dict[str, Any]:
    name = ctx.params.need("RoleName")
    if not _NAME.match(name):
        raise ApiError(400, "InvalidParameter.RoleName.InvalidChars", "The parameter RoleName contains invalid chars.")
    text = ctx.params.need("AssumeRolePolicyDocument")
    _document(text, trust=True)
    max_s = ctx.params.int("MaxSessionDuration", 3600) or 3600
    if not 3600 <= max_s <= 43200:
        raise ApiError(400, "InvalidParameter.MaxSessionDuration", "The parameter MaxSessionDuration is invalid.")
    ram = space(ctx)
    if name in ram["roles"]:
        raise ApiError(409, "EntityAlreadyExists.Role", f"The role already exists: {name}.")
    arn = f"acs:ram::{ctx.account.account_id}:role/{name.lower()}"
    role = {"RoleId": f"3{secrets.randbelow(10 ** 17):017d}", "RoleName": name, "Arn": arn,
            "Description": ctx.params.get("Description") or "", "AssumeRolePolicyDocument": text,
            "CreateDate": iso(ctx.now), "MaxSessionDuration": max_s}
    ram["roles"][name] = role
    ctx.account.roles[arn] = ()  # STS may assume it; its actions are its attached policies'
    ctx.account.role_max_s[arn] = max_s
    return {"Role": dict(role)}


def get_role(ctx: Any) -> dict[str, Any]:
    name = ctx.params.need("RoleName")
    role = space(ctx)["roles"].get(name)
    if role is None:
        raise ApiError(404, "EntityNotExist.Role", f"The role not exists: {name}.")
    return {"Role": dict(role)}


def create_policy(ctx: Any) -> dict[str, Any]:
    name = ctx.params.need("PolicyName")
    if not _POLICY_NAME.match(name):
        raise ApiError(400, "InvalidParameter.PolicyName.InvalidChars", "The parameter PolicyName contains invalid "
                       "chars.")
    text = ctx.params.need("PolicyDocument")
    _document(text, trust=False)
    ram = space(ctx)
    if name in ram["policies"]:
        raise ApiError(409, "EntityAlreadyExists.Policy", f"The policy already exists: {name}.")
    policy = {"PolicyName": name, "PolicyType": "Custom", "Description": ctx.params.get("Description") or "",
              "DefaultVersion": "v1", "CreateDate": iso(ctx.now), "_document": text}
    ram["policies"][name] = policy
    return {"Policy": {k: v for k, v in policy.items() if not k.startswith("_")}}


def _policy(ctx: Any, name: str, kind: str) -> dict[str, Any]:
    found = space(ctx)["policies"].get(name) if kind == "Custom" else None
    if found is None:
        raise ApiError(404, "EntityNotExist.Policy", f"The policy not exists: {name}.")
    return found


def get_policy(ctx: Any) -> dict[str, Any]:
    policy = _policy(ctx, ctx.params.need("PolicyName"), ctx.params.need("PolicyType"))
    return {"Policy": {k: v for k, v in policy.items() if not k.startswith("_")},
            "DefaultPolicyVersion": {"VersionId": "v1", "IsDefaultVersion": True, "PolicyDocument": policy["_document"],
                                     "CreateDate": policy["CreateDate"]}}


def attach_policy_to_role(ctx: Any) -> dict[str, Any]:
    kind, name, role_name = (ctx.params.need(k) for k in ("PolicyType", "PolicyName", "RoleName"))
    ram = space(ctx)
    role = ram["roles"].get(role_name)
    if role is None:
        raise ApiError(404, "EntityNotExist.Role", f"The role not exists: {role_name}.")
    policy = _policy(ctx, name, kind)
    attached = ram["attached"].setdefault(role_name, [])
    if name in attached:
        raise ApiError(409, "EntityAlreadyExists.Role.Policy", f"The policy already attached to the role: {name}.")
    attached.append(name)
    actions = [a for p in attached for st in json.loads(ram["policies"][p]["_document"])["Statement"]
               if st["Effect"] == "Allow" for a in _list(st["Action"])]
    ctx.account.roles[role["Arn"]] = tuple(actions)
    policy["_attached"] = iso(ctx.now)
    return {}


def list_policies_for_role(ctx: Any) -> dict[str, Any]:
    name = ctx.params.need("RoleName")
    ram = space(ctx)
    if name not in ram["roles"]:
        raise ApiError(404, "EntityNotExist.Role", f"The role not exists: {name}.")
    items = [{"PolicyName": p, "PolicyType": "Custom", "Description": ram["policies"][p]["Description"],
              "DefaultVersion": "v1", "AttachDate": ram["policies"][p].get("_attached", "")}
             for p in ram["attached"].get(name, [])]
    return {"Policies": {"Policy": items}}


RAM_ACTIONS: dict[str, Any] = {"CreateRole": create_role, "GetRole": get_role, "CreatePolicy": create_policy,
                               "GetPolicy": get_policy, "AttachPolicyToRole": attach_policy_to_role,
                               "ListPoliciesForRole": list_policies_for_role}
