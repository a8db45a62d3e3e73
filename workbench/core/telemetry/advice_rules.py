"""The advisor's rules (run by :func:`workbench.core.telemetry.advisor.advise`).

Each rule takes the :class:`~workbench.core.telemetry.advisor.Context` and returns an
:class:`~workbench.core.telemetry.advisor.Advice` when its symptom holds over most of the
run, ``None`` when it does not, or a string saying why it could not be evaluated (a column
missing, no price).  Thresholds are named constants, chosen so that a busy GPU with its
memory well used never triggers a rule.  Action texts are templates with named fields
(:data:`TEMPLATES`), so the GUI can show them translated.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from workbench.core.offers.query import OfferQuery
from workbench.core.telemetry.advice_base import GPU_TFLOPS, Advice, Context, GpuStats, flagged_window, whole_run

# thresholds (percent unless named otherwise)
MODERATE = (30.0, 75.0)  # batch_size: utilization in this band...
MODERATE_SHARE = 0.6  # ...for this share of the minutes
MEM_LOW = 0.45  # batch_size: memory p95 below this share of the GPU's
TARGET_UTIL = 90.0  # what a fixed bottleneck brings a GPU to (speed-up = target / mean utilization)
MAX_SPEEDUP = 2.0
STARVED, FED = 20.0, 70.0  # data_loading: a minute dipping below STARVED and reaching FED is a sawtooth
SAWTOOTH_SHARE = 0.4
LOW_UTIL = 75.0  # data_loading / network: the GPUs average below this
CPU_SATURATED = 90.0
DISK_FLOOR_BPS = 50e6  # a disk "at its limit" reads at least this much...
DISK_AT_LIMIT, DISK_SHARE = 0.85, 0.5  # ...at 85 % of its peak for half the run
#: host link per direction, GB/s, of an x16 slot per PCIe generation (PCI-SIG: 8, 16, 32 GT/s per lane with
#: 128b/130b encoding → 15.75, 31.5, 63 GB/s); the GPUs' generations are from NVIDIA's data sheets
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0}
PCIE_GEN = {"K80": 3, "P4": 3, "P40": 3, "P100": 3, "V100": 3, "T4": 3, "A10": 4, "A10G": 4, "A100": 4, "A800": 4,
            "L4": 4, "L40": 4, "L40S": 4, "H100": 5, "H800": 5, "H200": 5}
PCIE_NEAR = 0.7  # data_loading: host → GPU at this share of the link's theoretical rate (our choice: usable
PCIE_SHARE = 0.5  # throughput is below the theoretical) for this share of the active GPUs' minutes
AMP_MODELS = ("V100", "A100", "A800", "H100", "H800", "H200")
BUSY = 80.0
LOW_POWER = 0.6  # mixed_precision: median draw below this share of the power limit...
CLOCK_HELD = 0.75  # ...with the busy SM clock at least this share of the model's maximum (lower: clocks held down)
AMP_SPEEDUP = 1.5  # a conservative figure for FP32 → AMP on tensor-core GPUs
HEADROOM = 1.15  # right_size: the candidate's memory must hold the peak plus this margin
FITS_UTIL = 85.0  # right_size: the work at the run's 90th-percentile utilization must need at most this
RIGHT_SIZE_MAX_UTIL = 70.0  # right_size: only GPUs that had headroom (a busy GPU is not oversized)
CHEAPER = 0.9  # right_size / idle_gpus: at least 10 % cheaper per hour
NET_SATURATED = 0.7  # network: traffic at this share of the link...
NET_UTIL = 70.0  # ...while the GPUs average below this
SPOT_MIN_HOURS = 1.0

TITLES = {
    "batch_size": "Use larger batches", "data_loading": "The GPUs wait for data",
    "mixed_precision": "Train in mixed precision", "idle_gpus": "Idle GPUs", "right_size": "A cheaper GPU fits",
    "network": "The network limits training", "spot": "Spot would have cost less",
}
T_BATCH = ("GPU memory peaked at {mem_percent}% and utilization averaged {util}% for most of the run: raise the "
           "batch size about {factor}× (and the learning rate with it, with a short warm-up). Expected about "
           "{speedup}× faster.")
T_DATA = ("GPU utilization averaged {util}% while the GPUs waited for input: use more DataLoader workers (about one "
          "per CPU core), pin_memory=True, and a local or memory-mapped copy of the dataset. Expected up to "
          "{speedup}× faster.")
T_AMP = ("The {model} GPUs were busy ({util}%) but drew only {power_percent}% of their power limit, a sign of FP32 "
         "math: train with automatic mixed precision (torch.autocast with bfloat16 or float16). Expected about "
         "{speedup}× faster.")
T_IDLE_OFFER = ("{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. {offer} has {offer_gpus} "
                "{model} GPUs for {offer_price}/h instead of {price}/h.")
T_IDLE = ("{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. Ask for {used} GPUs, or make the "
          "job use all of them (for example torchrun --nproc_per_node={per_node}).")
T_IDLE_ALL = ("No GPU did any work ({total} GPUs near 0%): check that the job runs on the GPU "
              "(torch.cuda.is_available()) or run it on a machine without GPUs.")
T_RIGHT = ("Peak GPU memory ({mem_gb} GB) and utilization ({util}% of the {model}) fit a cheaper {cand_model} "
           "({cand_mem} GB): {offer} costs {offer_price}/h instead of {price}/h.")
T_NET_OFFER = ("The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s "
               "network, while the GPUs averaged {util}%: use {offer} (EFA / InfiniBand, {offer_price}/h) with all "
               "nodes in one placement group.")
T_NET = ("The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s network, "
         "while the GPUs averaged {util}%: use an instance type with EFA or InfiniBand, with all nodes in one "
         "placement group, and check that NCCL uses it.")
T_SPOT = ("This {hours} h on-demand run can resume from its checkpoints: on spot ({offer_price}/h instead of "
          "{price}/h) it would have cost {spot_cost} instead of {cost}, if interruptions cost little time.")
TEMPLATES = (T_BATCH, T_DATA, T_AMP, T_IDLE_OFFER, T_IDLE, T_IDLE_ALL, T_RIGHT, T_NET_OFFER, T_NET, T_SPOT)

Outcome = Advice | str | None


def _advice(ctx: Context, rid: str, template: str, params: dict, evidence: dict, amount: float | None) -> Advice:
    evidence = {**evidence, "saving_basis": evidence.get("saving_basis", "")}
    if ctx.cost is not None:
        evidence["run_cost"] = round(ctx.cost, 2)
    return Advice(rid, ctx.severity(amount), TITLES[rid], template, params, evidence, ctx.saving(amount))


def _r(x: float, nd: int = 1) -> float:
    return round(float(x), nd)


def _windows(stats: list[GpuStats], flag: Callable[[GpuStats], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not stats:
        return np.empty(0), np.empty(0, bool)
    t = np.concatenate([s.win_t for s in stats])
    f = np.concatenate([flag(s) for s in stats])
    order = np.argsort(t, kind="stable")
    return t[order], f[order]


def _speedup(util: float) -> float:
    return _r(min(MAX_SPEEDUP, TARGET_UTIL / max(util, 1.0)))


def _used_per_node(ctx: Context) -> int:
    per: dict[str, int] = {}
    for s in ctx.active:
        per[s.trace.node] = per.get(s.trace.node, 0) + 1
    return max(per.values(), default=0)


def idle_gpus(ctx: Context) -> Outcome:
    idle = [s for s in ctx.stats if s.idle]
    if not idle:
        return None
    total, k = len(ctx.stats), len(idle)
    evidence = {"window": whole_run(ctx.trace),
                "idle_gpus": [s.trace.label for s in idle],
                "idle_util_p90_percent": _r(max(s.util_p90 for s in idle)), "gpus": total}
    if k == total:
        return _advice(ctx, "idle_gpus", T_IDLE_ALL, {"total": total},
                       {**evidence, "saving_basis": "the whole run"}, ctx.cost)
    used = _used_per_node(ctx)
    per_node = max(1, ctx.run.gpus_per_node or total // max(1, ctx.run.nodes))
    busy = [s for s in ctx.stats if not s.idle]
    evidence["busy_util_mean_percent"] = _r(np.mean([s.util_mean for s in busy]))
    evidence.update(_nvlink(idle, "idle_nvlink", 95), **_nvlink(busy, "busy_nvlink", 50))
    params = {"idle": k, "total": total, "gpus": ", ".join(s.trace.label for s in idle), "used": total - k,
              "per_node": per_node, "model": ctx.run.gpu_model or idle[0].trace.model or "?"}
    price = ctx.run.price_per_hour
    offers = [] if price is None or not ctx.run.gpu_model else [
        o for o in ctx.cheapest(OfferQuery(gpu_model=ctx.run.gpu_model, gpu_count=used), below=price * CHEAPER)
        if o.gpu_count < per_node]
    if offers:
        o = offers[0]
        offer_price = o.hourly(ctx.run.spot) or 0.0
        amount = (price - offer_price) * ctx.run.nodes * ctx.hours
        params.update(offer=o.instance_type, offer_gpus=o.gpu_count, offer_price=ctx.money(offer_price),
                      price=ctx.money(price))
        evidence.update(offer=o.instance_type, offer_region=o.region, offer_price_per_hour=offer_price,
                        price_per_hour=price, saving_basis="price difference x nodes x hours")
        return _advice(ctx, "idle_gpus", T_IDLE_OFFER, params, evidence, amount)
    amount = ctx.cost * k / total if ctx.cost is not None else None
    evidence["saving_basis"] = "the idle GPUs' share of the cost"
    return _advice(ctx, "idle_gpus", T_IDLE, params, evidence, amount)


def data_loading(ctx: Context) -> Outcome:
    act = ctx.active
    if not act:
        return None
    util = float(np.mean([s.util_mean for s in act]))
    if util >= LOW_UTIL:
        return None
    t, saw = _windows(act, lambda s: (s.win_min < STARVED) & (s.win_max > FED))
    saw_share = float(saw.mean()) if saw.size else 0.0
    cpu = np.concatenate([h.cpu for h in ctx.trace.hosts]) if ctx.trace.hosts else np.empty(0)
    cpu = cpu[np.isfinite(cpu)]
    cpu_p50 = float(np.median(cpu)) if cpu.size else math.nan
    disk_hits, disk_peak = [], 0.0
    for h in ctx.trace.hosts:
        d = h.disk_read[np.isfinite(h.disk_read)]
        if d.size and d.max() >= DISK_FLOOR_BPS:
            disk_peak = max(disk_peak, float(d.max()))
            disk_hits.append(float((d >= DISK_AT_LIMIT * d.max()).mean()) >= DISK_SHARE)
    sawtooth, cpu_bound, disk_bound = saw_share >= SAWTOOTH_SHARE, cpu_p50 >= CPU_SATURATED, any(disk_hits)
    pcie = _pcie(ctx, act)
    pcie_bound = bool(pcie.get("pcie_near_limit_minutes_percent", 0.0) >= 100 * PCIE_SHARE)
    if not (sawtooth or cpu_bound or disk_bound or pcie_bound):
        return None
    speedup = _speedup(util)
    amount = ctx.cost * (1 - 1 / speedup) if ctx.cost is not None else None
    evidence = {"window": flagged_window(ctx.trace, t, saw) if sawtooth else
                whole_run(ctx.trace),
                "util_mean_percent": _r(util), "sawtooth_minutes_percent": _r(100 * saw_share),
                "cpu_p50_percent": None if cpu_p50 != cpu_p50 else _r(cpu_p50),
                "disk_read_peak_mb_s": _r(disk_peak / 1e6) if disk_peak else None,
                **pcie,
                "signals": [n for n, on in (("sawtooth", sawtooth), ("cpu_saturated", cpu_bound),
                                            ("disk_at_limit", disk_bound), ("pcie_at_limit", pcie_bound)) if on],
                "expected_speedup": speedup, "saving_basis": "the run's cost x (1 - 1/speed-up)"}
    return _advice(ctx, "data_loading", T_DATA, {"util": round(util), "speedup": speedup}, evidence, amount)


def _pcie(ctx: Context, act: list[GpuStats]) -> dict:
    """Host → GPU PCIe evidence of the active GPUs: {} when the run has no PCIe numbers; the link's rate and
    the share of minutes near it only when the GPU model's PCIe generation is known (x16 assumed)."""
    rx = [s.trace.pcie_rx[np.isfinite(s.trace.pcie_rx)] for s in act]
    rx = [r for r in rx if r.size]
    if not rx:
        return {}
    every = np.concatenate(rx)
    out: dict = {"pcie_rx_p95_gb_s": _r(np.percentile(every, 95) / 1e3, 2)}
    gen = PCIE_GEN.get(ctx.run.gpu_model or act[0].trace.model or "")
    if gen is None:
        return {**out, "pcie_link": None}
    link = PCIE_X16_GBS[gen]
    out["pcie_link"] = f"PCIe {gen}.0 x16, {link} GB/s per direction (theoretical)"
    out["pcie_near_limit_minutes_percent"] = _r(100 * float((every / 1e3 >= PCIE_NEAR * link).mean()))
    return out


def _nvlink(stats: list[GpuStats], key: str, q: int) -> dict:
    """Evidence only, no threshold: the ``q``th percentile of what these GPUs exchanged with the other GPUs of
    their machine over NVLink (rx + tx over all links, GB/s, per GPU and minute); {} when none was recorded."""
    both = [s.trace.nvlink_rx + s.trace.nvlink_tx for s in stats]
    every = np.concatenate(both) if both else np.empty(0)
    every = every[np.isfinite(every)]
    return {f"{key}_p{q}_gb_s": _r(np.percentile(every, q) / 1e3, 2)} if every.size else {}


def network(ctx: Context) -> Outcome:
    if ctx.run.nodes < 2 or len(ctx.trace.nodes) < 2:
        return None
    if not ctx.trace.hosts or not any(np.isfinite(h.net_rx).any() for h in ctx.trace.hosts):
        return "the machines' network traffic was not recorded"
    act = ctx.active
    util = float(np.mean([s.util_mean for s in act])) if act else 0.0
    if util >= NET_UTIL:
        return None
    mine = [o for o in ctx.offers if o.instance_type == ctx.run.instance_type and o.network_gbps]
    if not mine:
        return f"the network bandwidth of {ctx.run.instance_type or 'this machine'} is unknown"
    link_gbps = float(mine[0].network_gbps)
    link = link_gbps * 1e9 / 8
    p50s, peaks, starts, flags = [], [], [], []
    for h in ctx.trace.hosts:
        traffic = np.fmax(h.net_rx, h.net_tx)
        ok = np.isfinite(traffic)
        if ok.any():
            p50s.append(float(np.median(traffic[ok])))
            peaks.append(float(np.percentile(traffic[ok], 95)))
            starts.append(h.t[ok])
            flags.append(traffic[ok] >= NET_SATURATED * link)
    if not p50s or float(np.median(p50s)) < NET_SATURATED * link:
        return None
    t, f = np.concatenate(starts), np.concatenate(flags)
    order = np.argsort(t, kind="stable")
    speedup = _speedup(util)
    params = {"nodes": ctx.run.nodes, "net_gbps": _r(max(peaks) * 8 / 1e9), "link_gbps": _r(link_gbps, 0),
              "net_percent": round(100 * float(np.median(p50s)) / link), "util": round(util)}
    evidence = {"window": flagged_window(ctx.trace, t[order], f[order]), "nodes": ctx.run.nodes,
                "net_p50_gbit_s": _r(float(np.median(p50s)) * 8 / 1e9, 2), "net_p95_gbit_s": params["net_gbps"],
                "link_gbit_s": link_gbps, "util_mean_percent": _r(util), "expected_speedup": speedup,
                **_nvlink(act, "nvlink", 50)}
    rdma = [] if not ctx.run.gpu_model or mine[0].rdma else ctx.cheapest(
        OfferQuery(gpu_model=ctx.run.gpu_model, gpu_count=max(1, ctx.run.gpus_per_node), rdma=True))
    if rdma and ctx.cost is not None:
        o = rdma[0]
        price = o.hourly(ctx.run.spot) or 0.0
        amount = ctx.cost - price * ctx.run.nodes * ctx.hours / speedup
        params.update(offer=o.instance_type, offer_price=ctx.money(price))
        evidence.update(offer=o.instance_type, offer_network_gbit_s=o.network_gbps, offer_price_per_hour=price,
                        saving_basis="the run's cost - the offer's price x nodes x hours / speed-up")
        return _advice(ctx, "network", T_NET_OFFER, params, evidence, amount)
    amount = ctx.cost * (1 - 1 / speedup) if ctx.cost is not None else None
    evidence["saving_basis"] = "the run's cost x (1 - 1/speed-up)"
    return _advice(ctx, "network", T_NET, params, evidence, amount)


def batch_size(ctx: Context) -> Outcome:
    act = ctx.active
    if not act:
        return None
    fractions = [s.mem_fraction for s in act]
    if any(f != f for f in fractions):
        return "memory.used or memory.total was not recorded"
    frac = max(fractions)
    if frac >= MEM_LOW:
        return None
    t, moderate = _windows(act, lambda s: (s.win_mean >= MODERATE[0]) & (s.win_mean <= MODERATE[1]))
    share = float(moderate.mean()) if moderate.size else 0.0
    if share < MODERATE_SHARE:
        return None
    util = float(np.mean([s.util_mean for s in act]))
    factor = int(min(8, max(2, 2 ** math.floor(math.log2(0.85 / max(frac, 1e-3))))))
    speedup = _r(min(factor, TARGET_UTIL / max(util, 1.0)))
    if speedup < 1.1:
        return None
    amount = ctx.cost * (1 - 1 / speedup) if ctx.cost is not None else None
    evidence = {"window": flagged_window(ctx.trace, t, moderate), "gpus": [s.trace.label for s in act],
                "mem_p95_percent": _r(100 * frac), "util_mean_percent": _r(util),
                "moderate_minutes_percent": _r(100 * share), "batch_factor": factor, "expected_speedup": speedup,
                "saving_basis": "the run's cost x (1 - 1/speed-up)"}
    return _advice(ctx, "batch_size", T_BATCH, {"mem_percent": round(100 * frac), "util": round(util),
                                                "factor": factor, "speedup": speedup}, evidence, amount)


def right_size(ctx: Context) -> Outcome:
    act = ctx.active
    if not act:
        return None
    price = ctx.run.price_per_hour
    if price is None:
        return "no price for this run (give --price-per-hour)"
    model = ctx.run.gpu_model or act[0].trace.model
    perf = GPU_TFLOPS.get(model or "")
    if perf is None:
        return f"no throughput figure for the {model or 'unknown'} GPU"
    peak = max(s.mem_peak for s in act)
    if peak != peak:
        return "memory.used was not recorded"
    util_p90 = max(s.util_p90 for s in act)
    if util_p90 >= RIGHT_SIZE_MAX_UTIL:
        return None
    need_gb = peak * HEADROOM / 1024.0
    used = max(1, _used_per_node(ctx))
    current_mem = max(s.mem_total for s in act) / 1024.0
    for o in ctx.cheapest(OfferQuery(gpu_count=used, min_gpu_memory_gb=need_gb), below=price * CHEAPER):
        cand = GPU_TFLOPS.get(o.gpu_model or "")
        if cand is None or (o.gpu_model == model and o.gpu_memory_gb >= current_mem - 1):
            continue
        needed = util_p90 * perf / cand
        if needed > FITS_UTIL:
            continue
        offer_price = o.hourly(ctx.run.spot) or 0.0
        amount = (price - offer_price) * ctx.run.nodes * ctx.hours
        params = {"mem_gb": _r(peak / 1024.0), "util": round(util_p90), "model": model, "cand_model": o.gpu_model,
                  "cand_mem": _r(o.gpu_memory_gb, 0), "offer": o.instance_type, "offer_price": ctx.money(offer_price),
                  "price": ctx.money(price)}
        evidence = {"window": whole_run(ctx.trace),
                    "mem_peak_gb": params["mem_gb"], "util_p90_percent": _r(util_p90), "gpu_model": model,
                    "offer": o.instance_type, "offer_region": o.region, "offer_gpu_model": o.gpu_model,
                    "offer_gpu_memory_gb": o.gpu_memory_gb, "offer_gpus": o.gpu_count,
                    "offer_util_needed_percent": _r(needed), "offer_price_per_hour": offer_price,
                    "price_per_hour": price, "saving_basis": "price difference x nodes x hours"}
        return _advice(ctx, "right_size", T_RIGHT, params, evidence, amount)
    return None


def mixed_precision(ctx: Context) -> Outcome:
    amp = [s for s in ctx.active if s.trace.model in AMP_MODELS]
    if not amp:
        return None
    if not any(np.isfinite(s.trace.power).any() for s in amp):
        return "power.draw was not recorded"
    util = float(np.mean([s.util_mean for s in amp]))
    if util < BUSY:
        return None
    fractions = [s.power_fraction for s in amp if s.power_fraction == s.power_fraction]
    if not fractions:
        return "the power limit is unknown (record power.limit)"
    frac = float(np.median(fractions))
    if frac > LOW_POWER:
        return None
    model = amp[0].trace.model
    clocks = [s.clock_fraction for s in amp if s.clock_fraction == s.clock_fraction]
    clock = float(np.median(clocks)) if clocks else math.nan
    if clock < CLOCK_HELD:  # a slowed-down GPU draws little whatever its math: AMP is not what it needs
        return (f"the busy {model} GPUs ran at {100 * clock:.0f}% of their maximum SM clock, held down (heat, a power "
                "cap or set application clocks), so their low power draw says nothing of FP32 math: see "
                "`nvidia-smi -q -d PERFORMANCE`")
    amount = ctx.cost * (1 - 1 / AMP_SPEEDUP) if ctx.cost is not None else None
    t, busy = _windows(amp, lambda s: s.win_mean >= BUSY)
    evidence = {"window": flagged_window(ctx.trace, t, busy), "gpu_model": model, "util_mean_percent": _r(util),
                "power_p50_w": _r(float(np.median([s.power_p50 for s in amp]))),
                "power_limit_w": _r(float(np.median([s.power_limit for s in amp]))),
                "power_percent_of_limit": _r(100 * frac), "expected_speedup": AMP_SPEEDUP,
                "saving_basis": "the run's cost x (1 - 1/speed-up)"}
    if clocks:
        evidence["sm_clock_busy_p50_mhz"] = _r(float(np.median([s.sm_clock_busy_p50 for s in amp])))
        evidence["sm_clock_percent_of_max"] = _r(100 * clock)
    return _advice(ctx, "mixed_precision", T_AMP, {"model": model, "util": round(util),
                                                   "power_percent": round(100 * frac), "speedup": AMP_SPEEDUP},
                   evidence, amount)


def spot(ctx: Context) -> Outcome:
    run = ctx.run
    if run.spot:
        return None
    if run.checkpoints is None:
        return "not known whether the job resumes from checkpoints (a launch's spec says it; for a log, --checkpoints)"
    if not run.checkpoints or ctx.hours < SPOT_MIN_HOURS:
        return None
    if run.price_per_hour is None:
        return "no price for this run"
    same = [o for o in ctx.offers if o.instance_type == run.instance_type and o.prices.spot is not None
            and o.prices.currency == run.currency]
    same.sort(key=lambda o: (o.region != run.region, o.prices.spot))
    if not same:
        return f"no spot price known for {run.instance_type or 'this machine'}"
    o = same[0]
    spot_price = float(o.prices.spot)
    spot_cost = spot_price * run.nodes * ctx.hours
    cost = ctx.cost if ctx.cost is not None else run.price_per_hour * run.nodes * ctx.hours
    amount = cost - spot_cost
    params = {"hours": _r(ctx.hours), "offer_price": ctx.money(spot_price), "price": ctx.money(run.price_per_hour),
              "spot_cost": ctx.money(spot_cost), "cost": ctx.money(cost)}
    evidence = {"window": whole_run(ctx.trace), "hours": _r(ctx.hours, 2),
                "nodes": run.nodes, "on_demand_per_hour": run.price_per_hour, "spot_per_hour": spot_price,
                "spot_price_region": o.region, "spot_price_source": f"{o.prices.source} {o.prices.as_of}".strip(),
                "saving_basis": "the run's cost - spot price x nodes x hours"}
    return _advice(ctx, "spot", T_SPOT, params, evidence, amount)


#: in order: the bottleneck rules first, so the ones they silence can see them
RULES: tuple[tuple[str, Callable[[Context], Outcome]], ...] = (
    ("idle_gpus", idle_gpus), ("data_loading", data_loading), ("network", network), ("batch_size", batch_size),
    ("right_size", right_size), ("mixed_precision", mixed_precision), ("spot", spot))
RULE_IDS = tuple(r for r, _ in RULES)
BOTTLENECKS = ("idle_gpus", "data_loading", "network")
QUIET_AFTER_BOTTLENECK = ("batch_size", "right_size")
