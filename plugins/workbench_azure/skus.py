"""GPU VM sizes from Azure resource SKUs, and vCPU quota from compute usages.

Resource SKUs say how many GPUs a size has and whether it has RDMA (InfiniBand),
but not which GPU: :func:`gpu_of` knows the GPU model and memory of each GPU
family from Microsoft's size documentation.  Sizes with a
``NotAvailableForSubscription`` location restriction are kept but marked
unavailable, with the reason; zone restrictions remove those zones.

Pure functions over SDK model objects (duck-typed, so unit tests may pass
simple stand-ins); no network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

#: quota family → (GPU model, GB per GPU)
FAMILY_GPUS = {
    "standardncasv3_t4family": ("T4", 16.0),
    "standardncadsa100v4family": ("A100", 80.0),
    "standardndasv4_a100family": ("A100", 40.0),
    "standardndamsv4_a100family": ("A100", 80.0),
    "standardndsh100v5family": ("H100", 80.0),
    "standardncadsh100v5family": ("H100", 94.0),
    "standardncsv3family": ("V100", 16.0),
    "standardndsv2family": ("V100", 32.0),
    "standardndsv3family": ("V100", 32.0),
}
#: when the family is unknown: size-name patterns, most specific first
NAME_GPUS = (
    (re.compile(r"_T4_v3$", re.I), "T4", 16.0),
    (re.compile(r"^Standard_ND96asr_v4$", re.I), "A100", 40.0),
    (re.compile(r"A100_v4$", re.I), "A100", 80.0),
    (re.compile(r"^Standard_NC\d+ads_H100_v5$", re.I), "H100", 94.0),
    (re.compile(r"H100_v5$", re.I), "H100", 80.0),
    (re.compile(r"H200_v5$", re.I), "H200", 141.0),
    (re.compile(r"MI300X_v5$", re.I), "MI300X", 192.0),
    (re.compile(r"^Standard_NC\d+r?s_v3$", re.I), "V100", 16.0),
    (re.compile(r"^Standard_ND40r?s_v2$", re.I), "V100", 32.0),
)


@dataclass(frozen=True)
class SizeInfo:
    """One VM size in one region, as the subscription sees it."""

    name: str
    region: str
    family: str
    vcpus: int
    memory_gb: float
    gpus: int
    gpu_model: str | None
    gpu_memory_gb: float
    rdma: bool = False
    accelerated_networking: bool = False
    premium_io: bool = False
    encryption_at_host: bool = False
    spot_capable: bool = False
    zones: tuple[str, ...] = ()
    unavailable: str | None = None  # why the subscription cannot use it here
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Quota:
    name: str
    current: int
    limit: int

    @property
    def free(self) -> int:
        return max(0, self.limit - self.current)


def text(value: Any) -> str:
    """An SDK field as plain text: enums (``str`` subclasses whose str() is 'Cls.MEMBER') give their value."""
    if value is None:
        return ""
    return str(getattr(value, "value", value))


def gpu_of(family: str, name: str) -> tuple[str | None, float]:
    found = FAMILY_GPUS.get(family.lower())
    if found:
        return found
    for pattern, model, memory in NAME_GPUS:
        if pattern.search(name):
            return model, memory
    return None, 0.0


def _caps(sku: Any) -> dict[str, str]:
    return {str(c.name): str(c.value) for c in (getattr(sku, "capabilities", None) or [])}


def _true(value: str | None) -> bool:
    return str(value or "").lower() == "true"


def parse_skus(skus: Iterable[Any], region: str) -> list[SizeInfo]:
    """The GPU VM sizes among ``skus`` (one region's resource SKU listing)."""
    out = []
    for sku in skus:
        if text(getattr(sku, "resource_type", "")).lower() != "virtualmachines":
            continue
        caps = _caps(sku)
        try:
            gpus = int(float(caps.get("GPUs", "0")))
        except ValueError:
            gpus = 0
        if gpus <= 0:
            continue
        name, family = str(sku.name), str(getattr(sku, "family", "") or "")
        zones: tuple[str, ...] = ()
        for info in getattr(sku, "location_info", None) or []:
            if str(getattr(info, "location", "")).lower() == region:
                zones = tuple(sorted(str(z) for z in (getattr(info, "zones", None) or [])))
        unavailable, notes = None, []
        for r in getattr(sku, "restrictions", None) or []:
            rtype = text(getattr(r, "type", ""))
            reason = text(getattr(r, "reason_code", "")) or "restricted"
            info = getattr(r, "restriction_info", None)
            if rtype == "Location":
                locs = [str(x).lower() for x in (getattr(info, "locations", None) or getattr(r, "values", None) or [])]
                if not locs or region in locs:
                    unavailable = f"not available to this subscription in {region} ({reason})"
            elif rtype == "Zone":
                blocked = {str(z) for z in (getattr(info, "zones", None) or [])}
                if blocked:
                    zones = tuple(z for z in zones if z not in blocked)
                    notes.append(f"zone(s) {', '.join(sorted(blocked))} restricted ({reason})")
        model, memory = gpu_of(family, name)
        try:
            vcpus = int(caps.get("vCPUs", "0"))
            ram = float(caps.get("MemoryGB", "0"))
        except ValueError:
            vcpus, ram = 0, 0.0
        out.append(SizeInfo(
            name=name, region=region, family=family, vcpus=vcpus, memory_gb=ram, gpus=gpus, gpu_model=model,
            gpu_memory_gb=memory, rdma=_true(caps.get("RdmaEnabled")),
            accelerated_networking=_true(caps.get("AcceleratedNetworkingEnabled")),
            premium_io=_true(caps.get("PremiumIO")), encryption_at_host=_true(caps.get("EncryptionAtHostSupported")),
            spot_capable=_true(caps.get("LowPriorityCapable")), zones=zones, unavailable=unavailable,
            notes=tuple(notes)))
    return out


def parse_usages(usages: Iterable[Any]) -> dict[str, Quota]:
    """Quota by name (lower case): the families, "cores", "lowprioritycores"."""
    out = {}
    for u in usages:
        name = str(getattr(getattr(u, "name", None), "value", "") or "")
        if name:
            out[name.lower()] = Quota(name, int(getattr(u, "current_value", 0) or 0), int(getattr(u, "limit", 0) or 0))
    return out


def quota_note(size: SizeInfo, quotas: dict[str, Quota], spot: bool = False) -> str | None:
    """Why the size cannot start now for lack of quota (None when it can)."""
    names = ["lowprioritycores"] if spot else [size.family.lower(), "cores"]
    for n in names:
        q = quotas.get(n)
        if q is None:
            continue
        if q.limit == 0:
            return f"no quota: {q.name} limit is 0 vCPUs in {size.region} — request a quota increase"
        if q.free < size.vcpus:
            return (f"quota: {q.name} {q.current}/{q.limit} vCPUs used, {size.vcpus} needed in {size.region} — "
                    "request a quota increase")
    return None
