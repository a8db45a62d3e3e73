"""moto in server mode behind a fault-injecting WSGI wrapper of ours, for the AWS plugin tests.

:func:`start` runs moto's ``ThreadedMotoServer`` on 127.0.0.1 (a free port) and
puts :class:`FaultInjector` in front of moto's WSGI app.  The real boto3 then
talks real HTTP to it.  The injector:

- records every call (service, region, operation, parameters, access key) in order;
- applies :class:`FaultRule` s: an AWS error of the right wire shape for the
  protocol (EC2 XML, query XML, JSON), a bare 5xx, a canned answer (for what
  moto cannot show: quota values, fresh spot prices), or latency — each with a
  rate, a count and an optional predicate on the call (e.g. instance type and AZ);
- holds a matching request until the test releases it (:meth:`FaultInjector.hold`, a
  :class:`holds.Hold`): a race test parks the call it races, does the racing thing, then
  lets it go (see tests/support/holds.py for what a hold guarantees);
- answers the Price List API (which moto lacks) from hand-written pages of the real shape
  under ``tests/plugins/aws/synthetic/pricing/<region>/page<N>.json`` (see the README there);
- answers ``/__checkip`` with a fixed public address (the "what is my IP" service);
- keeps EC2 placement groups itself (:class:`PlacementGroups`): moto 5.2 has no Create/Describe/
  DeletePlacementGroup (it answers HTTP 500) and ignores ``Placement.GroupName`` in RunInstances, so
  tests assert on the RunInstances request the plugin sent (``find("RunInstances")``);
- shows EC2's eventual consistency when a test sets ``propagation_s`` (moto answers every call from
  one consistent store): for that long after RunInstances / CreateSecurityGroup returned an id, a call
  that names the id (``InstanceId.N``, ``GroupId``, ``ResourceId.N``, ``SecurityGroupId.N``) is answered
  InvalidInstanceID.NotFound / InvalidGroup.NotFound, as "Eventual consistency in the Amazon EC2 API"
  (docs.aws.amazon.com/ec2/latest/devguide/eventual-consistency.html) says a real endpoint may;
- refuses DeleteSecurityGroup with DependencyViolation while an instance that is not terminated uses
  the group (DeleteSecurityGroup reference; moto deletes it anyway), and, when a test sets
  ``shutting_down_s``, keeps a terminated instance ``shutting-down`` that long (DescribeInstances by
  id shows it, its group stays in use): moto terminates at once, real instances take a while;
- refuses what STS refuses a caller (:class:`aws_sts.StrictSts`, always on): GetFederationToken with
  session credentials, AssumeRole by role chaining for more than an hour;
- decides S3 conditional writes atomically, as S3 does (:class:`aws_s3_conditional.ObjectWrites`, always on):
  moto checks ``If-None-Match`` / ``If-Match`` and then stores, so two racing creates could both win; writes
  to one object are serialized here, so exactly one wins.

What the other asynchronous behaviour of the plugin's calls looks like here, against the API
references: tests/support/README.md.

Not thread-hostile: rules and the call log are guarded by a lock (the server
answers each request on its own thread).  Randomness is seeded per injector.
"""

from __future__ import annotations

import io
import json
import random
import re
import threading
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from aws_s3_conditional import ObjectWrites
from aws_sts import StrictSts
from holds import Hold

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ROOT / "tests" / "plugins" / "aws" / "synthetic"
CHECKIP_ADDRESS = "198.51.100.23"

#: calls whose new ids take a while to propagate: the id in the answer and the NotFound error for it
_PROPAGATING = {
    "RunInstances": (re.compile(rb"<instanceId>(i-[0-9a-f]+)</instanceId>"), "InvalidInstanceID.NotFound",
                     "The instance ID '{}' does not exist"),
    "CreateSecurityGroup": (re.compile(rb"<groupId>(sg-[0-9a-f]+)</groupId>"), "InvalidGroup.NotFound",
                            "The security group '{}' does not exist"),
}
_ID_PARAM = re.compile(r"(InstanceId|GroupId|ResourceId|SecurityGroupId)(\.\d+)?")
_TERMINATED_STATE = re.compile(rb"(<instanceId>(i-[0-9a-f]+)</instanceId>.*?<instanceState>\s*<code>)48(</code>\s*"
                               rb"<name>)terminated(</name>)", re.S)
_CREDENTIAL = re.compile(r"Credential=([^/]+)/\d{8}/([^/]+)/([^/]+)/aws4_request")
_CBOR_PATH = re.compile(r"/service/[^/]+/operation/([^/?]+)")


@dataclass(frozen=True)
class AwsCall:
    """One request as the wrapper saw it."""

    service: str  # the signing name: ec2, sts, pricing, servicequotas, monitoring, ce, ssm
    region: str
    operation: str
    params: dict[str, Any]
    access_key: str
    at: float
    method: str = ""  # the HTTP method and path: what identifies a REST call (S3) that has no action name
    path: str = ""

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)


@dataclass
class FaultRule:
    """When a call matches, answer with a fault instead of moto.

    ``operation``: one name or a tuple (None = any); ``service`` likewise.
    ``error``: the AWS error code (None with ``status`` >= 500: a bare server error).
    ``respond``: a canned answer instead: (status, content type, body) or a callable of the call.
    ``rate``: probability per matching call; ``times``: how many times at most (None = always).
    ``latency_s``: sleep first (then answer from moto unless error/respond is set).
    ``after``: let moto do the request first, then answer with the fault (the answer was lost).
    ``hold``: park the request in the server until the test releases it (:meth:`FaultInjector.hold`),
    then go on with the rest of the rule; ``times`` is then how many requests are held.
    """

    operation: str | tuple[str, ...] | None = None
    service: str | tuple[str, ...] | None = None
    error: str | None = "Throttling"
    status: int = 400
    message: str = "injected by the test fault wrapper"
    rate: float = 1.0
    times: int | None = None
    when: Callable[[AwsCall], bool] | None = None
    respond: tuple[int, str, str] | Callable[[AwsCall], tuple[int, str, str]] | None = None
    latency_s: float = 0.0
    after: bool = False
    hold: Hold | None = None
    fired: int = field(default=0, init=False)

    def matches(self, call: AwsCall) -> bool:
        def hit(want: str | tuple[str, ...] | None, value: str) -> bool:
            return want is None or value in ((want,) if isinstance(want, str) else want)

        return (hit(self.operation, call.operation) and hit(self.service, call.service)
                and (self.when is None or bool(self.when(call))))


def _parse(environ: dict[str, Any], body: bytes) -> AwsCall:
    auth = environ.get("HTTP_AUTHORIZATION", "")
    m = _CREDENTIAL.search(auth)
    access_key, region, service = (m.group(1), m.group(2), m.group(3)) if m else ("", "", "")
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    params: dict[str, Any] = {}
    operation = ""
    if target:
        operation = target.rsplit(".", 1)[-1]
        try:
            params = json.loads(body or b"{}")
        except ValueError:
            params = {}
    elif (cbor := _CBOR_PATH.search(environ.get("PATH_INFO", ""))) is not None:
        operation = cbor.group(1)
    else:
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        if not form and environ.get("QUERY_STRING"):
            form = urllib.parse.parse_qs(environ["QUERY_STRING"])
        params = {k: v[0] for k, v in form.items()}
        operation = params.get("Action", "")
    return AwsCall(service, region, operation, params, access_key, time.time(), environ.get("REQUEST_METHOD", ""),
                   environ.get("PATH_INFO", ""))


def error_response(call: AwsCall, code: str | None, message: str, status: int) -> tuple[int, str, bytes]:
    """An error body in the protocol the service speaks."""
    request_id = str(uuid.uuid4())
    if code is None:
        return status, "text/plain", b""
    if call.service == "ec2":
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}</Code>'
                f"<Message>{message}</Message></Error></Errors><RequestID>{request_id}</RequestID></Response>")
        return status, "text/xml", body.encode()
    if call.service in ("sts", "iam") or (call.params.get("Action") and call.service != "monitoring"):
        kind = "Receiver" if status >= 500 else "Sender"
        body = (f'<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>{kind}</Type>'
                f"<Code>{code}</Code><Message>{message}</Message></Error><RequestId>{request_id}</RequestId>"
                f"</ErrorResponse>")
        return status, "text/xml", body.encode()
    return status, "application/x-amz-json-1.1", json.dumps({"__type": code, "message": message}).encode()


def _synthetic_pricing(call: AwsCall) -> tuple[int, str, bytes]:
    """GetProducts from ``synthetic/pricing/<region>/<page>.json`` (page1 first, then the NextToken's)."""
    filters = {f.get("Field"): f.get("Value") for f in call.params.get("Filters") or []}
    region = filters.get("regionCode", "")
    page = call.params.get("NextToken") or "page1"
    path = SYNTHETIC / "pricing" / region / f"{page}.json"
    if call.operation == "GetProducts" and region and re.fullmatch(r"page\d+", page) and path.is_file():
        return 200, "application/x-amz-json-1.1", path.read_bytes()
    empty = {"FormatVersion": "aws_v1", "PriceList": []}
    return 200, "application/x-amz-json-1.1", json.dumps(empty).encode()


EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


def _indexed(params: dict[str, Any], prefix: str) -> list[str]:
    """``Prefix.1``, ``Prefix.2`` … values of an EC2 query request."""
    out, i = [], 1
    while f"{prefix}.{i}" in params:
        out.append(params[f"{prefix}.{i}"])
        i += 1
    return out


class PlacementGroups:
    """Placement groups per region, with tags and tag/name filters: the EC2 answers moto lacks.

    Written from the EC2 API reference (CreatePlacementGroup, DescribePlacementGroups,
    DeletePlacementGroup: request parameters, response elements, InvalidPlacementGroup.* errors).
    """

    OPERATIONS = ("CreatePlacementGroup", "DescribePlacementGroups", "DeletePlacementGroup")

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], dict[str, Any]] = {}
        self._n = 0

    def clear(self) -> None:
        self.groups.clear()

    @staticmethod
    def _item(tag: str, g: dict[str, Any]) -> str:
        tags = "".join(f"<item><key>{k}</key><value>{v}</value></item>" for k, v in g["tags"].items())
        return (f"<{tag}><groupName>{g['name']}</groupName><state>available</state><strategy>{g['strategy']}</strategy>"
                f"<groupId>{g['id']}</groupId><groupArn>arn:aws:ec2:{g['region']}:123456789012:placement-group/"
                f"{g['name']}</groupArn><tagSet>{tags}</tagSet></{tag}>")

    def answer(self, call: AwsCall) -> tuple[int, str, bytes]:
        p, region, rid = call.params, call.region, str(uuid.uuid4())
        if call.operation == "CreatePlacementGroup":
            name = p.get("GroupName", "")
            if (region, name) in self.groups:
                return error_response(call, "InvalidPlacementGroup.Duplicate",
                                      f"The Placement Group '{name}' already exists.", 400)
            tags: dict[str, str] = {}
            i = 1
            while f"TagSpecification.{i}.ResourceType" in p:
                for key, value in zip(_indexed_keys(p, f"TagSpecification.{i}.Tag"), _indexed_values(
                        p, f"TagSpecification.{i}.Tag")):
                    tags[key] = value
                i += 1
            self._n += 1
            g = {"name": name, "strategy": p.get("Strategy", "cluster"), "id": f"pg-{self._n:017x}", "region": region,
                 "tags": tags}
            self.groups[(region, name)] = g
            body = (f'<CreatePlacementGroupResponse xmlns="{EC2_NS}"><requestId>{rid}</requestId><return>true</return>'
                    f"{self._item('placementGroup', g)}</CreatePlacementGroupResponse>")
            return 200, "text/xml", body.encode()
        if call.operation == "DeletePlacementGroup":
            name = p.get("GroupName", "")
            if self.groups.pop((region, name), None) is None:
                return error_response(call, "InvalidPlacementGroup.Unknown",
                                      f"The Placement Group '{name}' is unknown.", 400)
            body = (f'<DeletePlacementGroupResponse xmlns="{EC2_NS}"><requestId>{rid}</requestId><return>true</return>'
                    f"</DeletePlacementGroupResponse>")
            return 200, "text/xml", body.encode()
        names = set(_indexed(p, "GroupName"))
        filters: list[tuple[str, set[str]]] = []
        i = 1
        while f"Filter.{i}.Name" in p:
            filters.append((p[f"Filter.{i}.Name"], set(_indexed(p, f"Filter.{i}.Value"))))
            i += 1

        def keep(g: dict[str, Any]) -> bool:
            if g["region"] != region or (names and g["name"] not in names):
                return False
            for name, values in filters:
                if name.startswith("tag:"):
                    if g["tags"].get(name[4:]) not in values:
                        return False
                elif name == "group-name" and g["name"] not in values:
                    return False
                elif name == "strategy" and g["strategy"] not in values:
                    return False
            return True

        found = [g for g in self.groups.values() if keep(g)]
        if names and not found:
            return error_response(call, "InvalidPlacementGroup.Unknown",
                                  f"The Placement Group '{sorted(names)[0]}' is unknown.", 400)
        items = "".join(self._item("item", g) for g in found)
        body = (f'<DescribePlacementGroupsResponse xmlns="{EC2_NS}"><requestId>{rid}</requestId>'
                f"<placementGroupSet>{items}</placementGroupSet></DescribePlacementGroupsResponse>")
        return 200, "text/xml", body.encode()


def _indexed_keys(params: dict[str, Any], prefix: str) -> list[str]:
    return _indexed({k[:-4]: v for k, v in params.items() if k.endswith(".Key")}, prefix)


def _indexed_values(params: dict[str, Any], prefix: str) -> list[str]:
    return _indexed({k[:-6]: v for k, v in params.items() if k.endswith(".Value")}, prefix)


class FaultInjector:
    """The WSGI app in front of moto (see the module doc)."""

    def __init__(self, app: Callable, seed: int = 7) -> None:
        self.app = app
        self.rules: list[FaultRule] = []
        self.calls: list[AwsCall] = []
        self.serve_pricing = True
        self.placement_groups = PlacementGroups()
        self.sts = StrictSts()
        self.s3_writes = ObjectWrites()
        #: seconds a new instance / security group id stays unknown to the other EC2 calls (0: off)
        self.propagation_s = 0.0
        self._fresh: dict[str, tuple[float, str, str]] = {}  # id -> (made at, error code, message)
        #: seconds a terminated instance stays shutting-down (0: terminated at once, as moto does)
        self.shutting_down_s = 0.0
        self._terminated: dict[str, float] = {}  # instance id -> when TerminateInstances went through
        self._lock = threading.Lock()
        self._random = random.Random(seed)

    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self.rules.append(rule)
        return rule

    def hold(self, operation: str | tuple[str, ...] | None = None, *, service: str | tuple[str, ...] | None = None,
             when: Callable[[AwsCall], bool] | None = None, count: int = 1, timeout_s: float = 60.0,
             **rule: Any) -> Hold:
        """Park the next ``count`` matching requests until the test calls ``release()`` on the result.

        ``rule``: more :class:`FaultRule` fields applied once a held request is released (default:
        none, the request then goes to moto unchanged).  See tests/support/holds.py.
        """
        hold = Hold(count=count, timeout_s=timeout_s, what=str(operation or service or "request"))
        self.add(FaultRule(operation=operation, service=service, when=when, times=count, hold=hold,
                           **{"error": None, **rule}))
        return hold

    def clear(self) -> None:
        with self._lock:
            for rule in self.rules:
                if rule.hold is not None:
                    rule.hold.release()  # nothing stays parked across tests
            self.rules.clear()
            self.calls.clear()
            self.serve_pricing = True
            self.placement_groups.clear()
            self.sts.clear()
            self.s3_writes.clear()
            self.propagation_s = 0.0
            self._fresh.clear()
            self.shutting_down_s = 0.0
            self._terminated.clear()

    def operations(self, service: str | None = None) -> list[str]:
        with self._lock:
            return [c.operation for c in self.calls if service is None or c.service == service]

    def find(self, operation: str) -> list[AwsCall]:
        with self._lock:
            return [c for c in self.calls if c.operation == operation]

    def _choose(self, call: AwsCall) -> FaultRule | None:
        with self._lock:
            for rule in self.rules:
                if rule.times is not None and rule.fired >= rule.times:
                    continue
                if rule.matches(call) and (rule.rate >= 1.0 or self._random.random() < rule.rate):
                    if rule.hold is not None and not rule.hold.claim():
                        continue
                    rule.fired += 1
                    return rule
        return None

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/__checkip":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [f"{CHECKIP_ADDRESS}\n".encode()]
        if path.startswith("/moto-api"):
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        call = _parse(environ, body)
        with self._lock:
            self.calls.append(call)
        rule = self._choose(call)
        if rule is not None and rule.hold is not None:
            rule.hold.park(call)
        try:
            return self._answer(rule, call, environ, start_response)
        finally:
            if rule is not None and rule.hold is not None:
                rule.hold.answered()

    def _answer(self, rule: FaultRule | None, call: AwsCall, environ: dict[str, Any],
                start_response: Callable) -> Iterable[bytes]:
        answer: tuple[int, str, bytes] | None = None
        if rule is not None:
            if rule.latency_s:
                time.sleep(rule.latency_s)
            if rule.after:  # moto acts on the request; its answer is lost on the way back
                for _ in self.app(environ, lambda status, headers, exc_info=None: None):
                    pass
            if rule.respond is not None:
                status, ctype, text = rule.respond(call) if callable(rule.respond) else rule.respond
                answer = (status, ctype, text.encode())
            elif rule.error is not None or rule.status >= 500:
                answer = error_response(call, rule.error, rule.message, rule.status)
        if answer is None and (refused := self.sts.refuse(call, environ)) is not None:
            answer = error_response(call, *refused)
        if answer is None and call.service == "pricing" and self.serve_pricing:
            answer = _synthetic_pricing(call)
        if answer is None and call.service == "ec2" and call.operation in PlacementGroups.OPERATIONS:
            with self._lock:
                answer = self.placement_groups.answer(call)
        if answer is None and (unknown := self._not_yet_visible(call)) is not None:
            answer = error_response(call, unknown[0], unknown[1], 400)
        if answer is None and call.service == "ec2" and call.operation == "DeleteSecurityGroup" and \
                self._group_in_use(call):
            answer = error_response(call, "DependencyViolation",
                                    f"resource {call.param('GroupId') or call.param('GroupName')} has a dependent "
                                    "object", 400)
        if answer is None and call.service == "ec2" and (
                (call.operation in _PROPAGATING and self.propagation_s > 0)
                or (call.operation in ("TerminateInstances", "DescribeInstances") and self.shutting_down_s > 0)):
            return self._remember_new_ids(call, environ, start_response)
        if answer is None:
            return self.s3_writes.serve(environ, self.app, start_response)
        status, ctype, data = answer
        headers = [("Content-Type", ctype), ("Content-Length", str(len(data))),
                   ("x-amzn-RequestId", str(uuid.uuid4()))]
        if ctype.startswith("application/x-amz-json") and status >= 400:
            headers.append(("x-amzn-ErrorType", json.loads(data)["__type"]))
        start_response(f"{status} {'OK' if status < 400 else 'Error'}", headers)
        return [data]


    def _not_yet_visible(self, call: AwsCall) -> tuple[str, str] | None:
        """(code, message) when the call names an id made less than ``propagation_s`` ago."""
        if call.service != "ec2" or self.propagation_s <= 0:
            return None
        now = time.time()
        with self._lock:
            for key, value in call.params.items():
                fresh = self._fresh.get(value) if _ID_PARAM.fullmatch(key) else None
                if fresh is not None and now - fresh[0] < self.propagation_s:
                    return fresh[1], fresh[2].format(value)
        return None

    def _remember_new_ids(self, call: AwsCall, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        """Let moto answer; note the ids its answer made (they propagate ``propagation_s`` later) and the
        instances it terminated (``shutting-down`` for ``shutting_down_s``, shown so by DescribeInstances)."""
        head: list[tuple[str, list[tuple[str, str]]]] = []
        data = b"".join(self.app(environ, lambda status, headers, exc_info=None: head.append((status, headers))))
        ok = bool(head) and head[0][0].startswith("200")
        now = time.time()
        with self._lock:
            if ok and call.operation in _PROPAGATING:
                pattern, code, message = _PROPAGATING[call.operation]
                for new_id in pattern.findall(data):
                    self._fresh[new_id.decode()] = (now, code, message)
            elif ok and call.operation == "TerminateInstances":
                for iid in _indexed(call.params, "InstanceId"):
                    self._terminated.setdefault(iid, now)
            elif ok and call.operation == "DescribeInstances":
                lingering = {i.encode() for i, at in self._terminated.items() if now - at < self.shutting_down_s}
                data = _TERMINATED_STATE.sub(
                    lambda m: m.group(1) + b"32" + m.group(3) + b"shutting-down" + m.group(4)
                    if m.group(2) in lingering else m.group(0), data)
        headers = [(k, str(len(data)) if k.lower() == "content-length" else v) for k, v in head[0][1]]
        start_response(head[0][0], headers)
        return [data]

    def _group_in_use(self, call: AwsCall) -> bool:
        """An instance not terminated yet (moto's state, or still shutting down here) uses the group."""
        from moto.ec2.models import ec2_backends

        wanted = call.param("GroupId") or ""
        now = time.time()
        with self._lock:
            lingering = {i for i, at in self._terminated.items() if now - at < self.shutting_down_s}
        for account in list(ec2_backends.keys()):
            backend = ec2_backends[account][call.region]
            for reservation in list(backend.reservations.values()):
                for inst in reservation.instances:
                    if inst.state == "terminated" and inst.id not in lingering:
                        continue
                    groups = {g.id for g in inst.security_groups}
                    groups |= {g.id for nic in inst.nics.values() for g in nic.group_set}
                    if wanted in groups or (not wanted and call.param("GroupName") in
                                            {g.name for g in inst.security_groups}):
                        return True
        return False


class MotoStack:
    """A running moto server with the injector in front; ``url`` is the endpoint for every service."""

    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per request otherwise
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        inner = self.server._server  # the werkzeug server ThreadedMotoServer made; we wrap its app
        assert inner is not None and hasattr(inner, "app"), "moto's ThreadedMotoServer changed its internals"
        self.faults = FaultInjector(inner.app)
        inner.app = self.faults
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        self.checkip_url = f"{self.url}/__checkip"

    def reset(self) -> None:
        """Forget every AWS resource (moto's reset API) and every fault rule and logged call."""
        req = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST", data=b"")
        with urllib.request.urlopen(req, timeout=30) as answer:
            answer.read()
        self.faults.clear()

    def queue_cost_and_usage(self, results: list[dict[str, Any]]) -> None:
        """Queue Cost Explorer answers (moto's static-results API)."""
        data = json.dumps({"results": results}).encode()
        req = urllib.request.Request(f"{self.url}/moto-api/static/ce/cost-and-usage-results", method="POST",
                                     data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as answer:
            answer.read()

    def stop(self) -> None:
        self.server.stop()


_stack: MotoStack | None = None
_stack_lock = threading.Lock()


def start() -> MotoStack:
    """The process's moto stack (one per test process: a session-scoped server)."""
    global _stack
    with _stack_lock:
        if _stack is None:
            _stack = MotoStack()
        return _stack


def spot_history_xml(entries: list[tuple[str, str, float, float]]) -> str:
    """A DescribeSpotPriceHistory answer: (instance type, AZ, price, POSIX time) per entry."""
    items = "".join(
        f"<item><instanceType>{t}</instanceType><productDescription>Linux/UNIX</productDescription>"
        f"<spotPrice>{p:.6f}</spotPrice><timestamp>"
        f"{time.strftime('%Y-%m-%dT%H:%M:%S.000Z', time.gmtime(ts))}</timestamp>"
        f"<availabilityZone>{az}</availabilityZone></item>" for t, az, p, ts in entries)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<DescribeSpotPriceHistoryResponse '
            f'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>{uuid.uuid4()}</requestId>'
            f"<spotPriceHistorySet>{items}</spotPriceHistorySet><nextToken></nextToken>"
            f"</DescribeSpotPriceHistoryResponse>")


def quota_json(code: str, name: str, value: float, region: str = "us-east-1") -> str:
    """A GetServiceQuota answer of the real shape."""
    return json.dumps({"Quota": {
        "ServiceCode": "ec2", "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
        "QuotaArn": f"arn:aws:servicequotas:{region}:123456789012:ec2/{code}", "QuotaCode": code,
        "QuotaName": name, "Value": value, "Unit": "None", "Adjustable": True, "GlobalQuota": False}})
