"""Planning a spec with alternatives and GPU ranges: the cheapest (or first) matching offer, and which.

Offers come from the test plugin workbench_fakecloud (V100 ×1 and ×4, A100 ×8, a CPU type, in
fake-east and fake-west); what runs for real is tested with the Local provider in tests/cli.
"""

from __future__ import annotations

import sys

import pytest

from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.lifecycle.teardown import teardown
from workbench_testing import fake_cloud_accounts


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, _ = fake_cloud_accounts(monkeypatch, {"fc": {}, "fc-noa100": {"no_quota_types": "fk.a100x8"}})
    yield acc
    teardown(acc, None, timeout=5, poll=0.05)
    acc.store.close()
    for m in [m for m in sys.modules if m.startswith("workbench_fakecloud")]:
        sys.modules.pop(m, None)


def spec(body: str):
    return parse_spec("name: pick\nrun: x\nproviders: [fakecloud]\n" + body, source="t.yaml")


def test_the_cheapest_alternative_wins_and_the_plan_says_which(accounts):
    lp = choose_offer(accounts, spec("alternatives: [{gpu: A100:8}, {gpu: V100:1}]\n"), profile="fc")
    assert lp.choice.offer.instance_type == "fk.v100x1" and lp.choice.alternative == 1
    assert lp.matched == "alternative 2 of 2 (1× V100)"
    assert lp.to_json()["matched"] == lp.matched and lp.to_json()["alternative"] == 1


def test_in_order_takes_the_first_alternative_that_has_an_offer(accounts):
    s = spec("alternatives: [{gpu: A100:8}, {gpu: V100:1}]\nchoose: in_order\n")
    assert choose_offer(accounts, s, profile="fc").choice.offer.instance_type == "fk.a100x8"
    # no quota for the A100 type: the next alternative, not an unavailable offer
    assert choose_offer(accounts, s, profile="fc-noa100").choice.offer.instance_type == "fk.v100x1"


@pytest.mark.parametrize("gpu, itype", [
    ("V100:2..4", "fk.v100x4"),       # at least 2: the 1-GPU type is out
    ("V100:1..1", "fk.v100x1"),
    ("'any:5..'", "fk.a100x8"),
    ("{model: any, count: 1, min_memory_gb: 20}", "fk.a100x8"),  # only the A100 has 40 GB
    ("{model: any, count: 1, max_memory_gb: 20}", "fk.v100x1"),
])
def test_ranges_narrow_the_offers(accounts, gpu, itype):
    assert choose_offer(accounts, spec(f"resources:\n  gpu: {gpu}\n"), profile="fc").choice.offer.instance_type == itype


def test_an_instance_type_a_region_and_spot_per_alternative(accounts):
    lp = choose_offer(accounts, spec("alternatives: [{instance_type: fk.v100x4, region: fake-west, spot: true}]\n"),
              profile="fc")
    o = lp.choice.offer
    assert (o.instance_type, o.region) == ("fk.v100x4", "fake-west")
    assert lp.spot and lp.price_per_hour == pytest.approx(3.67)  # the spot price
    insts = execute(accounts, lp)
    assert insts[0].spot


def test_alternatives_on_another_provider_are_skipped_and_a_chosen_provider_wins(accounts):
    s = parse_spec("name: x\nrun: x\nalternatives:\n  - {gpu: V100:1, provider: aws, region: us-east-1}\n",
                   source="t.yaml")
    with pytest.raises(NotFoundError, match="none of the spec's 1 alternatives can run on profile 'local'"):
        choose_offer(accounts, s)  # no provider named anywhere: this computer, which the alternative does not name
    # asking for a provider explicitly keeps the hardware and drops the location, as SkyPilot's --infra does
    lp = choose_offer(accounts, s, provider="fakecloud")
    assert lp.choice.offer.instance_type == "fk.v100x1" and lp.choice.offer.region == "fake-east"


def test_a_vendor_without_offers_is_a_clear_no_offer(accounts):
    with pytest.raises(NotFoundError, match=r"matches 1× any AMD GPU"):
        choose_offer(accounts, spec("resources:\n  gpu: {vendor: amd}\n"), profile="fc")


def test_a_secret_without_a_value_stops_the_launch_before_anything_is_recorded(accounts):
    s = spec("secrets: [HF_TOKEN]\n")
    lp = choose_offer(accounts, s, profile="fc")
    with pytest.raises(ConfigError, match="no value for HF_TOKEN"):
        execute(accounts, lp)
    assert accounts.store.list_launches() == []
    insts = execute(accounts, lp, secret_env={"HF_TOKEN": "tok-123"})
    assert insts and "tok-123" not in repr(accounts.store.get_launch(lp.launch_id))


def test_several_providers_in_the_spec_are_weighed_together(accounts):
    # the first provider cannot run it (this computer has no V100): the next one's offer is taken
    lp = choose_offer(accounts, parse_spec("name: p\nrun: x\nproviders: [local, fakecloud]\nresources:\n"
                                           "  gpu: V100:1\n", source="t.yaml"))
    assert (lp.profile.provider, lp.choice.offer.instance_type) == ("fakecloud", "fk.v100x1")
    # both can run a CPU job: the cheaper (this computer, free) wins even though it is listed second
    lp = choose_offer(accounts, parse_spec("name: p\nrun: x\nproviders: [fakecloud, local]\n", source="t.yaml"))
    assert lp.profile.provider == "local" and lp.choice.price == 0
    # a provider without a profile is passed over, not an error
    lp = choose_offer(accounts, parse_spec("name: p\nrun: x\nproviders: [aws, fakecloud]\nresources:\n"
                                           "  gpu: V100:1\n", source="t.yaml"))
    assert lp.profile.provider == "fakecloud"
    # --provider still decides alone
    with pytest.raises(NotFoundError):
        choose_offer(accounts, parse_spec("name: p\nrun: x\nproviders: [local, fakecloud]\nresources:\n"
                                          "  gpu: V100:1\n", source="t.yaml"), provider="local")
