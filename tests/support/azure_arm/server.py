"""The ARM-protocol test server: real HTTPS on 127.0.0.1, the real wire protocol of the calls we make.

    server = ArmServer(tmp_dir).start()
    account = server.new_account()       # a tenant, a service principal, its own subscription
    ... drive azure-identity and azure-mgmt-* at server.url with connection_verify=server.ca_file ...
    server.stop()

What it speaks (see the module docs of :mod:`.state`, :mod:`.compute`, :mod:`.network`,
:mod:`.extensions`):

* Microsoft Entra token endpoint for ClientSecretCredential (authority = ``server.url``,
  ``disable_instance_discovery=True``): OpenID configuration + client-credentials grant, with
  AADSTS errors for an unknown tenant, unknown client and wrong secret.
* ARM: subscriptions, resource groups (+ tag-filtered listing, async delete via Location),
  resource listings, compute (VMs, disks, resource SKUs, usages), network (NSG, VNet, public IP,
  NIC), role assignments, DevTestLab schedules, Cost Management queries (over cost lines a test sets).  Every ARM call needs a bearer token from the
  token endpoint and an ``api-version`` the real service accepts for that resource type
  (:data:`API_VERSIONS`), and is checked against the caller's role (403 AuthorizationFailed /
  LinkedAuthorizationFailed naming the action).
* Long-running operations: 201/202 with Azure-AsyncOperation (and Location for deletes and
  actions); they complete after ``polls`` status polls.
* The public Retail Prices API (``/api/retail/prices``: OData ``$filter``, ``currencyCode``,
  100 items a page with ``NextPageLink``) over the synthetic items.
* Fault injection by rule (:class:`Fault`): answer a matching request with an error (429 with
  Retry-After, 500, ...) or let it start an operation that fails (AllocationFailed, ...).
* Hold rules (:meth:`ArmServer.hold`): park a matching request until the test releases it, so a
  race test runs the race it names (tests/support/holds.py says what a hold guarantees).
* An audit of every request with the RBAC action it needed (:attr:`ArmServer.seen`).

Threading: one thread per connection (keep-alive); all state behind ``state.lock``.
"""

from __future__ import annotations

import json
import random
import re
import socket
import ssl
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from . import catalog, compute, odata
from .certs import make_tls_files
from .holding import ArmRequest, Holding, HoldRule  # noqa: F401  (ArmRequest: re-exported)
from .routes import route
from .state import ArmError, ArmState, Client, Ctx, Reply

#: api-version(s) accepted per namespace (or namespace/type); what the SDKs this project pins send
API_VERSIONS = {
    "subscriptions": {"2022-12-01"},
    "microsoft.resources": {"2025-04-01"},
    "microsoft.compute/skus": {"2021-07-01"},
    "microsoft.compute/disks": {"2026-03-02"},
    "microsoft.compute": {"2026-04-01"},
    "microsoft.network": {"2026-03-01"},
    "microsoft.authorization": {"2022-04-01"},
    "microsoft.devtestlab": {"2018-09-15"},
    "microsoft.costmanagement": {"2023-03-01"},
    "microsoft.storage": {"2026-09-01"},
    "microsoft.managedidentity": {"2023-01-31"},
}
PRICE_PAGE_SIZE = 100  # the Retail Prices API's page
CNY_PER_USD = 7.2  # the Retail Prices API converts with its own rate; any fixed rate shows the mechanism


@dataclass
class Fault:
    """Answer matching requests with an error, ``times`` times (-1: until removed).

    ``path`` is a regular expression searched in the lower-cased path; ``sub``
    limits the rule to one subscription's calls.  ``in_operation``: the request
    itself succeeds, the long-running operation it starts fails with code/message.
    ``rate``: the share of matching requests that fail, drawn per request from a
    generator seeded with ``seed`` (a fault storm whose rate does not depend on how
    fast the machine answers).
    """

    path: str
    method: str | None = None
    status: int = 500
    code: str = "InternalServerError"
    message: str = "Encountered internal server error."
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    in_operation: bool = False
    sub: str | None = None
    hits: int = 0
    rate: float = 1.0
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False, default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def matches(self, method: str, path: str) -> bool:
        if self.times == 0 or (self.method and self.method != method):
            return False
        if self.sub and f"/subscriptions/{self.sub}".lower() not in path.lower():
            return False
        if re.search(self.path, path.lower()) is None:
            return False
        return self.rate >= 1.0 or self._rng.random() < self.rate


@dataclass(frozen=True)
class Seen:
    """One request the server answered: who, what, which RBAC action(s) it needed, the status."""

    method: str
    path: str
    api_version: str | None
    client_id: str | None
    sub: str | None
    actions: tuple[str, ...]
    status: int


@dataclass(frozen=True)
class Account:
    tenant: str
    client_id: str
    secret: str
    subscription: str
    object_id: str


def action_for(method: str, segs: list[str]) -> str | None:
    """The RBAC action an ARM request needs (Azure's operation names), from its path segments."""
    low = [s.lower() for s in segs]
    verb = {"GET": "read", "HEAD": "read", "PUT": "write", "PATCH": "write", "DELETE": "delete"}.get(method)
    if low == ["subscriptions"] or (len(low) == 2 and low[0] == "subscriptions"):
        return "Microsoft.Resources/subscriptions/read"
    if len(low) < 3 or low[0] != "subscriptions":
        return None
    rest = low[2:]
    if rest[0] == "resourcegroups" and len(rest) <= 2:
        return f"Microsoft.Resources/subscriptions/resourceGroups/{verb}"
    if rest == ["resources"]:
        return "Microsoft.Resources/subscriptions/resources/read"
    if rest[0] == "resourcegroups" and rest[2:] == ["resources"]:
        return "Microsoft.Resources/subscriptions/resourceGroups/resources/read"
    if rest[0] == "operationresults":
        return "Microsoft.Resources/subscriptions/operationresults/read"
    if "providers" not in rest:
        return None
    i = len(rest) - 1 - rest[::-1].index("providers")  # the last: an extension resource's own provider
    ns, tail = segs[2 + i + 1], segs[2 + i + 2:]
    types = [tail[j] for j in range(0, len(tail), 2)]
    if len(tail) % 2 == 1 and len(tail) > 1:  # a trailing action or child collection
        *types, last = types
        base = "/".join([ns, *types])
        return f"{base}/{last}/action" if method == "POST" else f"{base}/{last}/read"
    base = "/".join([ns, *types])
    return f"{base}/action" if method == "POST" else f"{base}/{verb}"


class ArmServer(Holding):
    """The server (see the module doc).  ``polls``: status polls before an operation completes."""

    def __init__(self, folder: Path, polls: int = 1) -> None:
        self.tls = make_tls_files(folder)
        self.state = ArmState(polls=polls)
        self.faults: list[Fault] = []
        self.holds: list[HoldRule] = []
        self.seen: list[Seen] = []
        self.price_page_size = PRICE_PAGE_SIZE
        self.prices = catalog.retail_items()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------
    def start(self) -> "ArmServer":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.tls.cert_file, self.tls.key_file)
        server = self

        class Httpd(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def get_request(self):  # TLS handshake on the connection's own thread, not the accept loop
                sock, addr = self.socket.accept()
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle + delayed-ACK stalls
                return ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

        class Handler(_Handler):
            arm = server

        self._httpd = Httpd(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="arm-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() first"
        return f"https://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def ca_file(self) -> str:
        return str(self.tls.ca_file)

    @property
    def prices_url(self) -> str:
        return f"{self.url}/api/retail/prices"

    # -- test helpers -------------------------------------------------------------------
    def new_account(self, actions: tuple[str, ...] = ("*",), name: str = "Workbench Test") -> Account:
        """A fresh tenant + service principal + subscription (tests never share state through it)."""
        tenant, sub = str(uuid.uuid4()), str(uuid.uuid4())
        client_id, secret = str(uuid.uuid4()), f"s3cr3t-{uuid.uuid4().hex}"
        self.state.add_subscription(sub, tenant, name)
        c = self.state.add_client(tenant, client_id, secret, (sub,), actions)
        return Account(tenant, client_id, secret, sub, c.object_id)

    def add_fault(self, path: str, **kw: Any) -> Fault:
        f = Fault(path, **kw)
        with self.state.lock:
            self.faults.append(f)
        return f

    def clear_faults(self, sub: str | None = None) -> None:
        """Remove the fault and hold rules of ``sub`` (every rule when None); held requests go on."""
        with self.state.lock:
            self.faults = [f for f in self.faults if sub is not None and f.sub != sub]
        self.release_holds(sub)

    def actions(self, client_id: str) -> set[str]:
        """Every RBAC action the calls of ``client_id`` needed (including linked ones), answered or refused."""
        with self.state.lock:
            return {a for s in self.seen if s.client_id == client_id for a in s.actions}

    def add_client(self, account: Account, actions: tuple[str, ...] = ("*",)) -> Account:
        """Another service principal in ``account``'s tenant with a role on its subscription."""
        client_id, secret = str(uuid.uuid4()), f"s3cr3t-{uuid.uuid4().hex}"
        c = self.state.add_client(account.tenant, client_id, secret, (account.subscription,), actions)
        return Account(account.tenant, client_id, secret, account.subscription, c.object_id)

    def groups(self, sub: str) -> list[dict[str, Any]]:
        with self.state.lock:
            return [dict(g) for g in self.state.list_groups(sub)]

    def resources(self, sub: str, group: str | None = None) -> list[dict[str, Any]]:
        with self.state.lock:
            found = self.state.in_group(sub, group) if group else self.state.in_subscription(sub)
            return [dict(r) for r in found]

    def vm(self, sub: str, group: str) -> dict[str, Any] | None:
        return next((r for r in self.resources(sub, group) if r["type"] == compute.VM_TYPE), None)

    def set_power(self, sub: str, group: str, power: str) -> None:
        """What happens outside the app: a shutdown from inside the VM ("stopped"), a spot eviction ("evicted")."""
        with self.state.lock:
            vm = next(r for r in self.state.in_group(sub, group) if r["type"] == compute.VM_TYPE)
            if power == "evicted":
                if vm["properties"].get("evictionPolicy") == "Delete":
                    compute.remove_vm(self.state, vm)
                else:
                    vm["_power"] = "deallocated"
            else:
                vm["_power"] = power

    # -- dispatch (called by the handler) -------------------------------------------------
    def _handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[Reply, Seen]:
        parts = urllib.parse.urlsplit(raw_path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items()}
        segs = [urllib.parse.unquote(s) for s in parts.path.split("/") if s]
        client: Client | None = None
        sub = segs[1] if len(segs) > 1 and segs[0].lower() == "subscriptions" else None
        actions: list[str] = []
        try:
            with self.state.lock:
                for f in self.faults:
                    if f.matches(method, parts.path) and not f.in_operation:
                        f.hits += 1
                        f.times -= 1 if f.times > 0 else 0
                        raise ArmError(f.status, f.code, f.message, f.headers)
            if parts.path.lower().startswith("/api/retail/prices"):
                reply = self._prices(query)
            elif len(segs) >= 2 and segs[1:] == ["v2.0", ".well-known", "openid-configuration"]:
                reply = self._openid(segs[0])
            elif len(segs) == 4 and segs[1:] == ["oauth2", "v2.0", "token"] and method == "POST":
                reply = self._token(segs[0], body)
            else:
                auth = headers.get("Authorization") or ""
                client = self.state.client_for(auth[7:]) if auth.startswith("Bearer ") else None
                if client is None:
                    raise ArmError(401, "InvalidAuthenticationToken", "The access token is invalid.")
                reply = self._arm(method, segs, query, body, client, actions)
        except ArmError as exc:
            if exc.code.islower() and "_" in exc.code:  # AAD-style error document
                reply = Reply(exc.status, {"error": exc.code, "error_description": exc.message,
                                           "error_codes": [int(re.search(r"AADSTS(\d+)", exc.message).group(1))]})
            else:
                reply = Reply(exc.status, exc.body(), exc.headers)
        seen = Seen(method, parts.path, query.get("api-version"), client.client_id if client else None, sub,
                    tuple(actions), reply.status)
        with self.state.lock:
            self.seen.append(seen)
        return reply, seen

    # -- identity -----------------------------------------------------------------------
    def _openid(self, tenant: str) -> Reply:
        if tenant not in self.state.tenants:
            raise ArmError(400, "invalid_tenant", f"AADSTS90002: Tenant '{tenant}' not found. Check to make sure you "
                           "have the correct tenant ID and are signing into the correct cloud.")
        base = f"{self.url}/{tenant}"
        return Reply(200, {"token_endpoint": f"{base}/oauth2/v2.0/token",
                           "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                           "issuer": f"{base}/v2.0", "tenant_region_scope": "NA",
                           "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt"]})

    def _token(self, tenant: str, body: bytes) -> Reply:
        form = {k: v[-1] for k, v in urllib.parse.parse_qs(body.decode()).items()}
        if form.get("grant_type") != "client_credentials":
            raise ArmError(400, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
        scope = form.get("scope", "")
        if not scope.endswith("/.default"):
            raise ArmError(400, "invalid_scope", f"AADSTS1002012: The provided value for scope {scope} is not valid.")
        token = self.state.issue_token(tenant, form.get("client_id", ""), form.get("client_secret", ""))
        return Reply(200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token})

    # -- retail prices ------------------------------------------------------------------
    def _prices(self, query: dict[str, str]) -> Reply:
        flt = query.get("$filter")
        try:
            pred = odata.parse(flt) if flt else (lambda item: True)
        except ValueError as exc:
            raise ArmError(400, "BadRequest", f"Invalid OData filter: {exc}") from None
        currency = query.get("currencyCode", "'USD'").strip("'")
        if currency not in ("USD", "CNY"):
            raise ArmError(400, "BadRequest", f"Invalid currency code {currency}.")
        items = [i for i in self.prices if pred(i)]
        skip = int(query.get("$skip", "0") or 0)
        page = items[skip:skip + self.price_page_size]
        if currency != "USD":
            page = [{**i, "currencyCode": currency, "retailPrice": round(i["retailPrice"] * CNY_PER_USD, 4),
                     "unitPrice": round(i["unitPrice"] * CNY_PER_USD, 4)} for i in page]
        nxt = None
        if skip + self.price_page_size < len(items):
            q = {k: v for k, v in query.items() if k != "$skip"}
            q["$skip"] = str(skip + self.price_page_size)
            nxt = f"{self.prices_url}?{urllib.parse.urlencode(q, quote_via=urllib.parse.quote)}"
        return Reply(200, {"BillingCurrency": currency, "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
                           "Items": page, "NextPageLink": nxt, "Count": len(page)})

    # -- ARM ----------------------------------------------------------------------------
    def _check_version(self, segs: list[str], query: dict[str, str]) -> None:
        low = [s.lower() for s in segs]
        if len(low) <= 2 or (len(low) == 3 and low[2] == "locations"):
            key = "subscriptions"
        elif "providers" in low:
            i = len(low) - 1 - low[::-1].index("providers")  # an extension resource: its own provider's version
            ns = low[i + 1]
            key = f"{ns}/{low[i + 2]}" if len(low) > i + 2 and f"{ns}/{low[i + 2]}" in API_VERSIONS else ns
            if len(low) > i + 4 and low[i + 2] == "locations" and low[i + 4] in ("operations", "operationresults"):
                key = ns  # operation status: any version of the namespace
                allowed = set().union(*(v for k, v in API_VERSIONS.items() if k.split("/")[0] == ns))
                self._version_in(query, allowed)
                return
        else:
            key = "microsoft.resources"
        if key not in API_VERSIONS:
            raise ArmError(404, "NoRegisteredProviderFound", f"No registered resource provider found for '{key}'.")
        self._version_in(query, API_VERSIONS[key])

    @staticmethod
    def _version_in(query: dict[str, str], allowed: set[str]) -> None:
        v = query.get("api-version")
        if not v:
            raise ArmError(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required "
                           "for all requests.")
        if v not in allowed:
            raise ArmError(400, "InvalidApiVersionParameter", f"The api-version '{v}' is invalid. The supported versions "
                           f"are '{','.join(sorted(allowed))}'.")

    def _arm(self, method: str, segs: list[str], query: dict[str, str], body: bytes, client: Client,
             actions: list[str]) -> Reply:
        self._check_version(segs, query)
        path = "/" + "/".join(segs)
        action = action_for(method, segs)
        if action is None:
            raise ArmError(404, "InvalidResourceType", f"The resource type could not be found for path {path}.")
        actions.append(action)
        if len(segs) >= 2 and segs[1] not in client.subscriptions:
            raise ArmError(404, "SubscriptionNotFound", f"The subscription '{segs[1]}' could not be found.")
        if not client.may(action):
            raise ArmError(403, "AuthorizationFailed", f"The client '{client.client_id}' with object id "
                           f"'{client.object_id}' does not have authorization to perform action '{action}' over scope "
                           f"'{path}' or the scope is invalid. If access was recently granted, please refresh your "
                           "credentials.")

        def require(linked: str, scope: str) -> None:
            actions.append(linked)
            if not client.may(linked):
                raise ArmError(403, "LinkedAuthorizationFailed", f"The client '{client.client_id}' with object id "
                               f"'{client.object_id}' has permission to perform action '{action}' on scope '{path}'; "
                               f"however, it does not have permission to perform action(s) '{linked}' on the linked "
                               f"scope(s) '{scope}' (respectively) or the linked scope(s) are invalid.")

        try:
            data = json.loads(body) if body else {}
        except ValueError:
            raise ArmError(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized.") from None
        ctx = Ctx(method, segs[1] if len(segs) > 1 else "", client, self.url, query.get("api-version", ""), query)
        with self.state.lock:
            for f in self.faults:
                if f.in_operation and f.matches(method, path):
                    f.hits += 1
                    f.times -= 1 if f.times > 0 else 0
                    ctx.lro_error = ArmError(200, f.code, f.message)
                    break
            return route(self, ctx, method, segs, query, data, require)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    arm: ArmServer

    def setup(self) -> None:
        super().setup()
        self.request.settimeout(30)
        try:
            self.request.do_handshake()
        except (OSError, ssl.SSLError):
            self.close_connection = True

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        reply, _ = self.arm.handle(self.command, self.path, self.headers, body)
        data = b"" if reply.body is None else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        for k, v in reply.headers.items():
            self.send_header(k, v)
        if reply.body is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("x-ms-request-id", str(uuid.uuid4()))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass
