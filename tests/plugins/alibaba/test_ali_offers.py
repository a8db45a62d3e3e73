"""Offers: GPU types from DescribeInstanceTypes, stock per zone, CNY prices, spot history, the snapshot fallback."""

from __future__ import annotations

import pytest

from alibaba_ecs import Account, AlibabaServer
from alibaba_ecs import catalog as cloud
from workbench.core.domain.errors import TransientError


def test_live_offers_are_gpu_types_in_cny_with_stock(ali: AlibabaServer, account: Account, make_provider):
    ali.knobs(account).no_stock.add(("cn-hangzhou-h", "ecs.gn6v-c8g1.2xlarge", "*"))
    offers = {o.instance_type: o for o in make_provider().offers()}
    assert "ecs.g7.xlarge" not in offers  # no GPU: not an offer
    assert set(offers) == {t.type_id for t in cloud.offered("cn-hangzhou")}
    v100 = offers["ecs.gn6v-c8g1.2xlarge"]
    assert (v100.gpu_model, v100.gpu_count, v100.gpu_memory_gb, v100.vcpus, v100.memory_gb) == ("V100", 1, 16, 8, 32)
    assert v100.prices.currency == "CNY" and v100.prices.source.startswith("live:")
    assert v100.hourly() == pytest.approx(cloud.price("cn-hangzhou", "ecs.gn6v-c8g1.2xlarge"))
    assert v100.available and v100.availability_note == "no stock in cn-hangzhou-h"
    assert "cn-hangzhou-h" not in v100.extra["zones_with_stock"]
    spot = v100.extra["spot_by_zone"]
    assert v100.hourly(spot=True) == pytest.approx(min(spot.values()))
    assert offers["ecs.gn6e-c12g1.3xlarge"].gpu_memory_gb == 32 and offers["ecs.gn7i-c8g1.2xlarge"].gpu_model == "A10"
    assert offers["ecs.gn7e-c16g1.4xlarge"].gpu_model == "A100" and offers["ecs.gn7e-c16g1.4xlarge"].gpu_memory_gb == 80


def test_sold_out_everywhere_is_unavailable(ali: AlibabaServer, account: Account, make_provider):
    ali.knobs(account).no_stock.add(("*", "ecs.gn7-c12g1.3xlarge", "*"))
    a100 = next(o for o in make_provider().offers() if o.instance_type == "ecs.gn7-c12g1.3xlarge")
    assert not a100.available and a100.availability_note == "no stock in any zone of cn-hangzhou"


def test_snapshot_when_asked_and_when_live_fails(ali: AlibabaServer, account: Account, make_provider):
    snap = make_provider(pricing="snapshot").offers()
    assert snap and all(o.prices.source == "snapshot" and o.prices.currency == "CNY" for o in snap)
    t4 = next(o for o in snap if o.instance_type == "ecs.gn6i-c4g1.xlarge")
    assert t4.hourly() == 11.63 and t4.prices.as_of == "<=2024-12-30"  # the China-site list (issue 32)
    assert not ali.calls(account, "ecs:DescribePrice")  # nothing asked

    ali.add_fault("ecs:DescribeAvailableResource", times=-1, account=account.account_id)
    fallback = make_provider(retry_total="1").offers()
    assert {o.prices.source for o in fallback} == {"snapshot"}
    assert "live prices failed" in (fallback[0].availability_note or "")
    with pytest.raises(TransientError):
        make_provider(retry_total="1", pricing="live").offers()
    ali.clear_faults()


def test_international_site_prices_in_usd(ali: AlibabaServer, make_provider):
    offers = make_provider(site="international", region="ap-southeast-1").offers()
    assert offers and {o.prices.currency for o in offers} == {"USD"}
    assert {o.region for o in offers} == {"ap-southeast-1"}


def test_offers_are_cached_per_region(ali: AlibabaServer, account: Account, make_provider):
    p = make_provider()
    p.offers()
    asked = len(ali.calls(account, "ecs:DescribePrice"))
    p.offers()
    assert len(ali.calls(account, "ecs:DescribePrice")) == asked


def test_spot_price_history_of_an_instance(make_provider):
    import time

    from workbench.core.domain.models import Instance, InstanceState

    p = make_provider()
    inst = Instance("alibaba", "p", "i-x", "L", "cn-hangzhou", "ecs.gn6i-c4g1.xlarge", InstanceState.RUNNING,
                    extra={"zone": "cn-hangzhou-i"})
    points = p.spot_price_history(inst, time.time() - 6 * 3600, time.time())
    assert len(points) >= 6 and points == sorted(points)
    base = cloud.spot_price("cn-hangzhou", "cn-hangzhou-i", "ecs.gn6i-c4g1.xlarge")
    assert all(abs(price - base) <= base * 0.02 for _, price in points)


def test_an_international_site_profile_gets_no_converted_catalog_price(ali: AlibabaServer, account: Account,
                                                                        make_provider):
    """Issue 32: the bundled list is the China site's, in CNY.  A profile on the international site (billed in
    USD) is told there is no bundled USD price, never shown the yuan figure or a conversion of it."""
    from workbench_alibaba.offers import NO_USD_PRICE

    offers = make_provider(region="ap-southeast-1", site="international", pricing="snapshot").offers("ap-southeast-1")
    assert offers, "the catalog has ap-southeast-1 rows"
    t4 = next(o for o in offers if o.instance_type == "ecs.gn6i-c4g1.xlarge")
    assert t4.prices.currency == "USD" and t4.hourly() is None and t4.hourly(spot=True) is None
    assert not t4.available and t4.availability_note == NO_USD_PRICE
    china = make_provider(pricing="snapshot").offers("cn-hangzhou")  # the China site: the catalog's yuan
    assert all(o.prices.currency == "CNY" and o.hourly() for o in china)
