"""Prices without an account: `offers` over every cloud's catalog, `catalog update` from public price lists
(local servers of the real protocols), `plan` with reserved, savings-plan and buy rows offline."""

from __future__ import annotations

import datetime

import pytest

from price_lists import PriceListServer


def test_offers_compare_every_cloud_without_an_account(wb):
    for gpu in ("V100", "A100"):
        r = wb("offers", "--gpu", gpu, "--json")
        assert r.rc == 0, r.err
        offers = r.json["offers"]
        assert {"aws", "azure"} <= {o["provider"] for o in offers}, gpu  # (and every other cloud with a CSV)
        for o in offers:
            assert o["profile"] is None and o["needs_account"] and not o["available"]
            assert o["availability_note"] == "add an account to launch"
            assert o["prices"]["source"] == "bundled snapshot" and o["prices"]["as_of"] and o["price_per_hour"] > 0
            # the bundled prices are from 2024-2026 (old), or of a date the source does not give (issue 32)
            date = o["prices"]["details"].get("on_demand", {}).get("as_of") or o["prices"]["as_of"]
            assert (o["stale"] is True and o["price_age_days"] > 90) or (date == "unknown" and o["price_age_days"] is None)
        assert r.json["reason"] is None and {"aws", "azure"} <= set(r.json["catalog_providers"])
        # the oldest catalog date shown (an upper bound reads "on or before"); no "warning: " inside the value
        assert r.json["warning"].startswith(("prices from 20", "prices from on or before 20"))
        in_usd = [o["price_per_hour"] / (7.2 if o["prices"]["currency"] == "CNY" else 1) for o in offers]
        assert "CNY" in {o["prices"]["currency"] for o in offers}  # Alibaba's yuan beside the dollars …
        assert in_usd == sorted(in_usd), gpu  # … ordered by value at the stated 7.2, not by the bare number
    text = wb("offers", "--gpu", "V100")
    assert "p3.16xlarge" in text.out and "Standard_NC24s_v3" in text.out and "add an account to launch" in text.out
    assert "bundled snapshot (on or before 2026-07-05) old" in text.out  # the date of that very price
    assert "warning: prices from " in text.err and "workbench catalog update" in text.err


def test_an_empty_answer_says_the_real_reason(wb):
    """(every kind of reason is covered in-process by tests/unit/core/providers/test_browse.py)"""
    r = wb("offers", "--gpu", "V100:16", "--json")
    assert r.rc == 1, r.err  # nothing can match: an input error, not a success with an empty table (issue 29)
    assert r.json["offers"] == [] and r.json["reason"]["kind"] == "no_match"
    assert "the largest has 8" in r.json["reason"]["detail"]
    text = wb("offers", "--gpu", "V100:16")
    assert text.rc == 1
    # the reason is the answer, on stdout, and no empty table
    assert text.out.startswith("no offers match: no machine has 16 V100s; the largest has 8") and "PROVIDER" not in text.out
    assert "ask for less" not in text.out + text.err


def test_unknown_provider_or_profile_is_an_input_error(wb):
    assert wb("offers", "--provider", "nocloud").rc == 1
    r = wb("offers", "--profile", "nobody")
    assert r.rc == 1 and "no profile named 'nobody'" in r.err


def test_catalog_update_from_the_public_lists_refreshes_what_offers_and_plan_show(wb):
    today = datetime.date.today().isoformat()
    with PriceListServer() as srv:
        r = wb("catalog", "update", "--price-list-url", f"aws={srv.url}", "--price-list-url", f"azure={srv.url}",
               "--region", "us-east-1", "--region", "eastus", "--json")
    assert r.rc == 0, r.err
    results = {x["provider"]: x for x in r.json["results"]}
    assert results["aws"]["ok"] and results["aws"]["rows"] == 3 and results["aws"]["as_of"] == today
    assert results["azure"]["ok"] and results["azure"]["rows"] == 3 and results["azure"]["regions"] == ["eastus"]
    offers = wb("offers", "--gpu", "V100:8", "--region", "us-east-1", "--json").json["offers"]
    p3 = next(o for o in offers if o["instance_type"] == "p3.16xlarge")
    assert p3["prices"]["source"] == "price cache" and p3["prices"]["as_of"] == today and not p3["stale"]
    assert p3["prices"]["reserved_1y"] == 15.51 and p3["prices"]["savings_plan_3y"] == 12.73
    shown = wb("catalog", "show", "--json").json["providers"]
    aws = next(p for p in shown if p["provider"] == "aws")
    assert aws["cache_as_of"] == today and aws["cache"].endswith("aws.csv")
    plan = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--all", "--json").json["rows"]
    fresh = [x for x in plan if x["region"] == "us-east-1" and x["instance_type"] == "p3.16xlarge"]
    assert {x["option"]: x["price_as_of"] for x in fresh}["reserved-1y"] == today


def test_catalog_update_keeps_old_prices_of_a_failing_list_and_says_why(wb):
    with PriceListServer() as srv:
        srv.fail["/offers/"] = 500
        r = wb("catalog", "update", "--price-list-url", f"aws={srv.url}", "--price-list-url", f"azure={srv.url}",
               "--region", "us-east-1", "--region", "eastus", "--timeout", "5")
    assert r.rc == 3
    assert "aws: not refreshed: the price list at 127.0.0.1" in r.err and "HTTP 500" in r.err
    assert "azure: 3 prices as of" in r.out
    p3 = next(o for o in wb("offers", "--gpu", "V100:8", "--provider", "aws", "--json").json["offers"]
              if o["instance_type"] == "p3.16xlarge" and o["region"] == "us-east-1")
    assert p3["prices"]["source"] == "bundled snapshot" and p3["prices"]["as_of"] == "<=2026-07-05"
    assert wb("catalog", "update", "--price-list-url", "aws=ftp://x").rc == 1


def test_plan_offline_shows_reserved_savings_plans_and_a_reference_buy_row(wb):
    r = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--json")
    assert r.rc == 0, r.err
    options = {x["option"] for x in r.json["rows"]}
    assert {"on-demand", "spot", "reserved-1y", "reserved-3y", "savings-plan-1y", "savings-plan-3y", "buy"} <= options
    [buy] = [x for x in r.json["rows"] if x["option"] == "buy"]
    assert buy["currency"] == "CNY" and buy["total"] == pytest.approx(500_000 + 3.0 * 2160 * 1.0 + 50_000 * 2160 / 8760)
    assert buy["price_as_of"] == "2026-12-01" and "not a vendor quote" in buy["price_source"]
    r1 = next(x for x in r.json["rows"] if x["option"] == "reserved-1y")
    assert r1["paid_hours"] == 8760 and "whole 1-year term" in r1["note"]
    text = wb("plan", "--gpu", "V100:8", "--hours", "2160")
    assert "reserved-3y" in text.out and "savings-plan-1y" in text.out and "reference" in text.out
    assert "--buy-price" in text.out and "--currency CNY" in text.out


def test_plan_in_cny_converts_every_row_at_the_users_rate(wb):
    r = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--currency", "CNY", "--json")
    assert r.rc == 1 and "exchange rate" in r.json["error"]["message"]
    r = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--currency", "CNY", "--rate", "7.2", "--json", "--all")
    assert r.rc == 0, r.err
    assert {x["currency"] for x in r.json["rows"]} == {"CNY"}
    od = next(x for x in r.json["rows"] if x["option"] == "on-demand" and x["instance_type"] == "p3.16xlarge"
              and x["region"] == "us-east-1")
    assert od["original_currency"] == "USD" and od["total"] == pytest.approx(24.48 * 2160 * 7.2, abs=0.01)
    buy = next(x for x in r.json["rows"] if x["option"] == "buy")
    assert buy["original_currency"] is None  # already CNY
    assert wb("currency", "CNY", "--rate", "7.0").rc == 0
    stored = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--currency", "cny", "--all", "--json").json
    od = next(x for x in stored["rows"] if x["option"] == "on-demand" and x["instance_type"] == "p3.16xlarge"
              and x["region"] == "us-east-1")
    assert od["total"] == pytest.approx(24.48 * 2160 * 7.0, abs=0.01)
