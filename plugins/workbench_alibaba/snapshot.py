"""The bundled catalogue snapshot ``resources/catalog/alibaba.csv``: GPU instance types and prices per region.

Used without an account, offline, with ``pricing=snapshot``, or when the live calls fail; offers
priced from it say so (source "snapshot" and the row's date).  Rows keep their currency (CNY on the
China site).  Lines starting with ``#`` are comments.  Loaded once per process (read-only after).
A missing or malformed file is a PluginError naming the file and line.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from workbench.core.domain.errors import PluginError
from workbench.core.paths import resources_dir

COLUMNS = ("instance_type", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb", "network_gbps", "region",
           "currency", "on_demand", "spot", "as_of", "source")


@dataclass(frozen=True)
class Row:
    instance_type: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    network_gbps: float | None
    region: str
    currency: str
    on_demand: float | None
    spot: float | None
    as_of: str
    source: str


class Snapshot:
    def __init__(self, rows: list[Row], path: Path) -> None:
        self.rows, self.path = rows, path
        self._by_key = {(r.region, r.instance_type): r for r in rows}

    def find(self, region: str, instance_type: str) -> Row | None:
        return self._by_key.get((region, instance_type))

    def region(self, region: str) -> list[Row]:
        return [r for r in self.rows if r.region == region]

    def shape(self, instance_type: str) -> Row | None:
        return next((r for r in self.rows if r.instance_type == instance_type), None)


def _opt(raw: str) -> float | None:
    raw = raw.strip()
    return float(raw) if raw else None


def load(path: Path) -> Snapshot:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"the Alibaba Cloud catalogue snapshot {path} cannot be read: {exc.strerror or exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines or tuple(next(csv.reader([lines[0][1]]))) != COLUMNS:
        raise PluginError(f"{path}: expected the columns {','.join(COLUMNS)}")
    rows = []
    for n, line in lines[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(COLUMNS):
            raise PluginError(f"{path}:{n}: expected {len(COLUMNS)} values, found {len(values)}")
        v = dict(zip(COLUMNS, values))
        try:
            rows.append(Row(v["instance_type"], v["gpu_model"], int(v["gpu_count"]), float(v["gpu_memory_gb"]),
                            int(v["vcpus"]), float(v["memory_gb"]), _opt(v["network_gbps"]), v["region"],
                            v["currency"].upper(), _opt(v["on_demand"]), _opt(v["spot"]), v["as_of"], v["source"]))
        except ValueError as exc:
            raise PluginError(f"{path}:{n}: {exc}") from None
    return Snapshot(rows, path)


@functools.lru_cache(maxsize=1)
def bundled() -> Snapshot:
    return load(resources_dir() / "catalog" / "alibaba.csv")
