"""Crash mid-launch on Alibaba Cloud: the real `workbench launch` is SIGKILLed at 5 points against our ECS server,
then the store is lost too; status finds everything again by tags and `down --all` leaves nothing.

Points: right after the server carried out the launch's CreateVpc, AuthorizeSecurityGroup (the VPC, key and
group exist, no vSwitch yet) and RunInstances (the answer never reaches the process: an observer on our
test server kills it first), plus the launcher's own crash points (``WORKBENCH_CRASH_AT``: recorded before
the provider is called; instances stored).  Every launch process
signs with its own RAM user's AccessKey of one account (environment variables: no keyring needed), so
its calls are counted apart while status and down see the whole account.  Then the store file is
deleted (a lost database; the profiles come back from their mirror): a fresh `workbench status` must
show every instance that exists under its launch (recovered from tags), and `workbench down --all` must
leave nothing of ours: no instance, VPC, vSwitch, security group, key pair or disk, checked in the server.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from reltools import Killer

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from alibaba_ecs import shared_server  # noqa: E402

API_POINTS = [("vpc:CreateVpc", 1), ("ecs:AuthorizeSecurityGroup", 1), ("ecs:RunInstances", 1)]
CORE_POINTS = ["launch:recorded", "launch:instances-stored"]
SETTINGS = {"protocol": "http", "ssh_cidr": "203.0.113.7/32", "poll_s": "0.05", "retry_backoff_s": "0.01",
            "retry_total": "2", "terminate_timeout_s": "30", "zones": "cn-hangzhou-i",
            "pricing": "snapshot"}  # planning from the bundled prices: fewer calls per process on a busy machine


def _env(base: dict[str, str], key) -> dict[str, str]:
    return dict(base, ALIBABA_CLOUD_ACCESS_KEY_ID=key.access_key_id, ALIBABA_CLOUD_ACCESS_KEY_SECRET=key.secret)


@pytest.mark.timeout(180)
def test_sigkill_at_each_point_then_a_lost_store_then_status_and_down_all(wbhome):
    ali = shared_server()
    account = ali.new_account()
    ali.knobs(account).release_s = 0.2  # released instances linger: the teardown order is exercised
    args = ["profiles", "add", "alibaba", "ali", "--region", "cn-hangzhou", "--set", f"endpoint={ali.endpoint}"]
    for k, v in SETTINGS.items():
        args += ["--set", f"{k}={v}"]
    assert wbhome(*args).returncode == 0
    spec = wbhome.spec("crashy", gpu="T4:1")
    points: list[tuple[str, int] | str] = [*API_POINTS, *CORE_POINTS]
    procs, removers = [], []
    try:
        for point in points:
            key = ali.new_key(account)
            env = _env(wbhome.env, key)
            killer: Killer | None = None
            if isinstance(point, tuple):
                action, n = point
                killer = Killer(n)

                def watch(seen, k: Killer = killer, ak: str = key.access_key_id, act: str = action) -> None:
                    if seen.access_key_id == ak and seen.action == act and not k.fired.is_set() and k.seen(act):
                        k.kill()

                removers.append(ali.observe(watch))
            else:
                env["WORKBENCH_CRASH_AT"] = point
            proc = wbhome.popen("launch", str(spec), "--provider", "alibaba", "--yes", "--json", env=env)
            if killer is not None:
                killer.pid = proc.pid
            procs.append((point, proc, killer))
            time.sleep(0.2)
        for point, proc, killer in procs:
            try:
                rc = proc.wait(90)
            except Exception:  # noqa: BLE001
                proc.kill()
                proc.wait(10)
                raise AssertionError(f"{point}: the launch never reached its crash point") from None
            out, err = proc.communicate()
            assert rc == -signal.SIGKILL, f"{point}: rc {rc}\n{out}\n{err[-2000:]}"
            assert killer is None or killer.fired.wait(10), point  # set just after its kill: wait, not peek
    finally:
        for remove in removers:
            remove()
        for _point, proc, _killer in procs:  # a failed check above must not leave the others running
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)

    existing = {i["_tags"]["workbench:launch"]: i["InstanceId"] for i in ali.instances(account)}
    assert len(existing) == 2, existing  # RunInstances (answer lost) and launch:instances-stored made machines
    made = ali.resources(account)
    assert made["vpcs"] and made["keys"] and made["groups"], "the early points left a half-made network"

    for f in (wbhome.path / "data").glob("state.sqlite3*"):  # the store is lost as well
        f.unlink()
    env = _env(wbhome.env, ali.new_key(account))
    status = wbhome.json("status", env=env)
    shown = {launch["launch_id"]: {i["instance_id"] for i in launch["instances"] if i["billable"]}
             for launch in status["launches"]}
    for lid, iid in existing.items():
        assert iid in shown.get(lid, set()), f"status misses {lid}: {iid} (shows {shown})"
    assert set(existing) <= set(status["recovered"])
    assert status["billable"] == len(existing)

    report = wbhome.json("down", "--all", "--yes", env=env)
    assert report["clean"], report
    left = {kind: items for kind, items in ali.resources(account).items() if items}
    assert left == {}, f"down --all left: {left}"
    assert wbhome.json("status", env=env)["billable"] == 0
