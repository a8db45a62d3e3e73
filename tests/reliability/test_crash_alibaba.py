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

import pytest

from alibaba_ecs import shared_server
from crash_harness import Crash, sigkill_launches, status_then_down_all
from reltools import Killer

API_POINTS = [("vpc:CreateVpc", 1), ("ecs:AuthorizeSecurityGroup", 1), ("ecs:RunInstances", 1)]
CORE_POINTS = ["launch:recorded", "launch:instances-stored"]
SETTINGS = {"protocol": "http", "ssh_cidr": "203.0.113.7/32", "poll_s": "0.05", "retry_backoff_s": "0.01",
            "retry_total": "2", "terminate_timeout_s": "30", "zones": "cn-hangzhou-i",
            "pricing": "snapshot"}  # planning from the bundled prices: fewer calls per process on a busy machine


def _env(base: dict[str, str], key) -> dict[str, str]:
    return dict(base, ALIBABA_CLOUD_ACCESS_KEY_ID=key.access_key_id, ALIBABA_CLOUD_ACCESS_KEY_SECRET=key.secret)


def _crash(ali, account, wbhome, point: tuple[str, int] | str) -> Crash:
    key = ali.new_key(account)  # each launch its own key: the server tells its calls apart
    env = _env(wbhome.env, key)
    if not isinstance(point, tuple):
        return Crash(point, env, ["--provider", "alibaba"])
    action, n = point
    killer = Killer(n)

    def watch(seen) -> None:
        if seen.access_key_id == key.access_key_id and seen.action == action and not killer.fired.is_set() \
                and killer.seen(action):
            killer.kill()

    return Crash(point, env, ["--provider", "alibaba"], killer, [ali.observe(watch)])


@pytest.mark.timeout(180)
def test_sigkill_at_each_point_then_a_lost_store_then_status_and_down_all(wbhome):
    ali = shared_server()
    account = ali.new_account()
    ali.knobs(account).release_s = 0.2  # released instances linger: the teardown order is exercised
    args = ["profiles", "add", "alibaba", "ali", "--region", "cn-hangzhou", "--set", f"endpoint={ali.endpoint}"]
    for k, v in SETTINGS.items():
        args += ["--set", f"{k}={v}"]
    assert wbhome(*args).returncode == 0
    crashes = [_crash(ali, account, wbhome, point) for point in [*API_POINTS, *CORE_POINTS]]
    sigkill_launches(wbhome, wbhome.spec("crashy", gpu="T4:1"), crashes, wait_s=90, stagger_s=0.2)

    existing = {i["_tags"]["workbench:launch"]: {i["InstanceId"]} for i in ali.instances(account)}
    assert len(existing) == 2, existing  # RunInstances (answer lost) and launch:instances-stored made machines
    made = ali.resources(account)
    assert made["vpcs"] and made["keys"] and made["groups"], "the early points left a half-made network"

    for f in (wbhome.path / "data").glob("state.sqlite3*"):  # the store is lost as well
        f.unlink()
    env = _env(wbhome.env, ali.new_key(account))
    status = status_then_down_all(wbhome, existing, len(existing), lambda: ali.resources(account), env=env)
    assert set(existing) <= set(status["recovered"])
