"""Per-machine telemetry buffers: numpy rings for the live plots, 1/min history in the store.

:class:`TelemetryHub` keeps, per machine and device, a numpy ring of the last
``RING_CAPACITY`` readings (time, util, memory used/total, temperature, power) for
the live plots, and averages each device per minute into ``Store.add_samples`` (the
``samples`` table; a utilisation that was never reported is stored as
:data:`NOT_REPORTED`, because the column is NOT NULL).  Readings come from
:mod:`workbench.core.telemetry.nvidia_smi`.

Threading: the hub is shared: channel threads add readings, the GUI's poll reads them; one
lock guards it, and each call holds it for microseconds.  Store writes happen
outside the lock.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from workbench.core.domain.models import GpuSample
from workbench.core.telemetry.nvidia_smi import GpuProblem, Reading

RING_CAPACITY = 900  # 15 min at 1 Hz per device: enough for the GUI to catch up after a stall
MINUTE = 60.0
NOT_REPORTED = -1.0  # stored for a utilisation nvidia-smi never reported in that minute (MIG, [N/A])


# -- buffers ----------------------------------------------------------------------
SeriesKey = tuple[str, int, str]  # (kind, index, name), as the GUI's series use


class DeviceRing:
    """The last ``capacity`` readings of one device: rows of (ts, util, mem, mem_total, temp, power)."""

    __slots__ = ("data", "head", "n", "minute", "acc")

    def __init__(self, capacity: int = RING_CAPACITY) -> None:
        self.data = np.empty((capacity, 6), np.float64)
        self.head = 0
        self.n = 0
        self.minute = -1.0
        self.acc: list[float] = [0.0, 0.0, 0.0, 0.0, 0.0]  # util sum, util count, mem sum, count, total

    def add(self, ts: float, r: Reading) -> GpuSample | None:
        """Insert; returns the finished minute's average when ``ts`` starts a new minute."""
        self.data[self.head] = (ts, r.util, r.mem_used, r.mem_total, r.temperature, r.power)
        self.head = (self.head + 1) % len(self.data)
        self.n = min(self.n + 1, len(self.data))
        minute = ts // MINUTE * MINUTE
        done = None
        a = self.acc
        if minute != self.minute:
            if self.minute >= 0 and a[3]:
                done = GpuSample("", self.minute, r.index, a[0] / a[1] if a[1] else NOT_REPORTED,
                                 a[2] / a[3], a[4], r.name, r.kind)
            self.minute = minute
            a[:] = [0.0, 0.0, 0.0, 0.0, 0.0]
        if r.util == r.util:  # not NaN
            a[0] += r.util
            a[1] += 1
        if r.mem_used == r.mem_used:
            a[2] += r.mem_used
            a[3] += 1
        if r.mem_total == r.mem_total:
            a[4] = r.mem_total
        return done

    def rows(self, since: float = -math.inf) -> np.ndarray:
        """Readings newer than ``since``, oldest first."""
        if self.n < len(self.data):
            rows = self.data[: self.n]
        else:
            rows = np.concatenate((self.data[self.head:], self.data[: self.head]))
        return rows[rows[:, 0] > since]


@dataclass
class MachineTelemetry:
    rings: dict[SeriesKey, DeviceRing] = field(default_factory=dict)
    problems: dict[str, GpuProblem] = field(default_factory=dict)  # by device (or kind)
    state: str = "starting"  # starting | booting | driver | streaming | stopped | error
    message: str = ""
    updated: float = 0.0


class TelemetryHub:
    """All machines' telemetry (see the module docstring); thread-safe."""

    def __init__(self, store=None, capacity: int = RING_CAPACITY) -> None:
        self.store = store
        self.capacity = capacity
        self._machines: dict[str, MachineTelemetry] = {}
        self._lock = threading.Lock()

    def _machine(self, instance_id: str) -> MachineTelemetry:
        m = self._machines.get(instance_id)
        if m is None:
            m = self._machines[instance_id] = MachineTelemetry()
        return m

    def add(self, instance_id: str, readings: Iterable[Reading], ts: float | None = None) -> int:
        """Record readings taken at ``ts`` (default now); minute averages go to the store."""
        ts = time.time() if ts is None else ts
        finished: list[GpuSample] = []
        count = 0
        with self._lock:
            m = self._machine(instance_id)
            for r in readings:
                key = (r.kind, r.index, r.name)
                ring = m.rings.get(key)
                if ring is None:
                    ring = m.rings[key] = DeviceRing(self.capacity)
                done = ring.add(ts, r)
                if done is not None:
                    finished.append(GpuSample(instance_id, done.ts, done.index, done.util_percent,
                                              done.mem_used_mb, done.mem_total_mb, done.name, done.kind))
                count += 1
            if count:
                m.updated, m.state = ts, "streaming"
                m.problems.pop("driver", None)
        if finished and self.store is not None:
            self.store.add_samples(finished)
        return count

    def problem(self, instance_id: str, p: GpuProblem) -> None:
        with self._lock:
            self._machine(instance_id).problems[p.device or p.kind] = p

    def set_state(self, instance_id: str, state: str, message: str = "") -> None:
        with self._lock:
            m = self._machine(instance_id)
            m.state, m.message = state, message

    def has(self, instance_id: str) -> bool:
        with self._lock:
            return instance_id in self._machines

    def status(self, instance_id: str) -> tuple[str, str, list[GpuProblem]]:
        """(state, message, problems) of one machine."""
        with self._lock:
            m = self._machines.get(instance_id)
            if m is None:
                return ("none", "", [])
            return (m.state, m.message, list(m.problems.values()))

    def since(self, instance_id: str, since: float = -math.inf) -> list[GpuSample]:
        """Readings newer than ``since`` as GpuSamples (NaN where not reported), oldest first per device."""
        with self._lock:
            m = self._machines.get(instance_id)
            if m is None:
                return []
            parts = [(key, ring.rows(since)) for key, ring in m.rings.items()]
        out = []
        for (kind, index, name), rows in parts:
            out.extend(GpuSample(instance_id, float(r[0]), index, float(r[1]), float(r[2]), float(r[3]), name, kind)
                       for r in rows)
        return out

    def latest(self, instance_id: str) -> dict[SeriesKey, Reading]:
        """The newest reading of every device (with temperature and power)."""
        with self._lock:
            m = self._machines.get(instance_id)
            if m is None:
                return {}
            out = {}
            for key, ring in m.rings.items():
                if ring.n:
                    r = ring.data[(ring.head - 1) % len(ring.data)]
                    out[key] = Reading(key[1], key[2], r[1], r[2], r[3], r[4], r[5], kind=key[0])
            return out

    def forget(self, instance_id: str) -> None:
        with self._lock:
            self._machines.pop(instance_id, None)
