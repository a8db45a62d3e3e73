"""What the controller machine of issue 33 costs per hour, all in: its machine, its OS disk, its public address.

The controller is the cheapest small CPU machine of a cloud (the catalog's rows with ``gpu_count`` 0 that
``resources/catalog/controller.json`` names for that cloud, x86_64 so it installs the app's own pinned
wheels).  Its machine price is the catalog's on-demand price (bundled, or the user's refreshed copy: the
newer wins, :func:`~workbench.core.providers.price_snapshot.load`); its disk and address prices come from
``controller.json``, where each figure names its public source and date.  A per-month price is turned into
an hourly one with the month length the pricing pages use (730 h, also in that file).

Prices stay in the cloud's currency (Alibaba's China-site list: CNY); nothing here converts them.

Pure and read-only; any thread.  Failure rules: :class:`NotFoundError` (with a hint) for a cloud that has
no controller entry or a region where some part has no published price; PluginError when the bundled files
are missing or malformed (a broken install).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.domain.errors import NotFoundError, PluginError
from workbench.core.providers import price_snapshot

#: what issue 33 aims at: the controller's all-in price per hour, in USD
TARGET_USD_PER_H = 0.02


@dataclass(frozen=True)
class CostPart:
    """One part of the controller's hourly cost: what it is, per hour, and where the figure comes from."""

    part: str  # "machine", "disk", "address"
    what: str  # "t3a.nano", "EBS gp3 root volume, 8 GB", …
    per_h: float
    source: str
    as_of: str  # a date, <=DATE (on or before), or "unknown" (price_snapshot's forms)

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part, "what": self.what, "per_h": self.per_h, "source": self.source,
                "as_of": self.as_of}


@dataclass(frozen=True)
class ControllerCost:
    """The controller's hourly cost in one region of one cloud, in ``currency`` (the cloud's price list's)."""

    provider: str
    region: str
    instance_type: str
    currency: str
    machine_per_h: float
    disk_gb: int
    disk_per_h: float
    address_per_h: float
    total_per_h: float
    as_of: str  # the oldest date of its parts ("unknown" when any part's date is unknown)
    sources: tuple[str, ...]
    details: tuple[CostPart, ...] = ()

    def parts(self) -> tuple[CostPart, ...]:
        """Machine, disk and address, each with its price per hour, source and date."""
        return self.details

    def meets_target(self) -> bool | None:
        """True when the all-in price is at most :data:`TARGET_USD_PER_H`; None when it is not in USD (the app
        has no exchange rate of its own: the user's setting converts it, see ``core.money.currency``)."""
        return None if self.currency != "USD" else self.total_per_h <= TARGET_USD_PER_H + 1e-12

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "region": self.region, "instance_type": self.instance_type,
                "currency": self.currency, "machine_per_h": self.machine_per_h, "disk_gb": self.disk_gb,
                "disk_per_h": self.disk_per_h, "address_per_h": self.address_per_h,
                "total_per_h": self.total_per_h, "as_of": self.as_of, "sources": list(self.sources),
                "parts": [p.to_json() for p in self.details]}


def parts_path() -> Path:
    """``resources/catalog/controller.json``: the controller's types, disk and address per cloud, with sources."""
    return price_snapshot.bundled_dir() / "controller.json"


@functools.lru_cache(maxsize=4)
def _read(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data.get("clouds"), dict) or not data.get("hours_per_month"):
            raise ValueError("it lacks 'clouds' or 'hours_per_month'")
        return data
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PluginError(f"the controller's price parts {path} cannot be read: {exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from None


def _entry(provider: str, path: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    data = _read(str(path or parts_path()))
    cloud = data["clouds"].get(provider)
    if cloud is None:
        known = ", ".join(sorted(data["clouds"]))
        raise NotFoundError(f"no controller machine is known for cloud {provider!r}",
                            hint=f"the controller runs on {known}")
    return data, cloud


def controller_instance_type(provider: str, region: str | None = None, *,
                             snapshot: price_snapshot.PriceSnapshot | None = None,
                             parts: Path | None = None) -> str:
    """The controller's instance type in ``region`` (default: the cloud's default region): the cheapest
    on-demand of the cloud's controller types the catalog prices there."""
    _, cloud = _entry(provider, parts)
    where = region or cloud["default_region"]
    return _cheapest(provider, where, cloud, snapshot).instance_type


def _cheapest(provider: str, region: str, cloud: dict[str, Any],
              snapshot: price_snapshot.PriceSnapshot | None) -> price_snapshot.PriceRow:
    snap = snapshot if snapshot is not None else price_snapshot.load(provider)
    wanted = {t.lower() for t in cloud["types"]}
    rows = [r for r in snap.region(region)
            if r.gpu_count == 0 and r.instance_type.lower() in wanted and r.on_demand is not None]
    if not rows:
        priced = sorted({r.region for r in snap.rows if r.gpu_count == 0 and r.instance_type.lower() in wanted})
        raise NotFoundError(f"the price catalog has no controller machine ({', '.join(cloud['types'])}) "
                            f"priced in {provider} region {region!r}",
                            hint=("priced in: " + ", ".join(priced)) if priced else
                            "run `workbench catalog update`, or see resources/catalog/sources/SOURCES.md")
    return min(rows, key=lambda r: (r.on_demand, r.instance_type))


def _regional(table: dict[str, float], region: str) -> float | None:
    value = table.get(region, table.get("*"))
    return None if value is None else float(value)


def controller_cost(provider: str, region: str | None = None, *,
                    snapshot: price_snapshot.PriceSnapshot | None = None,
                    parts: Path | None = None) -> ControllerCost:
    """The controller's all-in hourly cost on ``provider`` in ``region`` (default: the cloud's default region
    named in ``controller.json``).  ``snapshot`` / ``parts`` replace the catalog and the parts file (tests)."""
    data, cloud = _entry(provider, parts)
    where = region or cloud["default_region"]
    row = _cheapest(provider, where, cloud, snapshot)
    hours = float(data["hours_per_month"])
    disk, address = cloud["disk"], cloud["address"]
    gb = int(disk["gb"])
    if "per_gb_hour" in disk:
        rate = _regional(disk["per_gb_hour"], where)
        disk_h = None if rate is None else gb * rate
    elif "per_gb_month" in disk:
        rate = _regional(disk["per_gb_month"], where)
        disk_h = None if rate is None else gb * rate / hours
    else:
        monthly = _regional(disk["per_month_for_size"], where)
        disk_h = None if monthly is None else monthly / hours
    address_h = _regional(address["per_hour"], where)
    missing = [what for what, value in (("disk", disk_h), ("public address", address_h)) if value is None]
    if missing:
        raise NotFoundError(f"no published price of the controller's {' and '.join(missing)} in {provider} "
                            f"region {where!r}", hint=f"priced in: {', '.join(_priced_regions(cloud))}; the "
                            "figures and their sources are in resources/catalog/controller.json")
    for part in (disk, address):
        if part["currency"] != row.currency:
            raise PluginError(f"{parts or parts_path()}: the controller's {part['kind']} is priced in "
                              f"{part['currency']}, its machine in {row.currency} ({provider} {where})")
    od = row.detail("on_demand")
    details = (
        CostPart("machine", row.instance_type, float(row.on_demand or 0.0), od.source, od.as_of),
        CostPart("disk", f"{disk['kind']}, {gb} GB", round(float(disk_h or 0.0), 6), disk["source"], disk["as_of"]),
        CostPart("address", address["kind"], float(address_h or 0.0), address["source"], address["as_of"]),
    )
    oldest = min((p.as_of for p in details), key=price_snapshot.date_rank)
    return ControllerCost(
        provider=provider, region=where, instance_type=row.instance_type, currency=row.currency,
        machine_per_h=details[0].per_h, disk_gb=gb, disk_per_h=details[1].per_h, address_per_h=details[2].per_h,
        total_per_h=round(sum(p.per_h for p in details), 6), as_of=oldest,
        sources=tuple(dict.fromkeys(p.source for p in details)), details=details)


def _priced_regions(cloud: dict[str, Any]) -> list[str]:
    disk = cloud["disk"]
    table = disk.get("per_gb_hour") or disk.get("per_gb_month") or disk.get("per_month_for_size") or {}
    return sorted(r for r in table if r != "*")


def targets(providers: tuple[str, ...] = ("aws", "azure", "alibaba")) -> list[ControllerCost]:
    """Each cloud's controller cost in its default region (the bench's row, `controller` views)."""
    return [controller_cost(p) for p in providers]


__all__ = ["ControllerCost", "CostPart", "TARGET_USD_PER_H", "controller_cost", "controller_instance_type",
           "parts_path", "targets"]
