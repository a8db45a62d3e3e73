"""Faults: a storm of throttling and server errors on every call; an outage the GUI rides out.

- AWS (moto behind our fault wrapper): 30 % of every call (every service) answered with a
  throttling error and another 10 % with a bare 5xx, while 10 launches go through the core
  launcher (plan + execute, the path the CLI and GUI share) and then `teardown` of all of them:
  with max_attempts=20 every launch ends with a machine; with the default 8, botocore's retry
  quota runs dry and some launches fail with a clear TransientError and are rolled back; either
  way the teardown leaves nothing of ours, checked in moto.  The backoff cap is 0.02 s (the test
  does not sleep for real).
- Azure (the ARM server's fault rules): 30 % 429 + Retry-After and 10 % 500 on the ARM calls of
  4 launches and their teardown: a launch either completes or fails with a TransientError and is
  rolled back (a few do: the plugin's own retries of some steps give up sooner than the SDK's);
  no group is left.
- Outage: every call fails for a window (here 3 s of wall time instead of 60 s: the Session's
  backoff is what is tested, not the clock) → the GUI Session shows the error, doubles its refresh
  interval while it lasts, and goes back to the normal interval and a fresh snapshot by itself.
"""

from __future__ import annotations


import pytest

from aws_moto import FaultRule
from reltools import AWS_FAST, GPU_SPEC, aws_remains

def _aws_accounts(home, moto, monkeypatch, *more: str):
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Profile
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("aws", "moto", {"access_key_id": "AKIASTORM00000000001", "secret_access_key": "storm/secret"})
    acc = Accounts(store, credentials=creds)
    settings = dict(s.split("=", 1) for s in (*AWS_FAST, *more))
    acc.save_profile(Profile("moto", "aws", "us-east-1", moto.url, settings))
    return acc


def _storm(moto, throttle: float = 0.30, server_error: float = 0.10) -> list[FaultRule]:
    rules = [
        moto.faults.add(FaultRule(service="ec2", error="RequestLimitExceeded", rate=throttle)),
        moto.faults.add(FaultRule(service=("sts", "ssm", "servicequotas", "pricing", "monitoring"),
                                  error="ThrottlingException", rate=throttle)),
        # of the calls the first rules let through, this share again: 10 % of all calls
        moto.faults.add(FaultRule(error=None, status=503, rate=server_error / (1 - throttle))),
    ]
    return rules


@pytest.mark.timeout(150)
@pytest.mark.parametrize("attempts", ["8", "20"])
def test_ten_aws_launches_and_their_teardown_under_a_fault_storm_leave_nothing(tmp_path, moto, monkeypatch,
                                                                                 attempts):
    """max_attempts 8 (the product's default): botocore's retry quota (standard mode) runs dry in a storm
    this long, so some launches fail — each with a TransientError and rolled back.  20: all complete."""
    from workbench.core.domain.errors import TransientError
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer, remains
    from workbench.core.lifecycle.teardown import teardown

    acc = _aws_accounts(tmp_path / "home", moto, monkeypatch, f"max_attempts={attempts}")
    rules = _storm(moto)
    launched, failed = {}, []
    try:
        for n in range(10):
            lp = choose_offer(acc, parse_spec(GPU_SPEC.format(name=f"storm{n}", gpu="V100:1")), provider="aws")
            try:
                insts = execute(acc, lp)
            except TransientError as exc:
                assert "AWS is busy or failing" in exc.message and exc.hint, exc
                failed.append(lp.launch_id)
                continue
            assert len(insts) == 1, lp.launch_id
            launched[lp.launch_id] = insts[0].instance_id
        report = teardown(acc, None, timeout=60, poll=0.05)
        if not report.clean:  # a teardown cut short by the storm is re-runnable
            report = teardown(acc, None, timeout=60, poll=0.05)
        fired = sum(r.fired for r in rules)
        calls = len(moto.faults.calls)
    finally:
        moto.faults.rules.clear()
    assert report.clean, (report.remaining, report.errors)
    assert {i.instance_id for i in report.terminated} == set(launched.values())
    assert aws_remains(moto, acc.context.install_id) == {"instances": [], "volumes": [], "addresses": [],
                                                        "groups": [], "keys": []}
    for lid in failed:
        assert remains(acc, "moto", lid) == []
    if attempts == "20":
        assert len(launched) == 10 and not failed
    assert len(launched) + len(failed) == 10
    # the storm really blew: about 40 % of the calls were answered with a fault
    assert calls > 100 and 0.25 < fired / calls < 0.55, (fired, calls)
    print(f"max_attempts={attempts}: {len(launched)} launched, {len(failed)} failed cleanly; "
          f"{fired} of {calls} calls faulted")
    acc.store.close()


@pytest.mark.timeout(120)
def test_azure_launches_and_teardown_complete_under_throttling_and_500s(tmp_path, arm, account, monkeypatch):
    from azure_arm import profile_for

    from workbench.core.domain.errors import TransientError
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.store.database import Store
    from workbench.core.lifecycle.teardown import teardown
    from workbench_testing import MemoryCredentials

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("azure", "arm", {"client_secret": account.secret})
    acc = Accounts(store, credentials=creds)
    acc.save_profile(profile_for(arm, account, name="arm", retry_total="8"))
    sub = account.subscription.lower()

    # 30 % of the subscription's requests throttled, 10 % of the rest a bare 500: drawn per request, so the
    # storm is the same however fast this machine answers
    arm.add_fault(rf"/subscriptions/{sub}/", status=429, code="TooManyRequests", message="throttled by the test",
                  headers={"Retry-After": "0"}, times=-1, sub=account.subscription, rate=0.3, seed=11)
    arm.add_fault(rf"/subscriptions/{sub}/", times=-1, sub=account.subscription, rate=0.1, seed=12)
    try:
        launched, failed = 0, []
        for n in range(4):
            lp = choose_offer(acc, parse_spec(GPU_SPEC.format(name=f"storm{n}", gpu="T4:1")), provider="azure")
            try:
                assert len(execute(acc, lp)) == 1
                launched += 1
            except TransientError as exc:  # retries ran out: a clear message, and the launch rolled back
                assert "Azure" in exc.message and exc.hint, exc
                failed.append(lp.launch_id)
        assert launched >= 1 and len(arm.groups(account.subscription)) == launched
        report = teardown(acc, None, timeout=60, poll=0.05)
    finally:
        arm.clear_faults(account.subscription)
    hits = sum(1 for s in arm.seen if s.sub == account.subscription and s.status in (429, 500))
    assert hits >= 5, hits
    assert report.clean, (report.remaining, report.errors)
    assert arm.groups(account.subscription) == []
    store.close()


def test_outage_is_shown_backed_off_and_recovered_from_by_itself(qtbot, tmp_path, moto, monkeypatch):
    from workbench.ui.runtime.session import Session

    acc = _aws_accounts(tmp_path / "home", moto, monkeypatch, "max_attempts=1")
    s = Session(acc)
    s.interval_ms = 200
    s.timer.start(200)
    outage = moto.faults.add(FaultRule(error=None, status=503))
    try:
        s.refresh()
        qtbot.waitUntil(lambda: s.backoff_ms >= 400, timeout=20_000)
        first = s.backoff_ms
        qtbot.waitUntil(lambda: s.backoff_ms > first, timeout=20_000)  # still down: backs off further
        assert s.timer.interval() == s.backoff_ms > s.interval_ms
        shown = [str(e) for _, e in s.snapshot.errors]
        assert shown and all("503" in m or "unavailable" in m.lower() or "server" in m.lower() for m in shown), shown
    finally:
        moto.faults.rules.remove(outage)
    # the service is back: the next tick succeeds and the normal interval returns, without any help
    qtbot.waitUntil(lambda: s.backoff_ms == 0 and s.timer.interval() == 200, timeout=30_000)
    assert not s.snapshot.errors
    s.shutdown()
    acc.store.close()
