"""App-side guards with a manual clock: each fires at the first poll at its threshold, never before,
and tears down with verification (fake cloud in-process; Local with a real process)."""

from __future__ import annotations

import pytest

from workbench.core.money import budgets
from workbench.core.lifecycle.guards import GuardEngine
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import GpuSample, InstanceState
from workbench.core.lifecycle.teardown import TeardownReport
from workbench_testing import ManualClock, fake_cloud_accounts


Clock = ManualClock


@pytest.fixture
def acc(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    accounts, _ = fake_cloud_accounts(monkeypatch, {"fk": {}, "done": {"exit_after": "0"}})
    yield accounts
    from workbench.core.lifecycle.teardown import teardown

    teardown(accounts, None, timeout=10, poll=0.05)
    accounts.store.close()


def spec(guards: str = "", on_finish: str = "terminate", gpu: str = "V100:1", runtime: str = "10m"):
    return parse_spec(f"name: g\nrun: python train.py\nresources:\n  gpu: {gpu}\non_finish: {on_finish}\n"
                      f"guards:\n  max_runtime: {runtime}\n{guards}")


def launch(acc, sp, profile="fk"):
    lp = choose_offer(acc, sp, profile=profile)
    [inst] = execute(acc, lp)
    return lp.launch_id, inst


def engine(acc, clock, **kw) -> tuple[GuardEngine, list]:
    seen: list = []
    kw.setdefault("collect_samples", False)
    eng = GuardEngine(acc, clock=clock, on_event=seen.append, teardown_poll_s=0.02, teardown_timeout_s=10, **kw)
    return eng, seen


def billable(acc, lid):
    return [i for i in acc.store.list_instances(launch_id=lid) if i.state.billable]


def test_max_runtime_fires_at_the_limit_not_before(acc):
    lid, _ = launch(acc, spec())
    start = acc.store.get_launch(lid).created_at
    clock = Clock(start + 599)
    eng, seen = engine(acc, clock)
    assert eng.poll() == [] and billable(acc, lid)
    clock.t = start + 600
    events = eng.poll()
    assert [(e.guard, e.action) for e in events] == [("max_runtime", "teardown"), ("max_runtime", "verified")]
    assert seen == events and "maximum runtime" in events[0].message
    assert billable(acc, lid) == []
    assert acc.store.get_launch(lid).status == "terminated"
    assert eng.poll() == []  # nothing left to guard


def test_budget_warns_at_50_80_and_tears_down_at_100(acc):
    lid, inst = launch(acc, spec("  budget_usd: 1.53\n", runtime="24h"))  # $3.06/h: half an hour
    t0 = acc.store.ledger(instance_id=inst.instance_id)[0].ts
    clock = Clock(t0 + 0.2 * 3600)
    eng, _ = engine(acc, clock)
    assert eng.poll() == []
    clock.t = t0 + 0.26 * 3600
    assert [(e.action, e.level) for e in eng.poll()] == [("warn", "warning")]
    assert eng.poll() == []  # once per threshold
    clock.t = t0 + 0.41 * 3600
    [w80] = eng.poll()
    assert "80 %" in w80.message
    clock.t = t0 + 0.5 * 3600 - 1
    assert eng.poll() == []
    clock.t = t0 + 0.5 * 3600 + 1
    events = eng.poll()
    assert [(e.guard, e.action) for e in events] == [("budget", "warn"), ("budget", "teardown"), ("budget", "verified")]
    assert "100 %" in events[0].message and billable(acc, lid) == []


def test_monthly_budget_warns_only_when_not_enforced(acc):
    lid, inst = launch(acc, spec(runtime="24h"))
    budgets.set_monthly(acc.store, 1.0, enforce=False)
    t0 = acc.store.ledger(instance_id=inst.instance_id)[0].ts
    eng, _ = engine(acc, Clock(t0 + 3600 / 3.06 + 5))  # just over $1
    events = eng.poll()
    assert [(e.guard, e.action) for e in events] == [("monthly_budget", "warn")] * 3
    assert billable(acc, lid)  # warnings only
    budgets.set_monthly(acc.store, 1.0, enforce=True)
    events = eng.poll()
    assert [e.action for e in events] == ["teardown", "verified"] and billable(acc, lid) == []


def _gpu_samples(acc, iid, times, util):
    acc.store.add_samples([GpuSample(iid, t, idx, util, 100.0, 16000.0) for t in times for idx in (0, 1)])


def test_idle_gpu_fires_after_n_minutes_below_x_percent(acc):
    lid, inst = launch(acc, spec("  idle_minutes: 5\n  idle_util_below: 10\n", runtime="24h"))
    t0 = inst.launched_at
    _gpu_samples(acc, inst.instance_id, [t0 + s for s in range(0, 600, 60)], 85.0)  # busy for 10 min
    last_busy = t0 + 540
    _gpu_samples(acc, inst.instance_id, [last_busy + s for s in range(60, 420, 60)], 3.0)  # then idle
    clock = Clock(last_busy + 299)
    eng, _ = engine(acc, clock)
    assert eng.poll() == []
    clock.t = last_busy + 301  # the last busy reading left the 5-minute window
    assert [(e.guard, e.action) for e in eng.poll()] == [("idle", "teardown"), ("idle", "verified")]
    assert billable(acc, lid) == []


def test_idle_never_fires_on_a_busy_job_or_without_gpu_telemetry(acc):
    lid, inst = launch(acc, spec("  idle_minutes: 5\n  idle_util_below: 10\n", runtime="24h"))
    t0 = inst.launched_at
    _gpu_samples(acc, inst.instance_id, [t0 + s for s in range(0, 3600, 60)], 60.0)
    acc.store.add_samples([GpuSample(inst.instance_id, t0 + s, 0, 0.0, 1, 2, kind="cpu") for s in range(0, 3600, 60)])
    eng, _ = engine(acc, Clock(t0 + 3590))
    assert eng.poll() == []
    # one GPU busy, the other idle: not idle
    lid2, inst2 = launch(acc, spec("  idle_minutes: 5\n  idle_util_below: 10\n", runtime="24h"))
    acc.store.add_samples([GpuSample(inst2.instance_id, inst2.launched_at + s, i, 90.0 if i else 0.0, 1, 2)
                           for s in range(0, 600, 60) for i in (0, 1)])
    # CPU-only readings at 0 %: the guard is about GPUs
    lid3, inst3 = launch(acc, spec("  idle_minutes: 5\n", runtime="24h"))
    acc.store.add_samples([GpuSample(inst3.instance_id, inst3.launched_at + s, 0, 0.0, 1, 2, kind="cpu")
                           for s in range(0, 600, 60)])
    eng2, _ = engine(acc, Clock(inst2.launched_at + 590))
    assert eng2.poll() == []
    assert billable(acc, lid) and billable(acc, lid2) and billable(acc, lid3)


def test_finished_job_notifies_waits_the_grace_then_tears_down(acc):
    lid, _ = launch(acc, spec(), profile="done")  # reports exit code 0 while still billing
    clock = Clock(acc.store.get_launch(lid).created_at + 60)
    eng, _ = engine(acc, clock, finish_grace_s=300)
    [pending] = eng.poll()
    assert (pending.guard, pending.action, pending.deadline) == ("finished", "pending", clock.t + 300)
    assert "exit 0" in pending.message and "unless you keep it running" in pending.message
    clock.t += 299
    assert eng.poll() == [] and billable(acc, lid)
    clock.t += 1
    assert [e.action for e in eng.poll()] == ["teardown", "verified"]
    assert billable(acc, lid) == []


def test_keep_running_stands_the_finish_guard_down_but_not_max_runtime(acc):
    lid, _ = launch(acc, spec(), profile="done")
    start = acc.store.get_launch(lid).created_at
    clock = Clock(start + 10)
    eng, _ = engine(acc, clock, finish_grace_s=60)
    assert [e.action for e in eng.poll()] == ["pending"]
    assert eng.keep_running(lid) is True
    clock.t += 120
    assert eng.poll() == [] and billable(acc, lid)
    clock.t = start + 600
    assert [e.guard for e in eng.poll()] == ["max_runtime", "max_runtime"]


def test_on_finish_stop_stops_and_keep_only_notifies(acc):
    lid, _ = launch(acc, spec(on_finish="stop"), profile="done")
    lid_keep, _ = launch(acc, spec(on_finish="keep"), profile="done")
    clock = Clock(acc.store.get_launch(lid_keep).created_at + 5)
    eng, _ = engine(acc, clock, finish_grace_s=0)
    events = eng.poll()
    by = {(e.launch_id, e.action) for e in events}
    assert {(lid, "pending"), (lid, "stop"), (lid, "verified"), (lid_keep, "notice")} == by
    states = {i.launch_id: i.state for i in acc.store.list_instances()}
    assert states[lid] == InstanceState.STOPPED and states[lid_keep] == InstanceState.RUNNING
    assert eng.poll() == []  # the notice is given once
    clock.t += 3600  # past max runtime: the running one is ended, the stopped one (disks kept) is left alone
    assert {(e.launch_id, e.action) for e in eng.poll()} == {(lid_keep, "teardown"), (lid_keep, "verified")}
    assert {i.launch_id: i.state for i in acc.store.list_instances()}[lid] == InstanceState.STOPPED


def test_two_engines_act_once(acc):
    lid, _ = launch(acc, spec())
    calls = []

    def stuck(accounts, ids, **kw):
        calls.append(ids)
        return TeardownReport(remaining=list(billable(acc, lid)))

    clock = Clock(acc.store.get_launch(lid).created_at + 601)
    gui, _ = engine(acc, clock, teardown_fn=stuck)
    watch, _ = engine(acc, clock, teardown_fn=stuck)
    first = gui.poll()
    assert [e.action for e in first] == ["teardown", "still_billing"] and first[1].level == "error"
    assert watch.poll() == [] and calls == [[lid]]
    clock.t += 300  # retried after retry_s while it still bills
    assert [e.action for e in watch.poll()] == ["teardown", "still_billing"] and len(calls) == 2


def test_local_job_is_torn_down_by_max_runtime_and_idle(tmp_path, monkeypatch):
    import psutil

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    accounts, _ = fake_cloud_accounts(monkeypatch)
    try:
        sp = parse_spec("name: local-guard\nrun: sleep 600\nguards:\n  max_runtime: 30m\n  idle_minutes: 2\n")
        lid, inst = launch(accounts, sp, profile="local")
        pid = inst.extra["pid"]
        assert psutil.pid_exists(pid)
        start = accounts.store.get_launch(lid).created_at
        eng, _ = engine(accounts, Clock(start + 1799))
        assert eng.poll() == []
        eng.clock = Clock(start + 1800)
        assert [e.action for e in eng.poll()] == ["teardown", "verified"]
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        lid2, inst2 = launch(accounts, sp, profile="local")
        _gpu_samples(accounts, inst2.instance_id, [inst2.launched_at + s for s in range(0, 200, 30)], 1.0)
        eng.clock = Clock(inst2.launched_at + 181)
        assert [(e.guard, e.action) for e in eng.poll()] == [("idle", "teardown"), ("idle", "verified")]
        assert not [i for i in accounts.store.list_instances(launch_id=lid2) if i.state.billable]
    finally:
        from workbench.core.lifecycle.teardown import teardown

        teardown(accounts, None, timeout=10, poll=0.05)
        accounts.store.close()
