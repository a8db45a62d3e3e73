"""The Alibaba Cloud RPC test server: real HTTP on 127.0.0.1, the SDK's real signature checked here.

    server = AlibabaServer().start()
    account = server.new_account()          # an account + RAM user AccessKey; its own resources
    ... drive alibabacloud_ecs20140526 / _vpc20160428 / _sts20150401 / _bssopenapi20171214 at
        Config(endpoint=server.endpoint, protocol="http", access_key_id=…, access_key_secret=…) ...
    server.stop()

One endpoint serves every product: the ``x-acs-version`` header names it (ECS 2014-05-26, VPC
2016-04-28, STS 2015-04-01, BSS OpenAPI 2017-12-14) and ``x-acs-action`` the call.  Every call is
signed (ACS3-HMAC-SHA256, :mod:`.signing`), checked against the caller's RAM actions
(``ecs:RunInstances`` …; 403 ``Forbidden.RAM`` naming the action, the shape RAM answers with),
recorded in :attr:`AlibabaServer.seen`, then answered by :mod:`.ecs`, :mod:`.vpc` or :mod:`.identity`.

Test controls: :meth:`add_fault` (answer matching calls with any error, e.g. ``Throttling.User``,
``ServiceUnavailable``; ``after=True`` runs the call and loses the answer), :meth:`hold` (block a
matching call until the test releases it: race tests), per-account :class:`~.state.Knobs` (no stock
per zone/type, vCPU quota, state durations, bill items), :meth:`preempt` (spot reclaim), and the
test clock of each account (``server.clock(account).advance(s)`` to reach an AutoReleaseTime).

Threading: one thread per connection; all state behind ``state.lock`` (holds wait outside it).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import random
import re
import socket
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from . import ecs, identity, ram, vpc
from .errors import ApiError
from .params import Params
from .signing import SignatureError, verify
from .state import Account, Clock, CloudState, Knobs

PRODUCTS: dict[str, tuple[str, dict[str, Callable[..., dict[str, Any]]]]] = {
    "2014-05-26": ("ecs", ecs.ACTIONS),
    "2016-04-28": ("vpc", vpc.ACTIONS),
    "2015-04-01": ("sts", identity.STS_ACTIONS),
    "2017-12-14": ("bssapi", identity.BSS_ACTIONS),
    "2015-05-01": ("ram", ram.RAM_ACTIONS),
}
#: calls every identity may make without a RAM grant
UNGUARDED = {"sts:GetCallerIdentity"}


@dataclass
class Fault:
    """Answer calls whose RAM action matches ``action`` (regex, e.g. ``ecs:RunInstances``) with an error.

    ``times``: how many calls (-1: until removed); ``account``: only that account's calls;
    ``after``: run the call, then lose its answer (the error is sent instead); ``probability``: the share
    of matching calls that fail (a fault storm), drawn from the server's seeded random source.
    """

    action: str
    status: int = 503
    code: str = "ServiceUnavailable"
    message: str = "The request has failed due to a temporary failure of the server."
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    account: str | None = None
    after: bool = False
    probability: float = 1.0
    hits: int = 0

    def matches(self, action: str, account_id: str | None) -> bool:
        if self.times == 0 or (self.account and self.account != account_id):
            return False
        return re.fullmatch(self.action, action) is not None


@dataclass
class Hold:
    """Block matching calls (before they run) until :meth:`release`; ``arrived`` is set when one waits."""

    action: str
    account: str | None = None
    times: int = 1
    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()


@dataclass(frozen=True)
class Seen:
    action: str  # RAM action, e.g. "ecs:RunInstances"
    account_id: str | None
    access_key_id: str | None
    region: str | None
    status: int
    code: str | None
    params: tuple[tuple[str, str], ...] = ()


class AlibabaServer:
    def __init__(self) -> None:
        self.state = CloudState()
        self.faults: list[Fault] = []
        self.holds: list[Hold] = []
        self.seen: list[Seen] = []
        self.page_size = 10  # list calls answer at most this many items a page (pagination is exercised)
        self.random = random.Random(19)  # fault storms draw from here: a run is reproducible
        self.observers: list[Callable[[Seen], None]] = []  # called after a call ran, before its answer goes out
        self.raw: collections.deque[tuple[str, str, dict[str, str], bytes]] = collections.deque(maxlen=50)
        self._httpd: ThreadingHTTPServer | None = None

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> "AlibabaServer":
        server = self

        class Httpd(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def get_request(self):  # no Nagle + delayed-ACK stalls (40 ms a call otherwise)
                sock, addr = self.socket.accept()
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock, addr

        class Handler(_Handler):
            api = server

        self._httpd = Httpd(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, name="alibaba-server", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def endpoint(self) -> str:
        """``127.0.0.1:PORT`` (the SDK's Config.endpoint; protocol http)."""
        assert self._httpd is not None, "start() first"
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    # -- test controls -----------------------------------------------------------------------
    def new_account(self, actions: tuple[str, ...] = ("*",)) -> Account:
        return self.state.new_account(actions)

    def new_key(self, account: Account, actions: tuple[str, ...] | None = None) -> Account:
        """Another RAM user's AccessKey in ``account`` (same resources; its calls are told apart by key)."""
        import secrets as _secrets

        with self.state.lock:
            key = dataclasses.replace(account, access_key_id=f"LTAI5t{_secrets.token_hex(9)}",
                                      secret=_secrets.token_urlsafe(22),
                                      actions=tuple(actions) if actions is not None else account.actions)
            self.state.accounts[key.access_key_id] = key
            return key

    def clock(self, account: Account) -> Clock:
        """The account's test clock: ``advance`` it to make time pass for that account's cloud only."""
        return self.state.clocks[account.account_id]

    def knobs(self, account: Account) -> Knobs:
        return self.state.knobs[account.account_id]

    def add_fault(self, action: str, **kw: Any) -> Fault:
        f = Fault(action, **kw)
        with self.state.lock:
            self.faults.append(f)
        return f

    def observe(self, callback: Callable[[Seen], None]) -> Callable[[], None]:
        """Call ``callback(seen)`` after every call ran, before its answer is sent; returns the remover."""
        with self.state.lock:
            self.observers.append(callback)

        def remove() -> None:
            with self.state.lock:
                if callback in self.observers:
                    self.observers.remove(callback)

        return remove

    def clear_faults(self) -> None:
        with self.state.lock:
            self.faults.clear()

    def hold(self, action: str, account: Account | None = None, times: int = 1) -> Hold:
        h = Hold(action, account.account_id if account else None, times)
        with self.state.lock:
            self.holds.append(h)
        return h

    def actions(self, account: Account) -> set[str]:
        """Every RAM action the account's calls needed (answered or refused)."""
        with self.state.lock:
            return {s.action for s in self.seen if s.account_id == account.account_id}

    def calls_of(self, account: Account) -> list[Seen]:
        with self.state.lock:
            return [s for s in self.seen if s.account_id == account.account_id]

    def calls(self, account: Account, action: str) -> list[Seen]:
        with self.state.lock:
            return [s for s in self.seen if s.account_id == account.account_id and s.action == action]

    def instances(self, account: Account) -> list[dict[str, Any]]:
        with self.state.lock:
            self.state.tick(account.account_id)
            return [dict(i) for i in self.state.spaces[account.account_id].instances.values()]

    def resources(self, account: Account) -> dict[str, list[dict[str, Any]]]:
        """Everything the account has (instances, VPCs, vSwitches, groups, keys, disks, EIPs)."""
        with self.state.lock:
            self.state.tick(account.account_id)
            s = self.state.spaces[account.account_id]
            return {"instances": [dict(x) for x in s.instances.values()], "vpcs": [dict(x) for x in s.vpcs.values()],
                    "vswitches": [dict(x) for x in s.vswitches.values()],
                    "groups": [dict(x) for x in s.groups.values()], "keys": [dict(x) for x in s.keys.values()],
                    "disks": [dict(x) for x in s.disks.values()], "eips": [dict(x) for x in s.eips.values()]}

    def released(self, account: Account) -> list[dict[str, Any]]:
        with self.state.lock:
            self.state.tick(account.account_id)
            return list(self.state.spaces[account.account_id].released)

    def preempt(self, account: Account, instance_id: str) -> None:
        """A spot reclaim: the instance shows OperationLocks Recycling, then is released ``recycle_s`` later."""
        with self.state.lock:
            inst = self.state.spaces[account.account_id].instances[instance_id]
            inst["OperationLocks"] = {"LockReason": [{"LockReason": "Recycling", "LockMsg": "The spot instance "
                                                      "will be released because the market price rose or stock ran out."}]}
            inst["_recycle_at"] = self.state.now(account.account_id) + self.knobs(account).recycle_s

    def shut_down_inside(self, account: Account, instance_id: str, economical: bool = False) -> None:
        """What an OS shutdown does to a pay-as-you-go instance: Stopped, in standard mode (KeepCharging: it
        still bills) unless the account's economical mode applies (StopCharging)."""
        with self.state.lock:
            inst = self.state.spaces[account.account_id].instances[instance_id]
            inst.update(Status="Stopped", StoppedMode="StopCharging" if economical else "KeepCharging",
                        _since=self.state.now(account.account_id))

    def add_eip(self, account: Account, region: str, tags: dict[str, str]) -> str:
        """A tagged Elastic IP address (what a half-finished launch of another tool may leave)."""
        return vpc.allocate_eip(self.state, account.account_id, region, tags)

    # -- dispatch ----------------------------------------------------------------------------
    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict, dict]:
        self.raw.append((method, raw_path, dict(headers), body))  # what arrived, for replay tests
        parts = urllib.parse.urlsplit(raw_path)
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        low = {k.lower(): v for k, v in headers.items()}
        request_id = str(uuid.uuid4()).upper()
        version, action_name = low.get("x-acs-version", ""), low.get("x-acs-action", "")
        product = PRODUCTS.get(version)
        ram_action = f"{product[0]}:{action_name}" if product else f"?:{action_name}"
        form = []
        if body and "x-www-form-urlencoded" in low.get("content-type", ""):
            form = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True)
        params = Params(pairs + form)
        account: Account | None = None
        ak: str | None = None
        try:
            # the test clock may run ahead; the signature's date is checked against real time
            signed = verify(method, parts.path, pairs, headers, body, self.state.secret_for,
                            datetime.datetime.now(datetime.timezone.utc))
            ak = signed.access_key_id
            account, allowed = self._who(signed)
            if product is None:
                raise ApiError(400, "InvalidVersion", f"Specified parameter Version is not valid: {version!r}.")
            handler = product[1].get(action_name)
            if handler is None:
                raise ApiError(404, "InvalidApi.NotFound", "Specified api is not found, please check your url and method.")
            self._fault(ram_action, account, before=True)
            if ram_action not in UNGUARDED and not account.may(ram_action, allowed) and product[0] == "ram":
                raise ApiError(403, "NoPermission", "You are not authorized to do this action. You should be "
                               "authorized by RAM.")  # RAM's own code (www.alibabacloud.com/help/en/ram …)
            if ram_action not in UNGUARDED and not account.may(ram_action, allowed):
                raise ApiError(403, "Forbidden.RAM", "User not authorized to operate on the specified resource, or "
                               "this API doesn't support RAM.",
                               extra={"AccessDeniedDetail": {"AuthAction": ram_action, "PolicyType": "AccountLevelIdentityBasedPolicy", "NoPermissionType": "ImplicitDeny",
                                      "AuthPrincipalOwnerId": account.account_id,
                                      "AuthPrincipalDisplayName": account.user, "AuthPrincipalType": "SubUser"}})
            self._wait_holds(ram_action, account)
            ctx = Ctx(self, account, params, request_id, signed.security_token is not None, ak)
            with self.state.lock:
                if self.state.spaces.get(account.account_id) is not None:
                    self.state.tick(account.account_id)
                result = handler(ctx)
            self._fault(ram_action, account, before=False)
            status, body_out, extra_headers = 200, {"RequestId": request_id, **result}, {}
        except SignatureError as exc:
            status, extra_headers = exc.status, {}
            body_out = ApiError(exc.status, exc.code, exc.message).body(request_id, "ecs.aliyuncs.com")
        except ApiError as exc:
            status, extra_headers = exc.status, exc.headers
            body_out = exc.body(request_id, f"{product[0] if product else 'openapi'}.aliyuncs.com")
        seen = Seen(ram_action, account.account_id if account else None, ak, params.get("RegionId"), status,
                    body_out.get("Code") if status >= 400 else None, tuple(sorted(params.flat.items())))
        with self.state.lock:
            self.seen.append(seen)
            watchers = list(self.observers)
        for watch in watchers:  # e.g. a test that kills the caller before the answer reaches it
            watch(seen)
        return status, body_out, extra_headers

    def _who(self, signed: Any) -> tuple[Account, tuple[str, ...] | None]:
        with self.state.lock:
            if signed.nonce in self.state.nonces:
                raise SignatureError(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
            self.state.nonces.add(signed.nonce)
            acct = self.state.accounts.get(signed.access_key_id)
            if acct is not None:
                return acct, None
            temp = self.state.temp[signed.access_key_id]
            if signed.security_token != temp.token:
                raise SignatureError(400, "InvalidSecurityToken.MismatchWithAccessKey",
                                     "The security token you provided does not match the access key.")
            if self.state.now(temp.account.account_id) > temp.expires:
                raise SignatureError(400, "InvalidSecurityToken.Expired", "Specified SecurityToken is expired.")
            return temp.account, temp.actions

    def _fault(self, action: str, account: Account, before: bool) -> None:
        with self.state.lock:
            for f in self.faults:
                if f.after != (not before) or not f.matches(action, account.account_id):
                    continue
                if f.probability < 1.0 and self.random.random() >= f.probability:
                    continue
                f.hits += 1
                if f.times > 0:
                    f.times -= 1
                raise ApiError(f.status, f.code, f.message, f.headers)

    def _wait_holds(self, action: str, account: Account) -> None:
        with self.state.lock:
            hold = next((h for h in self.holds if h.times != 0 and re.fullmatch(h.action, action)
                         and (h.account is None or h.account == account.account_id)), None)
            if hold is not None and hold.times > 0:
                hold.times -= 1
        if hold is not None:
            hold.arrived.set()
            hold.released.wait(60)


@dataclass
class Ctx:
    """One call as a handler sees it (handlers run under ``state.lock``)."""

    server: AlibabaServer
    account: Account
    params: Params
    request_id: str
    assumed: bool
    access_key_id: str | None

    @property
    def state(self) -> CloudState:
        return self.server.state

    @property
    def space(self):
        return self.state.spaces[self.account.account_id]

    @property
    def knobs(self) -> Knobs:
        return self.state.knobs[self.account.account_id]

    @property
    def now(self) -> float:
        return self.state.now(self.account.account_id)

    def region(self) -> str:
        from .catalog import REGIONS

        region = self.params.need("RegionId")
        if region not in REGIONS:
            raise ApiError(400, "InvalidRegionId.NotFound", "The specified RegionId does not exist.")
        return region

    def page(self, items: list[Any]) -> tuple[list[Any], str]:
        """One NextToken page of ``items`` and the token of the next ('' at the end)."""
        token = self.params.get("NextToken") or "0"
        if not token.isdigit():
            raise ApiError(400, "InvalidNextToken.Malformed", "The specified parameter NextToken is not valid.")
        start = int(token)
        size = min(self.params.int("MaxResults") or self.server.page_size, self.server.page_size)
        return items[start:start + size], (str(start + size) if start + size < len(items) else "")

    def numbered(self, items: list[Any]) -> tuple[list[Any], dict[str, int]]:
        """One PageNumber/PageSize page and the paging fields of the answer."""
        number = max(1, self.params.int("PageNumber") or 1)
        size = min(self.params.int("PageSize") or self.server.page_size, self.server.page_size)
        return (items[(number - 1) * size:number * size],
                {"PageNumber": number, "PageSize": size, "TotalCount": len(items)})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    api: AlibabaServer

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items()}
        status, doc, extra = self.api.handle(self.command, self.path, headers, body)
        data = json.dumps(doc).encode("utf-8")
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json;charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass
