"""Offers for one Azure profile: resource SKUs + compute usages + retail prices, cached with a timestamp.

Per region, three things are fetched and cached (each with the time it was
fetched): the GPU sizes (resource SKUs, ``cache_ttl_s``), the vCPU quota (compute
usages, at most 5 minutes: it changes with every launch) and the prices (the
Retail Prices API, ``cache_ttl_s``, also kept on disk under the data dir so a
restart does not page through the API again).

Prices: live first (``pricing=auto``/``live``); when the API fails or lacks a size,
the bundled snapshot (``auto``/``snapshot``) — every offer names its price source
and date.  When the subscription's size list itself cannot be read for a
transient reason (network), the region's offers come from the snapshot's shapes,
marked "not checked against your subscription"; when sign-in fails (no secret
stored, wrong secret, missing role) they come from the snapshot too, marked
unavailable with the reason, so the catalogue can be browsed before sign-in.

The pricing modes, the fallback to the catalog, the catalog's offers and the caches are the
kit's (:class:`~workbench.core.providers.live_offers.OfferBook`, ``TtlCache``); this module keeps
what is Azure's: which calls, the disk cache, and the two ways a failed size list is shown.

Threading: safe from any thread; the caches are guarded by a lock, fetches run
outside it (two threads may fetch the same thing once; the last one wins).
"""

from __future__ import annotations

import datetime
import json
import logging
import time
from pathlib import Path
from typing import Callable

from workbench.core.domain.errors import AuthError, TransientError, WorkbenchError
from workbench.core.domain.models import Offer, Prices
from workbench.core.providers import price_snapshot
from workbench.core.providers.live_offers import OfferBook, TtlCache

from . import retail
from .clients import AzureClients
from .skus import Quota, SizeInfo, parse_skus, parse_usages, quota_note

log = logging.getLogger("workbench.azure.offers")
PROVIDER = "azure"
USAGE_TTL_S = 300.0
LIVE_SOURCE = "live: Azure Retail Prices API"


class OfferCatalog(OfferBook):
    """Sizes, quotas and prices per region for one profile (see the module doc).

    The clock is the wall clock: price entries outlive the process in the disk cache.
    """

    def __init__(self, clients: AzureClients, cache_dir: Path | None, clock: Callable[[], float] = time.time) -> None:
        super().__init__(PROVIDER, clients.settings.pricing, clients.settings.cache_ttl_s, clock=clock, logger=log)
        self.clients = clients
        self.settings = clients.settings
        self.cache_dir = cache_dir
        self._sizes: TtlCache[str, list[SizeInfo]] = TtlCache(clock)
        self._quotas: TtlCache[str, dict[str, Quota]] = TtlCache(clock)
        self._prices: TtlCache[str, dict[tuple[str, str], retail.MeterPrices]] = TtlCache(clock)

    # -- cached pieces ---------------------------------------------------------------------
    def sizes(self, region: str) -> list[SizeInfo]:
        def fetch() -> list[SizeInfo]:
            try:
                return parse_skus(self.clients.compute.resource_skus.list(filter=f"location eq '{region}'"), region)
            except Exception as exc:  # noqa: BLE001 - mapped
                raise self.clients.error(exc, f"listing VM sizes in {region}") from None

        return self._sizes.get_or_fetch(region, self.settings.cache_ttl_s, fetch)

    def size(self, region: str, name: str) -> SizeInfo | None:
        return next((s for s in self.sizes(region) if s.name.lower() == name.lower()), None)

    def quotas(self, region: str, fresh: bool = False) -> dict[str, Quota]:
        hit = None if fresh else self._quotas.get(region, min(USAGE_TTL_S, self.settings.cache_ttl_s))
        if hit is not None:
            return hit
        try:
            found = parse_usages(self.clients.compute.usage.list(region))
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, f"reading vCPU quota in {region}") from None
        return self._quotas.put(region, found)

    def forget_quotas(self) -> None:
        self._quotas.clear()

    def prices(self, region: str, sizes: list[str]) -> tuple[dict[tuple[str, str], retail.MeterPrices], str | None, float]:
        """(prices, why live prices are missing or None, fetched_at) for ``sizes`` in ``region``."""
        s = self.settings
        if s.pricing == "snapshot":
            return {}, "pricing=snapshot", 0.0
        if not s.prices_url:
            return {}, f"no Retail Prices API for the {s.cloud} cloud", 0.0
        key = f"{region}|{s.currency}|{','.join(sorted(sizes))}"
        hit = self._prices.entry(key, s.cache_ttl_s) or self._disk(key)
        if hit:
            return hit[1], None, hit[0]
        try:
            items = retail.fetch(s.prices_url, retail.build_filter(region, sizes), s.currency,
                                 verify=s.ca_bundle or True, timeout=s.read_timeout)
        except WorkbenchError as exc:
            return {}, self.fall_back(exc, "live Azure prices", region), 0.0
        found = retail.parse(items)
        now = self.clock()
        self._prices.put(key, found, now)
        self._save(key, now, found)
        return found, None, now

    # -- disk cache of prices ------------------------------------------------------------------
    def _path(self) -> Path | None:
        return self.cache_dir / f"prices-{self.settings.profile_name}.json" if self.cache_dir else None

    def _disk(self, key: str) -> tuple[float, dict[tuple[str, str], retail.MeterPrices]] | None:
        path = self._path()
        try:
            doc = json.loads(path.read_text(encoding="utf-8")) if path and path.exists() else {}
            entry = doc.get(key)
            if not entry or self.clock() - float(entry["fetched_at"]) >= self.settings.cache_ttl_s:
                return None
            found = {(r, k): retail.MeterPrices(**{f: v for f, v in p.items() if f in
                                                   ("on_demand", "spot", "reserved_1y", "reserved_3y", "currency")})
                     for r, k, p in entry["prices"]}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        at = float(entry["fetched_at"])
        return at, self._prices.put(key, found, at)

    def _save(self, key: str, fetched_at: float, found: dict[tuple[str, str], retail.MeterPrices]) -> None:
        path = self._path()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            doc[key] = {"fetched_at": fetched_at, "prices": [
                [r, k, {"on_demand": p.on_demand, "spot": p.spot, "reserved_1y": p.reserved_1y,
                        "reserved_3y": p.reserved_3y, "currency": p.currency}] for (r, k), p in found.items()]}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            tmp.replace(path)
        except (OSError, ValueError) as exc:  # a cache, never a reason to fail
            log.info("cannot write the Azure price cache %s: %s", path, exc)

    # -- offers ------------------------------------------------------------------------------------
    def region(self, region: str) -> list[Offer]:
        """The region's offers: live sizes and quotas with live prices, or the catalog's (see the module doc)."""
        try:
            sizes = self.sizes(region)
            quotas = self.quotas(region)
        except TransientError as exc:  # offline: the catalogue still shows what exists, unchecked
            return self._snapshot_offers(region, f"not checked against your subscription: {exc.message}", True)
        except AuthError as exc:  # shown with the reason, and not launchable until sign-in works
            return self._snapshot_offers(region, f"sign-in needed: {exc.message}", False)
        live, why, fetched_at = self.prices(region, [s.name for s in sizes]) if sizes else ({}, None, 0.0)
        snap = self.snapshot()
        as_of = datetime.datetime.fromtimestamp(fetched_at or self.clock(), datetime.timezone.utc).date().isoformat()
        out = []
        for size in sizes:
            prices = self._prices_for(size.name, region, live.get((region, size.name)), snap, as_of, why)
            note = size.unavailable or quota_note(size, quotas)
            spot_note = quota_note(size, quotas, spot=True)
            fam, low = quotas.get(size.family.lower()), quotas.get("lowprioritycores")
            out.append(Offer(
                provider=PROVIDER, region=region, instance_type=size.name, gpu_model=size.gpu_model,
                gpu_count=size.gpus, gpu_memory_gb=size.gpu_memory_gb, vcpus=size.vcpus, memory_gb=size.memory_gb,
                prices=prices, rdma=size.rdma, available=note is None, availability_note=note,
                extra={"family": size.family, "zones": list(size.zones), "spot_capable": size.spot_capable,
                       "encryption_at_host": size.encryption_at_host, "premium_io": size.premium_io,
                       "accelerated_networking": size.accelerated_networking,
                       "quota": {"family": [fam.current, fam.limit] if fam else None,
                                 "spot": [low.current, low.limit] if low else None},
                       "spot_note": spot_note, "notes": list(size.notes),
                       "price_note": why, "fetched_at": (self._sizes.entry(region) or (0.0,))[0]},
            ))
        return out

    def _prices_for(self, name: str, region: str, live: retail.MeterPrices | None, snap: price_snapshot.PriceSnapshot,
                    as_of: str, why: str | None) -> Prices:
        if live is not None and (live.on_demand is not None or live.spot is not None):
            return Prices(on_demand=live.on_demand, spot=live.spot, reserved_1y=live.reserved_1y,
                          reserved_3y=live.reserved_3y, currency=live.currency, source=LIVE_SOURCE, as_of=as_of)
        row = snap.find(region, name) if self.settings.pricing != "live" else None
        if row is not None:  # its own currency, labelled
            return row.prices("snapshot")
        return Prices(currency=self.settings.currency, source=f"no price found ({why or 'not in the Retail Prices API'})",
                      as_of=as_of)

    def _snapshot_offers(self, region: str, note: str, available: bool) -> list[Offer]:
        log.warning("Azure offers in %s from the snapshot: %s", region, note)
        return self.from_snapshot(region, available=available, note=note, extra={"zones": [], "snapshot_only": True})

