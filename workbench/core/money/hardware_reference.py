"""Reference prices for buying GPU servers: the planner's "buy" row when the user has no quote of their own.

``resources/planner/hardware.csv`` (documented in its header) holds one row per GPU model: the price
of one server with ``gpu_count`` GPUs, its power draw, the electricity price and the yearly upkeep,
in the row's currency, with the date and the source of the figures.  ``planner.reference_hardware``
turns a row into the Hardware for N GPUs (whole servers: 12 GPUs of an 8-GPU server are two),
labelled as a reference, so ``workbench plan --gpu V100:8 --hours 2160`` shows a buy row offline
without any flag, and says where the figure comes from.

Read once per process (cached; read-only afterwards: safe from any thread).  A missing or broken file
means "no reference" (logged), never an error: the buy row then needs ``--buy-price``.
"""

from __future__ import annotations

import csv
import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from workbench.core import paths

log = logging.getLogger("workbench.planner")

COLUMNS = ("gpu_model", "gpu_count", "currency", "purchase_price", "power_kw", "kwh_price", "upkeep_per_year",
           "as_of", "source")


@dataclass(frozen=True)
class HardwareReference:
    """One server of ``gpu_count`` × ``gpu_model`` and what running it costs, with where the figures come from."""

    gpu_model: str
    gpu_count: int
    currency: str
    purchase_price: float
    power_kw: float
    kwh_price: float
    upkeep_per_year: float
    as_of: str
    source: str


def default_path() -> Path:
    return paths.resources_dir() / "planner" / "hardware.csv"


@functools.lru_cache(maxsize=4)
def load(path: Path | None = None) -> tuple[HardwareReference, ...]:
    path = path or default_path()
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
        out = []
        for row in csv.DictReader(lines):
            out.append(HardwareReference(
                gpu_model=row["gpu_model"].strip().upper(), gpu_count=int(row["gpu_count"]),
                currency=row["currency"].strip().upper(), purchase_price=float(row["purchase_price"]),
                power_kw=float(row.get("power_kw") or 0), kwh_price=float(row.get("kwh_price") or 0),
                upkeep_per_year=float(row.get("upkeep_per_year") or 0), as_of=row["as_of"].strip(),
                source=row["source"].strip()))
        return tuple(out)
    except (OSError, KeyError, ValueError, TypeError) as exc:
        log.warning("hardware reference prices %s unreadable: %s", path, exc)
        return ()


def reference_for(gpu_model: str, path: Path | None = None) -> HardwareReference | None:
    return next((r for r in load(path) if r.gpu_model == gpu_model.upper()), None)
