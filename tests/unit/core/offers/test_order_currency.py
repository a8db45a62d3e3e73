"""Offers priced in different currencies are ordered by value, not by the bare number."""

from __future__ import annotations

from workbench.core.domain.models import Offer, Prices
from workbench.core.offers.order import REFERENCE_CNY_PER_USD, rank
from workbench.core.offers.query import OfferQuery


def _offer(provider: str, price: float, currency: str) -> Offer:
    return Offer(provider=provider, region="r", instance_type=f"{provider}-t4", gpu_model="T4", gpu_count=1,
                 gpu_memory_gb=16, vcpus=4, memory_gb=16,
                 prices=Prices(on_demand=price, currency=currency, source="s", as_of="2026-12-01"))


def test_cny_prices_are_compared_at_the_rate_not_as_bare_numbers():
    offers = [("", _offer("alibaba", 5.0, "CNY")), ("", _offer("aws", 0.9, "USD")), ("", _offer("azure", 0.5, "USD"))]
    # ¥5 is about $0.69 at the reference rate: between the two dollar prices, not after both
    assert [r.offer.provider for r in rank(offers, OfferQuery(gpu_model="T4"))] == ["azure", "alibaba", "aws"]
    assert REFERENCE_CNY_PER_USD > 5.0 / 0.9


def test_the_users_rate_decides_the_order_when_set():
    offers = [("", _offer("alibaba", 5.0, "CNY")), ("", _offer("aws", 0.9, "USD"))]
    assert [r.offer.provider for r in rank(offers, OfferQuery(gpu_model="T4"), cny_per_usd=5.0)] == ["aws", "alibaba"]
    assert [r.offer.provider for r in rank(offers, OfferQuery(gpu_model="T4"), cny_per_usd=6.0)] == ["alibaba", "aws"]
