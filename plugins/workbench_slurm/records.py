"""What the provider remembers of each launch on this computer (one small JSON file per launch).

Slurm forgets a job a few minutes after it ended (``MinJobAge``), and before ``submit`` there is no job at all: the
record keeps what the queue cannot say — the launch's shape, when it was made, its Slurm job id once known, and its
end (state and exit code) once seen.  The cluster stays the truth while it knows the job: a job found in the queue
by its comment counts even without a record (a record lost, or a crash between ``sbatch`` and writing it).

Files under ``<data dir>/slurm/<profile>/<launch id>.json``, written atomically; any thread or process.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

#: how long an ended launch stays listed (its end state shown) before only the app's store remembers it
KEEP_ENDED_S = 7 * 24 * 3600


@dataclass(frozen=True)
class LaunchRecord:
    launch_id: str
    created_at: float
    partition: str
    nodes: int
    gpus_per_node: int
    gpu_model: str | None
    instance_type: str
    price_per_hour: float
    currency: str
    batch_id: str | None = None
    end_state: str | None = None  # Slurm's final JobState once seen (COMPLETED, TIMEOUT, CANCELLED…)
    exit_code: int | None = None
    ended_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.end_state is not None


class Records:
    def __init__(self, data_dir: Path, profile: str) -> None:
        self.root = data_dir / "slurm" / profile

    def _path(self, launch_id: str) -> Path:
        return self.root / f"{launch_id}.json"

    def read(self, launch_id: str) -> LaunchRecord | None:
        try:
            raw = json.loads(self._path(launch_id).read_text(encoding="utf-8"))
            return LaunchRecord(**raw)
        except (OSError, ValueError, TypeError):
            return None

    def write(self, rec: LaunchRecord) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self._path(rec.launch_id).with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(asdict(rec), sort_keys=True), encoding="utf-8")
        os.replace(tmp, self._path(rec.launch_id))

    def update(self, launch_id: str, **changes: Any) -> LaunchRecord | None:
        rec = self.read(launch_id)
        if rec is None:
            return None
        rec = replace(rec, **changes)
        self.write(rec)
        return rec

    def all(self, now: float | None = None) -> list[LaunchRecord]:
        """Every record still listed (ended ones for ``KEEP_ENDED_S``)."""
        now = time.time() if now is None else now
        out = []
        for p in sorted(self.root.glob("*.json")) if self.root.is_dir() else []:
            rec = self.read(p.stem)
            if rec is not None and not (rec.ended and now - (rec.ended_at or now) > KEEP_ENDED_S):
                out.append(rec)
        return out
