"""The advisor's building blocks: advice values, per-GPU statistics, the rules' context, GPU tables.

The rules live in :mod:`workbench.core.telemetry.advice_rules`; :func:`workbench.core.telemetry.advisor.advise`
runs them.  Pure values and arithmetic: safe on any thread, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from workbench.core.domain.models import Offer
from workbench.core.offers.order import rank
from workbench.core.offers.query import OfferQuery
from workbench.core.telemetry.trace import GpuTrace, Trace

WINDOW_S = 60.0  # rules look at minutes, so stored minute averages and 1 Hz logs read alike
IDLE_UTIL = 5.0  # % : a GPU whose 90th percentile stays below this did no work
SEVERITY_HIGH, SEVERITY_MEDIUM = 0.25, 0.10  # saving as a share of the run's cost

#: approximate peak dense FP16/BF16 tensor throughput per GPU (TFLOPS, vendors' data sheets; FP32 peak for
#: GPUs without tensor cores): only ratios are used, to ask "would this work fit that GPU?"
GPU_TFLOPS: dict[str, float] = {
    "K80": 4.4, "M60": 4.8, "P4": 5.5, "P40": 12.0, "P100": 18.7, "V100": 125.0, "T4": 65.0, "T4G": 65.0,
    "A10": 125.0, "A10G": 70.0, "A100": 312.0, "A800": 312.0, "H100": 989.0, "H800": 989.0, "H200": 989.0,
    "H20": 148.0, "B200": 2250.0, "L4": 121.0, "L40": 181.0, "L40S": 362.0, "A6000": 155.0, "RTX4090": 165.0,
    "RTX3090": 71.0, "MI300X": 1307.0, "MI250X": 383.0,
}
#: default board power (W) where the log has no power.limit: (SXM/other, PCIe)
GPU_TDP_W: dict[str, tuple[float, float]] = {
    "V100": (300.0, 250.0), "A100": (400.0, 300.0), "A800": (400.0, 300.0), "H100": (700.0, 350.0),
    "H800": (700.0, 350.0), "H200": (700.0, 600.0),
}
#: maximum boost SM clock (MHz) of the tensor-core models the mixed-precision rule judges: (SXM/other, PCIe),
#: from NVIDIA's data sheets; NaN where not known here (the run's own highest clock is the reference then)
GPU_MAX_SM_CLOCK_MHZ: dict[str, tuple[float, float]] = {
    "V100": (1530.0, 1380.0), "A100": (1410.0, 1410.0), "A800": (1410.0, 1410.0), "H100": (1980.0, 1755.0),
    "H800": (1980.0, math.nan), "H200": (1980.0, math.nan),
}
CLOCK_BUSY_UTIL = 50.0  # the SM clock is judged over the readings where the GPU was at least this busy


@dataclass(frozen=True)
class Saving:
    """Money a piece of advice would have saved on this run; ``amount`` None when no price is known."""

    amount: float | None
    currency: str = "USD"

    def to_json(self) -> dict[str, Any]:
        return {"amount": None if self.amount is None else round(self.amount, 2), "currency": self.currency}


@dataclass(frozen=True)
class Advice:
    """One piece of advice; ``action`` is ``template.format(**params)`` (the GUI translates the template)."""

    id: str
    severity: str  # high | medium | low
    title: str
    template: str
    params: Mapping[str, Any]
    evidence: Mapping[str, Any]
    saving: Saving

    @property
    def action(self) -> str:
        return self.template.format(**self.params)

    @property
    def window(self) -> tuple[float, float]:
        """The evidence's time window (POSIX seconds, or the log's clock)."""
        w = self.evidence.get("window") or {}
        return float(w.get("start_ts", 0.0)), float(w.get("end_ts", 0.0))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity, "title": self.title, "evidence": dict(self.evidence),
                "action": self.action, "saving": self.saving.to_json()}


@dataclass(frozen=True)
class Advisory:
    """What :func:`advise` found: advice (largest saving first), rules not evaluated, fields missing."""

    advice: tuple[Advice, ...]
    not_evaluated: Mapping[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    cost: float | None = None
    currency: str = "USD"
    duration_s: float = 0.0
    gpus: int = 0  # GPUs with readings

    def ids(self) -> list[str]:
        return [a.id for a in self.advice]

    def to_json(self) -> dict[str, Any]:
        return {"advice": [a.to_json() for a in self.advice], "not_evaluated": dict(self.not_evaluated),
                "missing": list(self.missing),
                "run": {"cost": None if self.cost is None else round(self.cost, 2), "currency": self.currency,
                        "duration_s": round(self.duration_s, 1), "gpus": self.gpus}}


# -- statistics the rules share ---------------------------------------------------------------------
def _finite(a: np.ndarray) -> np.ndarray:
    return a[np.isfinite(a)]


def pct(a: np.ndarray, q: float) -> float:
    """Percentile of the finite values; NaN when there are none."""
    f = _finite(a)
    return float(np.percentile(f, q)) if f.size else math.nan


def mean(a: np.ndarray) -> float:
    f = _finite(a)
    return float(f.mean()) if f.size else math.nan


@dataclass(frozen=True, eq=False)
class GpuStats:
    """One GPU summarised: run-wide figures and per-minute windows (start, mean, min, max utilization)."""

    trace: GpuTrace
    util_mean: float
    util_p50: float
    util_p90: float
    mem_peak: float  # MiB
    mem_p95: float
    mem_total: float
    power_p50: float  # W
    power_limit: float  # W (the log's, else the model's default; NaN when neither)
    win_t: np.ndarray
    win_mean: np.ndarray
    win_min: np.ndarray
    win_max: np.ndarray
    sm_clock_busy_p50: float = math.nan  # MHz, median over the busy readings; NaN when not recorded
    sm_clock_ref: float = math.nan  # MHz: the model's maximum boost clock, or the run's highest when higher/unknown

    @property
    def idle(self) -> bool:
        return self.util_p90 < IDLE_UTIL if self.util_p90 == self.util_p90 else False

    @property
    def mem_fraction(self) -> float:
        return self.mem_p95 / self.mem_total if self.mem_total and self.mem_total == self.mem_total else math.nan

    @property
    def power_fraction(self) -> float:
        return self.power_p50 / self.power_limit if self.power_limit and self.power_limit == self.power_limit \
            else math.nan

    @property
    def clock_fraction(self) -> float:
        """The busy SM clock's share of the reference (below ~0.75: clocks held down); NaN when unknown."""
        ok = self.sm_clock_ref == self.sm_clock_ref and self.sm_clock_ref > 0
        return self.sm_clock_busy_p50 / self.sm_clock_ref if ok else math.nan


def _windows(g: GpuTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ok = np.isfinite(g.util)
    t, u, lo, hi = g.t[ok], g.util[ok], g.util_min[ok], g.util_max[ok]
    lo, hi = np.where(np.isfinite(lo), lo, u), np.where(np.isfinite(hi), hi, u)
    if not t.size:
        e = np.empty(0)
        return e, e, e, e
    ids = np.floor(t / WINDOW_S)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    counts = np.diff(np.r_[starts, t.size])
    return (ids[starts] * WINDOW_S, np.add.reduceat(u, starts) / counts, np.minimum.reduceat(lo, starts),
            np.maximum.reduceat(hi, starts))


def default_power_limit(name: str, model: str | None) -> float:
    pair = GPU_TDP_W.get(model or "")
    if pair is None:
        return math.nan
    return pair[1] if "PCIE" in name.upper() else pair[0]


def max_sm_clock(name: str, model: str | None) -> float:
    pair = GPU_MAX_SM_CLOCK_MHZ.get(model or "")
    if pair is None:
        return math.nan
    return pair[1] if "PCIE" in name.upper() else pair[0]


def gpu_stats(g: GpuTrace) -> GpuStats:
    limit = pct(g.power_limit, 50)
    if limit != limit:
        limit = default_power_limit(g.name, g.model)
    wt, wm, wlo, whi = _windows(g)
    clocks = _finite(g.sm_clock)
    busy_clock = pct(g.sm_clock[np.nan_to_num(g.util, nan=0.0) >= CLOCK_BUSY_UTIL], 50)
    seen = float(clocks.max()) if clocks.size else math.nan
    ref = max((v for v in (max_sm_clock(g.name, g.model), seen) if v == v), default=math.nan)
    return GpuStats(g, mean(g.util), pct(g.util, 50), pct(g.util, 90), float(np.nanmax(g.mem_used))
                    if np.isfinite(g.mem_used).any() else math.nan, pct(g.mem_used, 95), g.mem_total,
                    pct(g.power, 50), limit, wt, wm, wlo, whi, busy_clock, ref)


def window_of(trace: Trace, start: float, end: float) -> dict[str, Any]:
    """The evidence's time window: ISO texts and the raw times (for the GUI's highlight)."""
    return {"start": trace.when(start), "end": trace.when(end), "start_ts": round(start, 3),
            "end_ts": round(end, 3), "duration_s": round(max(0.0, end - start), 1)}


def whole_run(trace: Trace) -> dict[str, Any]:
    """From the first reading to the end of the last one's period."""
    return window_of(trace, trace.start, trace.start + trace.duration_s)


def flagged_window(trace: Trace, starts: np.ndarray, flags: np.ndarray) -> dict[str, Any]:
    """From the first flagged minute to the end of the last one (the whole run when none is flagged)."""
    if starts.size and flags.any():
        end = min(float(starts[flags][-1]) + WINDOW_S, trace.start + trace.duration_s)
        return window_of(trace, max(float(starts[flags][0]), trace.start), end)
    return whole_run(trace)


def money_text(amount: float | None, currency: str) -> str:
    """Money for advice texts: $1,234.56, ¥12.30, or 'EUR 12.00'; '?' when unknown."""
    if amount is None or amount != amount:
        return "?"
    sign = {"USD": "$", "CNY": "¥"}.get(currency)
    return f"{sign}{amount:,.2f}" if sign else f"{currency} {amount:,.2f}"


@dataclass(frozen=True, eq=False)
class Context:
    """What the rules read besides the trace: the offers they may name and the run's figures."""

    trace: Trace
    stats: tuple[GpuStats, ...]
    offers: tuple[Offer, ...]
    cost: float | None
    hours: float

    @property
    def run(self):
        return self.trace.run

    @property
    def active(self) -> list[GpuStats]:
        return [s for s in self.stats if not s.idle]

    def money(self, amount: float | None) -> str:
        return money_text(amount, self.run.currency)

    def share(self, amount: float | None) -> float:
        return amount / self.cost if amount is not None and self.cost else math.nan

    def severity(self, amount: float | None) -> str:
        s = self.share(amount)
        if s != s:
            return "medium"
        return "high" if s >= SEVERITY_HIGH else "medium" if s >= SEVERITY_MEDIUM else "low"

    def saving(self, amount: float | None) -> Saving:
        return Saving(None if amount is None else max(0.0, amount), self.run.currency)

    def cheapest(self, q: OfferQuery, below: float | None = None, spot: bool | None = None) -> list[Offer]:
        """Offers matching ``q`` in the run's provider (and region when it has offers there), cheapest first."""
        q = replace(q, spot=self.run.spot if spot is None else spot)
        pool = [("", o) for o in self.offers if o.prices.currency == self.run.currency]
        if self.run.provider:
            pool = [(p, o) for p, o in pool if o.provider == self.run.provider]
            if self.run.region and any(o.region == self.run.region for _, o in pool):
                pool = [(p, o) for p, o in pool if o.region == self.run.region]
        ranked = [r for r in rank(pool, q) if r.price is not None and r.offer.available]
        return [r.offer for r in ranked if below is None or (r.price or 0.0) < below]


def estimate_price(trace: Trace, offers: Iterable[Offer]) -> Trace:
    """A trace without a price gets the cheapest on-demand offer (in USD where one exists) of its GPU model and count."""
    run = trace.run
    if run.price_per_hour is not None or not run.gpu_model:
        return trace
    q = OfferQuery(gpu_model=run.gpu_model, gpu_count=max(1, run.gpus_per_node))
    ranked = [r for r in rank((("", o) for o in offers), q) if r.price is not None and r.offer.gpu_count ==
              max(1, run.gpus_per_node)]
    if not ranked:
        return trace
    # a log says nothing of where it ran: price it in dollars when any cloud does (the default display currency)
    best = next((r for r in ranked if r.offer.prices.currency == "USD"), ranked[0])
    return replace(trace, run=replace(run, price_per_hour=best.price, currency=best.offer.prices.currency,
                                      price_source=f"{best.offer.provider} {best.offer.instance_type} "
                                                   f"({best.offer.region}, {best.offer.prices.source} "
                                                   f"{best.offer.prices.as_of})".strip()))
