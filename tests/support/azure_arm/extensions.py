"""Role assignments (Microsoft.Authorization) and VM auto-shutdown schedules (Microsoft.DevTestLab).

Both are synchronous in Azure (201 with the resource, no operation).  A role
assignment names a principal that must exist (a VM's system-assigned identity
appears when the VM is created); it lives under its scope and goes when that
scope (the resource group) is deleted.  It is an extension resource: subscription
resource listings do not show it.  A schedule must be named
``shutdown-computevm-<vm name>`` and target an existing VM.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from .state import ArmError, ArmState, Ctx, Reply, public

ROLE_TYPE = "Microsoft.Authorization/roleAssignments"
SCHEDULE_TYPE = "Microsoft.DevTestLab/schedules"
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ROLE_DEF = re.compile(r"^/subscriptions/[^/]+/providers/Microsoft\.Authorization/roleDefinitions/([0-9a-fA-F-]{36})$",
                       re.IGNORECASE)


def put_role_assignment(state: ArmState, ctx: Ctx, rid: str, name: str, scope: str, body: dict[str, Any]) -> Reply:
    if not _GUID.match(name):
        raise ArmError(400, "InvalidRoleAssignmentId", f"The role assignment ID '{name}' is not valid. The role "
                       "assignment ID must be a GUID.")
    props = body.get("properties") or {}
    if not _ROLE_DEF.match(props.get("roleDefinitionId") or ""):
        raise ArmError(400, "InvalidRoleDefinitionId", f"The role definition ID '{props.get('roleDefinitionId')}' "
                       "is not valid.")
    from .authz import check_definition

    check_definition(state, props["roleDefinitionId"])
    if props.get("condition") and props.get("conditionVersion", "2.0") != "2.0":
        raise ArmError(400, "InvalidConditionVersion", "The condition version must be '2.0'.")
    principal = props.get("principalId") or ""
    cfg = state.config(ctx.sub)
    if principal in state.principals and cfg.principal_delay > 0:
        cfg.principal_delay -= 1  # a new identity not yet replicated to the directory
        principal_known = False
    else:
        principal_known = principal in state.principals
    if not principal_known:
        raise ArmError(400, "PrincipalNotFound", f"Principal {principal.replace('-', '')} does not exist in the "
                       f"directory {ctx.client.tenant}. Check that you have the correct principal ID. If you are "
                       "creating this principal and then immediately assigning a role, this error might be related "
                       "to a replication delay.")
    existing = state.find(rid)
    if existing is not None:
        if existing["properties"]["principalId"] != principal:
            raise ArmError(409, "RoleAssignmentUpdateNotPermitted", "Tenant ID, application ID, principal ID, and "
                           "scope are not allowed to be updated.")
        return Reply(201, public(existing))
    for r in state.resources.values():
        if (r["type"] == ROLE_TYPE and r["properties"]["scope"].lower() == scope.lower()
                and r["properties"]["principalId"] == principal
                and r["properties"]["roleDefinitionId"].lower() == props["roleDefinitionId"].lower()):
            raise ArmError(409, "RoleAssignmentExists", "The role assignment already exists.")
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    ra = {"id": rid, "name": name, "type": ROLE_TYPE,
          "properties": {"roleDefinitionId": props["roleDefinitionId"], "principalId": principal,
                         "principalType": props.get("principalType", "ServicePrincipal"), "scope": scope,
                         "createdOn": now, "updatedOn": now, "createdBy": ctx.client.object_id}}
    if props.get("condition"):
        ra["properties"].update(condition=props["condition"], conditionVersion=props.get("conditionVersion", "2.0"))
    state.store(ra)
    return Reply(201, public(ra))


def put_schedule(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    props = body.get("properties") or {}
    target = props.get("targetResourceId") or ""
    vm = state.find(target)
    if vm is None or vm["type"] != "Microsoft.Compute/virtualMachines":
        raise ArmError(400, "InvalidTargetResource", f"The target resource '{target}' is not a virtual machine.")
    if name.lower() != f"shutdown-computevm-{vm['name']}".lower():
        raise ArmError(400, "InvalidScheduleName", f"The schedule name must be 'shutdown-computevm-{vm['name']}'.")
    if props.get("taskType") != "ComputeVmShutdownTask":
        raise ArmError(400, "InvalidTaskType", f"Task type {props.get('taskType')!r} is not valid for a VM schedule.")
    time_ = ((props.get("dailyRecurrence") or {}).get("time")) or ""
    if not re.fullmatch(r"([01]\d|2[0-3])[0-5]\d", time_):
        raise ArmError(400, "InvalidDailyRecurrence", f"The daily recurrence time '{time_}' is not valid (HHmm).")
    if not props.get("timeZoneId"):
        raise ArmError(400, "InvalidTimeZone", "timeZoneId is required.")
    if props.get("status", "Enabled") not in ("Enabled", "Disabled"):
        raise ArmError(400, "InvalidStatus", "status must be Enabled or Disabled.")
    existing = state.find(rid)
    sched = {"id": rid, "name": name, "type": SCHEDULE_TYPE, "location": body.get("location") or vm["location"],
             "tags": dict(body.get("tags") or {}),
             "properties": {**props, "provisioningState": "Succeeded",
                            "createdDate": datetime.datetime.now(datetime.timezone.utc).isoformat()}}
    state.store(sched)
    return Reply(200 if existing else 201, public(sched))
