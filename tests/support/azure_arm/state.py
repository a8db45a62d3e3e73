"""The ARM test server's state: identities, subscriptions, resource groups, resources, operations.

Everything lives in plain dicts shaped like ARM's JSON (camelCase), keyed by the
lower-cased resource id, behind one lock: handlers run on the HTTP server's
threads and every call below takes the lock.  Long-running operations complete
after a fixed number of status polls (deterministic, no clocks); their effects run
then, under the lock.  Type-specific behaviour lives in :mod:`.compute` and
:mod:`.network`; this module holds the generic parts.
"""

from __future__ import annotations

import fnmatch
import itertools
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from . import catalog


class ArmError(Exception):
    """An ARM error response: ``{"error": {"code", "message"}}`` with an HTTP status."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Client:
    """A service principal: secret, object id, the actions its role grants, the subscriptions it sees."""

    tenant: str
    client_id: str
    secret: str
    object_id: str
    actions: tuple[str, ...] = ("*",)
    subscriptions: tuple[str, ...] = ()

    def may(self, action: str) -> bool:
        return any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in self.actions)


@dataclass
class Ctx:
    """One request as the handlers see it."""

    method: str
    sub: str
    client: Client
    base: str  # "https://127.0.0.1:port"
    api_version: str
    query: dict[str, str]
    lro_error: ArmError | None = None  # fault injection: the operation this request starts fails so


@dataclass
class SubConfig:
    """What a test may change about one subscription's cloud (each test uses its own subscription)."""

    quotas: dict[tuple[str, str], int] = field(default_factory=dict)  # (region, quota name) -> limit
    no_capacity: set[tuple[str, str, str]] = field(default_factory=set)  # (region, size, zone or "*")
    restricted: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (region, size) -> json
    features: set[str] = field(default_factory=set)  # e.g. "Microsoft.Compute/EncryptionAtHost"
    principal_delay: int = 0  # role assignments answer PrincipalNotFound this many times for a new VM identity
    hold: bool = False  # operations stay InProgress (answered with Retry-After: 1) until this is cleared
    costs: list[dict[str, Any]] = field(default_factory=list)  # billed cost lines: day, tags, cost, currency


@dataclass
class Operation:
    id: str
    polls_left: int
    on_done: Callable[[], None]
    on_fail: Callable[[ArmError], None]
    forced_error: ArmError | None = None
    sub: str = ""
    status: str = "InProgress"
    error: ArmError | None = None


class ArmState:
    """The whole fake cloud (see the module doc)."""

    def __init__(self, polls: int = 1) -> None:
        self.lock = threading.RLock()
        self.polls = polls  # status polls before an operation completes
        self.tenants: set[str] = set()
        self.clients: dict[tuple[str, str], Client] = {}
        self.tokens: dict[str, Client] = {}
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}  # lower id -> group json
        self.resources: dict[str, dict[str, Any]] = {}  # lower id -> resource json
        self.operations: dict[str, Operation] = {}
        self.principals: set[str] = set()  # object ids role assignments may name
        self.configs: dict[str, SubConfig] = {}  # per subscription: quotas, capacity, restrictions
        self._ids = itertools.count(1)

    # -- identities ------------------------------------------------------------------
    def add_client(self, tenant: str, client_id: str, secret: str, subscriptions: tuple[str, ...],
                   actions: tuple[str, ...] = ("*",)) -> Client:
        with self.lock:
            self.tenants.add(tenant)
            c = Client(tenant, client_id, secret, str(uuid.uuid4()), tuple(actions), tuple(subscriptions))
            self.clients[(tenant, client_id)] = c
            self.principals.add(c.object_id)
            return c

    def config(self, sub: str) -> SubConfig:
        with self.lock:
            return self.configs.setdefault(sub, SubConfig())

    def add_subscription(self, sub: str, tenant: str, name: str) -> None:
        with self.lock:
            self.configs.setdefault(sub, SubConfig())
            self.subscriptions[sub] = {
                "id": f"/subscriptions/{sub}", "subscriptionId": sub, "tenantId": tenant,
                "displayName": name, "state": "Enabled",
                "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01", "quotaId": "PayAsYouGo_2014-09-01",
                                         "spendingLimit": "Off"},
                "authorizationSource": "RoleBased",
            }

    def issue_token(self, tenant: str, client_id: str, secret: str) -> str:
        """A bearer token, or ArmError with AAD's own error codes."""
        with self.lock:
            if tenant not in self.tenants:
                raise ArmError(400, "invalid_tenant", f"AADSTS90002: Tenant '{tenant}' not found. Check to make sure "
                               "you have the correct tenant ID and are signing into the correct cloud.")
            c = self.clients.get((tenant, client_id))
            if c is None:
                raise ArmError(400, "unauthorized_client", f"AADSTS700016: Application with identifier '{client_id}' "
                               f"was not found in the directory '{tenant}'.")
            if secret != c.secret:
                raise ArmError(401, "invalid_client", "AADSTS7000215: Invalid client secret provided. Ensure the "
                               "secret being sent in the request is the client secret value, not the client secret "
                               f"ID, for a secret added to app '{client_id}'.")
            token = f"tok-{uuid.uuid4().hex}"
            self.tokens[token] = c
            return token

    def client_for(self, token: str) -> Client | None:
        with self.lock:
            return self.tokens.get(token)

    # -- operations ------------------------------------------------------------------
    def new_operation(self, ctx: Ctx, on_done: Callable[[], None],
                      on_fail: Callable[[ArmError], None] = lambda e: None) -> Operation:
        op = Operation(f"{uuid.uuid4()}", self.polls, on_done, on_fail, forced_error=ctx.lro_error, sub=ctx.sub)
        self.operations[op.id] = op
        if op.polls_left <= 0 and not self.config(ctx.sub).hold:
            self._finish(op)
        return op

    def poll(self, op_id: str) -> Operation:
        with self.lock:
            op = self.operations.get(op_id)
            if op is None:
                raise ArmError(404, "OperationNotFound", f"The operation '{op_id}' was not found.")
            if op.status == "InProgress" and not self.config(op.sub).hold:
                op.polls_left -= 1
                if op.polls_left <= 0:
                    self._finish(op)
            return op

    def held(self, op: Operation) -> bool:
        return op.status == "InProgress" and self.config(op.sub).hold

    def _finish(self, op: Operation) -> None:
        try:
            if op.forced_error is not None:
                raise op.forced_error
            op.on_done()
            op.status = "Succeeded"
        except ArmError as exc:
            op.status, op.error = "Failed", exc
            op.on_fail(exc)

    def async_headers(self, ctx: Ctx, namespace: str, location: str, op: Operation,
                      location_header: bool = False) -> dict[str, str]:
        prefix = f"{ctx.base}/subscriptions/{ctx.sub}/providers/{namespace}/locations/{location}"
        headers = {"Azure-AsyncOperation": f"{prefix}/operations/{op.id}?api-version={ctx.api_version}"}
        if location_header:
            headers["Location"] = f"{prefix}/operationResults/{op.id}?api-version={ctx.api_version}"
        return headers

    # -- groups ----------------------------------------------------------------------
    @staticmethod
    def group_id(sub: str, name: str) -> str:
        return f"/subscriptions/{sub}/resourceGroups/{name}"

    def group(self, sub: str, name: str) -> dict[str, Any]:
        g = self.groups.get(self.group_id(sub, name).lower())
        if g is None or g["properties"]["provisioningState"] == "Deleted":
            raise ArmError(404, "ResourceGroupNotFound", f"Resource group '{name}' could not be found.")
        return g

    def put_group(self, ctx: Ctx, name: str, body: dict[str, Any]) -> Reply:
        location = (body or {}).get("location")
        if not location:
            raise ArmError(400, "LocationRequired", "The location property is required for this definition.")
        if location not in catalog.REGIONS:
            raise ArmError(400, "LocationNotAvailableForResourceGroup",
                           f"The provided location '{location}' is not available for resource group.")
        gid = self.group_id(ctx.sub, name)
        existing = self.groups.get(gid.lower())
        if existing is not None and existing["properties"]["provisioningState"] == "Deleting":
            raise ArmError(409, "ResourceGroupBeingDeleted",
                           f"The resource group '{name}' is in deprovisioning state and cannot perform this operation.")
        if existing is not None and existing["location"] != location:
            raise ArmError(409, "InvalidResourceGroupLocation",
                           f"Invalid resource group location '{location}'. The Resource group already exists in "
                           f"location '{existing['location']}'.")
        g = {"id": gid, "name": name, "type": "Microsoft.Resources/resourceGroups", "location": location,
             "tags": dict(body.get("tags") or {}), "properties": {"provisioningState": "Succeeded"}}
        self.groups[gid.lower()] = g
        return Reply(200 if existing else 201, g)

    def delete_group(self, ctx: Ctx, name: str) -> Reply:
        gid = self.group_id(ctx.sub, name).lower()
        g = self.groups.get(gid)
        if g is None:  # unlike resources (204), a missing group answers 404
            raise ArmError(404, "ResourceGroupNotFound", f"Resource group '{name}' could not be found.")
        g["properties"]["provisioningState"] = "Deleting"

        def done() -> None:
            for rid in [r for r in self.resources if r.startswith(gid + "/")]:
                self.resources.pop(rid, None)
            self.groups.pop(gid, None)

        def failed(exc: ArmError) -> None:
            g["properties"]["provisioningState"] = "Succeeded"

        op = self.new_operation(ctx, done, failed)
        loc = f"{ctx.base}/subscriptions/{ctx.sub}/operationresults/{op.id}?api-version={ctx.api_version}"
        return Reply(202, None, {"Location": loc, "Retry-After": "0"})

    def list_groups(self, sub: str) -> list[dict[str, Any]]:
        prefix = f"/subscriptions/{sub}/".lower()
        return [g for k, g in self.groups.items() if k.startswith(prefix)]

    # -- resources -------------------------------------------------------------------
    def get(self, rid: str, code: str = "ResourceNotFound") -> dict[str, Any]:
        r = self.resources.get(rid.lower())
        if r is None:
            parts = rid.split("/")
            raise ArmError(404, code, f"The Resource '{'/'.join(parts[-2:])}' under resource group "
                           f"'{parts[4] if len(parts) > 4 else ''}' was not found.")
        return r

    def find(self, rid: str) -> dict[str, Any] | None:
        return self.resources.get(rid.lower())

    def store(self, resource: dict[str, Any]) -> dict[str, Any]:
        self.resources[resource["id"].lower()] = resource
        return resource

    def remove(self, rid: str) -> None:
        self.resources.pop(rid.lower(), None)

    def in_group(self, sub: str, group: str) -> list[dict[str, Any]]:
        prefix = self.group_id(sub, group).lower() + "/"
        return [r for k, r in self.resources.items() if k.startswith(prefix)]

    def in_subscription(self, sub: str) -> list[dict[str, Any]]:
        prefix = f"/subscriptions/{sub}/".lower()
        return [r for k, r in self.resources.items() if k.startswith(prefix)]

    def next_ip(self) -> str:
        n = next(self._ids)
        return f"20.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"

    # -- quota -----------------------------------------------------------------------
    def limit(self, sub: str, region: str, name: str) -> int:
        return self.config(sub).quotas.get((region, name), catalog.QUOTAS.get(name, 0))

    def usage(self, sub: str, region: str) -> dict[str, int]:
        """vCPUs in use per quota name, counted from the VMs that hold cores (not deallocated, not failed)."""
        used: dict[str, int] = {"cores": 0, "lowPriorityCores": 0, "virtualMachines": 0}
        for r in self.in_subscription(sub):
            if r["type"] != "Microsoft.Compute/virtualMachines" or r["location"] != region:
                continue
            used["virtualMachines"] += 1
            if r["properties"]["provisioningState"] == "Failed" or r.get("_power") == "deallocated":
                continue
            size = catalog.SIZES[r["properties"]["hardwareProfile"]["vmSize"]]
            if r["properties"].get("priority") == "Spot":
                used["lowPriorityCores"] += size.vcpus
            else:
                used["cores"] += size.vcpus
                used[size.family] = used.get(size.family, 0) + size.vcpus
        return used


def public(resource: dict[str, Any]) -> dict[str, Any]:
    """A stored resource as ARM returns it (private ``_keys`` dropped)."""
    return {k: v for k, v in resource.items() if not k.startswith("_")}
