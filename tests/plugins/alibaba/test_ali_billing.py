"""Actual cost per launch from the BSS OpenAPI, and the billing rule kept as data."""

from __future__ import annotations

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.models import InstanceState
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER


def test_actual_costs_sum_bill_items_per_launch_tag_and_day(ali: AlibabaServer, account: Account, make_provider,
                                                           install_id):
    mine = {TAG_MANAGED: "true", TAG_OWNER: install_id}
    ali.knobs(account).costs = [
        {"day": "2026-03-01", "amount": 12.5, "tags": {**mine, TAG_LAUNCH: "L1"}, "instance_id": "i-1"},
        {"day": "2026-03-01", "amount": 0.5, "tags": {**mine, TAG_LAUNCH: "L1"}, "instance_id": "d-1",
         "product": "disk"},
        {"day": "2026-03-02", "amount": 7.0, "tags": {**mine, TAG_LAUNCH: "L2"}, "instance_id": "i-2"},
        {"day": "2026-03-01", "amount": 99.0, "tags": {TAG_OWNER: "someone-else", TAG_LAUNCH: "X"}},
        {"day": "2026-03-01", "amount": 5.0, "tags": {}},
    ] + [{"day": "2026-03-02", "amount": 1.0, "tags": {**mine, TAG_LAUNCH: "L3"}} for _ in range(12)]  # paged
    costs = make_provider().actual_costs("2026-03-01", "2026-03-02")
    got = {(c.launch_id, c.day): (c.amount, c.currency) for c in costs}
    assert got == {("L1", "2026-03-01"): (13.0, "CNY"), ("L2", "2026-03-02"): (7.0, "CNY"),
                   ("L3", "2026-03-02"): (12.0, "CNY")}
    assert {c.source for c in costs} == {"Alibaba Cloud BSS (DescribeInstanceBill)"}


def test_billing_needs_its_permission_and_a_sane_range(ali: AlibabaServer, make_provider):
    no_bss = ali.new_account(actions=("ecs:*", "vpc:*"))
    with pytest.raises(AuthError) as err:
        make_provider(acct=no_bss).actual_costs("2026-03-01", "2026-03-01")
    assert "bssapi:DescribeInstanceBill" in err.value.message
    with pytest.raises(ConfigError):
        make_provider().actual_costs("2026-03-05", "2026-03-01")


def test_tag_column_parsing():
    from workbench_alibaba.billing import parse_tags

    assert parse_tags("key:workbench:launch value:abc; key:Name value:a b") == {"workbench:launch": "abc",
                                                                               "Name": "a b"}
    assert parse_tags("") == {}


def test_billing_rule_per_second_and_stop_modes():
    from workbench.core.money.billing_rules import rule_for

    rule = rule_for("alibaba")
    assert rule.increment_seconds == 1 and rule.minimum_seconds_per_start == 0
    assert rule.bills_compute(InstanceState.STOPPED)  # standard stop (KeepCharging) still bills
    assert not rule.bills_compute(InstanceState.DEALLOCATED)  # economical stop: no compute charge
    assert rule.bills_storage(InstanceState.DEALLOCATED)  # ... but the disks bill
    assert any("StopInstance" in s for s in rule.sources)
