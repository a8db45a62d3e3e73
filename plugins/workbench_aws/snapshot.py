"""The bundled catalogue snapshot ``resources/catalog/aws.csv``: GPU shapes and prices per region.

Used when the profile says ``pricing=snapshot``, when the live calls fail, and
for types the live ``describe_instance_types`` does not list (the seed's
p3.2xlarge and p3.8xlarge are missing from some endpoints).  Offers priced
from it say so: their price source is "snapshot" with the snapshot's date.

Lines starting with ``#`` are comments.  Loaded once per process and cached
(read-only afterwards: safe from any thread).  A missing or malformed file is
a PluginError naming the file and line.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from workbench.core.domain.errors import PluginError
from workbench.core.paths import resources_dir

COLUMNS = ("instance_type", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb", "network_gbps", "efa",
           "on_demand_usd", "spot_usd", "region", "as_of")


@dataclass(frozen=True)
class SnapshotRow:
    instance_type: str
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    network_gbps: float | None
    efa: bool
    on_demand: float | None
    spot: float | None
    region: str
    as_of: str


class Snapshot:
    """Rows by (region, instance type); read-only."""

    def __init__(self, rows: list[SnapshotRow], path: Path) -> None:
        self.path = path
        self.rows = rows
        self._by_key = {(r.region, r.instance_type): r for r in rows}
        self._any: dict[str, SnapshotRow] = {}
        for r in rows:
            self._any.setdefault(r.instance_type, r)

    def region(self, region: str) -> list[SnapshotRow]:
        return [r for r in self.rows if r.region == region]

    def find(self, region: str, instance_type: str) -> SnapshotRow | None:
        return self._by_key.get((region, instance_type))

    def shape(self, instance_type: str) -> SnapshotRow | None:
        """Any row of ``instance_type`` (its shape is the same in every region)."""
        return self._any.get(instance_type)

    def regions(self) -> list[str]:
        return sorted({r.region for r in self.rows})

    @property
    def as_of(self) -> str:
        return max((r.as_of for r in self.rows), default="")


def default_path() -> Path:
    return resources_dir() / "catalog" / "aws.csv"


def _opt_float(value: str) -> float | None:
    value = value.strip()
    return float(value) if value else None


def parse(text: str, path: Path) -> Snapshot:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise PluginError(f"the AWS catalogue snapshot {path} is empty")
    reader = csv.DictReader([line for _, line in lines])
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise PluginError(f"the AWS catalogue snapshot {path} lacks the column(s) {', '.join(missing)}")
    rows = []
    for (lineno, _), rec in zip(lines[1:], reader):
        try:
            rows.append(SnapshotRow(
                instance_type=rec["instance_type"].strip(),
                gpu_model=rec["gpu_model"].strip() or None,
                gpu_count=int(rec["gpu_count"]),
                gpu_memory_gb=float(rec["gpu_memory_gb"] or 0),
                vcpus=int(rec["vcpus"]),
                memory_gb=float(rec["memory_gb"]),
                network_gbps=_opt_float(rec["network_gbps"]),
                efa=rec["efa"].strip().lower() == "true",
                on_demand=_opt_float(rec["on_demand_usd"]),
                spot=_opt_float(rec["spot_usd"]),
                region=rec["region"].strip(),
                as_of=rec["as_of"].strip(),
            ))
        except (ValueError, TypeError, AttributeError) as exc:
            raise PluginError(f"{path}:{lineno}: bad catalogue row ({exc})") from None
    return Snapshot(rows, path)


@functools.lru_cache(maxsize=4)
def load(path: Path | None = None) -> Snapshot:
    """The snapshot at ``path`` (default: the bundled one), parsed once."""
    path = path or default_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"cannot read the AWS catalogue snapshot {path}: {exc.strerror or exc}",
                          hint="reinstall the app: the file ships with it") from None
    return parse(text, path)
