"""EC2 vCPU quotas (Service Quotas) per instance family: which quota governs a type, and its value.

EC2 limits running instances by vCPUs per family group ("Running On-Demand P
instances", "All P Spot Instance Requests", …).  New accounts often have 0 for
P and G: the offer is then shown with a note naming the quota to raise.  A
quota that cannot be read (no ``servicequotas:GetServiceQuota`` permission,
service not reachable) is simply unknown: never an error.

Threading: :class:`QuotaReader` caches per region under a lock; safe from any thread.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from .codes import error_code

log = logging.getLogger("workbench.aws.quotas")


@dataclass(frozen=True)
class Quota:
    code: str
    name: str


# Public quota codes of the EC2 service in Service Quotas (on-demand, spot) per family group.
_GROUPS: tuple[tuple[str, Quota, Quota], ...] = (
    ("p", Quota("L-417A185B", "Running On-Demand P instances"), Quota("L-7212CCBC", "All P Spot Instance Requests")),
    ("g", Quota("L-DB2E81BA", "Running On-Demand G and VT instances"),
     Quota("L-3819A6DF", "All G and VT Spot Instance Requests")),
    ("vt", Quota("L-DB2E81BA", "Running On-Demand G and VT instances"),
     Quota("L-3819A6DF", "All G and VT Spot Instance Requests")),
    ("dl", Quota("L-6E869C2A", "Running On-Demand DL instances"), Quota("L-85EED4F7", "All DL Spot Instance Requests")),
    ("inf", Quota("L-1945791B", "Running On-Demand Inf instances"),
     Quota("L-B5D1601B", "All Inf Spot Instance Requests")),
    ("trn", Quota("L-2C3B7624", "Running On-Demand Trn instances"),
     Quota("L-6B0D517C", "All Trn Spot Instance Requests")),
)
_STANDARD = (Quota("L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"),
             Quota("L-34B43A08", "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests"))


def _group(instance_type: str) -> tuple[Quota, Quota]:
    family = re.match(r"[a-z]+", instance_type.lower())
    letters = family.group(0) if family else ""
    for prefix, on_demand, spot in sorted(_GROUPS, key=lambda g: -len(g[0])):
        if letters == prefix or (len(prefix) == 1 and letters.startswith(prefix) and not letters.startswith(
                ("dl", "inf", "trn", "vt"))):
            return on_demand, spot
    return _STANDARD


def quota_for(instance_type: str, spot: bool = False) -> Quota:
    """The vCPU quota that limits ``instance_type`` (on-demand or spot)."""
    on_demand, spot_quota = _group(instance_type)
    return spot_quota if spot else on_demand


class QuotaReader:
    """Reads quota values through ``client_for(region)`` (a service-quotas client), cached for ``ttl`` s."""

    def __init__(self, client_for: Callable[[str], Any], ttl: float) -> None:
        self._client_for = client_for
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[float, float | None]] = {}
        self._unreadable: dict[str, float] = {}  # region → when reading failed (don't ask again soon)

    def value(self, region: str, quota: Quota) -> float | None:
        """The applied value in vCPUs, or None when it cannot be read (never raises)."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get((region, quota.code))
            if hit is not None and now - hit[0] < self._ttl:
                return hit[1]
            failed = self._unreadable.get(region)
            if failed is not None and now - failed < self._ttl:
                return None
        value: float | None = None
        try:
            answer = self._client_for(region).get_service_quota(ServiceCode="ec2", QuotaCode=quota.code)
            value = float(answer["Quota"]["Value"])
        except Exception as exc:  # noqa: BLE001 - missing permission / not reachable: unknown, not an error
            code = error_code(exc)
            log.info("quota %s in %s unreadable (%s)", quota.code, region, code or type(exc).__name__)
            with self._lock:
                if code != "NoSuchResourceException":  # a region-wide failure: stop asking for a while
                    self._unreadable[region] = now
                self._cache[(region, quota.code)] = (now, None)
            return None
        with self._lock:
            self._cache[(region, quota.code)] = (now, value)
        return value


def availability(vcpus: int, on_demand: float | None, spot: float | None, od_quota: Quota,
                 spot_quota: Quota) -> tuple[bool, str | None]:
    """(available, note) for a machine of ``vcpus`` given the two quota values (None = unknown)."""
    od_ok = on_demand is None or on_demand >= vcpus
    spot_ok = spot is None or spot >= vcpus
    if od_ok and spot_ok:
        if on_demand is None:
            return True, None
        return True, f"quota: {on_demand:g} vCPUs ({od_quota.name})"
    if not od_ok and not spot_ok:
        return False, (f"no quota: '{od_quota.name}' is {on_demand:g} vCPUs, needs {vcpus}; request an increase "
                       f"(ec2 {od_quota.code})")
    if not od_ok:
        return True, f"spot only: '{od_quota.name}' is {on_demand:g} vCPUs, needs {vcpus} (ec2 {od_quota.code})"
    return True, f"on-demand only: '{spot_quota.name}' is {spot:g} vCPUs, needs {vcpus} (ec2 {spot_quota.code})"
