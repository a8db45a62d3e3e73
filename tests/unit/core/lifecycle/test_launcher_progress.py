"""Launcher support for the GUI wizard: a plan for a chosen offer, step reports, the rollback check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench.core.offers.query import OfferQuery
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.domain.errors import CapacityError, QuotaError
from workbench.core.domain.jobspec import parse_spec
from workbench_testing import fake_cloud_accounts
from workbench.core.lifecycle.launcher import (LAUNCH_STEPS, STEP_PROVIDER, STEP_RECORD, STEP_WAIT, execute, plan_offer,
                                     remains)
from workbench.core.domain.models import InstanceState
from workbench.core.lifecycle.teardown import teardown

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "plugins"
SPEC = parse_spec("name: pick\nrun: x\nresources:\n  gpu: V100:1\nguards:\n  max_runtime: 2h\n")


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, _creds = fake_cloud_accounts(monkeypatch, {
        "fc": {"no_quota_types": "fk.v100x1"}, "fc-cap": {"fail_launch": "capacity"},
        "fc-quota": {"fail_launch": "quota"}, "fc-leaky": {"leak_disk": "true"}})
    store = acc.store
    yield acc
    teardown(acc, None, timeout=5, poll=0.05)
    store.close()
    for m in [m for m in sys.modules if m.startswith("workbench_fakecloud")]:
        sys.modules.pop(m, None)


def _offer(acc, profile, itype, region="fake-west"):
    ranked = find_offers(acc, OfferQuery.from_spec(SPEC), profiles=[acc.profile(profile)], catalog=NEVER).ranked
    return next(r for r in ranked if r.offer.instance_type == itype and r.offer.region == region)


def test_chosen_offer_is_launched_and_steps_are_reported_in_order(accounts):
    choice = _offer(accounts, "fc", "fk.v100x4")  # not the cheapest: the user's pick wins
    lp = plan_offer(accounts, SPEC, choice)
    assert lp.profile.name == "fc" and lp.projected_cost == pytest.approx(12.24 * 2)
    steps: list[str] = []
    insts = execute(accounts, lp, progress=steps.append, wait_s=5, poll_s=0.05)
    assert steps == list(LAUNCH_STEPS)
    assert [(i.instance_type, i.region, i.state) for i in insts] == [("fk.v100x4", "fake-west", InstanceState.RUNNING)]
    assert accounts.store.get_launch(lp.launch_id).status == "running"
    assert [getattr(x, "instance_id", None) for x in remains(accounts, "fc", lp.launch_id)] == [insts[0].instance_id]


def test_an_offer_without_quota_cannot_be_planned(accounts):
    choice = _offer(accounts, "fc", "fk.v100x1")
    assert not choice.offer.available and "no quota" in (choice.offer.availability_note or "")
    with pytest.raises(CapacityError, match="no quota for fk.v100x1"):
        plan_offer(accounts, SPEC, choice)


@pytest.mark.parametrize("profile,error", [("fc-cap", CapacityError), ("fc-quota", QuotaError)])
def test_failed_launch_stops_at_the_provider_step_and_leaves_nothing(accounts, profile, error):
    lp = plan_offer(accounts, SPEC, _offer(accounts, profile, "fk.v100x1"))
    steps: list[str] = []
    with pytest.raises(error):
        execute(accounts, lp, progress=steps.append, wait_s=5)
    assert steps == [STEP_RECORD, STEP_PROVIDER]
    assert accounts.store.get_launch(lp.launch_id).status == "failed"
    assert remains(accounts, profile, lp.launch_id) == []


def test_remains_names_a_leaked_disk_of_that_launch_only(accounts):
    lp = plan_offer(accounts, SPEC, _offer(accounts, "fc-leaky", "fk.v100x1"))
    other = plan_offer(accounts, SPEC, _offer(accounts, "fc-leaky", "fk.v100x1"))
    insts = execute(accounts, lp)
    execute(accounts, other)
    accounts.provider(accounts.profile("fc-leaky")).terminate(insts)
    left = remains(accounts, "fc-leaky", lp.launch_id)
    assert [(getattr(r, "kind", None), r.launch_id) for r in left] == [("disk", lp.launch_id)]


def test_execute_waits_for_a_pending_machine_and_stops_waiting_on_cancel(accounts):
    prov = accounts.provider(accounts.profile("fc"))
    real_launch, real_list = prov.launch, prov.instances
    polls = []

    def pending_launch(req):
        return [i.with_state(InstanceState.PENDING) for i in real_launch(req)]

    def slow_start():
        polls.append(1)
        return [i if len(polls) >= 3 else i.with_state(InstanceState.PENDING) for i in real_list()]

    prov.launch, prov.instances = pending_launch, slow_start  # a cloud whose machine takes 3 polls to start
    choice = _offer(accounts, "fc", "fk.v100x4")
    steps: list[str] = []
    insts = execute(accounts, plan_offer(accounts, SPEC, choice), progress=steps.append, wait_s=5, poll_s=0.01)
    assert steps == list(LAUNCH_STEPS) and len(polls) == 3
    assert [i.state for i in insts] == [InstanceState.RUNNING]
    assert accounts.store.list_instances(launch_id=insts[0].launch_id)[0].state == InstanceState.RUNNING

    polls.clear()
    steps.clear()
    insts = execute(accounts, plan_offer(accounts, SPEC, choice), progress=steps.append, wait_s=5, poll_s=0.01,
                    should_stop=lambda: True)  # the user cancelled: hand back at once, still PENDING
    assert steps == [STEP_RECORD, STEP_PROVIDER, STEP_WAIT] and polls == []
    assert [i.state for i in insts] == [InstanceState.PENDING]
