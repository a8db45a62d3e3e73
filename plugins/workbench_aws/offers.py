"""GPU offers per region: live shapes and prices, the bundled snapshot as fallback, quota notes.

For one region:

1. Shapes: ``describe_instance_types`` for the GPU families (GpuInfo: model,
   count, memory; NetworkInfo: bandwidth, EFA), merged with the snapshot's rows
   so types an endpoint does not list (p3.2xlarge, p3.8xlarge) are still offered.
2. Prices: the Price List API (on-demand, 1- and 3-year reserved) and the spot
   price history; whatever is missing comes from the snapshot, and the offer's
   price source says which (``Prices.source``, ``Prices.as_of``).
3. Quotas: the vCPU quota of the family (Service Quotas), when readable.

``pricing=snapshot`` never calls AWS for offers; ``pricing=live`` raises instead
of falling back; ``auto`` (default) falls back and notes why in ``extra`` (the kit's
:class:`~workbench.core.providers.live_offers.OfferBook`: its ``fall_back`` for each piece,
its cache for the live offers of a region).  Offers without any price are dropped
(nothing can be costed on them).

Threading: :class:`OfferBook` caches per region (``cache_ttl_s``) under a lock;
the network calls happen outside it, so two threads may refresh the same
region at once (harmless).  Called from the provider's pool, one thread per region.
"""

from __future__ import annotations

import datetime
import logging
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

from workbench.core.domain.gpus import GPU_MODELS, normalize_gpu_name
from workbench.core.domain.models import Offer, PriceDetail, Prices
from workbench.core.providers import live_offers
from workbench.core.providers.price_snapshot import CPU_ONLY
from workbench.core.providers.price_snapshot import PriceSnapshot as Snapshot

from . import pricing, quotas
from .errors import translate
from .clients import Clients
from .settings import AwsSettings

log = logging.getLogger("workbench.aws.offers")


@dataclass(frozen=True)
class Shape:
    instance_type: str
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    network_gbps: float | None
    efa: bool
    source: str  # "live" or "snapshot"


def nominal_gpu_memory(model: str | None, mib: float) -> float:
    """GiB as the vendor sells it: 22888 MiB of an A10G is its 24 GB; unknown models keep the measured value."""
    gib = mib / 1024
    sizes = GPU_MODELS[model].memory_gb if model in GPU_MODELS else ()
    for size in sorted(sizes):
        if gib * 0.999 <= size <= gib * 1.12:
            return float(size)
    return round(gib, 1)


def _network_gbps(info: dict[str, Any]) -> float | None:
    cards = info.get("NetworkCards") or []
    peak = sum(float(c.get("PeakBandwidthInGbps") or 0) for c in cards)
    if peak > 0:
        return peak
    text = str(info.get("NetworkPerformance", ""))
    m = re.search(r"(?:(\d+)x\s*)?(\d+(?:\.\d+)?)\s*Gigabit", text)
    if m:
        return float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1)
    return None


def shape_from_type(it: dict[str, Any], cpu_ok: bool = False) -> Shape | None:
    """One describe_instance_types entry → Shape; None for a type without GPUs unless ``cpu_ok`` (the catalog's
    small CPU types, the controller's)."""
    gpus = (it.get("GpuInfo") or {}).get("Gpus") or []
    if not gpus and not cpu_ok:
        return None
    first = gpus[0] if gpus else {}
    model = normalize_gpu_name(str(first.get("Name", ""))) or str(first.get("Name") or "") or None
    return Shape(
        instance_type=it["InstanceType"],
        gpu_model=model,
        gpu_count=sum(int(g.get("Count") or 0) for g in gpus),
        gpu_memory_gb=nominal_gpu_memory(model, float((first.get("MemoryInfo") or {}).get("SizeInMiB") or 0)),
        vcpus=int((it.get("VCpuInfo") or {}).get("DefaultVCpus") or 0),
        memory_gb=round(float((it.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / 1024, 1),
        network_gbps=_network_gbps(it.get("NetworkInfo") or {}),
        efa=bool((it.get("NetworkInfo") or {}).get("EfaSupported")),
        source="live",
    )


def live_shapes(ec2: Any, families: tuple[str, ...], cpu_types: tuple[str, ...] = ()) -> dict[str, Shape]:
    """GPU shapes the region lists for ``families`` (paginated describe_instance_types), plus the CPU types
    ``cpu_types`` (the catalog's rows without a GPU: the controller's small machines) where it lists them."""
    found: dict[str, Shape] = {}
    paginator = ec2.get_paginator("describe_instance_types")
    filters = [{"Name": "instance-type", "Values": [f"{f}.*" for f in families]}]
    for page in paginator.paginate(Filters=filters, PaginationConfig={"PageSize": 100}):
        for it in page.get("InstanceTypes") or []:
            shape = shape_from_type(it)
            if shape is not None:
                found[shape.instance_type] = shape
    if cpu_types:
        cpu_filter = [{"Name": "instance-type", "Values": list(cpu_types)}]
        for page in paginator.paginate(Filters=cpu_filter, PaginationConfig={"PageSize": 100}):
            for it in page.get("InstanceTypes") or []:
                shape = shape_from_type(it, cpu_ok=True)
                if shape is not None:
                    found[shape.instance_type] = shape
    return found


class OfferBook(live_offers.OfferBook):
    """Builds and caches the offers of one profile, region by region (see the module doc).

    The region's offers (``region``, the kit's) are not in any order (the catalog ranks them).
    """

    def __init__(self, provider_id: str, settings: AwsSettings, clients: Clients,
                 snapshot: Callable[[], Snapshot] | None, quota_reader: quotas.QuotaReader,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(provider_id, settings.pricing, settings.cache_ttl_s, snapshot=snapshot, clock=clock,
                         logger=log)
        self._settings = settings
        self._clients = clients
        self._quotas = quota_reader
        self._live_prices: live_offers.TtlCache[str, dict[str, pricing.ListPrice]] = live_offers.TtlCache(clock)

    def invalidate(self) -> None:
        super().invalidate()
        self._live_prices.clear()

    def live(self, region: str) -> list[Offer]:
        """Live shapes and prices, each piece that fails replaced by the snapshot's (see the module doc)."""
        return self._build(region, live=True)

    def catalog_offers(self, region: str, why: str | None = None) -> list[Offer]:
        """The snapshot's shapes and prices of the profile's families, made as live ones are (no AWS call)."""
        return self._build(region, live=False, notes={"offers": why} if why else None)

    # -- building ------------------------------------------------------------------------
    def _fail(self, exc: BaseException, what: str, region: str, service: str, operation: str) -> str:
        """The reason a live piece is missing (logged); raised instead in ``pricing=live``."""
        err = translate(exc, what, service=service, operation=operation, region=region,
                        secrets=self._clients.secret_values())
        return self.fall_back(err, what, region)

    def _build(self, region: str, live: bool, notes: dict[str, str] | None = None) -> list[Offer]:
        snap = self.snapshot()
        notes = dict(notes or {})
        shapes: dict[str, Shape] = {}
        cpu_types = tuple(sorted(r.instance_type for r in snap.region(region) if r.gpu_count == 0))
        if live:
            try:
                shapes = live_shapes(self._clients.client("ec2", region), self._settings.families, cpu_types)
            except Exception as exc:  # noqa: BLE001 - snapshot fallback (or raised in live mode)
                notes["shapes"] = self._fail(exc, "listing GPU instance types", region, "ec2",
                                             "DescribeInstanceTypes")
                live = False  # the region does not answer: no point asking for its prices
        for row in snap.region(region):
            wanted = self._family_wanted(row.instance_type) or row.gpu_count == 0  # the controller's CPU types
            if row.instance_type not in shapes and wanted:
                shapes[row.instance_type] = Shape(row.instance_type, row.gpu_model, row.gpu_count, row.gpu_memory_gb,
                                                  row.vcpus, row.memory_gb, row.network_gbps, row.rdma, "snapshot")
        types = sorted(shapes)
        list_prices: dict[str, pricing.ListPrice] = {}
        spot: dict[str, dict[str, float]] = {}
        if live and types:
            list_prices = self._list_prices(region, notes)
            try:
                spot = pricing.fetch_spot_prices(self._clients.client("ec2", region), types)
            except Exception as exc:  # noqa: BLE001
                notes["spot"] = self._fail(exc, "reading spot prices", region, "ec2",
                                           "DescribeSpotPriceHistory")
        offers = []
        for itype in types:
            offer = self._offer(region, shapes[itype], snap, list_prices.get(itype), spot.get(itype) or {}, notes,
                                live)
            if offer is not None:
                offers.append(offer)
        log.info("%d AWS offers in %s (%d live shapes, %d live prices)", len(offers), region,
                 sum(1 for s in shapes.values() if s.source == "live"), len(list_prices))
        return offers

    def _family_wanted(self, instance_type: str) -> bool:
        return instance_type.split(".")[0] in self._settings.families

    def _list_prices(self, region: str, notes: dict[str, str]) -> dict[str, pricing.ListPrice]:
        """Price List prices of the region's GPU types (cached for ``cache_ttl_s``); {} when it fails."""
        hit = self._live_prices.get(region, self.cache_ttl_s)
        if hit is not None:
            return hit
        try:
            found = pricing.fetch_list_prices(self._clients.client("pricing", pricing.PRICING_REGION), region)
        except Exception as exc:  # noqa: BLE001 - snapshot fallback (or raised in live mode)
            notes["prices"] = self._fail(exc, "reading the AWS Price List", region, "pricing", "GetProducts")
            return {}
        return self._live_prices.put(region, found)

    def _offer(self, region: str, shape: Shape, snap: Snapshot, listed: pricing.ListPrice | None,
               spot_by_az: dict[str, float], notes: dict[str, str], live: bool) -> Offer | None:
        row = snap.find(region, shape.instance_type)
        sources: list[str] = []
        details: dict[str, PriceDetail] = {}  # a price from the catalog keeps its own source, date and basis

        def from_catalog(term: str) -> float | None:
            value = getattr(row, term) if row is not None else None
            if value is not None:
                details[term] = row.detail(term)  # type: ignore[union-attr]
            return value

        on_demand = listed.on_demand if listed else None
        if on_demand is not None:
            sources.append(pricing.LIVE_SOURCE)
        elif row is not None and row.on_demand is not None:
            on_demand = from_catalog("on_demand")
            sources.append(pricing.SNAPSHOT_SOURCE)
        spot = min(spot_by_az.values()) if spot_by_az else None
        if spot is not None:
            sources.append(pricing.SPOT_SOURCE)
        elif row is not None and row.spot is not None:
            spot = from_catalog("spot")
            if pricing.SNAPSHOT_SOURCE not in sources:
                sources.append(("spot: " if sources else "") + pricing.SNAPSHOT_SOURCE)
        # committed terms: the Price List's where it has them, else the catalog's (published or estimated, each
        # labelled by its basis), so a plan made with an AWS account still compares them
        terms = {t: (getattr(listed, t, None) if listed else None) for t in
                 ("reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y")}
        terms = {t: v if v is not None else from_catalog(t) for t, v in terms.items()}
        if on_demand is None and spot is None:
            log.debug("no price for %s in %s: not offered", shape.instance_type, region)
            return None
        only_snapshot = all(pricing.SNAPSHOT_SOURCE in s for s in sources)
        fell_back = only_snapshot and self._settings.pricing != "snapshot"
        source = "; ".join(sources) + (" (live prices unavailable)" if fell_back and notes else "")
        as_of = row.as_of if only_snapshot and row is not None else live_offers.today()
        available, note, quota_extra = self._quota(region, shape) if live else (True, None, {})
        extra: dict[str, Any] = {"shape_source": shape.source, "quota": quota_extra,
                                 "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        if shape.gpu_count == 0:
            extra[CPU_ONLY] = True  # a small CPU machine: offered only to a job that asks for no GPU
        if spot_by_az:
            extra["spot_by_az"] = dict(spot_by_az)
        if row is not None:
            extra["snapshot_as_of"] = row.as_of
        if notes:
            extra["live_errors"] = dict(notes)
        return Offer(
            provider=self.provider_id, region=region, instance_type=shape.instance_type, gpu_model=shape.gpu_model,
            gpu_count=shape.gpu_count, gpu_memory_gb=shape.gpu_memory_gb, vcpus=shape.vcpus,
            memory_gb=shape.memory_gb,
            prices=Prices(on_demand=on_demand, spot=spot, **terms, currency="USD", source=source, as_of=as_of,
                          details=details),
            network_gbps=shape.network_gbps, rdma=shape.efa, available=available, availability_note=note,
            extra=extra,
        )

    def _quota(self, region: str, shape: Shape) -> tuple[bool, str | None, dict[str, Any]]:
        od_q, spot_q = quotas.quota_for(shape.instance_type), quotas.quota_for(shape.instance_type, spot=True)
        od = self._quotas.value(region, od_q)
        sp = self._quotas.value(region, spot_q) if od is not None else None
        available, note = quotas.availability(shape.vcpus, od, sp, od_q, spot_q)
        info = {"on_demand": {"code": od_q.code, "name": od_q.name, "vcpus": od},
                "spot": {"code": spot_q.code, "name": spot_q.name, "vcpus": sp}}
        return available, note, info
