"""GPU telemetry from ``nvidia-smi``: parsing, per-machine numpy rings, 1/min history in the store.

Parsing
    :func:`parse_line` reads one line of
    ``nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw
    --format=csv,noheader,nounits``.  ``[N/A]``, ``[Not Supported]`` and other bracketed
    values become NaN (not zero: an unknown reading must not look like an idle GPU).  With
    MIG enabled a GPU's utilisation is ``[N/A]``; its slices come from ``nvidia-smi -L``
    (:func:`parse_mig_list`) and the default view's "MIG devices" table
    (:func:`parse_mig_table`) and are samples of kind ``"mig"``.  A GPU that fell off the
    bus ("Unable to determine the device handle … GPU is lost") or a driver that does not
    answer becomes a :class:`GpuProblem`, shown to the user, never an exception.

Buffers
    :class:`TelemetryHub` keeps, per machine and device, a numpy ring of the last
    ``RING_CAPACITY`` readings (time, util, memory used/total, temperature, power) for
    the live plots, and averages each device per minute into ``Store.add_samples`` (the
    ``samples`` table; a utilisation that was never reported is stored as
    :data:`NOT_REPORTED`, because the column is NOT NULL).

Threading
    The hub is shared: channel threads add readings, the GUI's poll reads them; one
    lock guards it, and each call holds it for microseconds.  Store writes happen
    outside the lock.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from .models import GpuSample

QUERY_FIELDS = ("index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total", "temperature.gpu",
                "power.draw")
RING_CAPACITY = 900  # 15 min at 1 Hz per device: enough for the GUI to catch up after a stall
MINUTE = 60.0
NOT_REPORTED = -1.0  # stored for a utilisation nvidia-smi never reported in that minute (MIG, [N/A])

_LOST = re.compile(r"Unable to determine the device handle for (?:GPU\s*)?(\S+?):?\s+(.*)", re.IGNORECASE)
_DRIVER = ("couldn't communicate with the nvidia driver", "nvidia-smi has failed", "driver/library version mismatch")
_MIG_LIST = re.compile(r"^\s*MIG\s+(\S+)\s+Device\s+(\d+):\s*\(UUID:\s*(MIG-[^)\s]+)\)")
_GPU_LIST = re.compile(r"^GPU\s+(\d+):\s*(.+?)\s*\(UUID:\s*(GPU-[^)\s]+)\)")
_MIG_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def query_command(period_ms: int = 1000) -> str:
    """The persistent stream: one CSV line per GPU every ``period_ms``."""
    return (f"nvidia-smi --query-gpu={','.join(QUERY_FIELDS)} --format=csv,noheader,nounits "
            f"-lms {int(period_ms)}")


@dataclass(frozen=True)
class Reading:
    """One GPU (or MIG slice) at one moment; NaN where nvidia-smi did not report a value."""

    index: int
    name: str
    util: float
    mem_used: float
    mem_total: float
    temperature: float = math.nan
    power: float = math.nan
    uuid: str = ""
    kind: str = "gpu"


@dataclass(frozen=True)
class GpuProblem:
    """Something wrong with a GPU or the driver: ``kind`` is "lost", "driver" or "no_gpu"."""

    kind: str
    message: str
    device: str = ""  # bus id or index when known


@dataclass(frozen=True)
class MigDevice:
    gpu: int
    device: int
    profile: str
    uuid: str
    ordinal: int  # position among the machine's MIG devices: the series index


def value(text: str) -> float:
    """A numeric field; NaN for ``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``, empty and the like."""
    t = text.strip()
    if not t or t.startswith("[") or t.upper() in ("N/A", "ERR!"):
        return math.nan
    try:
        return float(t)
    except ValueError:
        return math.nan


def parse_line(line: str) -> Reading | GpuProblem | None:
    """One line of the query stream (see the module docstring); None for blank or unknown lines."""
    text = line.strip()
    if not text:
        return None
    m = _LOST.match(text)
    if m:
        return GpuProblem("lost", text, m.group(1))
    low = text.lower()
    if any(s in low for s in _DRIVER):
        return GpuProblem("driver", text)
    if low.startswith("no devices were found"):
        return GpuProblem("no_gpu", text)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(QUERY_FIELDS) or not parts[0].isdigit():
        return None
    if any("gpu is lost" in p.lower() for p in parts):
        return GpuProblem("lost", f"GPU {parts[0]} is lost (fell off the bus)", parts[0])
    return Reading(index=int(parts[0]), uuid=parts[1], name=parts[2], util=value(parts[3]),
                   mem_used=value(parts[4]), mem_total=value(parts[5]), temperature=value(parts[6]),
                   power=value(parts[7]))


def parse_mig_list(text: str) -> list[MigDevice]:
    """MIG devices from ``nvidia-smi -L``, in order."""
    out: list[MigDevice] = []
    gpu = -1
    for line in text.splitlines():
        g = _GPU_LIST.match(line)
        if g:
            gpu = int(g.group(1))
            continue
        m = _MIG_LIST.match(line)
        if m and gpu >= 0:
            out.append(MigDevice(gpu, int(m.group(2)), m.group(1), m.group(3), len(out)))
    return out


def parse_mig_table(text: str) -> dict[tuple[int, int], tuple[float, float]]:
    """(gpu, MIG device) → (memory used, total) MiB from the default view's "MIG devices" table."""
    out: dict[tuple[int, int], tuple[float, float]] = {}
    section = False
    for line in text.splitlines():
        if "MIG devices:" in line:
            section = True
        elif "Processes:" in line:
            section = False
        elif section:
            m = _MIG_ROW.match(line)
            if m:
                out[(int(m.group(1)), int(m.group(4)))] = (float(m.group(5)), float(m.group(6)))
    return out


def mig_readings(devices: Sequence[MigDevice], table: dict[tuple[int, int], tuple[float, float]]) -> list[Reading]:
    """Readings of the MIG slices found in ``table`` (utilisation is not reported per slice)."""
    out = []
    for d in devices:
        mem = table.get((d.gpu, d.device))
        if mem is not None:
            out.append(Reading(index=d.ordinal, name=f"{d.profile} on GPU {d.gpu}", util=math.nan,
                               mem_used=mem[0], mem_total=mem[1], uuid=d.uuid, kind="mig"))
    return out


class LineBuffer:
    """Bytes from a stream → complete lines (a read may end mid-line)."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, data: bytes) -> list[str]:
        data = self._rest + data
        *lines, self._rest = data.split(b"\n")
        return [ln.decode("utf-8", "replace").rstrip("\r") for ln in lines]


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
