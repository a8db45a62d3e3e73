"""The store's telemetry tables: GPU samples (schema 1, widened in 3, 5 and 6) and host samples (schema 3).

Schema version 3 (:func:`migrate_3`) adds, for the utilization advisor, nullable columns to
``samples`` (power draw and limit, SM clock, memory utilisation, and the lowest and highest
utilisation inside a stored minute, which keep a sawtooth visible after averaging) and the
``host_samples`` table (CPU, memory, network and disk rates of a machine, per minute).
Schema version 5 (:func:`migrate_5`) adds each GPU's PCIe throughput (``nvidia-smi dmon -s t``,
MB/s, the minute's mean; rx is host → GPU).  Schema version 6 (:func:`migrate_6`) adds each GPU's NVLink
throughput summed over its links (``nvidia-smi nvlink -gt d``, MB/s over the minute; rx is what it received).
Rows stored before a version read back with NaN in its new fields.  NaN is stored as NULL.

:class:`TelemetryTables` is mixed into :class:`~workbench.core.store.database.Store` and uses its
locked ``_write``/``_query`` plumbing, so the store's threading and failure rules hold here too.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any, Sequence

from workbench.core.domain.models import GpuSample, HostSample

_SCHEMA_3 = (
    *(f"ALTER TABLE samples ADD COLUMN {col} REAL" for col in
      ("power_w", "power_limit_w", "sm_clock_mhz", "mem_util_percent", "util_min", "util_max")),
    # UNIQUE makes re-sending the same minute harmless (INSERT OR IGNORE), as for samples
    """CREATE TABLE host_samples (
        instance_id TEXT NOT NULL, ts REAL NOT NULL, cpu_percent REAL, cpus INTEGER NOT NULL DEFAULT 0,
        mem_used_mb REAL, mem_total_mb REAL, net_rx_bps REAL, net_tx_bps REAL, disk_read_bps REAL,
        UNIQUE (instance_id, ts))""",
)

_SCHEMA_5 = tuple(f"ALTER TABLE samples ADD COLUMN {col} REAL" for col in ("pcie_rx_mbps", "pcie_tx_mbps"))

_SCHEMA_6 = tuple(f"ALTER TABLE samples ADD COLUMN {col} REAL" for col in ("nvlink_rx_mbps", "nvlink_tx_mbps"))

_GPU_EXTRA = ("power_w", "power_limit_w", "sm_clock_mhz", "mem_util_percent", "util_min", "util_max",
              "pcie_rx_mbps", "pcie_tx_mbps", "nvlink_rx_mbps", "nvlink_tx_mbps")
_HOST = ("cpu_percent", "mem_used_mb", "mem_total_mb", "net_rx_bps", "net_tx_bps", "disk_read_bps")


def migrate_3(conn: sqlite3.Connection) -> None:
    """Version 2 → 3: telemetry for the advisor (see the module docstring)."""
    for stmt in _SCHEMA_3:
        conn.execute(stmt)


def migrate_5(conn: sqlite3.Connection) -> None:
    """Version 4 → 5: the GPUs' PCIe throughput (see the module docstring)."""
    for stmt in _SCHEMA_5:
        conn.execute(stmt)


def migrate_6(conn: sqlite3.Connection) -> None:
    """Version 5 → 6: the GPUs' NVLink throughput (see the module docstring)."""
    for stmt in _SCHEMA_6:
        conn.execute(stmt)


def _db(value: float) -> float | None:
    return None if value is None or value != value else float(value)


def _nan(value: Any) -> float:
    # the math.nan object itself: equal samples then compare and hash equal (NaN != NaN otherwise)
    return math.nan if value is None else float(value)


class TelemetryTables:
    """Store methods for GPU and host samples (mixed into Store)."""

    _write: Any  # provided by Store
    _query: Any

    # -- GPU samples ------------------------------------------------------------
    def add_samples(self, samples: Sequence[GpuSample]) -> None:
        """Store readings in one transaction; an exact repeat of a stored reading is ignored."""
        if not samples:
            return
        with self._write() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO samples (instance_id, ts, idx, util_percent, mem_used_mb, mem_total_mb, name,"
                f" kind, {', '.join(_GPU_EXTRA)}) VALUES ({', '.join('?' * (8 + len(_GPU_EXTRA)))})",
                [(s.instance_id, s.ts, s.index, s.util_percent, s.mem_used_mb, s.mem_total_mb, s.name, s.kind,
                  *(_db(getattr(s, c)) for c in _GPU_EXTRA)) for s in samples],
            )

    def samples(self, instance_id: str, since: float = 0.0) -> list[GpuSample]:
        """Readings of one instance with ``ts >= since``, oldest first."""
        rows = self._query("SELECT * FROM samples WHERE instance_id = ? AND ts >= ? ORDER BY ts, kind, idx",
                           (instance_id, since))
        return [GpuSample(instance_id=r["instance_id"], ts=r["ts"], index=r["idx"],
                          util_percent=r["util_percent"], mem_used_mb=r["mem_used_mb"],
                          mem_total_mb=r["mem_total_mb"], name=r["name"], kind=r["kind"],
                          **{c: _nan(r[c]) for c in _GPU_EXTRA}) for r in rows]

    # -- host samples -----------------------------------------------------------
    def add_host_samples(self, samples: Sequence[HostSample]) -> None:
        """Store per-minute host readings; a repeat of a stored minute is ignored."""
        if not samples:
            return
        with self._write() as conn:
            conn.executemany(
                f"INSERT OR IGNORE INTO host_samples (instance_id, ts, cpus, {', '.join(_HOST)})"
                f" VALUES ({', '.join('?' * (3 + len(_HOST)))})",
                [(s.instance_id, s.ts, int(s.cpus), *(_db(getattr(s, c)) for c in _HOST)) for s in samples],
            )

    def host_samples(self, instance_id: str, since: float = 0.0) -> list[HostSample]:
        """Host readings of one instance with ``ts >= since``, oldest first."""
        rows = self._query("SELECT * FROM host_samples WHERE instance_id = ? AND ts >= ? ORDER BY ts",
                           (instance_id, since))
        return [HostSample(instance_id=r["instance_id"], ts=r["ts"], cpus=r["cpus"],
                           **{c: _nan(r[c]) for c in _HOST}) for r in rows]
