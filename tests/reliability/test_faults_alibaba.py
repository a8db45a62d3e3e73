"""A fault storm on Alibaba Cloud: 30 % of every call answered Throttling.User and another 10 % ServiceUnavailable
(our ECS/VPC/STS test server's fault rules, drawn from its seeded random source) while 6 launches go through the
core launcher (plan + execute, the path the CLI and GUI share) and then ``teardown`` of all of them.

A launch either completes (the plugin retries throttling and 5xx with capped back-off, the same ClientToken each
time, so a retried RunInstances never makes a second machine) or fails with a TransientError and is rolled back;
either way the teardown leaves nothing of ours in the account: 0 instances, VPCs, vSwitches, security groups,
key pairs, disks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


from alibaba_ecs import profile_for, shared_server  # noqa: E402

SPEC = "name: {name}\nrun: python3 train.py\nresources:\n  gpu: T4:1\nguards:\n  max_runtime: 1h\n"


@pytest.mark.timeout(150)
def test_six_launches_and_their_teardown_under_a_fault_storm_leave_nothing(tmp_path, monkeypatch):
    from workbench.core.domain.errors import TransientError
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute, remains
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.providers.accounts import Accounts
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    ali = shared_server()
    account = ali.new_account()
    ali.knobs(account).release_s = 0.1
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("alibaba", "ali", {"access_key_id": account.access_key_id, "access_key_secret": account.secret})
    acc = Accounts(store, credentials=creds)
    prof = profile_for(ali, account, name="ali", retry_backoff_s="0.005", terminate_timeout_s="30")
    acc.save_profile(Profile(prof.name, "alibaba", prof.region, None, dict(prof.settings)))
    rules = [ali.add_fault(".*", status=400, code="Throttling.User", message="Request was denied due to user flow "
                           "control.", times=-1, account=account.account_id, probability=0.30),
             ali.add_fault(".*", times=-1, account=account.account_id, probability=0.10 / 0.70)]
    launched, failed = {}, []
    try:
        for n in range(6):
            lp = choose_offer(acc, parse_spec(SPEC.format(name=f"storm{n}")), provider="alibaba")
            try:
                insts = execute(acc, lp)
            except TransientError as exc:
                assert exc.hint, exc
                failed.append(lp.launch_id)
                continue
            assert len(insts) == 1, lp.launch_id
            launched[lp.launch_id] = insts[0].instance_id
        report = teardown(acc, None, timeout=60, poll=0.05)
        if not report.clean:  # a teardown cut short by the storm is re-runnable
            report = teardown(acc, None, timeout=60, poll=0.05)
        calls = len(ali.calls_of(account))
        fired = sum(r.hits for r in rules)
    finally:
        for r in rules:
            r.times = 0
    assert report.clean, (report.remaining, report.errors)
    assert {i.instance_id for i in report.terminated} == set(launched.values())
    left = {kind: items for kind, items in ali.resources(account).items() if items}
    assert left == {}, f"the storm left: {left}"
    for lid in failed:
        assert remains(acc, "ali", lid) == []
    assert len(launched) + len(failed) == 6 and launched
    assert calls > 100 and 0.25 < fired / calls < 0.55, (fired, calls)
    print(f"{len(launched)} launched, {len(failed)} failed cleanly; {fired} of {calls} calls faulted")
    store.close()
