"""A run's telemetry as arrays, whatever it came from: the store (a launch) or an nvidia-smi log.

A :class:`Trace` holds one :class:`GpuTrace` per GPU of every node, one :class:`HostTrace` per
node (CPU, network, disk; empty for a log), and :class:`RunInfo` (what the run paid and on what
machine).  Values are float64 arrays aligned with their ``t`` (POSIX seconds); NaN marks a value
the source did not report, never zero (an unknown reading must not look like an idle GPU).
Stored samples are minute averages that carry the minute's lowest and highest utilization
(``util_min``/``util_max``); a raw log has them equal to ``util``.

:func:`trace_from_store` reads one launch (blocks on SQLite: call it on a worker in the GUI).
Everything else is pure and safe on any thread.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from workbench.core.domain.errors import NotFoundError
from workbench.core.domain.gpus import normalize_gpu_name
from workbench.core.domain.models import GpuSample, HostSample, Instance

NOT_REPORTED = -1.0  # the store's value for a utilization never reported in a minute (see hub)


def _arr(values: Sequence[float]) -> np.ndarray:
    return np.asarray(values, np.float64)


@dataclass(frozen=True, eq=False)
class GpuTrace:
    """One GPU of one node over the run, oldest first."""

    node: str  # the instance id ('' for a log of one machine)
    index: int
    name: str  # as the driver reports it
    t: np.ndarray
    util: np.ndarray  # %
    mem_used: np.ndarray  # MiB
    mem_total: float  # MiB (NaN when unknown)
    power: np.ndarray  # W
    power_limit: np.ndarray  # W
    sm_clock: np.ndarray  # MHz
    mem_util: np.ndarray  # %
    util_min: np.ndarray  # lowest utilization inside each sample's span
    util_max: np.ndarray
    pcie_rx: np.ndarray | None = None  # MB/s host → GPU (nvidia-smi dmon -s t); all NaN when not recorded
    pcie_tx: np.ndarray | None = None  # MB/s GPU → host
    nvlink_rx: np.ndarray | None = None  # MB/s received over all its NVLinks (nvidia-smi nvlink -gt d); NaN: none
    nvlink_tx: np.ndarray | None = None  # MB/s sent

    def __post_init__(self) -> None:
        for name in ("pcie_rx", "pcie_tx", "nvlink_rx", "nvlink_tx"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full(self.t.size, math.nan))

    @property
    def model(self) -> str | None:
        return normalize_gpu_name(self.name) if self.name else None

    @property
    def label(self) -> str:
        return f"{self.node}/GPU {self.index}" if self.node else f"GPU {self.index}"

    @classmethod
    def build(cls, node: str, index: int, name: str, t: Sequence[float], util: Sequence[float],
              mem_used: Sequence[float], mem_total: float, power: Sequence[float] | None = None,
              power_limit: Sequence[float] | None = None, sm_clock: Sequence[float] | None = None,
              mem_util: Sequence[float] | None = None, util_min: Sequence[float] | None = None,
              util_max: Sequence[float] | None = None, pcie_rx: Sequence[float] | None = None,
              pcie_tx: Sequence[float] | None = None, nvlink_rx: Sequence[float] | None = None,
              nvlink_tx: Sequence[float] | None = None) -> "GpuTrace":
        """Arrays from sequences; a series not given is all NaN; min/max default to ``util``."""
        n = len(t)
        nan = np.full(n, math.nan)

        def col(v: Sequence[float] | None) -> np.ndarray:
            return nan.copy() if v is None else _arr(v)

        u = _arr(util)
        return cls(node, index, name, _arr(t), u, _arr(mem_used), float(mem_total), col(power), col(power_limit),
                   col(sm_clock), col(mem_util), u.copy() if util_min is None else _arr(util_min),
                   u.copy() if util_max is None else _arr(util_max), col(pcie_rx), col(pcie_tx),
                   col(nvlink_rx), col(nvlink_tx))


@dataclass(frozen=True, eq=False)
class HostTrace:
    """The machine of one node: CPU busy %, network and disk bytes/s, oldest first."""

    node: str
    t: np.ndarray
    cpu: np.ndarray
    net_rx: np.ndarray
    net_tx: np.ndarray
    disk_read: np.ndarray
    cpus: int = 0
    mem_used: np.ndarray | None = None  # MB; None when not recorded
    mem_total: float = math.nan  # MB

    @classmethod
    def from_samples(cls, node: str, samples: Sequence[HostSample]) -> "HostTrace":
        return cls(node, _arr([s.ts for s in samples]), _arr([s.cpu_percent for s in samples]),
                   _arr([s.net_rx_bps for s in samples]), _arr([s.net_tx_bps for s in samples]),
                   _arr([s.disk_read_bps for s in samples]), max((s.cpus for s in samples), default=0),
                   _arr([s.mem_used_mb for s in samples]),
                   max((s.mem_total_mb for s in samples if s.mem_total_mb == s.mem_total_mb), default=math.nan))


@dataclass(frozen=True)
class RunInfo:
    """What the run ran on and paid; None where unknown."""

    gpu_model: str | None = None
    gpus_per_node: int = 0
    nodes: int = 1
    price_per_hour: float | None = None  # one node, what the run paid
    currency: str = "USD"
    spot: bool = False
    provider: str | None = None
    region: str | None = None
    instance_type: str | None = None
    checkpoints: bool | None = None  # None: not known (a log)
    cost: float | None = None  # what the run cost (the store's ledger); None: price x duration
    billed_s: float | None = None  # the longest billed compute time of its machines (the ledger); None: readings
    price_source: str = ""
    launch_id: str | None = None
    name: str = ""


@dataclass(frozen=True, eq=False)
class Trace:
    """Everything the advisor and the report look at (see the module docstring)."""

    gpus: tuple[GpuTrace, ...]
    run: RunInfo = field(default_factory=RunInfo)
    hosts: tuple[HostTrace, ...] = ()
    missing: tuple[str, ...] = ()  # fields the source lacked (named as nvidia-smi names them)
    clock: str = "utc"  # "utc": POSIX times; "log": the log's own wall clock, zone unknown

    @property
    def start(self) -> float:
        starts = [g.t[0] for g in self.gpus if g.t.size] + [h.t[0] for h in self.hosts if h.t.size]
        return float(min(starts)) if starts else 0.0

    @property
    def end(self) -> float:
        ends = [g.t[-1] for g in self.gpus if g.t.size] + [h.t[-1] for h in self.hosts if h.t.size]
        return float(max(ends)) if ends else 0.0

    @property
    def period_s(self) -> float:
        """Typical spacing of the GPU samples (60 for stored minutes, ~1 for a ``-l 1`` log)."""
        gaps = [np.median(np.diff(g.t)) for g in self.gpus if g.t.size > 1]
        return float(np.median(gaps)) if gaps else 60.0

    @property
    def duration_s(self) -> float:
        """From the first reading to the end of the last one's period."""
        return max(0.0, self.end - self.start) + (self.period_s if self.gpus else 0.0)

    @property
    def hours(self) -> float:
        """How long the run billed (the ledger's figure when there is one), in hours."""
        return (self.run.billed_s if self.run.billed_s else self.duration_s) / 3600.0

    @property
    def nodes(self) -> list[str]:
        seen: dict[str, None] = {}
        for g in self.gpus:
            seen.setdefault(g.node)
        for h in self.hosts:
            seen.setdefault(h.node)
        return list(seen)

    def total_cost(self) -> float | None:
        """What the run cost: the ledger's figure, else price x nodes x duration; None without a price."""
        if self.run.cost is not None:
            return self.run.cost
        if self.run.price_per_hour is None:
            return None
        return self.run.price_per_hour * max(1, self.run.nodes) * self.hours

    def when(self, ts: float) -> str:
        """ISO 8601 text of a time: UTC with 'Z', or the log's own clock without a zone."""
        d = _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).replace(microsecond=0)
        return d.strftime("%Y-%m-%dT%H:%M:%S") + ("Z" if self.clock == "utc" else "")


def gpu_traces(node: str, samples: Sequence[GpuSample]) -> list[GpuTrace]:
    """Stored samples of one instance (GPUs only; MIG slices have no utilization) → one trace per GPU."""
    by: dict[int, list[GpuSample]] = {}
    for s in samples:
        if s.kind == "gpu":
            by.setdefault(s.index, []).append(s)
    out = []
    for index, rows in sorted(by.items()):
        rows.sort(key=lambda s: s.ts)

        def u(v: float) -> float:
            return math.nan if v is None or v < 0 else v  # NOT_REPORTED

        out.append(GpuTrace.build(
            node, index, rows[-1].name, [s.ts for s in rows], [u(s.util_percent) for s in rows],
            [s.mem_used_mb for s in rows], rows[-1].mem_total_mb or math.nan, [s.power_w for s in rows],
            [s.power_limit_w for s in rows], [s.sm_clock_mhz for s in rows], [s.mem_util_percent for s in rows],
            [u(s.util_min) if s.util_min == s.util_min else u(s.util_percent) for s in rows],
            [u(s.util_max) if s.util_max == s.util_max else u(s.util_percent) for s in rows],
            [s.pcie_rx_mbps for s in rows], [s.pcie_tx_mbps for s in rows],
            [s.nvlink_rx_mbps for s in rows], [s.nvlink_tx_mbps for s in rows]))
    return out


def checkpoints_of(spec: Mapping[str, Any] | None) -> bool | None:
    """Whether a launch's spec makes the job resumable: a recovery policy or a storage mount synced back."""
    if not isinstance(spec, Mapping):
        return None
    if spec.get("recovery"):
        return True
    mounts = spec.get("storage") or []
    if isinstance(mounts, Mapping):
        mounts = list(mounts.values())
    return any(isinstance(m, Mapping) and str(m.get("mode", "")).lower() == "sync" for m in mounts)


def _node_order(inst: Instance) -> tuple:
    rank = inst.extra.get("node_rank") if isinstance(inst.extra, Mapping) else None
    try:
        rank = int(rank)
    except (TypeError, ValueError):
        rank = 1 << 30
    return (rank, inst.launched_at or 0.0, inst.instance_id)


def trace_from_store(store, launch_id: str, now: float | None = None) -> Trace:
    """The telemetry and spend of one launch (all its nodes); NotFoundError for an unknown launch."""
    from workbench.core.money.spend import SpendBook  # the money package reads the store module: load lazily

    now = time.time() if now is None else now
    instances = sorted(store.list_instances(launch_id=launch_id), key=_node_order)
    rec = store.find_launch(launch_id)
    if rec is None and not instances:
        raise NotFoundError(f"no launch {launch_id!r} in this app's records",
                            hint="`workbench status` lists launches; ids look like the ones it prints")
    gpus: list[GpuTrace] = []
    hosts: list[HostTrace] = []
    for inst in instances:
        node = inst.instance_id if len(instances) > 1 else ""  # one machine: "GPU 3", not "i-…/GPU 3"
        gpus += gpu_traces(node, store.samples(inst.instance_id))
        host = store.host_samples(inst.instance_id)
        if host:
            hosts.append(HostTrace.from_samples(node, host))
    first = instances[0] if instances else None
    model = (first.gpu_model if first else None) or next((g.model for g in gpus if g.model), None)
    book = SpendBook.load(store)
    cost = book.launch_total(launch_id, now) if instances else None
    keys = [k for k in book.entries if book.launch_of(k) == launch_id]
    billed = max((book.cost(k, now).billed_seconds for k in keys), default=0.0) or None
    run = RunInfo(gpu_model=model, gpus_per_node=(first.gpu_count if first else 0) or
                  max((sum(1 for g in gpus if g.node == i.instance_id) for i in instances), default=0),
                  nodes=max(1, len(instances)), price_per_hour=first.price_per_hour if first else None,
                  currency=first.currency if first else (rec.currency if rec else "USD"),
                  spot=bool(first.spot) if first else False, provider=first.provider if first else rec.provider,
                  region=first.region if first else rec.region, instance_type=first.instance_type if first else None,
                  checkpoints=checkpoints_of(rec.spec if rec else None), cost=cost, billed_s=billed,
                  price_source="the app's ledger",
                  launch_id=launch_id, name=(rec.name if rec else "") or (first.name if first else ""))
    missing = () if any(np.isfinite(g.power).any() for g in gpus) else ("power.draw",)
    return Trace(tuple(gpus), run, tuple(hosts), missing)
