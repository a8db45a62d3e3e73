"""The bundled catalogue snapshot ``resources/catalog/azure.csv``: GPU VM sizes and prices per region.

Used when the profile says ``pricing=snapshot``, when the Retail Prices API fails or
has no price for a size, and (shapes only) when the subscription's size list cannot
be read.  Offers priced from it say so: price source "snapshot" with the row's date.

Lines starting with ``#`` are comments.  Loaded once per process and cached
(read-only afterwards: safe from any thread).  A missing or malformed file is a
PluginError naming the file and line.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from workbench.core.domain.errors import PluginError
from workbench.core.paths import resources_dir

COLUMNS = ("size", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb", "rdma", "region", "currency",
           "on_demand", "spot", "reserved_1y", "reserved_3y", "as_of")


@dataclass(frozen=True)
class SnapshotRow:
    size: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    rdma: bool
    region: str
    currency: str
    on_demand: float | None
    spot: float | None
    reserved_1y: float | None
    reserved_3y: float | None
    as_of: str


class Snapshot:
    """Rows by (region, size); read-only."""

    def __init__(self, rows: list[SnapshotRow], path: Path) -> None:
        self.path = path
        self.rows = rows
        self._by_key = {(r.region, r.size.lower()): r for r in rows}

    def find(self, region: str, size: str) -> SnapshotRow | None:
        return self._by_key.get((region, size.lower()))

    def region(self, region: str) -> list[SnapshotRow]:
        return [r for r in self.rows if r.region == region]

    def shape(self, size: str) -> SnapshotRow | None:
        return next((r for r in self.rows if r.size.lower() == size.lower()), None)


def _opt(raw: str) -> float | None:
    raw = raw.strip()
    return float(raw) if raw else None


def load(path: Path) -> Snapshot:
    """Parse ``path`` (PluginError naming file:line when it is malformed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"the Azure catalogue snapshot {path} cannot be read: {exc.strerror or exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise PluginError(f"{path}: empty catalogue snapshot")
    header = next(csv.reader([lines[0][1]]))
    if tuple(header) != COLUMNS:
        raise PluginError(f"{path}:{lines[0][0]}: expected columns {','.join(COLUMNS)}")
    rows = []
    for n, line in lines[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(COLUMNS):
            raise PluginError(f"{path}:{n}: expected {len(COLUMNS)} values, found {len(values)}")
        v = dict(zip(COLUMNS, values))
        try:
            rows.append(SnapshotRow(
                size=v["size"], gpu_model=v["gpu_model"], gpu_count=int(v["gpu_count"]),
                gpu_memory_gb=float(v["gpu_memory_gb"]), vcpus=int(v["vcpus"]), memory_gb=float(v["memory_gb"]),
                rdma=v["rdma"].strip().lower() == "true", region=v["region"], currency=v["currency"],
                on_demand=_opt(v["on_demand"]), spot=_opt(v["spot"]), reserved_1y=_opt(v["reserved_1y"]),
                reserved_3y=_opt(v["reserved_3y"]), as_of=v["as_of"]))
        except ValueError as exc:
            raise PluginError(f"{path}:{n}: {exc}") from None
    return Snapshot(rows, path)


@functools.lru_cache(maxsize=1)
def bundled() -> Snapshot:
    return load(resources_dir() / "catalog" / "azure.csv")
