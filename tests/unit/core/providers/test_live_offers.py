"""The offers kit: pricing modes, the fallback to the price catalog, and the caches every plugin's offers share."""

from __future__ import annotations

import logging

import pytest

from workbench.core.domain.errors import TransientError
from workbench.core.domain.models import Offer, Prices
from workbench.core.providers import price_snapshot
from workbench.core.providers.live_offers import OfferBook, TtlCache, today

CSV = """instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb,region,currency,on_demand,spot,as_of,source
big.gpu,A100,8,80,96,1152,r1,USD,32.5,12.0,2025-01-02,the price list
small.gpu,T4,1,16,4,16,r1,USD,0.5,,2025-01-02,the price list
other.gpu,T4,1,16,4,16,r2,USD,0.6,,2025-01-02,the price list
"""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Book(OfferBook):
    """Live offers of one shape per region; ``fail`` makes the cloud refuse."""

    def __init__(self, pricing: str, clock: Clock) -> None:
        super().__init__("fake", pricing, 60.0, snapshot=lambda: price_snapshot.parse(CSV, "fake.csv", "fake"),
                         clock=clock)
        self.asked: list[str] = []
        self.fail = False

    def live(self, region: str) -> list[Offer]:
        self.asked.append(region)
        if self.fail:
            raise TransientError("the cloud did not answer")
        return [Offer("fake", region, "big.gpu", "A100", 8, 80.0, 96, 1152.0,
                      Prices(on_demand=30.0, currency="USD", source="live", as_of=today()))]


def test_snapshot_mode_never_asks_the_cloud() -> None:
    book = Book("snapshot", Clock())
    offers = book.region("r1")
    assert book.asked == [] and [o.instance_type for o in offers] == ["big.gpu", "small.gpu"]
    assert all(o.prices.source == "snapshot" and o.availability_note is None for o in offers)


def test_live_offers_are_cached_for_the_ttl() -> None:
    clock = Clock()
    book = Book("auto", clock)
    assert book.region("r1")[0].prices.source == "live" and book.region("r1") and book.asked == ["r1"]
    clock.now += 61
    book.region("r1")
    assert book.asked == ["r1", "r1"]
    book.invalidate()
    book.region("r1")
    assert book.asked == ["r1", "r1", "r1"]


def test_auto_falls_back_to_the_catalog_with_the_reason_and_asks_again_next_time(caplog) -> None:
    book = Book("auto", Clock())
    book.fail = True
    with caplog.at_level(logging.WARNING, "workbench.offers.live"):
        offers = book.region("r1")
    assert {o.prices.source for o in offers} == {"snapshot"}
    assert offers[0].availability_note == ("price from the bundled snapshot (2025-01-02); live prices failed: "
                                           "the cloud did not answer")
    assert "live offers failed in r1, using the price catalog" in caplog.text
    book.fail = False
    assert book.region("r1")[0].prices.source == "live"  # the fallback was not cached
    assert book.asked == ["r1", "r1"]


def test_live_mode_raises_instead_of_falling_back() -> None:
    book = Book("live", Clock())
    book.fail = True
    with pytest.raises(TransientError, match="did not answer"):
        book.region("r1")
    with pytest.raises(TransientError):
        book.fall_back(TransientError("prices down"), "reading prices", "r1")
    assert Book("auto", Clock()).fall_back(TransientError("prices down"), "reading prices", "r1") == "prices down"


def test_catalog_offers_can_say_why_they_are_unavailable() -> None:
    book = Book("auto", Clock())
    offers = book.from_snapshot("r2", available=False, note="sign-in needed", extra={"snapshot_only": True})
    assert [(o.instance_type, o.available, o.availability_note) for o in offers] == [
        ("other.gpu", False, "sign-in needed")]
    assert offers[0].extra["snapshot_only"] is True and offers[0].prices.on_demand == 0.6


def test_ttl_cache_keeps_the_fetch_time_and_keeps_nothing_when_a_fetch_fails() -> None:
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(clock)
    assert cache.get_or_fetch("a", 10, lambda: 1) == 1 and cache.get_or_fetch("a", 10, lambda: 2) == 1
    assert cache.entry("a") == (1000.0, 1)
    clock.now += 10
    assert cache.get("a", 10) is None and cache.get("a") == 1  # stale for a TTL, still there for "any age"

    def broken() -> int:
        raise TransientError("down")

    with pytest.raises(TransientError):
        cache.get_or_fetch("b", 10, broken)
    assert cache.entry("b") is None
    cache.put("c", 3, at=5.0)
    assert cache.entry("c", 10) is None and cache.entry("c") == (5.0, 3)
    cache.clear()
    assert cache.get("a") is None
