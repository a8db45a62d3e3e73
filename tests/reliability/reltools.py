"""Helpers for the reliability tests (the fixtures are in conftest.py).

- :class:`Home` (a throwaway WORKBENCH_HOME) that runs ``workbench`` subprocesses and
  adds an AWS profile on moto / an Azure profile on the ARM server.
- :class:`Killer`: kills a CLI process with SIGKILL right after the server has carried out its Nth call
  (the answer never reaches the process), by a hook in the test servers; nothing in the product changes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator


import aws_moto  # noqa: E402
from azure_arm import Account, ArmServer, shared_server  # noqa: E402
from secret_service import HAS_SECRET_SERVICE, needs_secret_service  # noqa: E402,F401  (the one keyring marker)

ROOT = Path(__file__).resolve().parents[2]
AWS_FAST = ["ssh_cidr=198.51.100.23/32", "poll_s=0.01", "terminate_wait_s=10", "retry_backoff_cap_s=0.02",
            "connect_timeout=2", "read_timeout=20"]
GPU_SPEC = "name: {name}\nrun: python3 train.py\nresources:\n  gpu: {gpu}\nguards:\n  max_runtime: 1h\n"


class Home:
    """A WORKBENCH_HOME and the environment the CLI runs in (AWS keys from the default chain)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = dict(os.environ, WORKBENCH_HOME=str(path), QT_QPA_PLATFORM="offscreen",
                        AWS_ACCESS_KEY_ID="AKIARELIABILITY00001", AWS_SECRET_ACCESS_KEY="reliability/secret")
        for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "WORKBENCH_CRASH_AT"):
            self.env.pop(key, None)

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "workbench", *args]

    def __call__(self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
                 timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), capture_output=True, text=True, env=env or self.env, cwd=ROOT,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL, timeout=timeout)

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen(self.argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env or self.env, cwd=ROOT, stdin=subprocess.DEVNULL)

    def json(self, *args: str, ok: tuple[int, ...] = (0,), **kw: Any) -> dict[str, Any]:
        r = self(*args, "--json", **kw)
        assert r.returncode in ok, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
        return json.loads(r.stdout)

    def spec(self, name: str, gpu: str = "V100:1", text: str | None = None) -> Path:
        p = self.path.parent / f"{name}.yaml"
        p.write_text(text if text is not None else GPU_SPEC.format(name=name, gpu=gpu), encoding="utf-8")
        return p

    def add_aws(self, moto: aws_moto.MotoStack, name: str = "moto", *more: str) -> None:
        args = ["profiles", "add", "aws", name, "--region", "us-east-1", "--endpoint-url", moto.url]
        for s in (*AWS_FAST, *more):
            args += ["--set", s]
        r = self(*args)
        assert r.returncode == 0, r.stderr

    def add_azure(self, arm: ArmServer, account: Account, name: str = "arm", store_secret: bool = True,
                  *more: str) -> None:
        sets = {"cloud": "custom", "arm_endpoint": arm.url, "authority_host": arm.url, "ca_bundle": arm.ca_file,
                "prices_url": arm.prices_url, "tenant_id": account.tenant, "client_id": account.client_id,
                "subscription_id": account.subscription, "regions": "eastus", "ssh_cidr": "203.0.113.7/32",
                "polling_interval": "0", "retry_backoff": "0.01", "retry_total": "3", "read_timeout": "20"}
        args = ["profiles", "add", "azure", name, "--region", "eastus"]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        for s in more:
            args += ["--set", s]
        r = self(*args)
        assert r.returncode == 0, r.stderr
        if store_secret:
            r = self("credentials", "set", "azure", name, "--stdin", stdin=json.dumps({"client_secret": account.secret}))
            assert r.returncode == 0, r.stderr

    def add_azure_profiles(self, arm: ArmServer, accounts: list[Account], prefix: str = "arm") -> None:
        """``add_azure`` for many accounts in this process (the same store and keyring entries, faster)."""
        from workbench.core.providers.credentials import CredentialStore
        from workbench.core.domain.models import Profile
        from workbench.core.store.database import Store

        from azure_arm import profile_for

        store = Store.open(self.path / "data" / "state.sqlite3")
        try:
            for i, acct in enumerate(accounts):
                p = profile_for(arm, acct, name=f"{prefix}{i}", ssh_cidr="203.0.113.7/32")
                store.save_profile(Profile(p.name, "azure", p.region, None, dict(p.settings)))
                CredentialStore().set("azure", p.name, {"client_secret": acct.secret})
        finally:
            store.close()

    def install_id(self) -> str:
        return (self.path / "config" / "install-id").read_text().strip()

    def forget_azure(self, name: str = "arm") -> None:
        self("credentials", "delete", "azure", name)


# -- checking the clouds directly -----------------------------------------------------------------
def ec2_client(moto: aws_moto.MotoStack, region: str = "us-east-1") -> Any:
    import boto3

    return boto3.client("ec2", region_name=region, endpoint_url=moto.url, aws_access_key_id="AKIACHECK",
                        aws_secret_access_key="check")


def aws_remains(moto: aws_moto.MotoStack, install_id: str, region: str = "us-east-1") -> dict[str, list[str]]:
    """What of ours exists in moto: live instances, unattached volumes, addresses, groups, key pairs."""
    ec2 = ec2_client(moto, region)
    owner = [{"Name": "tag:workbench:owner", "Values": [install_id]}]
    inst = [i["InstanceId"] for r in ec2.describe_instances(Filters=owner)["Reservations"] for i in r["Instances"]
            if i["State"]["Name"] not in ("terminated", "shutting-down")]
    vols = [v["VolumeId"] for v in ec2.describe_volumes(Filters=owner + [{"Name": "status", "Values": ["available"]}])
            ["Volumes"]]
    return {"instances": inst, "volumes": vols,
            "addresses": [a["AllocationId"] for a in ec2.describe_addresses(Filters=owner)["Addresses"]],
            "groups": [g["GroupId"] for g in ec2.describe_security_groups(Filters=owner)["SecurityGroups"]],
            "keys": [k["KeyName"] for k in ec2.describe_key_pairs(Filters=owner)["KeyPairs"]]}


def aws_instances_by_launch(moto: aws_moto.MotoStack, install_id: str, region: str = "us-east-1") -> dict[str, set[str]]:
    ec2 = ec2_client(moto, region)
    owner = [{"Name": "tag:workbench:owner", "Values": [install_id]}]
    out: dict[str, set[str]] = {}
    for r in ec2.describe_instances(Filters=owner)["Reservations"]:
        for i in r["Instances"]:
            if i["State"]["Name"] in ("terminated", "shutting-down"):
                continue
            tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
            out.setdefault(tags["workbench:launch"], set()).add(i["InstanceId"])
    return out


def arm_groups(arm: ArmServer, account: Account) -> list[str]:
    return [g["name"] for g in arm.groups(account.subscription)]


def arm_billable(arm: ArmServer, account: Account) -> list[str]:
    """Resources in the subscription that bill: VMs (any power state but deleted), disks, public IPs."""
    kinds = ("microsoft.compute/virtualmachines", "microsoft.compute/disks", "microsoft.network/publicipaddresses")
    return [r["id"] for r in arm.resources(account.subscription) if r["type"].lower() in kinds]


# -- killing a process at the Nth call the server carries out --------------------------------------
class Killer:
    """SIGKILL ``proc`` right after the server did its ``n``th call that ``mine(call)`` says is the process's own."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.pid: int | None = None
        self.fired = threading.Event()
        self.what = ""
        self._lock = threading.Lock()

    def seen(self, label: str) -> bool:
        """Count one call; True when this is the one to kill after."""
        with self._lock:
            self.count += 1
            if self.count == self.n:
                self.what = label
                return True
            return False

    def kill(self) -> None:
        deadline = time.monotonic() + 10
        while self.pid is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.fired.set()


def aws_kill_rule(killer: Killer, access_key: str, after: bool = True) -> aws_moto.FaultRule:
    """A fault rule that lets moto do the Nth call of ``access_key``, then kills the caller before it answers.

    ``after=False`` for calls moto cannot serve (the Price List API, answered by the wrapper itself).
    """

    def when(call: aws_moto.AwsCall) -> bool:
        return call.access_key == access_key and killer.seen(f"{call.service}:{call.operation}")

    def respond(call: aws_moto.AwsCall) -> tuple[int, str, str]:
        killer.kill()
        return 500, "text/plain", ""

    return aws_moto.FaultRule(error=None, status=500, when=when, after=after, respond=respond, times=1)


class ArmHook:
    """Wraps the shared ARM server's ``handle`` (our own test server, not the SDK) with per-test callbacks.

    A callback ``fn(method, path, reply_status) -> None`` runs after the server answered a request of
    the given subscription/tenant and before the answer is sent.
    """

    _installed: dict[int, "ArmHook"] = {}

    def __init__(self, arm: ArmServer) -> None:
        self.arm = arm
        self.callbacks: list[tuple[tuple[str, ...], Callable[[str, str, int], None]]] = []
        self.lock = threading.Lock()
        original = arm.handle

        def handle(method: str, raw_path: str, headers: Any, body: bytes):
            reply, seen = original(method, raw_path, headers, body)
            with self.lock:
                hooks = [fn for keys, fn in self.callbacks if any(k in raw_path for k in keys)]
            for fn in hooks:
                fn(method, raw_path, reply.status)
            return reply, seen

        arm.handle = handle  # type: ignore[method-assign]

    @classmethod
    def on(cls, arm: ArmServer) -> "ArmHook":
        if id(arm) not in cls._installed:
            cls._installed[id(arm)] = ArmHook(arm)
        return cls._installed[id(arm)]

    def add(self, keys: tuple[str, ...], fn: Callable[[str, str, int], None]) -> Callable[[], None]:
        entry = (keys, fn)
        with self.lock:
            self.callbacks.append(entry)

        def remove() -> None:
            with self.lock:
                if entry in self.callbacks:
                    self.callbacks.remove(entry)

        return remove


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"
