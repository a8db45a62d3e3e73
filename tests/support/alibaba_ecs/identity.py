"""STS (2015-04-01) and BSS OpenAPI (2017-12-14) calls: who am I, assume a role, what was billed.

GetCallerIdentity answers ``AccountId``, ``UserId``, ``Arn`` (``acs:ram::<account>:user/<name>`` or
``…:assumed-role/<role>/<session>``), ``IdentityType``; AssumeRole (optional session ``Policy``, checked
for grammar and kept; DurationSeconds within the role's MaxSessionDuration) answers ``Credentials{AccessKeyId,
AccessKeySecret,SecurityToken,Expiration}`` and ``AssumedRoleUser{Arn,AssumedRoleId}``
(www.alibabacloud.com/help/en/ram/developer-reference/api-sts-2015-04-01-getcalleridentity, …-assumerole).
DescribeInstanceBill answers ``{Code, Message, Success, Data{Items[], NextToken, TotalCount, …}}`` with one
item per instance and day (Granularity=DAILY), each carrying ``Tag`` as ``key:K value:V; key:K2 value:V2``
(the bill detail's tag column), ``PretaxAmount`` and ``Currency``; the items are the ones a test put in
``Knobs.costs`` (a test cloud has no meter).
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from .errors import ApiError
from .state import TempCredential, iso


def get_caller_identity(ctx: Any) -> dict[str, Any]:
    acct = ctx.account
    temp = ctx.state.temp.get(ctx.access_key_id or "")
    if temp is not None:
        role = temp.role_arn.rsplit("/", 1)[-1]
        return {"IdentityType": "AssumedRoleUser", "AccountId": acct.account_id, "PrincipalId": f"3{acct.account_id}:"
                f"{temp.session}", "RoleId": f"3{acct.account_id[1:]}", "UserId": f"3{acct.account_id[1:]}:{temp.session}",
                "Arn": f"acs:ram::{acct.account_id}:assumed-role/{role}/{temp.session}"}
    return {"IdentityType": "RAMUser", "AccountId": acct.account_id, "PrincipalId": f"2{acct.account_id[1:]}",
            "UserId": f"2{acct.account_id[1:]}", "Arn": f"acs:ram::{acct.account_id}:user/{acct.user}"}


def _session_policy(text: str | None) -> dict[str, Any] | None:
    """AssumeRole's optional ``Policy``: RAM policy JSON (Version "1", Statement[] of Effect/Action/Resource),
    at most 2048 characters; anything else is InvalidParameter.PolicyGrammar as the real STS answers."""
    if not text:
        return None
    try:
        doc = json.loads(text)
        ok = (len(text) <= 2048 and doc.get("Version") == "1" and isinstance(doc.get("Statement"), list)
              and all(st.get("Effect") in ("Allow", "Deny") and st.get("Action") and st.get("Resource")
                      for st in doc["Statement"]))
    except (ValueError, AttributeError):
        ok = False
    if not ok:
        raise ApiError(400, "InvalidParameter.PolicyGrammar", "The parameter Policy has not passed grammar check.")
    return doc


def assume_role(ctx: Any) -> dict[str, Any]:
    arn = ctx.params.need("RoleArn")
    session = ctx.params.need("RoleSessionName")
    acct = ctx.account
    if arn not in acct.roles:
        raise ApiError(404, "EntityNotExist.Role", f"The role not exists: {arn}.")
    if not re.fullmatch(r"[A-Za-z0-9.@_-]{2,32}", session):
        raise ApiError(400, "InvalidParameter.RoleSessionName", "The parameter RoleSessionName is wrongly formed.")
    duration = ctx.params.int("DurationSeconds", 3600) or 3600
    if not 900 <= duration <= acct.role_max_s.get(arn, 3600):
        raise ApiError(400, "InvalidParameter.DurationSeconds",
                       f"The Min/Max value of DurationSeconds is 15min/{acct.role_max_s.get(arn, 3600) // 3600}hr.")
    policy = _session_policy(ctx.params.get("Policy"))
    ak = f"STS.{secrets.token_hex(12)}"
    temp = TempCredential(access_key_id=ak, secret=secrets.token_urlsafe(24), token=f"CAIS{secrets.token_urlsafe(48)}",
                          account=acct, role_arn=arn, session=session, expires=ctx.now + duration,
                          actions=acct.roles[arn], policy=policy)
    ctx.state.temp[ak] = temp
    role = arn.rsplit("/", 1)[-1]
    return {"Credentials": {"AccessKeyId": ak, "AccessKeySecret": temp.secret, "SecurityToken": temp.token,
                            "Expiration": iso(temp.expires)},
            "AssumedRoleUser": {"Arn": f"acs:ram::{acct.account_id}:role/{role}/{session}",
                                "AssumedRoleId": f"3{acct.account_id[1:]}:{session}"}}


def describe_instance_bill(ctx: Any) -> dict[str, Any]:
    cycle = ctx.params.need("BillingCycle")
    granularity = (ctx.params.get("Granularity") or "MONTHLY").upper()
    day = ctx.params.get("BillingDate")
    if granularity == "DAILY" and not day:
        raise ApiError(400, "InvalidParameter", "BillingDate is mandatory when Granularity is DAILY.")
    items = []
    for c in ctx.knobs.costs:
        if not c["day"].startswith(cycle) or (granularity == "DAILY" and c["day"] != day):
            continue
        tag = "; ".join(f"key:{k} value:{v}" for k, v in c.get("tags", {}).items())
        items.append({"InstanceID": c.get("instance_id", ""), "BillingDate": c["day"] if granularity == "DAILY" else "",
                      "PretaxAmount": c["amount"], "PretaxGrossAmount": c["amount"], "Currency": c.get("currency", "CNY"),
                      "ProductCode": c.get("product", "ecs"), "SubscriptionType": "PayAsYouGo", "Tag": tag,
                      "Region": c.get("region", "cn-hangzhou"), "BillingType": "", "Item": "PayAsYouGoBill"})
    start = int(ctx.params.get("NextToken") or 0)
    size = min(ctx.params.int("MaxResults", 20) or 20, ctx.server.page_size)
    page = items[start:start + size]
    token = str(start + size) if start + size < len(items) else ""
    return {"Code": "Success", "Message": "Successful!", "Success": True,
            "Data": {"AccountID": ctx.account.account_id, "BillingCycle": cycle, "Items": page, "NextToken": token,
                     "MaxResults": size, "TotalCount": len(items)}}


STS_ACTIONS: dict[str, Any] = {"GetCallerIdentity": get_caller_identity, "AssumeRole": assume_role}
BSS_ACTIONS: dict[str, Any] = {"DescribeInstanceBill": describe_instance_bill}
