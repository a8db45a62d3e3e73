"""User-assigned managed identities (Microsoft.ManagedIdentity) and custom role definitions and role
assignments (Microsoft.Authorization) beyond the PUT of :mod:`.extensions`: what the controller's identity
needs (issue 33).

From the REST references (learn.microsoft.com/rest/api/managedidentity/…/user-assigned-identities and
…/rest/api/authorization/role-definitions, …/role-assignments):

* ``PUT …/resourceGroups/{g}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}``
  (api-version 2023-01-31): body ``location`` (required) and ``tags``; 201 Created, 200 on update;
  ``properties`` carry ``tenantId``, ``principalId`` and ``clientId`` (read-only, the server's).  The
  principal is not at once in the directory: a role assignment naming it answers PrincipalNotFound for a
  while (``SubConfig.principal_delay`` refusals, shared with VM identities).  GET, DELETE (200; 204 when
  absent).
* ``PUT {scope}/providers/Microsoft.Authorization/roleDefinitions/{guid}`` (2022-04-01): ``properties``
  ``roleName``, ``description``, ``type`` (CustomRole), ``permissions[]{actions, notActions, dataActions,
  notDataActions}``, ``assignableScopes[]``; 201.  A role name is unique in the tenant:
  RoleDefinitionWithSameNameExists (409) for another id.  GET 404 RoleDefinitionDoesNotExist; DELETE.
* Role assignments: GET 404 RoleAssignmentNotFound, DELETE 200 with the assignment (204 when absent);
  PUT (in :mod:`.extensions`) names a GUID, 409 RoleAssignmentExists for the same principal, role and
  scope under another name; ``condition`` / ``conditionVersion`` ("2.0") are kept as sent.

Handlers run with the state lock held (see :mod:`.routes`).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from .state import ArmError, ArmState, Ctx, Reply, public

IDENTITY_TYPE = "Microsoft.ManagedIdentity/userAssignedIdentities"
ROLE_DEF_TYPE = "Microsoft.Authorization/roleDefinitions"
ROLE_TYPE = "Microsoft.Authorization/roleAssignments"
#: built-in roles a test may name without defining them (Contributor, Reader, Owner)
BUILT_IN = {"b24988ac-6180-42a0-ab88-20f7382dd24c": "Contributor", "acdd72a7-3385-48ef-bd42-f606fba81ae7": "Reader",
            "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": "Owner"}
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


# -- user-assigned identities -----------------------------------------------------------
def put_identity(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    location = body.get("location")
    if not location:
        raise ArmError(400, "LocationRequired", "The location property is required for this definition.")
    existing = state.find(rid)
    if existing is not None:
        existing["tags"] = dict(body.get("tags") or {})
        return Reply(200, public(existing))
    principal = str(uuid.uuid4())
    ident = {"id": rid, "name": name, "type": IDENTITY_TYPE, "location": location,
             "tags": dict(body.get("tags") or {}),
             "properties": {"tenantId": ctx.client.tenant, "principalId": principal, "clientId": str(uuid.uuid4()),
                            "isolationScope": "None"}}
    state.store(ident)
    state.principals.add(principal)  # known, but refused while the subscription's principal_delay lasts
    return Reply(201, public(ident))


def delete_identity(state: ArmState, ident: dict[str, Any] | None, rid: str) -> Reply:
    if ident is None:
        return Reply(204)
    state.principals.discard(ident["properties"]["principalId"])
    state.remove(rid)
    return Reply(200)


# -- role definitions ------------------------------------------------------------------
def role_definition(state: ArmState, definition_id: str) -> dict[str, Any] | None:
    """A stored custom role definition (by its full id), or None."""
    return state.find(definition_id)


def put_role_definition(state: ArmState, ctx: Ctx, rid: str, name: str, scope: str, body: dict[str, Any]) -> Reply:
    if not _GUID.match(name):
        raise ArmError(400, "InvalidRoleDefinitionId", f"The role definition ID '{name}' is not valid.")
    props = body.get("properties") or {}
    role_name = (props.get("roleName") or "").strip()
    if not role_name:
        raise ArmError(400, "RoleDefinitionNameNullOrEmpty", "The role definition name cannot be null or empty.")
    perms = props.get("permissions") or []
    if not perms or not any(p.get("actions") or p.get("dataActions") for p in perms):
        raise ArmError(400, "RoleDefinitionPermissionsEmpty", "The role definition must contain at least one "
                       "action or data action.")
    scopes = props.get("assignableScopes") or []
    if not scopes or not all(str(s).lower().startswith(f"/subscriptions/{ctx.sub}".lower()) for s in scopes):
        raise ArmError(400, "InvalidAssignableScope", "The assignable scopes must be within the subscription "
                       f"'{ctx.sub}'.")
    for r in state.resources.values():
        if (r["type"] == ROLE_DEF_TYPE and r["_tenant"] == ctx.client.tenant and r["id"].lower() != rid.lower()
                and r["properties"]["roleName"].lower() == role_name.lower()):
            raise ArmError(409, "RoleDefinitionWithSameNameExists", "A custom role with the same name already "
                           "exists in this directory. Use a different name.")
    existing = state.find(rid)
    rd = {"id": rid, "name": name, "type": ROLE_DEF_TYPE, "_tenant": ctx.client.tenant,
          "properties": {"roleName": role_name, "description": props.get("description") or "",
                         "type": "CustomRole", "permissions": [
                             {k: list(p.get(k) or []) for k in ("actions", "notActions", "dataActions",
                                                                 "notDataActions")} for p in perms],
                         "assignableScopes": list(scopes), "createdBy": (existing or {}).get("properties", {}).get(
                             "createdBy", ctx.client.object_id), "updatedBy": ctx.client.object_id}}
    state.store(rd)
    return Reply(201, public(rd))


def get_role_definition(state: ArmState, rid: str, name: str) -> Reply:
    rd = state.find(rid)
    if rd is None:
        if name.lower() in BUILT_IN:
            return Reply(200, {"id": rid, "name": name, "type": ROLE_DEF_TYPE,
                               "properties": {"roleName": BUILT_IN[name.lower()], "type": "BuiltInRole"}})
        raise ArmError(404, "RoleDefinitionDoesNotExist", "The specified role definition with ID "
                       f"'{name}' does not exist.")
    return Reply(200, public(rd))


def delete_role_definition(state: ArmState, rid: str) -> Reply:
    rd = state.find(rid)
    if rd is None:
        return Reply(204)
    if any(r["type"] == ROLE_TYPE and r["properties"]["roleDefinitionId"].lower().endswith(rd["name"].lower())
           for r in state.resources.values()):
        raise ArmError(409, "RoleDefinitionHasAssignments", "There are existing role assignments referencing role "
                       f"(code: RoleDefinitionHasAssignments).")
    state.remove(rid)
    return Reply(200, public(rd))


def check_definition(state: ArmState, definition_id: str) -> None:
    """A role assignment's ``roleDefinitionId`` names a built-in role or a stored custom one."""
    guid = definition_id.rsplit("/", 1)[-1].lower()
    if guid not in BUILT_IN and state.find(definition_id) is None:
        raise ArmError(400, "RoleDefinitionDoesNotExist", f"The specified role definition with ID '{guid}' does "
                       "not exist.")


# -- role assignments (GET / DELETE) ----------------------------------------------------------
def get_role_assignment(state: ArmState, rid: str) -> Reply:
    ra = state.find(rid)
    if ra is None:
        raise ArmError(404, "RoleAssignmentNotFound", "The role assignment was not found.")
    return Reply(200, public(ra))


def delete_role_assignment(state: ArmState, rid: str) -> Reply:
    ra = state.find(rid)
    if ra is None:
        return Reply(204)
    state.remove(rid)
    return Reply(200, public(ra))
