"""The one-page run report: cost, duration, per-GPU utilization summary, advice and plots of one launch.

:func:`build_report` reads one launch from the store (blocks on SQLite: a worker in the GUI)
and returns a :class:`RunReport` of plain values; :mod:`workbench.core.telemetry.report_html`
renders it (HTML with SVG plots, no Qt); the GUI prints that HTML to PDF with Qt.

The figures come from the same code the rest of the app uses, so they match the Spend view
and ``workbench cost``: cost is :meth:`SpendBook.launch_total` (the launch's currency, disks
included), duration the longest billed compute time of its machines, and the per-GPU figures
are over the stored minute samples; a GPU's NVLink rx/tx (what it exchanged with the other GPUs)
is the mean of its stored minutes, NaN when the machine reported none.  A job in a container names its
image by the reference in its stored spec and by digest where that is known: the reference pins one
(``…@sha256:…``), or the pull wrote it into the job's log (Docker's ``Digest: sha256:…``); otherwise the
digest is unknown and the report says so.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.core import paths
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import Offer
from workbench.core.domain.cluster import node_rank_of
from workbench.core.lifecycle.outcome import relaunch_of
from workbench.core.store.attempts import PREEMPTION
from workbench.core.telemetry.advice_base import mean, pct
from workbench.core.telemetry.advisor import Advisory, advise
from workbench.core.telemetry.trace import Trace, trace_from_store


@dataclass(frozen=True)
class GpuSummary:
    """One GPU over the run (NaN where not reported)."""

    node: str
    index: int
    name: str
    util_mean: float
    util_p50: float
    util_p90: float
    mem_peak_mib: float
    mem_total_mib: float
    power_mean_w: float
    samples: int
    nvlink_rx_mbps: float = math.nan  # mean over the minutes that have it (nvidia-smi nvlink -gt d)
    nvlink_tx_mbps: float = math.nan

    @property
    def label(self) -> str:
        return f"{self.node} · GPU {self.index}" if self.node else f"GPU {self.index}"


@dataclass(frozen=True, eq=False)
class RunReport:
    """Everything the report shows, as values."""

    launch_id: str
    name: str
    provider: str
    region: str
    instance_type: str
    nodes: int
    gpu_model: str
    spot: bool
    status: str
    currency: str
    cost: float
    price_per_hour: float | None
    duration_s: float  # the longest billed compute time of the launch's machines
    started: float | None
    gpus: tuple[GpuSummary, ...]
    advisory: Advisory
    trace: Trace
    generated_at: float
    relaunched_as: int | None = None  # the attempt recovery started after this one
    exit_code: int | None = None  # the job's (the head node's, for several machines)
    image: str | None = None  # the container image's reference, from the stored spec; None: no container
    image_digest: str | None = None  # sha256:… of the image that ran, where known (see the module docstring)


_DIGEST_RE = re.compile(rb"(?m)^(?:Digest: |\[workbench\] image .* digest )(sha256:[0-9a-f]{64})\b")
_LOG_HEAD = 4 << 20  # the pull is the job's first output: its digest is near the start of the log


def image_digest(launch_id: str, reference: str) -> str | None:
    """The digest of the image a launch ran: pinned by its reference, else as its pull logged it; None: unknown."""
    if "@sha256:" in reference:
        return reference.rsplit("@", 1)[1]
    try:
        with open(paths.job_log(launch_id), "rb") as f:
            head = f.read(_LOG_HEAD)
    except (OSError, ConfigError):  # no log kept here, or a launch id that names no folder
        return None
    found = _DIGEST_RE.search(head)
    return found.group(1).decode() if found else None


def summarize(trace: Trace) -> tuple[GpuSummary, ...]:
    """Per-GPU utilization, memory and power summary, in node then index order."""
    out = []
    for g in trace.gpus:
        mem = g.mem_used[np.isfinite(g.mem_used)]
        out.append(GpuSummary(g.node, g.index, g.name, mean(g.util), pct(g.util, 50), pct(g.util, 90),
                              float(mem.max()) if mem.size else math.nan, g.mem_total, mean(g.power), int(g.t.size),
                              mean(g.nvlink_rx), mean(g.nvlink_tx)))
    return tuple(out)


def build_report(store, launch_id: str, offers: Sequence[Offer] = (), now: float | None = None) -> RunReport:
    """Read and advise on one launch (NotFoundError for an unknown id)."""
    now = time.time() if now is None else now
    trace = trace_from_store(store, launch_id, now)
    rec = store.find_launch(launch_id)
    instances = store.list_instances(launch_id=launch_id)
    started = min((i.launched_at for i in instances if i.launched_at), default=rec.created_at if rec else None)
    run = trace.run
    again = relaunch_of(store, launch_id)
    status = rec.status if rec else ""
    if again is not None and again[0] == PREEMPTION:
        status = "interrupted"  # the cloud took the machine back; recovery went on (not "failed")
    image = ((rec.spec or {}).get("image") or {}).get("name") if rec is not None else None
    return RunReport(
        launch_id=launch_id, name=run.name or launch_id, provider=run.provider or "", region=run.region or "",
        instance_type=run.instance_type or "", nodes=run.nodes, gpu_model=run.gpu_model or "", spot=run.spot,
        status=status, relaunched_as=again[1] if again else None,
        exit_code=next((i.exit_code for i in sorted(instances, key=lambda i: node_rank_of(i.extra))
                        if i.exit_code is not None), None), currency=run.currency, cost=run.cost or 0.0,
        price_per_hour=run.price_per_hour, duration_s=run.billed_s or 0.0, started=started, gpus=summarize(trace),
        advisory=advise(trace, offers), trace=trace, generated_at=now,
        image=image, image_digest=image_digest(launch_id, image) if image else None)
