"""The store's telemetry samples: GPU (and CPU) readings of an instance over time.

A repeated reading is harmless (the table's UNIQUE key, INSERT OR IGNORE).
Mixed into :class:`~workbench.core.store.database.Store` (see :mod:`.tables`).
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.domain.models import GpuSample
from workbench.core.store.tables import Tables


class SampleTables(Tables):
    """Store methods for telemetry samples."""

    def add_samples(self, samples: Sequence[GpuSample]) -> None:
        """Store readings in one transaction; an exact repeat of a stored reading is ignored."""
        if not samples:
            return
        with self._write() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO samples (instance_id, ts, idx, util_percent, mem_used_mb,"
                " mem_total_mb, name, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(s.instance_id, s.ts, s.index, s.util_percent, s.mem_used_mb, s.mem_total_mb,
                  s.name, s.kind) for s in samples],
            )

    def samples(self, instance_id: str, since: float = 0.0) -> list[GpuSample]:
        """Readings of one instance with ``ts >= since``, oldest first."""
        rows = self._query("SELECT * FROM samples WHERE instance_id = ? AND ts >= ? ORDER BY ts, kind, idx",
                           (instance_id, since))
        return [GpuSample(instance_id=r["instance_id"], ts=r["ts"], index=r["idx"],
                          util_percent=r["util_percent"], mem_used_mb=r["mem_used_mb"],
                          mem_total_mb=r["mem_total_mb"], name=r["name"], kind=r["kind"]) for r in rows]
