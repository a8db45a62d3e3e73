"""Extending a run on Azure: the VM's auto-shutdown schedule (the second line, tied to the max runtime in "auto"
mode) follows the new deadline on our ARM test server; a fixed time of the user's stays."""

from __future__ import annotations

import time

from workbench.core.domain.models import Guards, JobSpec
from workbench.core.providers.contract import SupportsExtend


def _schedule(arm, account, group):
    return next(r for r in arm.resources(account.subscription, group) if r["type"] == "Microsoft.DevTestLab/schedules")


def test_extend_moves_the_auto_shutdown_and_disables_it_past_a_day(arm, account, provider, request_for):
    assert isinstance(provider, SupportsExtend)
    req = request_for(provider, spec=JobSpec(name="t", run="x", guards=Guards(max_runtime_minutes=60)))
    [inst] = provider.launch(req)
    group = f"wb-{req.launch_id}"
    before = _schedule(arm, account, group)["properties"]["dailyRecurrence"]["time"]
    later = time.time() + 5 * 3600
    assert provider.extend([inst], later) is True
    sched = _schedule(arm, account, group)
    want = time.strftime("%H%M", time.gmtime(later + 300))
    assert sched["properties"]["dailyRecurrence"]["time"] == want != before
    assert sched["properties"]["status"] == "Enabled"
    assert sched["properties"]["targetResourceId"].endswith("/wb-vm")
    # a deadline a day or more ahead cannot be a daily shutdown: disabled, the guard keeps the deadline
    provider.extend([inst], time.time() + 30 * 3600)
    assert _schedule(arm, account, group)["properties"]["status"] == "Disabled"


def test_a_fixed_shutdown_time_of_the_users_is_left_alone(arm, account, make_provider, request_for):
    prov = make_provider(auto_shutdown="1900")
    req = request_for(prov, spec=JobSpec(name="t", run="x", guards=Guards(max_runtime_minutes=60)))
    [inst] = prov.launch(req)
    assert prov.extend([inst], time.time() + 5 * 3600) is False
    sched = _schedule(arm, account, f"wb-{req.launch_id}")
    assert sched["properties"]["dailyRecurrence"]["time"] == "1900" and sched["properties"]["status"] == "Enabled"
