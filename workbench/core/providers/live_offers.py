"""A plugin's offers for one profile: live from its cloud, from the price catalog when live answers fail.

What a cloud's API answers (shapes, stock, quotas, prices) stays in the plugin; what every cloud
does the same way around it lives here:

* the ``pricing`` setting (:data:`~.profile_settings.PRICING_MODES`): ``auto`` asks the cloud and,
  when a call fails, uses the catalog rows (:func:`.price_snapshot.load` of the provider) and says
  why; ``live`` raises instead; ``snapshot`` never asks for prices (:meth:`OfferBook.fall_back`);
* offers made from the catalog rows, with the reason live prices are missing (:meth:`OfferBook.from_snapshot`);
* caches with the time each value was fetched (:class:`TtlCache`);
* the flow for a cloud whose live offers of a region come in one piece (Alibaba: types, stock and
  prices, or nothing): :meth:`OfferBook.region` serves the catalog in snapshot mode, else
  ``live(region)`` cached for ``cache_ttl_s``, and the catalog (not cached, so the next call asks
  again) when that fails.  A cloud whose offers are made of pieces that fail one by one (AWS:
  shapes, list prices, spot prices, quotas; Azure: sizes, usages, retail prices) overrides
  ``catalog_offers`` or ``region`` and calls ``fall_back`` for each piece.

Threading: any thread.  Caches are guarded by a lock and fetches run outside it, so two threads may
fetch the same key at once (harmless: the last one wins).  Failure rules: ``fall_back`` re-raises in
``live`` mode; otherwise only the plugin's own errors leave.
"""

from __future__ import annotations

import datetime
import functools
import logging
import threading
import time
from typing import Callable, Generic, Hashable, TypeVar

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Offer
from workbench.core.providers import price_snapshot

log = logging.getLogger("workbench.offers.live")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def today() -> str:
    """Today's date in UTC (ISO), the ``as_of`` of a live price."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


class TtlCache(Generic[K, V]):
    """Values by key with the time each was fetched (by ``clock``); thread-safe, fetches outside the lock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._items: dict[K, tuple[float, V]] = {}

    def entry(self, key: K, ttl_s: float | None = None) -> tuple[float, V] | None:
        """(fetched at, value) when ``key`` was fetched less than ``ttl_s`` ago (None: any age), else None."""
        with self._lock:
            hit = self._items.get(key)
        if hit is None or (ttl_s is not None and self.clock() - hit[0] >= ttl_s):
            return None
        return hit

    def get(self, key: K, ttl_s: float | None = None) -> V | None:
        hit = self.entry(key, ttl_s)
        return None if hit is None else hit[1]

    def put(self, key: K, value: V, at: float | None = None) -> V:
        """Keep ``value`` as fetched ``at`` (default: now); returns it."""
        with self._lock:
            self._items[key] = (self.clock() if at is None else at, value)
        return value

    def get_or_fetch(self, key: K, ttl_s: float, fetch: Callable[[], V]) -> V:
        """The fresh value of ``key``, else ``fetch()`` kept (an exception keeps nothing)."""
        hit = self.entry(key, ttl_s)
        return hit[1] if hit is not None else self.put(key, fetch())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class OfferBook:
    """The offers of one profile, region by region (see the module doc).

    ``snapshot`` loads the catalog rows (default: ``price_snapshot.load(provider_id)``, read at each
    use so a ``catalog update`` shows at once); ``clock`` times the caches.
    """

    def __init__(self, provider_id: str, pricing: str, cache_ttl_s: float, *,
                 snapshot: Callable[[], price_snapshot.PriceSnapshot] | None = None,
                 clock: Callable[[], float] = time.monotonic, logger: logging.Logger | None = None) -> None:
        self.provider_id = provider_id
        self.pricing = pricing
        self.cache_ttl_s = cache_ttl_s
        self.clock = clock
        self._snapshot = snapshot or functools.partial(price_snapshot.load, provider_id)
        self._log = logger or log
        self._offers: TtlCache[str, list[Offer]] = TtlCache(clock)

    @property
    def asks_live(self) -> bool:
        """False in ``snapshot`` mode: no live price is asked for."""
        return self.pricing != "snapshot"

    def snapshot(self) -> price_snapshot.PriceSnapshot:
        """The provider's catalog rows (bundled, merged with the user's refreshed copy)."""
        return self._snapshot()

    def invalidate(self) -> None:
        """Forget what was fetched (the next call asks the cloud again)."""
        self._offers.clear()

    # -- the one-piece flow ------------------------------------------------------------------
    def region(self, region: str) -> list[Offer]:
        """The region's offers: the catalog's in snapshot mode; else live (cached for ``cache_ttl_s``),
        falling back to the catalog's with the reason (auto) or raising (live) when that fails."""
        if not self.asks_live:
            return self.catalog_offers(region)
        hit = self._offers.get(region, self.cache_ttl_s)
        if hit is not None:
            return hit
        try:
            offers = self.live(region)
        except WorkbenchError as exc:
            return self.catalog_offers(region, why=self.fall_back(exc, "live offers", region))
        return self._offers.put(region, offers)

    def live(self, region: str) -> list[Offer]:
        """The region's offers as the cloud says them now (the plugin's; workbench errors only)."""
        raise NotImplementedError(f"{type(self).__name__} asks no cloud: it serves the price catalog only")

    def catalog_offers(self, region: str, why: str | None = None) -> list[Offer]:
        """The offers when live ones are not asked for (``why`` None) or failed: the catalog rows by default."""
        return self.from_snapshot(region, why)

    # -- pieces ------------------------------------------------------------------------------------
    def fall_back(self, err: WorkbenchError, what: str, region: str) -> str:
        """A live call doing ``what`` failed with ``err``: raise it in ``live`` mode; otherwise log that the
        catalog is used instead and return the reason (for the offers' notes)."""
        if self.pricing == "live":
            raise err
        self._log.warning("%s failed in %s, using the price catalog: %s", what, region, err.message)
        return err.message

    def from_snapshot(self, region: str, why: str | None = None, *, available: bool = True,
                      note: str | None = None, extra: dict | None = None) -> list[Offer]:
        """The catalog rows of ``region`` as offers priced "snapshot"; with ``why`` (live prices failed) each
        says so and names the row's date, unless ``note`` says something else."""
        out = []
        for row in self.snapshot().region(region):
            text = note or (f"price from the {row.label} ({row.as_of}); live prices failed: {why}" if why else None)
            out.append(row.offer(self.provider_id, available=available, note=text, source="snapshot", extra=extra))
        return out
