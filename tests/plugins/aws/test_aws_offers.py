"""Offers against moto + the synthetic Price List pages: live shapes, live and snapshot prices, quotas, fallbacks."""

from __future__ import annotations

import datetime
import socket
import time

import pytest

from workbench.core.providers import price_snapshot

from aws_moto import FaultRule, quota_json, spot_history_xml
from workbench.core.domain.errors import TransientError


def _by_type(offers, region="us-east-1"):
    return {o.instance_type: o for o in offers if o.region == region}


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def test_offers_have_live_shapes_live_prices_and_the_seed_types(moto, make_provider):
    offers = _by_type(make_provider().offers())
    p3 = offers["p3.2xlarge"]  # not in moto's describe_instance_types: shape from the snapshot
    assert (p3.gpu_model, p3.gpu_count, p3.gpu_memory_gb, p3.vcpus) == ("V100", 1, 16.0, 8)
    assert p3.extra["shape_source"] == "snapshot"
    assert p3.prices.on_demand == 3.06 and p3.prices.reserved_1y == 2.142 and p3.prices.reserved_3y == 1.469
    assert p3.prices.source.startswith("live: AWS Price List API") and p3.prices.as_of == _today()
    assert offers["p3.8xlarge"].prices.on_demand == 12.24 and offers["p3.8xlarge"].gpu_count == 4
    g5 = offers["g5.xlarge"]  # listed live by the endpoint, priced from the second synthetic page
    assert g5.extra["shape_source"] == "live" and (g5.gpu_model, g5.gpu_memory_gb) == ("A10G", 24.0)
    assert g5.prices.on_demand == 1.006 and g5.network_gbps and not g5.rdma
    p5 = offers["p5.48xlarge"]  # no Price List price: the snapshot's, and it says so
    assert p5.prices.source == "snapshot" and p5.prices.as_of == "<=2026-07-05" and p5.rdma and p5.gpu_count == 8
    assert {"g4dn.xlarge", "g6.xlarge", "p4d.24xlarge"} <= set(offers)
    assert all(o.hourly() is not None for o in offers.values())
    assert datetime.datetime.fromisoformat(p3.extra["fetched_at"]).date().isoformat() == _today()
    pages = [c.param("NextToken") for c in moto.faults.find("GetProducts")]
    assert pages == [None, "page2"]
    filters = {f["Field"]: f["Value"] for f in moto.faults.find("GetProducts")[0].param("Filters")}
    assert filters["regionCode"] == "us-east-1" and filters["capacitystatus"] == "Used"


def test_offers_are_cached_and_cover_every_enabled_region(moto, make_provider):
    provider = make_provider(regions="us-east-1,us-west-2,eu-west-1")
    offers = list(provider.offers())
    assert {o.region for o in offers} == {"us-east-1", "us-west-2", "eu-west-1"}
    eu = _by_type(offers, "eu-west-1")["p3.2xlarge"]
    assert eu.prices.on_demand == 3.305 and eu.prices.source == "snapshot"  # no Price List pages for eu
    calls = len(moto.faults.calls)
    assert len(list(provider.offers())) == len(offers) and len(moto.faults.calls) == calls
    assert {o.region for o in provider.offers("us-west-2")} == {"us-west-2"}
    assert list(provider.offers("ap-south-1")) == []  # not enabled in this profile


def test_snapshot_mode_never_calls_aws(moto, make_provider):
    offers = _by_type(make_provider(pricing="snapshot").offers())
    assert moto.faults.calls == []
    p3 = offers["p3.2xlarge"]
    assert p3.prices.source == "snapshot" and p3.prices.on_demand == 3.06 and p3.prices.spot == 0.37315


def test_a_failing_price_list_falls_back_to_the_snapshot_and_says_why(moto, make_provider):
    moto.faults.add(FaultRule(operation="GetProducts", error="AccessDeniedException",
                              message="User is not authorized to perform: pricing:GetProducts"))
    offers = _by_type(make_provider().offers())
    p3 = offers["p3.2xlarge"]
    assert p3.prices.on_demand == 3.06
    # the committed terms come from the catalog too, each saying what it is: p3 has no published reservation,
    # so the catalog's is an estimate, and the planner labels it so (issue 32)
    assert p3.prices.reserved_1y == pytest.approx(3.06 * 0.64)
    assert p3.prices.detail("reserved_1y").basis == price_snapshot.BASIS_ESTIMATED
    assert p3.prices.detail("on_demand").as_of == "<=2026-07-05"
    assert p3.prices.source == "snapshot (live prices unavailable)"
    assert "pricing:GetProducts" in p3.extra["live_errors"]["prices"]


def test_live_mode_raises_instead_of_falling_back(moto, make_provider):
    moto.faults.add(FaultRule(operation="GetProducts", error=None, status=503))
    with pytest.raises(TransientError, match="Price List"):
        list(make_provider(pricing="live").offers())


def test_an_unreachable_endpoint_gives_snapshot_offers_quickly(make_provider):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    t = time.monotonic()
    offers = _by_type(make_provider(endpoint=dead, max_attempts="2", connect_timeout="1").offers())
    assert time.monotonic() - t < 10
    assert offers["p3.2xlarge"].prices.source == "snapshot (live prices unavailable)"
    assert "did not answer" in offers["p3.2xlarge"].extra["live_errors"]["shapes"]


def test_fresh_spot_prices_are_live_per_zone(moto, make_provider):
    now = time.time()
    xml = spot_history_xml([("p3.2xlarge", "us-east-1a", 0.9702, now - 600), ("p3.2xlarge", "us-east-1b", 0.9311,
                                                                                now - 300),
                            ("p3.2xlarge", "us-east-1b", 1.2000, now - 7200), ("g5.xlarge", "us-east-1c", 0.45, now)])
    moto.faults.add(FaultRule(operation="DescribeSpotPriceHistory", respond=(200, "text/xml", xml)))
    offers = _by_type(make_provider().offers())
    p3 = offers["p3.2xlarge"]
    assert p3.prices.spot == 0.9311 and p3.extra["spot_by_az"] == {"us-east-1a": 0.9702, "us-east-1b": 0.9311}
    assert "live spot price history" in p3.prices.source
    assert offers["g4dn.xlarge"].prices.spot == 0.23498  # no fresh price for it: the snapshot's
    call = moto.faults.find("DescribeSpotPriceHistory")[0]
    assert call.param("ProductDescription.1") == "Linux/UNIX" and call.param("StartTime")


def test_quota_values_mark_offers_and_a_missing_permission_is_not_an_error(moto, make_provider):
    values = {"L-417A185B": ("Running On-Demand P instances", 0.0), "L-7212CCBC": ("All P Spot Instance Requests", 0.0),
              "L-DB2E81BA": ("Running On-Demand G and VT instances", 64.0),
              "L-3819A6DF": ("All G and VT Spot Instance Requests", 64.0)}

    def answer(call):
        name, value = values[call.param("QuotaCode")]
        return 200, "application/x-amz-json-1.1", quota_json(call.param("QuotaCode"), name, value)

    moto.faults.add(FaultRule(operation="GetServiceQuota", respond=answer))
    offers = _by_type(make_provider().offers())
    p3, g5, g48 = offers["p3.2xlarge"], offers["g5.xlarge"], offers["g5.48xlarge"]
    assert not p3.available and "Running On-Demand P instances" in p3.availability_note
    assert "L-417A185B" in p3.availability_note
    assert g5.available and g5.availability_note == "quota: 64 vCPUs (Running On-Demand G and VT instances)"
    assert not g48.available and "needs 192" in g48.availability_note
    assert p3.extra["quota"]["on_demand"]["vcpus"] == 0.0
    moto.faults.clear()
    moto.faults.add(FaultRule(operation="GetServiceQuota", error="AccessDeniedException"))
    offers = _by_type(make_provider(name="no-quota-permission").offers())
    assert offers["p3.2xlarge"].available and offers["p3.2xlarge"].availability_note is None
    assert len(moto.faults.find("GetServiceQuota")) == 1  # asked once, then left alone for the region


def test_regions_all_asks_the_account_once(moto, make_provider):
    provider = make_provider(regions="all")
    names = [r.name for r in provider.regions()]
    assert {"us-east-1", "us-west-2", "eu-west-1"} <= set(names) and names == sorted(names)
    assert dict((r.name, r.display_name) for r in provider.regions())["eu-west-1"] == "Europe (Ireland)"
    assert len(moto.faults.find("DescribeRegions")) == 1
    assert [r.name for r in make_provider(regions="eu-west-1,us-east-1").regions()] == ["eu-west-1", "us-east-1"]
