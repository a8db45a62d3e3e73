"""Core services on real stores and the file-backed fake cloud: catalog, spend, reconcile, teardown."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from workbench.core import applog, paths
from workbench.core.providers.accounts import Accounts
from workbench.core.offers.query import OfferQuery, matches
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.domain.errors import AuthError, NotFoundError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, new_launch_id, choose_offer
from workbench.core.domain.models import InstanceState, Offer, Prices, Profile
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.money.spend import accrued, burn_rate, projected_cost
from workbench.core.store.database import LedgerEntry, Store
from workbench.core.lifecycle.teardown import teardown
from workbench_testing import fake_cloud_accounts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "plugins"


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch, {"fc": {}, "fc-leaky": {"leak_disk": "true", "regions": "fake-west"}})
    creds.values = creds.data  # the tests below add credentials through .values
    store = acc.store
    yield acc
    teardown(acc, None, timeout=5, poll=0.05)
    store.close()
    # only the test plugins this module loads: dropping the real plugins' modules would leave later tests in
    # this worker with two copies of their classes (an except clause that no longer catches its own error)
    for m in [m for m in sys.modules if m.split(".")[0] in ("workbench_fakecloud", "workbench_broken")]:
        sys.modules.pop(m, None)


def _offer(**kw):
    base = dict(provider="p", region="r", instance_type="t", gpu_model="V100", gpu_count=1, gpu_memory_gb=16,
                vcpus=8, memory_gb=61, prices=Prices(on_demand=3.0, spot=1.0, source="s", as_of="2026-12-01"))
    base.update(kw)
    return Offer(**base)


def test_offer_matching_rules():
    assert matches(_offer(), OfferQuery(gpu_model="v100"))
    assert not matches(_offer(), OfferQuery(gpu_model="A100"))
    assert not matches(_offer(), OfferQuery(gpu_count=2))
    assert not matches(_offer(), OfferQuery(min_gpu_memory_gb=32))
    assert matches(_offer(), OfferQuery(max_price=1.5, spot=True))
    assert not matches(_offer(), OfferQuery(max_price=1.5))
    assert not matches(_offer(prices=Prices(on_demand=3.0)), OfferQuery(spot=True))
    assert not matches(_offer(gpu_count=0, gpu_model=None), OfferQuery(gpu_count=1))
    assert matches(_offer(gpu_count=0, gpu_model=None), OfferQuery())
    assert not matches(_offer(network_gbps=10), OfferQuery(network_min_gbps=25))
    assert not matches(_offer(rdma=False), OfferQuery(rdma=True))


def test_collect_ranks_across_profiles_and_reports_failures(accounts):
    accounts.store.save_profile(Profile("fc-nocreds", "fakecloud", "fake-east"))
    found = find_offers(accounts, OfferQuery(gpu_model="A100", gpu_count=8, spot=True), catalog=NEVER)
    ranked, errors = found.ranked, found.errors
    assert [r.price for r in ranked] == sorted(r.price for r in ranked)
    assert {r.profile for r in ranked} == {"fc", "fc-leaky"}
    assert [(n, type(e)) for n, e in errors] == [("fc-nocreds", AuthError)]


def test_plan_picks_cheapest_and_projects_cost(accounts):
    spec = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:4\nguards:\n  max_runtime: 3h\n")
    lp = choose_offer(accounts, spec, profile="fc")
    assert lp.choice.offer.instance_type == "fk.v100x4" and lp.price_per_hour == 12.24
    assert lp.projected_cost == pytest.approx(12.24 * 3)
    with pytest.raises(NotFoundError, match="matches 8× H100"):
        choose_offer(accounts, parse_spec("name: t\nrun: x\nresources:\n  gpu: H100:8\n"), profile="fc")


def test_launch_ids_are_safe_and_unique():
    ids = {new_launch_id("My Job / with spaces!") for _ in range(200)}
    assert len(ids) == 200
    for i in ids:
        assert paths.check_launch_id(i) == i and i.startswith("my-job-with-spaces-")


def test_spend_accrues_only_billable_time():
    e = [LedgerEntry("p", "q", "i", 0.0, "running", 3.6), LedgerEntry("p", "q", "i", 1800.0, "stopped", 3.6),
         LedgerEntry("p", "q", "i", 2700.0, "terminated", 3.6)]
    # running 30 min + stopped (still billable) 15 min at $3.60/h; nothing after termination
    assert accrued(e, now=99999.0) == pytest.approx(3.6 * 0.75)
    assert accrued(e[:1], now=360.0) == pytest.approx(0.36)
    assert projected_cost(2.0, 90) == 3.0 and projected_cost(None, 90) is None


def test_reconcile_recovers_and_marks_vanished(accounts):
    spec = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")
    inst = execute(accounts, choose_offer(accounts, spec, profile="fc"))[0]
    # another process / a lost database: the store forgets, the cloud remembers
    other = Store.open(accounts.store.path.parent / "other.sqlite3")
    acc2 = Accounts(other, accounts.entries, credentials=accounts.credentials)
    assert {p.name for p in other.list_profiles()} == {"fc", "fc-leaky"}  # restored from the mirror
    result = reconcile(acc2)
    assert result.recovered == [inst.launch_id] and not result.errors
    assert other.get_launch(inst.launch_id).status == "running"
    # the provider stops listing it → terminated, not assumed alive forever
    (accounts.context.data_dir / "fakecloud" / "fc.json").write_text("{}")
    reconcile(acc2)
    assert other.list_instances()[0].state == InstanceState.TERMINATED
    other.close()


def test_teardown_sweeps_leftovers_per_launch_and_verifies(accounts):
    spec = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")
    keep = execute(accounts, choose_offer(accounts, spec, profile="fc"))[0]
    gone = execute(accounts, choose_offer(accounts, spec, profile="fc-leaky"))[0]
    report = teardown(accounts, [gone.launch_id], timeout=5, poll=0.05)
    assert report.clean
    assert [i.instance_id for i in report.terminated] == [gone.instance_id]
    assert [r.kind for r in report.deleted] == ["disk"]
    states = {i.instance_id: i.state for i in accounts.store.list_instances()}
    assert states[keep.instance_id] == InstanceState.RUNNING
    assert states[gone.instance_id] == InstanceState.TERMINATED
    assert burn_rate(accounts.store.list_instances()) == 3.06


def test_teardown_reports_what_still_bills(accounts):
    accounts.save_profile(Profile("fc-stuck", "fakecloud", "fake-east", settings={"stuck": "true"}))
    accounts.credentials.values[("fakecloud", "fc-stuck")] = {"account": "a"}
    spec = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")
    inst = execute(accounts, choose_offer(accounts, spec, profile="fc-stuck"))[0]
    ticks = iter(range(1000))
    report = teardown(accounts, None, timeout=3, poll=0.0, clock=lambda: float(next(ticks)))
    assert [x.instance_id for x in report.remaining] == [inst.instance_id]
    assert not report.clean
    accounts.save_profile(Profile("fc-stuck", "fakecloud", "fake-east"))


def test_install_id_is_stable_and_outside_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    first = paths.install_id()
    assert first == paths.install_id()
    assert (tmp_path / "config" / "install-id").read_text().strip() == first
    (tmp_path / "data").mkdir(exist_ok=True)
    assert list((tmp_path / "config").glob("*.tmp")) == []


def test_log_scrubs_registered_secrets(tmp_path):
    path = applog.setup(tmp_path)
    applog.register_secret("AKIA-super-secret-1234")
    log = logging.getLogger("workbench.test")
    log.warning("calling with key %s", "AKIA-super-secret-1234")
    try:
        raise ValueError("bad key AKIA-super-secret-1234")
    except ValueError:
        log.exception("failed")
    for h in logging.getLogger("workbench").handlers:
        h.flush()
    text = path.read_text()
    assert "AKIA-super-secret-1234" not in text and text.count("****") >= 2
    applog.setup(tmp_path)  # idempotent: one file handler, not two
    assert sum(isinstance(h, logging.FileHandler) for h in logging.getLogger("workbench").handlers) == 1
