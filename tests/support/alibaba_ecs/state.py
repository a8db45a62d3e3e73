"""The test cloud's state: accounts and keys, a test clock, resources per account, per-account knobs.

Everything is plain dicts shaped like the API's JSON (with private ``_``-prefixed fields for
what the API does not show), behind one re-entrant lock.  Instances move through their states
by the test clock (:class:`Clock`): ``Pending`` → ``Starting`` → ``Running`` (``pending_s`` and
``starting_s`` each), ``Stopping`` → ``Stopped``, and a released one lingers as ``Stopping`` for
``release_s`` before it disappears.  VPCs and vSwitches are ``Pending`` for ``vpc_pending_s`` /
``vswitch_pending_s`` after their create call, and linger (``Deleting`` / ``Pending``) for
``vpc_delete_s`` / ``vswitch_delete_s`` after their delete call.  ``AutoReleaseTime`` and spot reclaims
(``OperationLocks: [{LockReason: Recycling}]`` then release after ``recycle_s``) are applied
whenever the state is looked at, so a test that advances the clock sees them on its next call.
"""

from __future__ import annotations

import fnmatch
import itertools
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any


class Clock:
    """Real time plus an offset a test can push forward (``advance``)."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds


@dataclass
class Account:
    """An Alibaba Cloud account with one RAM user (its AccessKey) and the RAM actions the user may call."""

    account_id: str
    access_key_id: str
    secret: str
    user: str
    actions: tuple[str, ...] = ("*",)
    roles: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role ARN -> actions of the role
    #: role ARN -> its MaxSessionDuration (RAM's default 3600 s when absent; at most 43200)
    role_max_s: dict[str, int] = field(default_factory=dict)

    def may(self, action: str, actions: tuple[str, ...] | None = None) -> bool:
        allowed = self.actions if actions is None else actions
        return any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in allowed)


@dataclass
class TempCredential:
    """An STS AssumeRole answer: a temporary key, its token and the role's actions."""

    access_key_id: str
    secret: str
    token: str
    account: Account
    role_arn: str
    session: str
    expires: float
    actions: tuple[str, ...]
    policy: dict | None = None  # the session policy AssumeRole was given (parsed), None without one


@dataclass
class Knobs:
    """What a test may change about one account's cloud (each test uses its own account)."""

    no_stock: set[tuple[str, str, str]] = field(default_factory=set)  # (zone or "*", type or "*", "spot"/"ondemand"/"*")
    #: machines of (zone, type) the zone can still start, both markets (absent: unlimited); RunInstances
    #: starts min(Amount, stock) when that is at least MinAmount (else all Amount), else OperationDenied.NoStock
    stock: dict[tuple[str, str], int] = field(default_factory=dict)
    vcpu_quota: int = 10_000  # pay-as-you-go vCPUs per region (QuotaExceed.ElasticQuota beyond)
    pending_s: float = 0.0
    starting_s: float = 0.0
    stopping_s: float = 0.0
    release_s: float = 0.0
    #: CreateVpc and CreateVSwitch are asynchronous (VPC API reference: "runs the task in the background";
    #: Pending, then Available): a new VPC / vSwitch is Pending this long.  Small by default, so every
    #: launch in the suite meets a Pending network, as a launch against the real cloud does (there it
    #: takes seconds; RunInstances came 5-8 ms after CreateVSwitch before the plugin waited).
    vpc_pending_s: float = 0.1
    vswitch_pending_s: float = 0.1
    #: DeleteVSwitch / DeleteVpc are asynchronous too: the vSwitch shows Pending, the VPC Deleting, this
    #: long before they are gone (0: gone at once, so a test's "nothing left" check needs no wait)
    vswitch_delete_s: float = 0.0
    vpc_delete_s: float = 0.0
    recycle_s: float = 300.0  # spot: the Recycling lock precedes release by about five minutes
    costs: list[dict[str, Any]] = field(default_factory=list)  # BSS bill items a test puts in
    bss: bool = True  # False: the account may not use the billing API (international resellers, sub-accounts)


@dataclass
class Space:
    """One account's resources (all regions; each carries ``_region``)."""

    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    vpcs: dict[str, dict[str, Any]] = field(default_factory=dict)
    vswitches: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    keys: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (region, name)
    disks: dict[str, dict[str, Any]] = field(default_factory=dict)
    eips: dict[str, dict[str, Any]] = field(default_factory=dict)
    tokens: dict[tuple[str, str, str], tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    released: list[dict[str, Any]] = field(default_factory=list)  # (id, reason, at): AutoRelease, SpotRecycle, Delete


class CloudState:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.clocks: dict[str, Clock] = {}  # per account: a test that jumps ahead moves only its own cloud
        self.accounts: dict[str, Account] = {}  # by AccessKey id
        self.temp: dict[str, TempCredential] = {}
        self.spaces: dict[str, Space] = {}  # by account id
        self.knobs: dict[str, Knobs] = {}
        self.nonces: set[str] = set()
        self.ram: dict[str, dict] = {}  # by account id: RAM roles, custom policies, attachments (ram.py)
        self._ids = itertools.count(1)

    # -- identities -----------------------------------------------------------------
    def new_account(self, actions: tuple[str, ...] = ("*",), user: str = "workbench") -> Account:
        with self.lock:
            n = next(self._ids)
            acct = Account(account_id=f"{1_000_000_000_000_000 + n:016d}",
                           access_key_id=f"LTAI5t{secrets.token_hex(9)}", secret=secrets.token_urlsafe(22),
                           user=user, actions=tuple(actions))
            self.accounts[acct.access_key_id] = acct
            self.spaces[acct.account_id] = Space()
            self.knobs[acct.account_id] = Knobs()
            self.clocks[acct.account_id] = Clock()
            return acct

    def now(self, account_id: str) -> float:
        return self.clocks[account_id].now()

    def secret_for(self, ak: str) -> str | None:
        with self.lock:
            if ak in self.accounts:
                return self.accounts[ak].secret
            temp = self.temp.get(ak)
            return temp.secret if temp else None

    # -- ids --------------------------------------------------------------------------
    def new_id(self, prefix: str, region: str = "") -> str:
        short = {"cn-hangzhou": "bp", "cn-shanghai": "uf", "cn-beijing": "2z", "cn-zhangjiakou": "8v",
                 "ap-southeast-1": "t4"}.get(region, "")
        return f"{prefix}-{short}{secrets.token_hex(10)[:18]}"

    # -- time-driven changes ------------------------------------------------------------
    def tick(self, account_id: str) -> None:
        """Apply what the clock says happened: starts, stops, releases, auto-release, spot reclaim."""
        with self.lock:
            now, space, knobs = self.now(account_id), self.spaces[account_id], self.knobs[account_id]
            for iid, inst in list(space.instances.items()):
                gone = inst.get("_release_at")
                auto = inst.get("_auto_release_at")
                if auto is not None and now >= auto and not gone:
                    self.release(account_id, iid, "AutoRelease", now)
                    continue
                if gone is not None:
                    if now >= gone:
                        del space.instances[iid]
                        self._free_instance(space, inst)
                    continue
                if inst.get("_recycle_at") is not None and now >= inst["_recycle_at"]:
                    self.release(account_id, iid, "SpotRecycle", now)
                    continue
                self._advance(inst, now, knobs)
            self._settle_network(space, now, knobs)

    @staticmethod
    def _settle_network(space: Space, now: float, knobs: Knobs) -> None:
        """VPCs and vSwitches: Pending → Available after their creation delay; gone after their deletion delay."""
        for wid, vsw in list(space.vswitches.items()):
            gone = vsw.get("_gone_at")
            if gone is not None and now >= gone:
                del space.vswitches[wid]
                vpc = space.vpcs.get(vsw["VpcId"])
                if vpc is not None and wid in vpc["VSwitchIds"]["VSwitchId"]:
                    vpc["VSwitchIds"]["VSwitchId"].remove(wid)
            elif gone is None and vsw["Status"] == "Pending" and now >= vsw["_since"] + knobs.vswitch_pending_s:
                vsw["Status"] = "Available"
        for vid, vpc in list(space.vpcs.items()):
            gone = vpc.get("_gone_at")
            if gone is not None and now >= gone:
                del space.vpcs[vid]
            elif vpc["Status"] == "Pending" and now >= vpc["_since"] + knobs.vpc_pending_s:
                vpc["Status"] = "Available"

    @staticmethod
    def _advance(inst: dict[str, Any], now: float, knobs: Knobs) -> None:
        status = inst["Status"]
        if status == "Pending" and now >= inst["_since"] + knobs.pending_s:
            inst["Status"], inst["_since"] = "Starting", inst["_since"] + knobs.pending_s
            status = "Starting"
        if status == "Starting" and now >= inst["_since"] + knobs.starting_s:
            inst["Status"], inst["_since"] = "Running", inst["_since"] + knobs.starting_s
            inst["StartTime"] = _iso(inst["_since"], minutes=True)
        if status == "Stopping" and now >= inst["_since"] + knobs.stopping_s:
            inst["Status"], inst["_since"] = "Stopped", inst["_since"] + knobs.stopping_s

    def release(self, account_id: str, iid: str, reason: str, now: float | None = None) -> None:
        """Start releasing ``iid`` (it disappears ``release_s`` later)."""
        with self.lock:
            now = self.now(account_id) if now is None else now
            space, knobs = self.spaces[account_id], self.knobs[account_id]
            inst = space.instances.get(iid)
            if inst is None or inst.get("_release_at") is not None:
                return
            inst["Status"] = "Stopping"
            inst["_release_at"] = now + knobs.release_s
            space.released.append({"InstanceId": iid, "reason": reason, "at": now})
            if knobs.release_s <= 0:
                del space.instances[iid]
                self._free_instance(space, inst)

    @staticmethod
    def _free_instance(space: Space, inst: dict[str, Any]) -> None:
        for did in [d for d, disk in space.disks.items() if disk.get("InstanceId") == inst["InstanceId"]]:
            disk = space.disks[did]
            if disk.get("DeleteWithInstance", True):
                del space.disks[did]
            else:
                disk["Status"], disk["InstanceId"] = "Available", ""
        for eip in space.eips.values():
            if eip.get("InstanceId") == inst["InstanceId"]:
                eip["InstanceId"], eip["Status"] = "", "Available"


def _iso(ts: float, minutes: bool = False) -> str:
    fmt = "%Y-%m-%dT%H:%MZ" if minutes else "%Y-%m-%dT%H:%M:%SZ"
    return time.strftime(fmt, time.gmtime(ts))


iso = _iso


def parse_iso(text: str) -> float | None:
    """``yyyy-MM-ddTHH:mm:ssZ`` or ``yyyy-MM-ddTHH:mmZ`` (UTC) → POSIX seconds; None if malformed."""
    import calendar

    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%MZ"):
        try:
            return float(calendar.timegm(time.strptime(text, fmt)))
        except ValueError:
            continue
    return None


def ecs_tags(tags: dict[str, str]) -> dict[str, Any]:
    """ECS's tag list shape: ``{"Tag": [{"TagKey", "TagValue"}]}``."""
    return {"Tag": [{"TagKey": k, "TagValue": v} for k, v in tags.items()]}


def vpc_tags(tags: dict[str, str]) -> dict[str, Any]:
    """The VPC API's tag list shape: ``{"Tag": [{"Key", "Value"}]}``."""
    return {"Tag": [{"Key": k, "Value": v} for k, v in tags.items()]}


def tags_match(have: dict[str, str], wanted: list[tuple[str, str]]) -> bool:
    """Every wanted (key, value) is present (an empty value matches any value of the key)."""
    return all(k in have and (not v or have[k] == v) for k, v in wanted)
