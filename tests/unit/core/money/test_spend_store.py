"""Spend from the store: schema 2 migration, disk prices in the ledger, spot history and actual costs
fetched from a provider, budgets and currency."""

from __future__ import annotations

import sqlite3

import pytest

from workbench.core.money import budgets, currency

from workbench.core.store import database as store_mod
from workbench.core.store import schema as schema_mod
from workbench.core.money.billing_sync import actual_by, sync_actual_costs, sync_spot_history
from workbench.core.money.currency import CurrencySettings
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.money.spend import SpendBook
from workbench.core.store.database import LaunchRecord, LedgerEntry, Store
from workbench_testing import fake_cloud_accounts


def _inst(state=InstanceState.RUNNING, price=3.6, storage=None, currency="USD", **kw) -> Instance:
    extra = {"storage_per_hour": storage} if storage is not None else {}
    return Instance("aws", "p", kw.pop("iid", "i-1"), kw.pop("launch", "L1"), "us-east-1", "p3.2xlarge", state,
                    price_per_hour=price, currency=currency, extra=extra, **kw)


def test_version_1_database_opens_and_keeps_its_ledger(tmp_path):
    db = tmp_path / "v1.sqlite3"
    conn = sqlite3.connect(db, isolation_level=None)
    schema_mod.migrate_1(conn)
    conn.execute("INSERT INTO ledger (provider, profile, instance_id, ts, state, price_per_hour)"
                 " VALUES ('aws', 'p', 'i-1', 100.0, 'running', 3.6)")
    conn.execute("PRAGMA user_version = 1")
    conn.execute(f"PRAGMA application_id = {store_mod.APPLICATION_ID}")
    conn.close()
    with Store.open(db) as st:
        assert st.schema_version == store_mod.latest_version() >= 2
        assert st.ledger() == [LedgerEntry("aws", "p", "i-1", 100.0, "running", 3.6, 0.0)]
        assert st.budgets() == [] and st.get_setting("x", "d") == "d"


def test_disk_price_is_recorded_and_its_change_is_a_ledger_entry(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as st:
        assert st.upsert_instance(_inst(storage=0.5), ts=10.0)
        assert not st.upsert_instance(_inst(storage=0.5), ts=20.0)
        assert st.upsert_instance(_inst(storage=0.7), ts=30.0)
        assert st.upsert_instance(_inst(InstanceState.STOPPED, storage="junk"), ts=40.0)
        assert [e.storage_per_hour for e in st.ledger()] == [0.5, 0.7, 0.0]


def test_book_from_store_with_spot_history_projection_and_currency(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as st:
        spec = {"guards": {"max_runtime_minutes": 240}}
        st.add_launch(LaunchRecord("L1", "job", "aws", "p", "us-east-1", created_at=0.0, spec=spec))
        st.upsert_instance(_inst(price=1.0, spot=True), ts=0.0)
        st.add_spot_prices("aws", "p", "i-1", [(0.0, 1.0), (3600.0, 2.0)])
        assert st.add_spot_prices("aws", "p", "i-1", [(3600.0, 2.0)]) == 0  # repeats ignored
        book = SpendBook.load(st)
        now = 2 * 3600.0
        assert book.launch_total("L1", now) == pytest.approx(1.0 + 2.0)  # history, not the launch price
        assert book.rate_total(now) == pytest.approx(2.0)
        assert book.projection("L1", now) == pytest.approx(3.0 + 2.0 * 2)  # two more hours at $2/h
        currency.save(st, CurrencySettings("CNY", 7.0))
        book = SpendBook.load(st)
        assert book.total(now) == pytest.approx(21.0) and not book.unconverted
        assert currency.load(st).note({"USD"}) == "CNY; USD converted at your rate of 7 CNY per USD"
        with pytest.raises(ConfigError):
            currency.save(st, CurrencySettings("EUR"))
        with pytest.raises(ConfigError):
            currency.save(st, CurrencySettings("CNY", -1.0))


def test_currency_without_a_rate_is_labelled_not_invented():
    s = CurrencySettings("CNY", None)
    assert s.convert(10.0, "USD") is None and s.convert(10.0, "CNY") == 10.0
    assert "not converted" in s.note({"USD"})
    book = SpendBook([LedgerEntry("aws", "p", "i", 0.0, "running", 3.6)],
                     [_inst(iid="i")], [], currency=s)
    assert book.total(3600.0) == pytest.approx(3.6) and book.unconverted == {"USD"}


def test_budget_statuses_and_thresholds(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as st:
        st.add_launch(LaunchRecord("L1", "job", "aws", "p", None, 0.0, spec={"guards": {"budget_usd": 10.0}}))
        st.add_launch(LaunchRecord("L2", "job2", "aws", "p", None, 0.0))
        st.upsert_instance(_inst(price=3.6), ts=1.0)
        budgets.set_monthly(st, 100.0)
        with pytest.raises(NotFoundError):
            budgets.set_launch(st, "nope", 5.0)
        with pytest.raises(ConfigError):
            budgets.set_monthly(st, 0)
        now = 1.0 + 2.5 * 3600  # $9 spent
        by_scope = {s.budget.scope: s for s in budgets.statuses(st, SpendBook.load(st), now)}
        assert set(by_scope) == {"monthly", "launch:L1"}
        assert by_scope["launch:L1"].percent == pytest.approx(90.0) and by_scope["launch:L1"].reached == 80
        assert by_scope["monthly"].reached == 0
        budgets.set_launch(st, "L1", 8.0, enforce=False)  # the user's own budget replaces the spec's
        [s1] = [s for s in budgets.statuses(st, SpendBook.load(st), now) if s.budget.launch_id == "L1"]
        assert (s1.reached, s1.budget.enforce, s1.to_json()["percent"]) == (100, False, 112.5)


def test_actual_costs_and_spot_history_come_from_the_provider(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, _ = fake_cloud_accounts(monkeypatch, {"fk": {"actual_factor": "1.1", "spot_history": "0:1.0,1800:0.5"}})
    try:
        sp = parse_spec("name: s\nrun: x\nresources:\n  gpu: V100:1\n  spot: true\nguards:\n  max_runtime: 2h\n")
        lp = choose_offer(acc, sp, profile="fk")
        [inst] = execute(acc, lp)
        now = inst.launched_at + 3600
        assert sync_spot_history(acc, now=now) == []
        assert acc.store.spot_prices()[("fakecloud", "fk", inst.instance_id)] == [
            (inst.launched_at, 1.0), (inst.launched_at + 1800, 0.5)]
        book = SpendBook.load(acc.store)
        assert book.launch_total(lp.launch_id, now) == pytest.approx(0.5 + 0.25, rel=1e-3)
        assert sync_actual_costs(acc, "2000-01-01", now=now) == []
        got = actual_by(acc.store, "launch", "2000-01-01")
        assert got[lp.launch_id].amount > 0 and got[lp.launch_id].source == "Fake Cloud billing"
        fetched = acc.store.actual_costs_fetched_at("fakecloud", "fk")
        assert sync_actual_costs(acc, "2000-01-01", now=now + 60) == []  # cached: not asked again
        assert acc.store.actual_costs_fetched_at("fakecloud", "fk") == fetched
    finally:
        from workbench.core.lifecycle.teardown import teardown

        teardown(acc, None, timeout=10, poll=0.05)
        acc.store.close()


def test_a_known_exit_code_survives_a_listing_without_one(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as st:
        st.upsert_instance(_inst(), ts=1.0)
        st.upsert_instance(_inst(exit_code=3), ts=2.0)  # the remote runner recorded it
        st.upsert_instance(_inst(), ts=3.0)  # the cloud's next listing knows nothing of exit codes
        assert st.get_instance("aws", "p", "i-1").exit_code == 3


def test_spot_history_sync_can_be_throttled(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, _ = fake_cloud_accounts(monkeypatch, {"fk": {"spot_history": "0:1.0"}})
    try:
        sp = parse_spec("name: s\nrun: x\nresources:\n  gpu: V100:1\n  spot: true\nguards:\n  max_runtime: 2h\n")
        [inst] = execute(acc, choose_offer(acc, sp, profile="fk"))
        assert sync_spot_history(acc, now=inst.launched_at + 10, max_age_s=3600) == []
        assert len(acc.store.spot_prices()) == 1
        acc.save_profile(acc.profile("fk").__class__("fk", "fakecloud", "fake-east",
                                                     settings={"spot_history": "0:1.0,5:2.0"}))
        sync_spot_history(acc, now=inst.launched_at + 20, max_age_s=3600)  # too soon: not asked
        assert len(acc.store.spot_prices()[("fakecloud", "fk", inst.instance_id)]) == 1
        sync_spot_history(acc, now=inst.launched_at + 20)  # the CLI always asks
        assert len(acc.store.spot_prices()[("fakecloud", "fk", inst.instance_id)]) == 2
    finally:
        from workbench.core.lifecycle.teardown import teardown

        teardown(acc, None, timeout=10, poll=0.05)
        acc.store.close()
