"""The cost planner reproduces a comparison computed by hand (the seed's 8× V100 for three months)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import Offer, Prices
from workbench.core.money.planner import Hardware, break_even_hours, compare_costs

HOURS = 2160.0  # three months of 30 days


def offer(itype: str, count: int, od, spot, r1, r3, region="east", provider="cloudA", model="V100", **kw) -> Offer:
    return Offer(provider, region, itype, model, count, 16.0, 8 * count, 61.0 * count,
                 Prices(on_demand=od, spot=spot, reserved_1y=r1, reserved_3y=r3, source="test", as_of="2026-01-01"),
                 **kw)


OFFERS = [
    offer("v100x1", 1, 3.06, 0.92, 1.90, 1.22),
    offer("v100x4", 4, 12.24, 3.67, 7.60, 4.90),
    offer("v100x8", 8, 24.48, 7.34, 15.91, 10.19, provider="cloudB", region="west"),
    offer("v100x8", 8, 26.44, None, None, None, provider="cloudB", region="north"),  # no spot/reserved there
    offer("a100x8", 8, 32.77, 9.83, 20.0, 13.0, model="A100"),  # another GPU: ignored
]
HW = Hardware(purchase_price=30_000, power_kw=3.5, price_per_kwh=0.15, upkeep_per_year=2_000)


def test_hand_computed_comparison():
    p = compare_costs(OFFERS, "v100", 8, HOURS, HW)
    got = {(r.option, r.provider, r.region, r.instance_type): round(r.total, 2) for r in p.rows}
    assert got == {
        ("on-demand", "cloudA", "east", "v100x1"): 52_876.80,  # 3.06 × 8 machines × 2160 h
        ("spot", "cloudA", "east", "v100x1"): 15_897.60,
        ("reserved-1y", "cloudA", "east", "v100x1"): 133_152.00,  # 1.90 × 8 × 8760 h: the whole year
        ("reserved-3y", "cloudA", "east", "v100x1"): 256_492.80,  # 1.22 × 8 × 26280 h
        ("on-demand", "cloudA", "east", "v100x4"): 52_876.80,  # 12.24 × 2 × 2160
        ("spot", "cloudA", "east", "v100x4"): 15_854.40,
        ("reserved-1y", "cloudA", "east", "v100x4"): 133_152.00,
        ("reserved-3y", "cloudA", "east", "v100x4"): 257_544.00,
        ("on-demand", "cloudB", "west", "v100x8"): 52_876.80,
        ("spot", "cloudB", "west", "v100x8"): 15_854.40,  # 7.34 × 2160
        ("reserved-1y", "cloudB", "west", "v100x8"): 139_371.60,
        ("reserved-3y", "cloudB", "west", "v100x8"): 267_793.20,
        ("on-demand", "cloudB", "north", "v100x8"): 57_110.40,
        ("buy", None, None, None): 31_627.15,  # 30000 + 3.5 kW × 2160 h × 0.15 + 2000 × 2160/8760
    }
    # cheapest first, but for the 3-year term 2 machines (+0.41 %) come before 8
    assert [r.total for r in p.rows if "preferred" not in r.note] == sorted(
        r.total for r in p.rows if "preferred" not in r.note)
    r3 = p.cheapest("reserved-3y")
    assert (r3.instance_type, r3.machines) == ("v100x4", 2) and "preferred: 2 machines instead of 8" in r3.note
    assert p.rows[0].option == "spot" and "interrupted" in p.rows[0].note
    r1 = p.cheapest("reserved-1y")
    assert "whole 1-year term" in r1.note and r1.paid_hours == 8760
    assert r1.used_share == pytest.approx(r1.total * HOURS / 8760)
    v1 = next(r for r in p.rows if r.instance_type == "v100x1")
    assert v1.machines == 8 and "8 machines" in v1.note


def test_summary_keeps_the_cheapest_per_option_and_provider():
    p = compare_costs(OFFERS, "V100", 8, HOURS, HW)
    summary = p.summary()
    assert len({(r.option, r.provider) for r in summary}) == len(summary) == 9
    assert [r.option for r in summary][:2] == ["spot", "spot"]
    od = [r for r in summary if r.option == "on-demand" and r.provider == "cloudB"]
    assert od[0].region == "west"  # not the dearer north region


def test_more_gpus_than_asked_and_unavailable_offers_are_labelled():
    p = compare_costs([offer("v100x4", 4, 12.24, None, None, None, available=False, availability_note="no quota")],
             "V100", 6, 100)
    [row] = p.rows
    assert row.machines == 2 and row.gpus == 8 and "2 more than asked" in row.note and "no quota" in row.note


def test_break_even_and_bad_input():
    hours = break_even_hours(HW, 24.48)
    running = 3.5 * 0.15 + 2000 / 8760
    assert hours == pytest.approx(30_000 / (24.48 - running))
    assert break_even_hours(HW, 0.1) is None
    with pytest.raises(ConfigError):
        compare_costs(OFFERS, "V100", 0, 10)
    with pytest.raises(ConfigError):
        compare_costs(OFFERS, "V100", 8, -1)
    with pytest.raises(ConfigError):
        Hardware(purchase_price=-5)


def test_bundled_snapshots_in_both_layouts_price_the_plan(tmp_path):
    from workbench.core.money.planner import snapshot_offers

    (tmp_path / "cloudA.csv").write_text(
        "# comment lines are skipped\n"
        "instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb,on_demand_usd,spot_usd,region,as_of\n"
        "v8,V100,8,16,64,488,24.48,7.34,east,2024-11-01\n")
    (tmp_path / "cloudB.csv").write_text(
        "size,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb,rdma,region,currency,on_demand,spot,reserved_1y,"
        "reserved_3y,as_of\n"
        "v4,V100,4,16,24,448,false,west,USD,12.24,,7.6,4.9,2025-06-01\n"
        "c1,V100,1,16,6,112,false,cn-north,CNY,20.0,,,,2025-06-01\n")
    (tmp_path / "broken.csv").write_text("what,is,this\n1,2,3\n")
    offers = snapshot_offers(tmp_path)
    assert {(o.provider, o.instance_type, o.prices.currency) for o in offers} == {
        ("cloudA", "v8", "USD"), ("cloudB", "v4", "USD"), ("cloudB", "c1", "CNY")}
    p = compare_costs(offers, "V100", 8, HOURS)
    got = {(r.option, r.instance_type): round(r.total, 2) for r in p.rows}
    assert got[("on-demand", "v8")] == 52_876.80 and got[("spot", "v8")] == 15_854.40
    assert got[("reserved-1y", "v4")] == 7.6 * 2 * 8760 and ("spot", "v4") not in got
    cny = [r for r in p.rows if r.instance_type == "c1"]
    assert cny and all(r.currency == "CNY" for r in cny)  # priced in CNY, labelled, never mixed with USD
    assert all(r.price_source == "bundled snapshot" for r in p.rows)


def test_rows_in_other_currencies_are_ordered_at_the_users_rate():
    from workbench.core.money.currency import CurrencySettings

    cny = Offer("cn", "north", "c8", "V100", 8, 16, 64, 488, Prices(on_demand=150.0, currency="CNY"))
    usd = offer("u8", 8, 24.48, None, None, None)
    reference = compare_costs([cny, usd], "V100", 8, 10).rows
    assert [r.instance_type for r in reference] == ["c8", "u8"]  # no rate of the user's: the reference 7.2
    dear = compare_costs([cny, usd], "V100", 8, 10, fx=CurrencySettings("CNY", 0.5)).rows
    assert [r.instance_type for r in dear] == ["u8", "c8"]  # the user's own rate decides (¥1500 = $3000 at 0.5)
    ordered = compare_costs([cny, usd], "V100", 8, 10, fx=CurrencySettings("CNY", 7.2)).rows
    assert [r.instance_type for r in ordered] == ["c8", "u8"]  # ¥1500 ≈ $208 < $244.8
    assert [r.currency for r in ordered] == ["CNY", "USD"]


def test_yuan_and_dollar_rows_are_ordered_by_value_even_without_a_rate_of_the_users():
    yuan = Offer("alibaba", "cn-shanghai", "gn6v", "V100", 8, 16.0, 64, 256.0,
                 Prices(on_demand=150.0, currency="CNY", source="test", as_of="2026-01-01"))  # ≈ $20.8/h at 7.2
    dollars = offer("v100x8", 8, 24.48, None, None, None)
    p = compare_costs([dollars, yuan], "V100", 8, HOURS)
    assert [r.currency for r in p.rows] == ["CNY", "USD"]  # ¥150 < $24.48, not 150 > 24.48
    assert [r.currency for r in p.summary()] == ["CNY", "USD"]


def test_estimated_term_prices_say_so():
    est = offer("v100x8", 8, 24.48, None, 15.67, 10.53,
                extra={"price_list": "AWS public price list; reserved: ESTIMATED (on-demand x typical discount)"})
    p = compare_costs([est], "V100", 8, HOURS)
    assert "ESTIMATED" in p.cheapest("reserved-1y").note and "ESTIMATED" in p.cheapest("reserved-3y").note
    assert "ESTIMATED" not in p.cheapest("on-demand").note  # on-demand is the published price
    published = compare_costs([offer("v100x8", 8, 24.48, None, 15.67, 10.53)], "V100", 8, HOURS)
    assert "ESTIMATED" not in published.cheapest("reserved-1y").note


def test_one_machine_is_preferred_over_eight_that_save_a_few_yuan():
    # Issue 29: 8× V100 picked eight 1-GPU machines at ¥157.84/h over one 8-GPU machine at ¥157.91/h.
    cny = [offer("gn6e-x1", 1, 19.73, None, None, None, provider="alibaba"),
           offer("gn6e-x8", 8, 157.91, None, None, None, provider="alibaba")]
    cny = [replace(o, prices=replace(o.prices, currency="CNY")) for o in cny]
    p = compare_costs(cny, "V100", 8, HOURS)
    best = p.cheapest("on-demand")
    assert (best.instance_type, best.machines) == ("gn6e-x8", 1)
    assert "preferred: 1 machine instead of 8 for 0.04 % more" in best.note
    assert "alibaba gn6e-x1 × 8" in best.note
    other = p.rows[1]
    assert other.instance_type == "gn6e-x1" and "0.04 % cheaper than alibaba gn6e-x8 × 1, but needs 8 machines" in \
        other.note


def test_fewer_machines_are_not_preferred_beyond_the_tolerance():
    p = compare_costs([offer("x1", 1, 3.00, None, None, None), offer("x8", 8, 24.0 * 1.03, None, None, None)],
                      "V100", 8, HOURS)
    assert [(r.instance_type, r.machines) for r in p.rows] == [("x1", 8), ("x8", 1)]  # 3 % more: cheapest stays
    assert "preferred" not in p.rows[0].note


def test_the_buy_rows_hourly_figure_is_its_job_total_over_the_hours():
    # Issue 29: it read the running costs alone (¥8.71/h) beside cloud rows' all-in prices.
    hw = Hardware(purchase_price=30_000, power_kw=3.5, price_per_kwh=0.15, upkeep_per_year=2_000, resale_value=5_000)
    [buy] = [r for r in compare_costs(OFFERS, "V100", 8, HOURS, hw).rows if r.option == "buy"]
    spent = 30_000 + 3.5 * 0.15 * HOURS + 2_000 * HOURS / 8760  # resale not counted in the hourly figure
    assert buy.hourly == pytest.approx(spent / HOURS)
    assert buy.total == pytest.approx(spent - 5_000)
    assert "per hour: purchase, power and upkeep over the job's 2,160 h" in buy.note


def test_rows_from_the_bundled_catalog_carry_each_prices_own_basis_and_date():
    """Issue 32: a published reserved figure is labelled exactly, an estimate as ESTIMATED, each row with the
    date of its own price; no row mixes the two silently."""
    from workbench.core.money.planner import compare_costs, snapshot_offers

    offers = [o for o in snapshot_offers() if o.provider == "aws" and o.region == "us-east-1"
              and o.instance_type == "p4d.24xlarge"]
    plan = compare_costs(offers, "A100", 8, 8760)
    by = {r.option: r for r in plan.rows}
    assert by["on-demand"].hourly == pytest.approx(21.957642) and by["on-demand"].price_as_of == "<=2026-07-05"
    assert "published price: all upfront, effective hourly" in by["reserved-1y"].note
    assert "ESTIMATED" not in by["reserved-1y"].note and "ESTIMATED" not in by["reserved-3y"].note
    assert "ESTIMATED" in by["savings-plan-1y"].note and "published price:" not in by["savings-plan-1y"].note
    assert "published price: average at one time" in by["spot"].note
    assert {r.price_as_of for r in plan.rows} == {"<=2026-07-05"}
    assert "Vantage" in by["reserved-1y"].price_source
