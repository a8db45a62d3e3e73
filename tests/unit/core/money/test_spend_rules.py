"""Spend from scripted state histories, checked against values computed by hand.

Prices are chosen so the arithmetic is easy: $3.60/h is $0.001 per second.
"""

from __future__ import annotations

import json

import pytest

from workbench.core.money import billing_rules
from workbench.core.money.billing_rules import DEFAULT_RULE, rule_for
from workbench.core.money.spend import SpendBook, instance_cost, rate_now, spend_by_day
from workbench.core.store.database import LedgerEntry

T0 = 1_800_000_000.0  # a fixed moment; only differences matter


def led(provider: str, *steps: tuple[float, str, float] | tuple[float, str, float, float], iid: str = "i-1"):
    """Ledger entries from (seconds after T0, state, $/h[, disks $/h])."""
    return [LedgerEntry(provider, "p", iid, T0 + s[0], s[1], s[2], s[3] if len(s) > 3 else 0.0) for s in steps]


def test_rules_come_from_the_data_files():
    aws, azure = rule_for("aws"), rule_for("azure")
    assert aws.minimum_seconds_per_start == 60 and azure.minimum_seconds_per_start == 300
    assert [s.value for s in sorted(aws.compute_states)] == ["running"]
    assert {s.value for s in azure.compute_states} == {"running", "stopping", "stopped"}
    assert aws.sources and azure.sources  # each rule cites where it comes from
    assert rule_for("local").minimum_seconds_per_start == 0  # default.json
    assert rule_for("../aws").provider == "default"  # never a path from a provider id


def test_a_broken_rule_file_falls_back_to_the_conservative_default(tmp_path, monkeypatch, caplog):
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "aws.json").write_text(json.dumps({"compute_states": ["flying"]}))
    monkeypatch.setattr(billing_rules.paths, "resources_dir", lambda: tmp_path)
    billing_rules._load.cache_clear()
    try:
        assert rule_for("aws") == DEFAULT_RULE
        assert "invalid" in caplog.text
    finally:
        billing_rules._load.cache_clear()


def test_aws_short_run_bills_the_60_second_minimum():
    entries = led("aws", (0, "pending", 3.6), (20, "running", 3.6), (50, "stopped", 3.6))
    cost = instance_cost(entries, now=T0 + 1000)
    # pending is not billed; 30 s running → 60 s billed at $0.001/s
    assert cost.billed_seconds == pytest.approx(60)
    assert cost.total == pytest.approx(0.060)


def test_aws_each_start_has_its_own_minimum_and_long_runs_bill_by_the_second():
    entries = led("aws", (0, "running", 3.6), (10, "stopped", 3.6), (100, "running", 3.6),
                  (400, "terminated", 3.6))
    cost = instance_cost(entries, now=T0 + 1000)
    assert cost.billed_seconds == pytest.approx(60 + 300)
    assert cost.total == pytest.approx(0.360)


def test_aws_stopped_instance_bills_only_its_disks():
    entries = led("aws", (0, "running", 3.6, 0.36), (3600, "stopped", 3.6, 0.36), (3 * 3600, "terminated", 3.6, 0.36))
    cost = instance_cost(entries, now=T0 + 10 * 3600)
    assert cost.compute == pytest.approx(3.6)  # one hour running
    assert cost.storage == pytest.approx(0.36 * 3)  # disks: running hour + two stopped hours, none once terminated


def test_azure_stopped_keeps_billing_deallocated_does_not():
    entries = led("azure", (0, "running", 2.0, 0.1), (3600, "stopped", 2.0, 0.1),
                  (7200, "deallocated", 2.0, 0.1), (10800, "terminated", 2.0, 0.1))
    cost = instance_cost(entries, now=T0 + 20000)
    assert cost.compute == pytest.approx(2.0 * 2)  # running + stopped (not deallocated)
    assert cost.storage == pytest.approx(0.1 * 3)  # disks bill while deallocated too
    assert cost.total == pytest.approx(4.3)
    assert rate_now(entries[:2], now=T0 + 4000) == pytest.approx(2.1)
    assert rate_now(entries[:3], now=T0 + 8000) == pytest.approx(0.1)


def test_azure_minimum_is_five_minutes_per_start():
    entries = led("azure", (0, "running", 3.6), (90, "deallocated", 3.6), (1000, "running", 3.6),
                  (1600, "terminated", 3.6))
    cost = instance_cost(entries, now=T0 + 5000)
    assert cost.billed_seconds == pytest.approx(300 + 600)
    assert cost.total == pytest.approx(0.9)


def test_a_run_still_going_owes_the_minimum_at_once():
    entries = led("azure", (0, "running", 3.6))
    assert instance_cost(entries, now=T0 + 10).total == pytest.approx(0.3)
    assert instance_cost(entries, now=T0 + 400).total == pytest.approx(0.4)


def test_spot_price_changes_are_paid_as_they_were():
    # the ledger recorded the launch price; the provider's history says what it was later
    entries = led("aws", (0, "running", 1.0), (3 * 3600, "terminated", 1.0))
    history = [(T0 - 600, 1.0), (T0 + 3600, 2.0), (T0 + 5400, 0.5)]
    cost = instance_cost(entries, now=T0 + 10 * 3600, spot_history=history)
    assert cost.total == pytest.approx(1.0 * 1 + 2.0 * 0.5 + 0.5 * 1.5)


def test_spot_price_changes_seen_by_refreshes_are_in_the_ledger():
    entries = led("aws", (0, "running", 0.9), (1800, "running", 1.2), (3600, "running", 0.6),
                  (5400, "terminated", 0.6))
    assert instance_cost(entries, now=T0 + 9000).total == pytest.approx(0.45 + 0.6 + 0.3)


def test_unknown_state_bills_like_the_state_before_it():
    after_running = led("aws", (0, "running", 3.6), (3600, "unknown", 3.6), (7200, "terminated", 3.6))
    assert instance_cost(after_running, now=T0 + 9000).total == pytest.approx(7.2)
    after_stopped = led("aws", (0, "stopped", 3.6), (3600, "unknown", 3.6), (7200, "terminated", 3.6))
    assert instance_cost(after_stopped, now=T0 + 9000).total == pytest.approx(0.0)
    nothing_known = led("aws", (0, "unknown", 3.6))
    assert instance_cost(nothing_known, now=T0 + 3600).total == pytest.approx(3.6)  # cannot prove it is not


def test_windows_split_the_money_and_the_minimum_counts_where_the_run_started():
    entries = led("azure", (0, "running", 3.6), (100, "terminated", 3.6))
    first = instance_cost(entries, now=T0 + 1000, since=T0, until=T0 + 50)
    second = instance_cost(entries, now=T0 + 1000, since=T0 + 50)
    assert first.total == pytest.approx(0.05 + 0.2)  # 50 s used + the 200 s top-up to 300 s
    assert second.total == pytest.approx(0.05)
    assert first.total + second.total == pytest.approx(instance_cost(entries, now=T0 + 1000).total)


def test_book_sums_by_launch_provider_and_day():
    from workbench.core.domain.models import Instance, InstanceState

    now = T0 + 2 * 86400
    ledger = led("aws", (0, "running", 3.6), (7200, "terminated", 3.6), iid="a") + \
        led("azure", (3600, "running", 1.8), (5400, "deallocated", 1.8), iid="b")
    insts = [Instance("aws", "p", "a", "L1", "r", "t", InstanceState.TERMINATED),
             Instance("azure", "p", "b", "L2", "r", "t", InstanceState.DEALLOCATED)]
    book = SpendBook(ledger, insts, [])
    assert book.group("launch", now) == pytest.approx({"L1": 7.2, "L2": 0.9})
    assert book.group("provider", now) == pytest.approx({"aws/p": 7.2, "azure/p": 0.9})
    assert book.total(now) == pytest.approx(8.1)
    assert sum(v for _, v in book.by_day(5, now)) == pytest.approx(8.1)
    assert sum(v for _, v in spend_by_day(ledger, 5, now)) == pytest.approx(8.1)
    assert book.rate_total(now) == 0.0


def test_book_prices_the_specs_disk_when_the_plugin_reports_none():
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.store.database import LaunchRecord

    ledger = led("aws", (0, "running", 3.6), (3600, "stopped", 3.6), (3 * 3600, "terminated", 3.6), iid="a")
    insts = [Instance("aws", "p", "a", "L1", "r", "t", InstanceState.TERMINATED)]
    rec = LaunchRecord("L1", "job", "aws", "p", "r", T0, spec={"resources": {"disk_gb": 730}})
    book = SpendBook(ledger, insts, [rec])
    # 730 GB × $0.08 per GB-month / 730 h = $0.08/h for 3 hours (running + stopped), compute one hour
    assert book.cost(("aws", "p", "a"), T0 + 5 * 3600).storage == pytest.approx(0.24)
    assert book.launch_total("L1", T0 + 5 * 3600) == pytest.approx(3.6 + 0.24)
    reported = led("aws", (0, "running", 3.6, 0.01), (3600, "terminated", 3.6, 0.01), iid="a")
    assert SpendBook(reported, insts, [rec]).cost(("aws", "p", "a"), T0 + 7200).storage == pytest.approx(0.01)


def test_burn_rate_follows_the_rules():
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.money.spend import burn_rate

    def inst(provider, state, price=2.0, disk=0.1):
        return Instance(provider, "p", f"{provider}-{state.value}", "L", "r", "t", state, price_per_hour=price,
                        extra={"storage_per_hour": disk})

    assert burn_rate([inst("aws", InstanceState.STOPPED)]) == pytest.approx(0.1)  # disks only
    assert burn_rate([inst("azure", InstanceState.STOPPED)]) == pytest.approx(2.1)  # not deallocated: full price
    assert burn_rate([inst("azure", InstanceState.DEALLOCATED)]) == pytest.approx(0.1)
    assert burn_rate([inst("aws", InstanceState.RUNNING), inst("local", InstanceState.RUNNING, disk=0)]) == \
        pytest.approx(2.1 + 2.0)
    assert burn_rate([inst("aws", InstanceState.TERMINATED)]) == 0.0
