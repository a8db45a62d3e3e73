"""Telemetry history for the Monitor view: numpy ring buffers and peak-keeping decimation.

No Qt here, so all of it is unit-testable and usable by benchmarks.

Memory
    A series keeps two rings, both allocated on its first sample:

    * a *fine* ring of raw readings (default 2 h at 1 Hz): timestamp, util and
      memory as float32 (timestamps relative to a float64 origin), 12 bytes a
      reading;
    * a *coarse* ring of min/max buckets (default 60 s buckets for 48 h):
      bucket time, min and max of util and memory, 20 bytes a bucket.

    That is 144 KiB a series, so 64 instances × 8 GPUs cost about 74 MB
    however long they run, where raw 1 Hz float32 rings for 24 h would cost
    over 500 MB.  Windows that reach further back than the fine ring are
    drawn from the coarse one, which keeps every bucket's peaks.

Threading
    None: a :class:`SeriesSet` belongs to one thread (the GUI's main thread).
    :func:`group_samples` and :func:`spend_curves` are pure and run on workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

import numpy as np

from workbench.core.domain.models import GpuSample, InstanceState
from workbench.core.money.spend import accrued
from workbench.core.store.database import LedgerEntry

#: (kind, index, name): one GPU, one MIG slice, or the job's CPU
SeriesKey = tuple[str, int, str]

FINE_CAPACITY = 2 * 3600
COARSE_BUCKET_S = 60.0
COARSE_CAPACITY = 48 * 60
#: float32 keeps ~8 ms resolution up to this offset from the origin; past it the origin moves up
_REBASE_AFTER_S = float(2**22)


class Window(NamedTuple):
    """Readings in a time window, oldest first: absolute POSIX seconds, util %, memory MB."""

    t: np.ndarray  # float64
    util: np.ndarray  # float32
    mem: np.ndarray  # float32

    def __len__(self) -> int:
        return int(self.t.size)


def _empty_window() -> Window:
    return Window(np.empty(0, np.float64), np.empty(0, np.float32), np.empty(0, np.float32))


class RingSeries:
    """One metric stream (util + memory of one GPU/slice/CPU) with bounded memory.

    Readings not newer than the last one are dropped, so replaying stored
    history over live readings never stores a duplicate.
    """

    def __init__(self, fine_capacity: int = FINE_CAPACITY, coarse_bucket_s: float = COARSE_BUCKET_S,
                 coarse_capacity: int = COARSE_CAPACITY) -> None:
        self.fine_capacity = int(fine_capacity)
        self.coarse_capacity = int(coarse_capacity)
        self.bucket_s = float(coarse_bucket_s)
        self.origin = 0.0
        self.last_ts = -math.inf
        self.mem_total = 0.0
        self.count = 0  # readings ever accepted
        self._fine: np.ndarray | None = None  # rows: t, util, mem
        self._fine_n = 0  # valid rows (<= capacity)
        self._fine_head = 0  # next row to write
        self._coarse: np.ndarray | None = None  # rows: t, umin, umax, mmin, mmax
        self._coarse_n = 0
        self._coarse_head = 0
        self._bucket_id = -math.inf  # id of the open (last written) coarse bucket

    # -- size ---------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (0 until the first reading)."""
        return sum(a.nbytes for a in (self._fine, self._coarse) if a is not None)

    @staticmethod
    def bytes_per_series(fine_capacity: int = FINE_CAPACITY, coarse_capacity: int = COARSE_CAPACITY) -> int:
        return 4 * (3 * fine_capacity + 5 * coarse_capacity)

    def __len__(self) -> int:
        return self._fine_n

    # -- writing ------------------------------------------------------------
    def append(self, ts: float, util: float, mem: float, mem_total: float | None = None) -> bool:
        """Add one reading; False when it is not newer than the last one."""
        return self.extend(np.array([ts], np.float64), np.array([util], np.float32),
                           np.array([mem], np.float32), mem_total) > 0

    def extend(self, ts: np.ndarray, util: np.ndarray, mem: np.ndarray, mem_total: float | None = None) -> int:
        """Add readings (any order); returns how many were new.  Vectorised: history loads fast."""
        ts = np.asarray(ts, np.float64)
        order = np.argsort(ts, kind="stable")
        ts, util, mem = ts[order], np.asarray(util, np.float32)[order], np.asarray(mem, np.float32)[order]
        keep = ts > self.last_ts
        if ts.size > 1:  # equal timestamps within the batch: keep the first
            keep[1:] &= ts[1:] != ts[:-1]
        ts, util, mem = ts[keep], util[keep], mem[keep]
        if mem_total is not None:
            self.mem_total = float(mem_total)
        if ts.size == 0:
            return 0
        if self._fine is None:
            self._fine = np.zeros((self.fine_capacity, 3), np.float32)
            self._coarse = np.zeros((self.coarse_capacity, 5), np.float32)
            self.origin = float(ts[0])
        if ts[-1] - self.origin > _REBASE_AFTER_S:
            self._rebase(float(ts[0]))
        rel = (ts - self.origin).astype(np.float32)
        self._write_fine(rel, util, mem)
        self._write_coarse(ts, rel, util, mem)
        self.last_ts = float(ts[-1])
        self.count += int(ts.size)
        return int(ts.size)

    def _rebase(self, new_origin: float) -> None:
        shift = np.float32(new_origin - self.origin)
        self._fine[:, 0] -= shift
        self._coarse[:, 0] -= shift
        self.origin = new_origin

    def _write_fine(self, rel: np.ndarray, util: np.ndarray, mem: np.ndarray) -> None:
        cap = self.fine_capacity
        n = rel.size
        if n > cap:  # only the newest fit
            rel, util, mem, skipped = rel[-cap:], util[-cap:], mem[-cap:], n - cap
        else:
            skipped = 0
        rows = (self._fine_head + skipped + np.arange(rel.size)) % cap
        self._fine[rows, 0], self._fine[rows, 1], self._fine[rows, 2] = rel, util, mem
        self._fine_head = (self._fine_head + n) % cap
        self._fine_n = min(cap, self._fine_n + n)

    def _write_coarse(self, ts: np.ndarray, rel: np.ndarray, util: np.ndarray, mem: np.ndarray) -> None:
        ids = np.floor(ts / self.bucket_s)
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        umin, umax = np.minimum.reduceat(util, starts), np.maximum.reduceat(util, starts)
        mmin, mmax = np.minimum.reduceat(mem, starts), np.maximum.reduceat(mem, starts)
        first = 0
        if ids[0] == self._bucket_id and self._coarse_n:  # the open bucket grows
            row = self._coarse[(self._coarse_head - 1) % self.coarse_capacity]
            row[1], row[2] = min(row[1], umin[0]), max(row[2], umax[0])
            row[3], row[4] = min(row[3], mmin[0]), max(row[4], mmax[0])
            first = 1
        new = np.column_stack([rel[starts], umin, umax, mmin, mmax])[first:]
        cap = self.coarse_capacity
        n = len(new)
        if n:
            skipped = max(0, n - cap)
            new = new[skipped:]
            rows = (self._coarse_head + skipped + np.arange(len(new))) % cap
            self._coarse[rows] = new
            self._coarse_head = (self._coarse_head + n) % cap
            self._coarse_n = min(cap, self._coarse_n + n)
        self._bucket_id = float(ids[-1])

    # -- reading ------------------------------------------------------------
    def _ordered(self, ring: np.ndarray | None, n: int, head: int) -> np.ndarray:
        if ring is None or n == 0:
            return np.empty((0, ring.shape[1] if ring is not None else 3), np.float32)
        start = (head - n) % len(ring)
        if start + n <= len(ring):
            return ring[start:start + n]
        return np.concatenate([ring[start:], ring[:head]])

    def fine(self) -> Window:
        """Every raw reading still held, oldest first."""
        rows = self._ordered(self._fine, self._fine_n, self._fine_head)
        return Window(rows[:, 0].astype(np.float64) + self.origin, rows[:, 1].copy(), rows[:, 2].copy())

    @property
    def first_ts(self) -> float | None:
        """Oldest time still held (coarse or fine), None when empty."""
        if self._coarse_n == 0:
            return None
        rows = self._ordered(self._coarse, self._coarse_n, self._coarse_head)
        return float(rows[0, 0]) + self.origin

    def window(self, start: float | None = None, end: float | None = None) -> Window:
        """Readings with ``start <= t <= end`` (None: unbounded), oldest first.

        Raw readings where the fine ring still has them; before that, each
        coarse bucket as two points (its minimum, then its maximum) at the
        bucket's first reading time, so peaks survive.  Only the rows in the
        window are converted and copied (a 5 min window of a 2 h ring is 1/24 of it).
        """
        rows = self._ordered(self._fine, self._fine_n, self._fine_head)
        lo = -math.inf if start is None else start
        hi = math.inf if end is None else end
        parts = []
        fine_from = float(rows[0, 0]) + self.origin if len(rows) else math.inf
        if lo < fine_from and self._coarse_n:
            coarse = self._ordered(self._coarse, self._coarse_n, self._coarse_head)
            t = coarse[:, 0].astype(np.float64) + self.origin
            # buckets that start before the fine ring; the one straddling its start overlaps it a little
            sel = (t >= lo) & (t <= hi) & (t < fine_from)
            coarse, t = coarse[sel], t[sel]
            if coarse.size:
                parts.append(Window(np.repeat(t, 2), coarse[:, 1:3].reshape(-1).copy(),
                                    coarse[:, 3:5].reshape(-1).copy()))
        if len(rows):
            rel = rows[:, 0]  # float32 seconds after the origin, ascending
            a = 0 if lo == -math.inf else int(np.searchsorted(rel, np.float32(lo - self.origin), "left"))
            b = len(rows) if hi == math.inf else int(np.searchsorted(rel, np.float32(hi - self.origin), "right"))
            if b > a:
                part = rows[a:b]
                parts.append(Window(part[:, 0].astype(np.float64) + self.origin, part[:, 1].copy(), part[:, 2].copy()))
        if not parts:
            return _empty_window()
        if len(parts) == 1:
            return parts[0]
        return Window(*(np.concatenate([getattr(p, f) for p in parts]) for f in Window._fields))


def decimate(t: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Min/max ("peak") decimation to at most ``max_points`` points.

    The readings are cut into at most ``max_points // 2`` buckets of equal
    count; each bucket gives its minimum and its maximum, in the order they
    occurred, at their own times.  NaN-free input assumed (rings hold none).
    """
    n = int(y.size)
    if n <= max_points or max_points < 2:
        return t, y
    buckets = max_points // 2
    size = -(-n // buckets)  # ceil
    rows = n // size
    body = y[: rows * size].reshape(rows, size)
    base = np.arange(rows) * size
    lo_i, hi_i = base + body.argmin(axis=1), base + body.argmax(axis=1)
    if rows * size < n:  # ragged last bucket
        tail = y[rows * size:]
        lo_i = np.r_[lo_i, rows * size + int(tail.argmin())]
        hi_i = np.r_[hi_i, rows * size + int(tail.argmax())]
    idx = np.column_stack([np.minimum(lo_i, hi_i), np.maximum(lo_i, hi_i)]).reshape(-1)
    return t[idx], y[idx]


#: seconds a pixel column may stand for, in a 1-2-5 ladder: a window's step stays the same while it
#: grows by up to 2-2.5×, so the buckets (and the plotted image) stay put between pixel steps
_STEPS = tuple(m * 10.0 ** e for e in range(-3, 7) for m in (1.0, 2.0, 5.0))


def pixel_step(span_s: float, width_px: int) -> float:
    """Seconds per pixel column for ``span_s`` on ``width_px`` pixels, rounded up to a 1-2-5 step."""
    raw = max(span_s, 1e-3) / max(int(width_px), 1)
    return next((s for s in _STEPS if s >= raw), raw)


def snap_window(start: float, end: float, step: float) -> tuple[float, float]:
    """``[start, end]`` widened to whole steps (so it moves in steps, not at every redraw)."""
    return math.floor(start / step) * step, math.ceil(end / step) * step


def peak_decimate(t: np.ndarray, y: np.ndarray, start: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Min/max ("peak") decimation to one bucket per ``step`` seconds, buckets aligned to ``start``.

    Each bucket with readings gives two points at its middle: its minimum, then its maximum (a
    vertical stroke, as a pixel column shows them), so no spike is lost.  Buckets are aligned to
    absolute time, not to the readings: a new reading changes only the last bucket, so an
    unchanged window yields identical arrays (and the plot need not be repainted).  Nothing is
    dropped when there are no more readings than two per bucket.  ``t`` sorted ascending.
    """
    n = int(t.size)
    if n == 0 or step <= 0:
        return t, y
    ids = np.floor((t - start) / step).astype(np.int64)
    if n <= 2 * (int(ids[-1] - ids[0]) + 1):
        return t, y
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    lo, hi = np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts)
    x = start + (ids[starts].astype(np.float64) + 0.5) * step
    return np.repeat(x, 2), np.column_stack([lo, hi]).reshape(-1)


@dataclass(frozen=True)
class SampleBatch:
    """Readings of one series as arrays (built on a worker, appended on the main thread)."""

    ts: np.ndarray
    util: np.ndarray
    mem: np.ndarray
    mem_total: float


def group_samples(samples: Iterable[GpuSample]) -> dict[SeriesKey, SampleBatch]:
    """Split readings by series key (kind, index, name) into arrays; pure, for worker threads."""
    cols: dict[SeriesKey, tuple[list[float], list[float], list[float], list[float]]] = {}
    for s in samples:
        c = cols.setdefault((s.kind, s.index, s.name), ([], [], [], []))
        c[0].append(s.ts)
        c[1].append(s.util_percent)
        c[2].append(s.mem_used_mb)
        c[3].append(s.mem_total_mb)
    return {k: SampleBatch(np.asarray(c[0], np.float64), np.asarray(c[1], np.float32),
                           np.asarray(c[2], np.float32), float(c[3][-1])) for k, c in cols.items()}


@dataclass
class SeriesSet:
    """All series of one instance, keyed by (kind, index, name); ``version`` changes when data does."""

    series: dict[SeriesKey, RingSeries] = field(default_factory=dict)
    version: int = 0

    def add(self, batches: dict[SeriesKey, SampleBatch]) -> int:
        """Append grouped readings; returns how many were new."""
        added = 0
        for key, b in batches.items():
            ring = self.series.get(key)
            if ring is None:
                ring = self.series[key] = RingSeries()
            added += ring.extend(b.ts, b.util, b.mem, b.mem_total)
        if added:
            self.version += 1
        return added

    def keys(self) -> list[SeriesKey]:
        """GPUs first, then MIG slices, then CPU; by index."""
        rank = {"gpu": 0, "mig": 1}
        return sorted(self.series, key=lambda k: (rank.get(k[0], 2), k[0], k[1], k[2]))

    @property
    def last_ts(self) -> float | None:
        ends = [r.last_ts for r in self.series.values() if r.count]
        return max(ends) if ends else None

    @property
    def first_ts(self) -> float | None:
        starts = [r.first_ts for r in self.series.values() if r.count]
        return min(s for s in starts if s is not None) if starts else None

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.series.values())


class SpendCurves(NamedTuple):
    """Cumulative cost and burn rate ($/h) over time, for the spend plot."""

    t: np.ndarray
    cost: np.ndarray
    burn_t: np.ndarray
    burn: np.ndarray


def spend_curves(entries: Sequence[LedgerEntry], now: float) -> SpendCurves:
    """Exact curves from an instance's ledger (ordered by time): cost is linear between entries,
    so its value at each entry and at ``now`` is enough; the burn rate is a step per entry."""
    if not entries:
        empty = np.empty(0, np.float64)
        return SpendCurves(empty, empty, empty, empty)
    times = [e.ts for e in entries if e.ts <= now] + [now]
    cost = [accrued(entries, now=t) for t in times]
    burn_t: list[float] = []
    burn: list[float] = []
    for cur, nxt in zip(entries, list(entries[1:]) + [None]):
        if cur.ts > now:
            break
        rate = cur.price_per_hour if InstanceState(cur.state).billable else 0.0
        end = min(nxt.ts, now) if nxt is not None else now
        burn_t += [cur.ts, end]
        burn += [rate, rate]
    return SpendCurves(np.asarray(times, np.float64), np.asarray(cost, np.float64),
                       np.asarray(burn_t, np.float64), np.asarray(burn, np.float64))


def benchmark_memory(instances: int = 64, gpus: int = 8, hours: float = 24.0, hz: float = 1.0) -> int:
    """Fill ``instances × gpus`` series with ``hours`` of readings; returns the bytes the rings hold."""
    n = int(hours * 3600 * hz)
    t0 = 1_700_000_000.0
    ts = t0 + np.arange(n, dtype=np.float64) / hz
    rng = np.random.default_rng(0)
    util = rng.uniform(0, 100, n).astype(np.float32)
    mem = rng.uniform(0, 80_000, n).astype(np.float32)
    held = []  # keep every set alive, as the view would
    for _ in range(instances):
        sets = SeriesSet()
        sets.add({("gpu", g, "A100"): SampleBatch(ts, util, mem, 81_920.0) for g in range(gpus)})
        held.append(sets)
    return sum(s.nbytes for s in held)
