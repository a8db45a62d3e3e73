"""Per-machine telemetry buffers: numpy rings for the live plots, 1/min history in the store.

:class:`TelemetryHub` keeps, per machine and device, a numpy ring of the last
``RING_CAPACITY`` readings (:data:`COLUMNS`: time, util, memory used/total, temperature, power,
memory utilisation, power limit, SM clock and its maximum) for the live plots, and averages
each device per minute into ``Store.add_samples`` (the
``samples`` table; a utilisation that was never reported is stored as
:data:`NOT_REPORTED`, because the column is NOT NULL).  Readings come from
:mod:`workbench.core.telemetry.nvidia_smi`.

Threading: the hub is shared: channel threads add readings, the GUI's poll reads them; one
lock guards it, and each call holds it for microseconds.  Store writes happen
outside the lock.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from workbench.core.domain.models import GpuSample, HostSample
from workbench.core.telemetry.host import mean_sample
from workbench.core.telemetry.nvidia_smi import GpuProblem, Reading

RING_CAPACITY = 900  # 15 min at 1 Hz per device: enough for the GUI to catch up after a stall
MINUTE = 60.0
NOT_REPORTED = -1.0  # stored for a utilisation nvidia-smi never reported in that minute (MIG, [N/A])


# -- buffers ----------------------------------------------------------------------
SeriesKey = tuple[str, int, str]  # (kind, index, name), as the GUI's series use


#: ring columns: the reading's time and values, NaN where not reported
COLUMNS = ("ts", "util", "mem", "mem_total", "temperature", "power", "mem_util", "power_limit", "sm_clock",
           "sm_clock_max")


class _Minute:
    """Sums of one device's readings in the current minute (NaN readings are left out)."""

    __slots__ = ("sums", "counts", "util_min", "util_max", "mem_total", "power_limit")

    def __init__(self) -> None:
        self.sums = [0.0, 0.0, 0.0, 0.0, 0.0]  # util, mem, power, sm_clock, mem_util
        self.counts = [0, 0, 0, 0, 0]
        self.util_min, self.util_max = math.inf, -math.inf
        self.mem_total = 0.0
        self.power_limit = math.nan

    def add(self, r: Reading) -> None:
        for i, v in enumerate((r.util, r.mem_used, r.power, r.sm_clock, r.mem_util)):
            if v == v:  # not NaN
                self.sums[i] += v
                self.counts[i] += 1
        if r.util == r.util:
            self.util_min, self.util_max = min(self.util_min, r.util), max(self.util_max, r.util)
        if r.mem_total == r.mem_total:
            self.mem_total = r.mem_total
        if r.power_limit == r.power_limit:
            self.power_limit = r.power_limit

    def mean(self, i: int) -> float:
        return self.sums[i] / self.counts[i] if self.counts[i] else math.nan

    def sample(self, ts: float, r: Reading) -> GpuSample | None:
        """The minute's average (None when it holds no memory reading: nothing to store)."""
        if not self.counts[1]:
            return None
        util = self.mean(0)
        return GpuSample("", ts, r.index, NOT_REPORTED if util != util else util, self.mean(1), self.mem_total,
                         r.name, r.kind, power_w=self.mean(2), power_limit_w=self.power_limit,
                         sm_clock_mhz=self.mean(3), mem_util_percent=self.mean(4),
                         util_min=self.util_min if self.counts[0] else math.nan,
                         util_max=self.util_max if self.counts[0] else math.nan)


class DeviceRing:
    """The last ``capacity`` readings of one device: rows of :data:`COLUMNS`."""

    __slots__ = ("data", "head", "n", "minute", "acc")

    def __init__(self, capacity: int = RING_CAPACITY) -> None:
        self.data = np.empty((capacity, len(COLUMNS)), np.float64)
        self.head = 0
        self.n = 0
        self.minute = -1.0
        self.acc = _Minute()

    def add(self, ts: float, r: Reading) -> GpuSample | None:
        """Insert; returns the finished minute's average when ``ts`` starts a new minute."""
        self.data[self.head] = (ts, r.util, r.mem_used, r.mem_total, r.temperature, r.power, r.mem_util,
                                r.power_limit, r.sm_clock, r.sm_clock_max)
        self.head = (self.head + 1) % len(self.data)
        self.n = min(self.n + 1, len(self.data))
        minute = ts // MINUTE * MINUTE
        done = None
        if minute != self.minute:
            if self.minute >= 0:
                done = self.acc.sample(self.minute, r)
            self.minute = minute
            self.acc = _Minute()
        self.acc.add(r)
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
    host: list[HostSample] = field(default_factory=list)  # this minute's host readings
    host_minute: float = -1.0
    host_latest: HostSample | None = None


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
                    finished.append(dataclasses.replace(done, instance_id=instance_id))
                count += 1
            if count:
                m.updated, m.state = ts, "streaming"
                m.problems.pop("driver", None)
        if finished and self.store is not None:
            self.store.add_samples(finished)
        return count

    def add_host(self, instance_id: str, samples: Iterable[HostSample]) -> None:
        """Record host readings (CPU, memory, network, disk rates); minute averages go to the store."""
        finished: list[HostSample] = []
        with self._lock:
            m = self._machine(instance_id)
            for h in samples:
                minute = h.ts // MINUTE * MINUTE
                if minute != m.host_minute:
                    if m.host:
                        finished.append(mean_sample(m.host, m.host_minute))
                    m.host, m.host_minute = [], minute
                m.host.append(h)
                m.host_latest = h
        if finished and self.store is not None:
            self.store.add_host_samples(finished)

    def host_latest(self, instance_id: str) -> HostSample | None:
        """The newest host reading of a machine (None before the second block arrived)."""
        with self._lock:
            m = self._machines.get(instance_id)
            return m.host_latest if m is not None else None

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
            out.extend(GpuSample(instance_id, float(r[0]), index, float(r[1]), float(r[2]), float(r[3]), name, kind,
                             power_w=float(r[5]), power_limit_w=float(r[7]), sm_clock_mhz=float(r[8]),
                             mem_util_percent=float(r[6]))
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
                    out[key] = Reading(key[1], key[2], r[1], r[2], r[3], r[4], r[5], kind=key[0], mem_util=r[6],
                                       power_limit=r[7], sm_clock=r[8], sm_clock_max=r[9])
            return out

    def forget(self, instance_id: str) -> None:
        with self._lock:
            self._machines.pop(instance_id, None)
