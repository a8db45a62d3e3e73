"""Offers from resource SKUs + compute usages + Retail Prices over HTTPS; restrictions, quota, caching, fallbacks."""

from __future__ import annotations

import time

import pytest

from workbench.core.domain.errors import TransientError


def _by_size(offers):
    return {o.instance_type: o for o in offers}


def test_gpu_sizes_with_gpu_facts_live_prices_and_quota(provider):
    offers = _by_size(provider.offers("eastus"))
    assert "Standard_D4s_v5" not in offers  # a CPU size is not a GPU offer
    nd = offers["Standard_ND96asr_v4"]
    assert (nd.gpu_model, nd.gpu_count, nd.gpu_memory_gb, nd.vcpus, nd.memory_gb, nd.rdma) == ("A100", 8, 40.0, 96, 900, True)
    assert nd.prices.source == "live: Azure Retail Prices API" and nd.prices.as_of == time.strftime("%Y-%m-%d", time.gmtime())
    assert nd.prices.on_demand == 27.197 and 0 < nd.prices.spot < nd.prices.on_demand
    assert nd.prices.reserved_3y < nd.prices.reserved_1y < nd.prices.on_demand and nd.prices.currency == "USD"
    assert nd.available and nd.extra["quota"]["family"] == [0, 192] and nd.extra["zones"] == ["2", "3"]
    facts = {k: (o.gpu_model, o.gpu_count, o.gpu_memory_gb) for k, o in offers.items()}
    assert facts["Standard_NC4as_T4_v3"] == ("T4", 1, 16.0)
    assert facts["Standard_NC24ads_A100_v4"] == ("A100", 1, 80.0)
    assert facts["Standard_ND96amsr_A100_v4"] == ("A100", 8, 80.0)
    assert facts["Standard_ND96isr_H100_v5"] == ("H100", 8, 80.0)
    assert facts["Standard_NC6s_v3"] == ("V100", 1, 16.0)
    # a family whose quota is 0 is marked, not offered as launchable
    amsr = offers["Standard_ND96amsr_A100_v4"]
    assert not amsr.available and "request a quota increase" in amsr.availability_note
    assert "standardNDAMSv4_A100Family" in amsr.availability_note


def test_restrictions_and_used_quota(arm, account, provider):
    cfg = arm.state.config(account.subscription)
    cfg.restricted[("eastus", "Standard_NC24ads_A100_v4")] = {
        "type": "Location", "values": ["eastus"], "restrictionInfo": {"locations": ["eastus"]},
        "reasonCode": "NotAvailableForSubscription"}
    cfg.restricted[("eastus", "Standard_ND96isr_H100_v5")] = {
        "type": "Zone", "values": ["eastus"], "restrictionInfo": {"locations": ["eastus"], "zones": ["1", "3"]},
        "reasonCode": "NotAvailableForSubscription"}
    cfg.quotas[("eastus", "standardNCASv3_T4Family")] = 6
    offers = _by_size(provider.offers("eastus"))
    a100 = offers["Standard_NC24ads_A100_v4"]
    assert not a100.available and "not available to this subscription in eastus (NotAvailableForSubscription)" \
        in a100.availability_note
    h100 = offers["Standard_ND96isr_H100_v5"]
    assert h100.available and h100.extra["zones"] == ["2"] and "zone(s) 1, 3 restricted" in h100.extra["notes"][0]
    assert offers["Standard_NC4as_T4_v3"].available  # 4 of 6 vCPUs fit
    t4x8 = offers["Standard_NC8as_T4_v3"]
    assert not t4x8.available and "0/6 vCPUs used, 8 needed" in t4x8.availability_note


def test_offers_are_cached_with_their_timestamp_and_prices_survive_a_restart(arm, account, make_provider, tmp_path):
    prov = make_provider()
    first = prov.offers("westus2")
    calls = len([s for s in arm.seen if s.sub == account.subscription or s.path.startswith("/api/retail")])
    again = prov.offers("westus2")
    assert [o.instance_type for o in again] == [o.instance_type for o in first]
    assert len([s for s in arm.seen if s.sub == account.subscription or s.path.startswith("/api/retail")]) == calls
    assert first[0].extra["fetched_at"] > time.time() - 60
    # a new provider object (the app restarted) reuses the prices stored under the data dir
    before = len([s for s in arm.seen if s.path.startswith("/api/retail")])
    reborn = make_provider()
    assert {o.prices.on_demand for o in reborn.offers("westus2")} == {o.prices.on_demand for o in first}
    assert len([s for s in arm.seen if s.path.startswith("/api/retail")]) == before


def test_prices_in_the_requested_currency(make_provider):
    offers = _by_size(make_provider(currency="CNY").offers("eastus"))
    assert offers["Standard_ND96asr_v4"].prices.currency == "CNY"
    assert offers["Standard_ND96asr_v4"].prices.on_demand == pytest.approx(27.197 * 7.2, rel=1e-3)


def test_price_api_down_falls_back_to_the_snapshot_or_fails_when_told_to(arm, make_provider, tmp_path):
    fault = arm.add_fault(r"^/api/retail/prices", status=500, times=-1, headers={"Retry-After": "0"})
    try:
        nd = _by_size(make_provider(data_dir=tmp_path / "a").offers("eastus"))["Standard_ND96asr_v4"]
        assert nd.prices.source == "snapshot" and nd.prices.as_of == "2025-06-01" and nd.prices.on_demand == 27.197
        assert "HTTP 500" in nd.extra["price_note"]
        with pytest.raises(TransientError, match="Retail Prices API"):
            make_provider(data_dir=tmp_path / "b", pricing="live").offers("eastus")
    finally:
        arm.faults.remove(fault)
    snap = _by_size(make_provider(data_dir=tmp_path / "c", pricing="snapshot").offers("eastus"))
    assert snap["Standard_ND96asr_v4"].prices.source == "snapshot"


def test_throttling_honours_retry_after_and_a_single_500_is_retried(arm, account, make_provider):
    arm.add_fault(r"/providers/microsoft.compute/skus$", status=429, code="TooManyRequests",
                  message="Rate limit exceeded", headers={"Retry-After": "1"}, sub=account.subscription)
    arm.add_fault(r"/usages$", status=500, sub=account.subscription)
    started = time.monotonic()
    offers = make_provider().offers("westeurope")
    assert time.monotonic() - started >= 1.0  # the SDK's retry policy waited as told
    assert "Standard_ND96asr_v4" in _by_size(offers)
    statuses = [s.status for s in arm.seen if s.sub == account.subscription and "skus" in s.path]
    assert statuses == [429, 200]


def test_persistent_throttling_is_transient_and_the_arm_being_unreachable_uses_the_snapshot(arm, account, make_provider):
    arm.add_fault(r"/usages$", status=429, code="TooManyRequests", headers={"Retry-After": "0"}, times=-1,
                  sub=account.subscription)
    offers = make_provider(retry_total="1").offers("eastus")
    # ARM kept throttling: the offers come from the snapshot's shapes, marked as unchecked
    nd = _by_size(offers)["Standard_ND96asr_v4"]
    assert nd.prices.source == "snapshot" and "not checked against your subscription" in nd.availability_note
    dead = make_provider(arm_endpoint="https://127.0.0.1:9", retry_total="0", connect_timeout="1")
    offline = _by_size(dead.offers("westus2"))
    assert offline["Standard_ND96asr_v4"].prices.on_demand == 27.197
    assert "cannot reach Azure" in offline["Standard_ND96asr_v4"].availability_note


def test_without_a_working_sign_in_the_catalogue_is_shown_but_not_launchable(make_provider):
    offers = _by_size(make_provider(secret="").offers("eastus"))
    nd = offers["Standard_ND96asr_v4"]
    assert nd.prices.on_demand == 27.197 and nd.prices.source == "snapshot"
    assert not nd.available and nd.availability_note.startswith("sign-in needed: no client secret stored")
