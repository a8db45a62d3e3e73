"""GPU offers of one region: shapes, stock per zone and prices, live with the bundled snapshot as fallback.

Live, per region (cached for ``cache_ttl_s``):

* shapes: DescribeInstanceTypes with ``MinimumGPUAmount=1`` (GPU model from ``GPUSpec``, count,
  ``GPUMemorySize`` per GPU, vCPUs, memory, ``InstanceBandwidthRx``), asked once for all regions;
* stock: DescribeAvailableResource (``DestinationResource=InstanceType``, pay-as-you-go): the zones
  that sell each type ``WithStock`` and the ones ``WithoutStock`` ("no stock in cn-hangzhou-h");
* prices: DescribePrice (pay-as-you-go, per hour, with the profile's system disk) and the latest
  DescribeSpotPriceHistory point per zone (spot), asked side by side on a small pool.

``pricing=snapshot`` uses only ``resources/catalog/alibaba.csv``; ``auto`` falls back to it when a
live call fails (the offer says "snapshot" and the row's date); ``live`` raises instead: the flow of
the kit's :class:`~workbench.core.providers.live_offers.OfferBook`, whose ``live(region)`` is this module's.

Threading: any thread; caches behind a lock.  Errors: workbench errors.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.gpus import normalize_gpu_name
from workbench.core.domain.models import Offer, Prices
from workbench.core.providers import live_offers
from workbench.core.providers.price_snapshot import PriceSnapshot as Snapshot

from .inventory import pages
from .settings import AlibabaSettings

log = logging.getLogger("workbench.alibaba.offers")
LIVE_SOURCE = "live: ECS DescribePrice / DescribeSpotPriceHistory"


#: what an international-site profile is told where the catalog could have priced an offer
NO_USD_PRICE = ("no bundled USD price: the bundled list is the China site's, in CNY, not what the international "
                "site bills; live prices (DescribePrice) need this account")


class OfferBook(live_offers.OfferBook):
    """ECS offers of one profile: GPU types, stock per zone and prices, live or from the catalog.

    The catalog's prices are the China site's list, in CNY (issue 32): they price a China-site profile; an
    international-site profile (billed in USD) gets no catalog price, never a converted one, and says so.
    """

    def catalog_offers(self, region: str, why: str | None = None) -> list[Offer]:
        offers = super().catalog_offers(region, why)
        if all(o.prices.currency == self._s.currency for o in offers):
            return offers
        return [dataclasses.replace(o, prices=Prices(currency=self._s.currency, source="snapshot", as_of=o.prices.as_of),
                                    available=False, availability_note=NO_USD_PRICE)
                for o in offers]

    def __init__(self, provider_id: str, settings: AlibabaSettings, api: Any,
                 snapshot: Callable[[], Snapshot] | None = None) -> None:
        super().__init__(provider_id, settings.pricing, settings.cache_ttl_s, snapshot=snapshot, logger=log)
        self._s = settings
        self._api = api
        self._types: live_offers.TtlCache[str, dict[str, dict[str, Any]]] = live_offers.TtlCache()

    # -- live ------------------------------------------------------------------------------------
    def gpu_types(self) -> dict[str, dict[str, Any]]:
        region = self._s.regions[0]
        return self._types.get_or_fetch("all", self._s.cache_ttl_s, lambda: {
            t["InstanceTypeId"]: t for t in pages(self._api, "ecs", "DescribeInstanceTypes", region,
                                                  ("InstanceTypes", "InstanceType"), MinimumGPUAmount=1,
                                                  MaxResults=100)
            if int(t.get("GPUAmount") or 0) > 0})

    def stock(self, region: str, instance_type: str | None = None) -> dict[str, tuple[list[str], list[str]]]:
        """type → (zones with stock, zones without) for pay-as-you-go in ``region``."""
        params: dict[str, Any] = {"DestinationResource": "InstanceType", "InstanceChargeType": "PostPaid"}
        if instance_type:
            params["InstanceType"] = instance_type
        body = self._api.ecs("DescribeAvailableResource", region, **params)
        out: dict[str, tuple[list[str], list[str]]] = {}
        for zone in (body.get("AvailableZones") or {}).get("AvailableZone") or []:
            zid = zone.get("ZoneId", "")
            for res in (zone.get("AvailableResources") or {}).get("AvailableResource") or []:
                if res.get("Type") != "InstanceType":
                    continue
                for sup in (res.get("SupportedResources") or {}).get("SupportedResource") or []:
                    ok = sup.get("StatusCategory") == "WithStock" and sup.get("Status") == "Available"
                    entry = out.setdefault(sup.get("Value", ""), ([], []))
                    (entry[0] if ok else entry[1]).append(zid)
        return out

    def _price(self, region: str, itype: str) -> tuple[float | None, str]:
        body = self._api.ecs("DescribePrice", region, ResourceType="instance", InstanceType=itype, PriceUnit="Hour",
                             SystemDisk={"Category": self._s.disk_category, "Size": 100})
        price = (body.get("PriceInfo") or {}).get("Price") or {}
        details = (price.get("DetailInfos") or {}).get("DetailInfo") or []
        compute = next((d.get("TradePrice") for d in details if d.get("Resource") == "instanceType"), None)
        value = compute if compute is not None else price.get("TradePrice")
        return (float(value) if value is not None else None), str(price.get("Currency") or self._s.currency)

    def _spot(self, region: str, itype: str) -> dict[str, float]:
        start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=3)
        body = self._api.ecs("DescribeSpotPriceHistory", region, InstanceType=itype, NetworkType="vpc",
                             StartTime=start.strftime("%Y-%m-%dT%H:%M:%SZ"))
        latest: dict[str, tuple[str, float]] = {}
        for point in (body.get("SpotPrices") or {}).get("SpotPriceType") or []:
            zone, ts = point.get("ZoneId", ""), point.get("Timestamp", "")
            if zone not in latest or ts >= latest[zone][0]:
                latest[zone] = (ts, float(point.get("SpotPrice") or 0))
        return {z: p for z, (_, p) in latest.items() if p > 0}

    def live(self, region: str) -> list[Offer]:
        types = self.gpu_types()
        stock = self.stock(region)
        names = sorted(t for t in stock if t in types)
        snap = self.snapshot()

        def priced(itype: str) -> tuple[str, float | None, str, dict[str, float]]:
            try:
                on_demand, currency = self._price(region, itype)
            except WorkbenchError as exc:
                row = snap.find(region, itype)
                log.info("DescribePrice %s in %s failed (%s)", itype, region, exc.message)
                # the catalog's price only where the site bills in its currency (CNY: the China site's list)
                usable = row is not None and row.currency == self._s.currency
                on_demand, currency = (row.on_demand, row.currency) if usable else (None, self._s.currency)
            try:
                spot = self._spot(region, itype)
            except WorkbenchError:
                spot = {}
            return itype, on_demand, currency, spot

        with ThreadPoolExecutor(max_workers=min(8, max(1, len(names))), thread_name_prefix="ali-prices") as pool:
            results = list(pool.map(priced, names))
        today = live_offers.today()
        out = []
        for itype, on_demand, currency, spot_by_zone in results:
            t = types[itype]
            with_stock, without = stock[itype]
            spot_zones = {z: p for z, p in spot_by_zone.items() if z in with_stock}
            spot = min(spot_zones.values()) if spot_zones else None
            if on_demand is None and spot is None:
                log.warning("no price for %s in %s: left out", itype, region)
                continue
            note = None
            if not with_stock:
                note = f"no stock in any zone of {region}"
            elif without:
                note = f"no stock in {', '.join(sorted(without))}"
            gpu = normalize_gpu_name(str(t.get("GPUSpec") or "")) or (str(t.get("GPUSpec") or "").split()[-1] or None)
            bandwidth = float(t.get("InstanceBandwidthRx") or 0) / 1e6
            out.append(Offer(
                provider=self.provider_id, region=region, instance_type=itype, gpu_model=gpu,
                gpu_count=int(t.get("GPUAmount") or 0), gpu_memory_gb=float(t.get("GPUMemorySize") or 0),
                vcpus=int(t.get("CpuCoreCount") or 0), memory_gb=float(t.get("MemorySize") or 0),
                network_gbps=bandwidth or None, rdma=False,
                prices=Prices(on_demand=on_demand, spot=spot, currency=currency, source=LIVE_SOURCE, as_of=today),
                available=bool(with_stock), availability_note=note,
                extra={"zones_with_stock": sorted(with_stock), "zones_without_stock": sorted(without),
                       "spot_by_zone": spot_zones, "family": t.get("InstanceTypeFamily", "")}))
        return out
