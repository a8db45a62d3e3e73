"""The controller machine's own identity on Azure (issue 33): a user-assigned managed identity with two roles.

What exists once ``controller_identity(create=True)`` ran (every name fixed, so a second run finds it all):

    resource group   workbench-controller          the app's; holds only the identity (free; tagged workbench:role)
    identity         workbench-controller          Microsoft.ManagedIdentity/userAssignedIdentities
    role definition  Workbench Controller (<sub>)  resources/policies/azure-controller-role.json's actions,
                                                   assigned on the subscription: a relaunch makes a new resource
                                                   group, and Azure RBAC cannot scope control-plane actions by tag
                                                   or group name; its roleAssignments/write carries a condition
                                                   (only the guard role, only to service principals)
    role definition  Workbench Controller Storage  azure-controller-storage-role.json (storageAccounts read +
                     (<sub>)                       listKeys), assigned on each storage account the handed-over
                                                   specs mount (setting ``controller_storage_accounts`` or the
                                                   ``storage_accounts`` argument), never wider

On that VM the plugin signs in as the identity (``ManagedIdentityCredential`` from IMDS, :mod:`.clients`) with
the non-secret fields of ``ControllerIdentity.machine`` (client id, subscription, tenant) that ``controller.json``
carries.  A launch tagged ``workbench:role=controller`` (:func:`vm_identity`) runs as that identity alone (no
system-assigned one): IMDS then hands the instance-side guard its token without a client id, and the
controller role's ``resourceGroups/delete`` lets the guard delete the controller's own launch group — its
end on Azure, where auto-shutdown only deallocates (disk and address would still bill).

Names of role definitions and assignments are UUIDs derived from the subscription, scope and principal, so
a retried run PUTs the same ones; a new identity's principal reaches the directory late (PrincipalNotFound,
retried with backoff).  Plain ARM calls through the management client's ``send_request`` (no azure-mgmt-msi
or -authorization package), the same pipeline as every other call.  Blocking; errors mapped; a refusal
becomes an AuthError naming the actions to ask an administrator for.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Sequence

from workbench.core.domain.errors import AuthError, ConfigError, NotFoundError, WorkbenchError
from workbench.core.paths import resources_dir
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE, ControllerIdentity

from .clients import AzureClients
from .self_delete import assign_role

NAME = GROUP = "workbench-controller"
MSI_API, AUTHZ_API = "2023-01-31", "2022-04-01"
NAMESPACE = uuid.UUID("7d3f5b0e-2c4a-4f0b-9a51-6c1e8d2b4f90")
ROLE_FILE, STORAGE_ROLE_FILE = "azure-controller-role.json", "azure-controller-storage-role.json"
ADDITIONS_FILE = "azure-app-controller-additions.json"
POLICY_FILES = tuple(f"resources/policies/{f}" for f in (ROLE_FILE, STORAGE_ROLE_FILE, ADDITIONS_FILE))


def is_controller(tags: dict[str, str]) -> bool:
    return tags.get(TAG_ROLE) == ROLE_CONTROLLER


def identity_id(sub: str) -> str:
    return (f"/subscriptions/{sub}/resourceGroups/{GROUP}/providers/Microsoft.ManagedIdentity/"
            f"userAssignedIdentities/{NAME}")


def vm_identity(sub: str) -> dict[str, Any]:
    """The ``identity`` of the controller's VM: the user-assigned identity only."""
    return {"type": "UserAssigned", "userAssignedIdentities": {identity_id(sub): {}}}


def role_actions(file: str = ROLE_FILE) -> list[str]:
    """The actions of a shipped role document (the one source: the plugin defines the role from it)."""
    doc = json.loads((resources_dir() / "policies" / file).read_text(encoding="utf-8"))
    return list(doc["Actions"])


def guard_condition(guard_role: str) -> str:
    """The ABAC condition on the controller's assignment: role assignments it writes may name only the guard
    role and only service principals (the job VMs' identities), never a user, group or another role."""
    return ("((!(ActionMatches{'Microsoft.Authorization/roleAssignments/write'})) OR "
            f"(@Request[Microsoft.Authorization/roleAssignments:RoleDefinitionId] ForAnyOfAnyValues:GuidEquals "
            f"{{{guard_role}}} AND @Request[Microsoft.Authorization/roleAssignments:PrincipalType] "
            "ForAnyOfAnyValues:StringEqualsIgnoreCase {'ServicePrincipal'}))")


class _Arm:
    """GET/PUT of one resource through the management client's pipeline; None for a 404."""

    def __init__(self, clients: AzureClients) -> None:
        self.clients = clients

    def send(self, method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        from azure.core.exceptions import HttpResponseError
        from azure.core.rest import HttpRequest
        from azure.mgmt.core.exceptions import ARMErrorFormat

        req = HttpRequest(method, url, json=body) if body is not None else HttpRequest(method, url)
        resp = self.clients.resources.send_request(req)
        if method == "GET" and resp.status_code == 404:
            return None
        if resp.status_code not in (200, 201, 204):
            raise HttpResponseError(response=resp, error_format=ARMErrorFormat)
        return resp.json() if resp.status_code != 204 and resp.content else {}


class ControllerSetup:
    """Looks for, and creates, the controller's identity and roles in the profile's subscription."""

    def __init__(self, clients: AzureClients, accounts: Sequence[str] = ()) -> None:
        self.clients = clients
        self.arm = _Arm(clients)
        self.sub = clients.subscription_id()
        self.accounts = tuple(accounts)
        self.region = clients.settings.regions[0]
        self.created: list[str] = []

    # -- names -----------------------------------------------------------------------------
    def definition_id(self, which: str) -> str:
        guid = uuid.uuid5(NAMESPACE, f"{self.sub.lower()}:{which}")
        return f"/subscriptions/{self.sub}/providers/Microsoft.Authorization/roleDefinitions/{guid}"

    def assignment_url(self, scope: str, principal: str, definition: str) -> str:
        guid = uuid.uuid5(NAMESPACE, f"{scope.lower()}|{principal}|{definition.lower()}")
        return f"{scope}/providers/Microsoft.Authorization/roleAssignments/{guid}?api-version={AUTHZ_API}"

    def _roles(self) -> list[tuple[str, str, str, list[str], list[str]]]:
        """(which, file, role name, actions, scopes to assign it on)."""
        sub_scope = f"/subscriptions/{self.sub}"
        out = [("controller", ROLE_FILE, f"Workbench Controller ({self.sub})", role_actions(ROLE_FILE), [sub_scope])]
        if self.accounts:
            out.append(("storage", STORAGE_ROLE_FILE, f"Workbench Controller Storage ({self.sub})",
                        role_actions(STORAGE_ROLE_FILE), list(self.accounts)))
        return out

    # -- look / make -------------------------------------------------------------------------
    def run(self, create: bool) -> ControllerIdentity:
        missing: list[str] = []
        try:
            group = self._get_group()
            if group is None:
                missing.append(f"resource group {GROUP}")
                if create:
                    self._put_group()
            ident = self.arm.send("GET", f"{identity_id(self.sub)}?api-version={MSI_API}")
            if ident is None:
                missing.append(f"user-assigned identity {NAME}")
                if create:
                    ident = self._put(f"{identity_id(self.sub)}?api-version={MSI_API}",
                                      {"location": self.region, "tags": {TAG_ROLE: ROLE_CONTROLLER}},
                                      f"user-assigned identity {NAME}", "identity")
            principal = ((ident or {}).get("properties") or {}).get("principalId")
            for which, _file, role_name, actions, scopes in self._roles():
                definition = self.definition_id(which)
                if not self._definition_current(definition, actions):
                    missing.append(f"role definition {role_name}")
                    if create:
                        self._put(f"{definition}?api-version={AUTHZ_API}", {"properties": {
                            "roleName": role_name, "type": "CustomRole",
                            "description": f"Cloud GPU Workbench controller: {_file}",
                            "permissions": [{"actions": actions, "notActions": [], "dataActions": [],
                                             "notDataActions": []}],
                            "assignableScopes": [f"/subscriptions/{self.sub}"]}}, f"role definition {role_name}",
                            "roleDefinitions")
                for scope in scopes:
                    if principal and self.arm.send("GET", self.assignment_url(scope, principal, definition)):
                        continue
                    missing.append(f"role assignment of {role_name} on {scope}")
                    if create and principal:
                        self._assign(scope, principal, definition, which, role_name)
        except Exception as exc:  # noqa: BLE001 - mapped
            err = exc if isinstance(exc, WorkbenchError) else self._refusal(exc, "reading the controller's identity")
            if create or not isinstance(err, AuthError):
                raise err from None
            # only looking, and not even allowed to look: say what to ask for instead of failing
            return ControllerIdentity(NAME, ready=False, missing=(*missing, f"{err.message} ({err.hint})"),
                                      policy_files=POLICY_FILES, details={"identity_id": identity_id(self.sub)})
        ready = create or not missing
        details = {"identity_id": identity_id(self.sub), "resource_group": GROUP,
                   "storage_accounts": ",".join(self.accounts)}
        machine: dict[str, str] = {}
        if principal:
            props = (ident or {}).get("properties") or {}
            details["principal_id"] = principal
            details["client_id"] = props.get("clientId", "")
            # what the controller's plugin signs in with on its VM (controller.json; settings.managed_identity_*)
            machine = {"managed_identity_client_id": details["client_id"], "subscription_id": self.sub,
                       "tenant_id": props.get("tenantId") or self.clients.settings.tenant_id}
        return ControllerIdentity(NAME, ready=ready, created=tuple(self.created) if create else (),
                                  missing=() if ready else tuple(missing), policy_files=POLICY_FILES, details=details,
                                  machine={k: v for k, v in machine.items() if v})

    def _get_group(self) -> Any:
        try:
            return self.clients.resources.resource_groups.get(GROUP)
        except Exception as exc:  # noqa: BLE001 - mapped
            err = self.clients.error(exc, f"looking up resource group {GROUP}")
            if isinstance(err, NotFoundError):
                return None
            raise err from None

    def _put_group(self) -> None:
        try:
            self.clients.resources.resource_groups.create_or_update(
                GROUP, {"location": self.region, "tags": {TAG_ROLE: ROLE_CONTROLLER}})
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._refusal(exc, f"creating resource group {GROUP}") from None
        self.created.append(f"resource group {GROUP}")

    def _definition_current(self, definition: str, actions: list[str]) -> bool:
        found = self.arm.send("GET", f"{definition}?api-version={AUTHZ_API}")
        if found is None:
            return False
        perms = (found.get("properties") or {}).get("permissions") or [{}]
        return sorted(a.lower() for a in perms[0].get("actions") or []) == sorted(a.lower() for a in actions)

    def _put(self, url: str, body: dict[str, Any], what: str, kind: str) -> dict[str, Any] | None:
        try:
            got = self.arm.send("PUT", url, body)
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._refusal(exc, f"creating {what}") from None
        self.created.append(what)
        return got

    def _assign(self, scope: str, principal: str, definition: str, which: str, role_name: str) -> None:
        props: dict[str, Any] = {"roleDefinitionId": definition, "principalId": principal,
                                 "principalType": "ServicePrincipal"}
        if which == "controller":
            props.update(condition=guard_condition(self.clients.settings.guard_role_id), conditionVersion="2.0")
        url = self.assignment_url(scope, principal, definition)
        deadline = time.monotonic() + self.clients.settings.launch_timeout_s
        made: list[bool] = []

        def put() -> None:
            self.arm.send("PUT", url, {"properties": props})
            made.append(True)

        err = assign_role(put, deadline, self.clients.settings.retry_backoff)  # a new identity replicates first
        if err is not None:
            raise self._refusal(err, f"assigning {role_name} on {scope}") from None
        if made:
            self.created.append(f"role assignment of {role_name} on {scope}")

    def _refusal(self, exc: BaseException, what: str) -> WorkbenchError:
        mapped = self.clients.error(exc, what)
        if isinstance(mapped, AuthError):
            mapped.hint = (f"ask an administrator to grant this app's identity the role of "
                           f"resources/policies/{ADDITIONS_FILE} on subscription {self.sub} (it adds "
                           "Microsoft.ManagedIdentity/userAssignedIdentities/write and /assign/action, "
                           "Microsoft.Authorization/roleDefinitions/write and roleAssignments/write), or to run "
                           "`workbench controller up` once with their own sign-in")
        return mapped


def controller_identity(clients: AzureClients, create: bool, accounts: Sequence[str] = ()) -> ControllerIdentity:
    """Look for (``create=False``) or make what is missing of the controller's identity (see the module doc)."""
    return ControllerSetup(clients, accounts).run(create)


def require_identity(clients: AzureClients, sub: str) -> None:
    """Before a controller launch: the identity exists (ConfigError saying how to make it otherwise)."""
    try:
        found = _Arm(clients).send("GET", f"{identity_id(sub)}?api-version={MSI_API}")
    except Exception as exc:  # noqa: BLE001 - mapped
        raise clients.error(exc, "looking up the controller's identity") from None
    if found is None:
        raise ConfigError(f"the controller's identity {NAME} does not exist in subscription {sub}",
                          hint="run `workbench controller up` (it creates the identity first)")
