"""Per-machine telemetry buffers: numpy rings for the live plots, 1/min history in the store.

:class:`TelemetryHub` keeps, per machine and device, the last ``RING_CAPACITY`` readings
(:data:`COLUMNS`: time, util, memory used/total, temperature, power, memory utilisation, power
limit, SM clock and its maximum) for the live plots, and averages each device per minute into
``Store.add_samples`` (with the minute's PCIe means from ``add_pcie``, when the machine's
``nvidia-smi dmon`` gave them, and its NVLink means from ``add_nvlink``, when ``nvidia-smi nvlink``
did) (the
``samples`` table; a utilisation that was never reported is stored as
:data:`NOT_REPORTED`, because the column is NOT NULL).  Readings come from
:mod:`workbench.core.telemetry.nvidia_smi`.

Vectorised: the devices of one kind on one machine (its GPUs, or its MIG slices) share one
numpy ring of rounds × devices × columns (:class:`_Group`), so a round of the stream (one
:class:`ReadingBlock`) goes in with one array write and its minute sums with a few array
operations, however many GPUs the machine has; no Python object is made per reading.

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
from workbench.core.telemetry.dmon import PcieBlock, PcieMinutes
from workbench.core.telemetry.host import mean_sample
from workbench.core.telemetry.nvlink import NvlinkBlock, NvlinkMinutes
from workbench.core.telemetry.nvidia_smi import GpuProblem, Reading, ReadingBlock

RING_CAPACITY = 900  # 15 min at 1 Hz per device: enough for the GUI to catch up after a stall
MINUTE = 60.0
NOT_REPORTED = -1.0  # stored for a utilisation nvidia-smi never reported in that minute (MIG, [N/A])


# -- buffers ----------------------------------------------------------------------
SeriesKey = tuple[str, int, str]  # (kind, index, name), as the GUI's series use


#: ring columns: the reading's time and values, NaN where not reported
COLUMNS = ("ts", "util", "mem", "mem_total", "temperature", "power", "mem_util", "power_limit", "sm_clock",
           "sm_clock_max")


#: float32 seconds after the origin keep steps of at most 0.125 s up to 2**20 s (12 days); then the origin moves up
_REBASE_AFTER_S = 2.0 ** 20

_SUMMED = [0, 1, 4, 7, 5]  # value columns averaged per minute: util, mem, power, sm_clock, mem_util


class _Group:
    """The devices of one kind on one machine: a ring of ``capacity`` rounds × devices × COLUMNS.

    A device's row in a round it did not report in stays NaN (its time too, so no reading is
    made up).  Per device, the current minute's sums and counts (NaN left out), the range of
    the utilisation, and the last memory size and power limit reported.
    """

    __slots__ = ("capacity", "keys", "slot", "data", "origin", "head", "n", "minute", "sums", "counts", "umin",
                 "umax", "mem_total", "power_limit")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.keys: list[SeriesKey] = []
        self.slot: dict[SeriesKey, int] = {}
        # float32 halves the ring (64 machines × 8 GPUs × 15 min: 37 → 18 MB); the time column holds seconds
        # after ``origin`` (float64): steps of at most 0.125 s for 12 days, then the origin moves up (_rebase)
        self.data = np.full((capacity, 0, len(COLUMNS)), np.nan, np.float32)
        self.origin: float | None = None
        self.head = 0
        self.n = 0
        self.minute = -1.0
        self._new_minute(0)

    def _rebase(self, ts: float) -> None:
        """Move the time origin to ``ts`` (the first round, or every ~12 days), keeping stored times."""
        if self.origin is not None:
            self.data[:, :, 0] = (self.data[:, :, 0].astype(np.float64) + (self.origin - ts)).astype(np.float32)
        self.origin = ts

    def _new_minute(self, devices: int) -> None:
        self.sums = np.zeros((devices, len(_SUMMED)))
        self.counts = np.zeros((devices, len(_SUMMED)), np.int64)
        self.umin = np.full(devices, np.nan)
        self.umax = np.full(devices, np.nan)
        self.mem_total = np.zeros(devices)
        self.power_limit = np.full(devices, np.nan)

    def _slots(self, keys: list[SeriesKey]) -> np.ndarray:
        new = [k for k in dict.fromkeys(keys) if k not in self.slot]
        if new:
            for k in new:
                self.slot[k] = len(self.keys)
                self.keys.append(k)
            grow = len(new)
            self.data = np.concatenate([self.data, np.full((self.capacity, grow, len(COLUMNS)), np.nan, np.float32)],
                                       axis=1)
            self.sums = np.vstack([self.sums, np.zeros((grow, len(_SUMMED)))])
            self.counts = np.vstack([self.counts, np.zeros((grow, len(_SUMMED)), np.int64)])
            self.umin = np.r_[self.umin, np.full(grow, np.nan)]
            self.umax = np.r_[self.umax, np.full(grow, np.nan)]
            self.mem_total = np.r_[self.mem_total, np.zeros(grow)]
            self.power_limit = np.r_[self.power_limit, np.full(grow, np.nan)]
        return np.fromiter((self.slot[k] for k in keys), np.intp, len(keys))

    def add(self, ts: float, keys: list[SeriesKey], values: np.ndarray) -> list[GpuSample]:
        """Insert one round (``values``: a row of ``COLUMNS[1:]`` per key); returns the averages of the
        minute this round closed (when ``ts`` starts a new one)."""
        idx = self._slots(keys)
        minute = ts // MINUTE * MINUTE
        done: list[GpuSample] = []
        if minute != self.minute:
            if self.minute >= 0:
                done = self._averages()
            self.minute = minute
            self._new_minute(len(self.keys))
        if self.origin is None or ts - self.origin > _REBASE_AFTER_S:
            self._rebase(ts)
        row = self.data[self.head]
        row[:] = np.nan
        row[idx, 0] = ts - self.origin
        row[idx, 1:] = values
        self.head = (self.head + 1) % self.capacity
        self.n = min(self.n + 1, self.capacity)
        picked = values[:, _SUMMED]
        seen = ~np.isnan(picked)
        self.sums[idx] += np.where(seen, picked, 0.0)
        self.counts[idx] += seen
        util = values[:, 0]
        self.umin[idx] = np.fmin(self.umin[idx], util)  # fmin/fmax: a NaN reading leaves the range alone
        self.umax[idx] = np.fmax(self.umax[idx], util)
        self.mem_total[idx] = np.where(np.isnan(values[:, 2]), self.mem_total[idx], values[:, 2])
        self.power_limit[idx] = np.where(np.isnan(values[:, 6]), self.power_limit[idx], values[:, 6])
        return done

    def _averages(self) -> list[GpuSample]:
        """The closing minute's average per device that reported memory in it (nothing else to store)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            means = self.sums / self.counts  # NaN where nothing was reported
        out = []
        for i in np.flatnonzero(self.counts[:, 1]):
            kind, index, name = self.keys[i]
            util, mem, power, clock, mem_util = (float(v) for v in means[i])
            out.append(GpuSample("", self.minute, index, NOT_REPORTED if util != util else util, mem,
                                 float(self.mem_total[i]), name, kind, power_w=power,
                                 power_limit_w=float(self.power_limit[i]), sm_clock_mhz=clock,
                                 mem_util_percent=mem_util, util_min=float(self.umin[i]),
                                 util_max=float(self.umax[i])))
        return out

    def ordered(self) -> np.ndarray:
        """The rounds held, oldest first: (rounds, devices, COLUMNS)."""
        if self.n < self.capacity:
            return self.data[: self.n]
        return np.concatenate((self.data[self.head:], self.data[: self.head]))

    def rows(self, key: SeriesKey, since: float = -math.inf) -> np.ndarray:
        """One device's readings newer than ``since``, oldest first (rows of COLUMNS)."""
        rows = self.ordered()[:, self.slot[key]].astype(np.float64)
        rows[:, 0] += self.origin if self.origin is not None else 0.0
        return rows[rows[:, 0] > since]  # NaN times (rounds without this device) never pass


def _rounds(keys: list[SeriesKey], values: np.ndarray) -> list[tuple[list[SeriesKey], np.ndarray]]:
    """Readings cut into rounds in which each device appears once (a read that held two rounds of the
    stream gives each its own ring row, as two reads would)."""
    if len(set(keys)) == len(keys):
        return [(keys, values)] if keys else []
    out, start, seen = [], 0, set()
    for i, key in enumerate(keys):
        if key in seen:
            out.append((keys[start:i], values[start:i]))
            start, seen = i, set()
        seen.add(key)
    out.append((keys[start:], values[start:]))
    return out


def _values(readings: list[Reading]) -> np.ndarray:
    return np.array([(r.util, r.mem_used, r.mem_total, r.temperature, r.power, r.mem_util, r.power_limit,
                      r.sm_clock, r.sm_clock_max) for r in readings], np.float64).reshape(-1, len(COLUMNS) - 1)


@dataclass
class MachineTelemetry:
    groups: dict[str, _Group] = field(default_factory=dict)  # by kind: "gpu", "mig"
    problems: dict[str, GpuProblem] = field(default_factory=dict)  # by device (or kind)
    state: str = "starting"  # starting | booting | driver | streaming | stopped | error
    message: str = ""
    updated: float = 0.0
    host: list[HostSample] = field(default_factory=list)  # this minute's host readings
    host_minute: float = -1.0
    host_latest: HostSample | None = None
    pcie: PcieMinutes = field(default_factory=PcieMinutes)  # the GPUs' PCIe rates (dmon), per minute
    nvlink: NvlinkMinutes = field(default_factory=NvlinkMinutes)  # the GPUs' NVLink rates, per minute


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

    def add(self, instance_id: str, readings: Iterable[Reading] | ReadingBlock, ts: float | None = None) -> int:
        """Record readings taken at ``ts`` (default now); minute averages go to the store.

        ``readings``: a :class:`ReadingBlock` (the stream's parsed round: its arrays go into the
        ring as they are) or Reading objects (grouped by kind).
        """
        ts = time.time() if ts is None else ts
        if isinstance(readings, ReadingBlock):
            rounds = _rounds([("gpu", i, name) for i, name in zip(readings.index, readings.name)], readings.values)
        else:
            by_kind: dict[str, list[Reading]] = {}
            for r in readings:
                by_kind.setdefault(r.kind, []).append(r)
            rounds = [part for kind, rs in by_kind.items() for part in _rounds([(kind, r.index, r.name) for r in rs],
                                                                              _values(rs))]
        count = sum(len(keys) for keys, _ in rounds)
        finished: list[GpuSample] = []
        with self._lock:
            m = self._machine(instance_id)
            for keys, values in rounds:
                kind = keys[0][0]
                group = m.groups.get(kind)
                if group is None:
                    group = m.groups[kind] = _Group(self.capacity)
                done = group.add(ts, keys, values)
                if done and kind == "gpu":
                    done = [dataclasses.replace(s, pcie_rx_mbps=rx, pcie_tx_mbps=tx, nvlink_rx_mbps=nrx,
                                                nvlink_tx_mbps=ntx)
                            for s in done for rx, tx in [m.pcie.means(s.ts, s.index)]
                            for nrx, ntx in [m.nvlink.means(s.ts, s.index)]]
                    m.pcie.drop_until(done[0].ts)
                    m.nvlink.drop_until(done[0].ts)
                finished += [dataclasses.replace(s, instance_id=instance_id) for s in done]
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

    def add_pcie(self, instance_id: str, block: PcieBlock, ts: float | None = None) -> None:
        """Record PCIe rates (``nvidia-smi dmon -s t``) taken at ``ts``; they join the GPUs' stored minutes."""
        ts = time.time() if ts is None else ts
        with self._lock:
            self._machine(instance_id).pcie.add(block, ts)

    def pcie_latest(self, instance_id: str) -> dict[int, tuple[float, float]]:
        """GPU index → the newest (rx, tx) MB/s of a machine; empty when its driver gave none."""
        with self._lock:
            m = self._machines.get(instance_id)
            return dict(m.pcie.latest) if m is not None else {}

    def add_nvlink(self, instance_id: str, block: NvlinkBlock, ts: float | None = None) -> None:
        """Record NVLink rates (intervals of ``nvidia-smi nvlink -gt d``) that arrived at ``ts``; they join the
        GPUs' stored minutes."""
        ts = time.time() if ts is None else ts
        with self._lock:
            self._machine(instance_id).nvlink.add(block, ts)

    def nvlink_latest(self, instance_id: str) -> dict[int, tuple[float, float]]:
        """GPU index → the newest (rx, tx) MB/s over NVLink of a machine; empty when it has none."""
        with self._lock:
            m = self._machines.get(instance_id)
            return dict(m.nvlink.latest) if m is not None else {}

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
        out = []
        for (kind, index, name), rows in self.since_rows(instance_id, since).items():
            out.extend(GpuSample(instance_id, float(r[0]), index, float(r[1]), float(r[2]), float(r[3]), name, kind,
                                 power_w=float(r[5]), power_limit_w=float(r[7]), sm_clock_mhz=float(r[8]),
                                 mem_util_percent=float(r[6]))
                       for r in rows)
        return out

    def since_rows(self, instance_id: str, since: float = -math.inf) -> dict[SeriesKey, np.ndarray]:
        """Per device, its readings newer than ``since`` as rows of :data:`COLUMNS` (no object per reading:
        what the Monitor's poll hands to its plots)."""
        with self._lock:
            m = self._machines.get(instance_id)
            if m is None:
                return {}
            out = {}
            for group in m.groups.values():
                for key in group.keys:
                    rows = group.rows(key, since)
                    if len(rows):
                        out[key] = rows.copy()
            return out

    def latest(self, instance_id: str) -> dict[SeriesKey, Reading]:
        """The newest reading of every device (with temperature and power)."""
        with self._lock:
            m = self._machines.get(instance_id)
            if m is None:
                return {}
            out = {}
            for group in m.groups.values():
                for key in group.keys:
                    rows = group.rows(key)
                    if len(rows):
                        r = rows[-1]
                        out[key] = Reading(key[1], key[2], r[1], r[2], r[3], r[4], r[5], kind=key[0], mem_util=r[6],
                                           power_limit=r[7], sm_clock=r[8], sm_clock_max=r[9])
            return out

    def forget(self, instance_id: str) -> None:
        with self._lock:
            self._machines.pop(instance_id, None)
