"""What a job asks of a machine (:class:`OfferQuery`), whether an offer gives it (:func:`matches`), and an
offer found for it (:class:`RankedOffer`).  Pure data and functions, safe on any thread."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.domain.models import Alternative, JobSpec, Offer
from workbench.core.providers.price_snapshot import CPU_ONLY


@dataclass(frozen=True)
class OfferQuery:
    """What the user asks for; None means "don't care"."""

    gpu_model: str | None = None
    gpu_count: int | None = None
    min_gpu_memory_gb: float | None = None
    provider: str | None = None
    region: str | None = None
    spot: bool = False
    max_price: float | None = None
    cpus: int | None = None
    memory_gb: float | None = None
    network_min_gbps: float | None = None
    rdma: bool = False
    cpu_only_ok: bool = True  # a query without a GPU also accepts CPU-only machines
    max_gpu_count: int | None = None  # ranges (dstack's H100:1..2); None: no upper bound
    max_gpu_memory_gb: float | None = None
    instance_type: str | None = None  # exactly this type (SkyPilot's instance_type)
    gpu_vendor: str | None = None  # "NVIDIA", "AMD", … (gpus.GPU_MODELS): only that maker's models
    #: also the clouds' small CPU machines (offers whose extra marks them ``CPU_ONLY``: the catalog's rows with
    #: gpu_count 0, the controller's types of issue 33); only a spec without a GPU asks for them, so the GPU
    #: lists (Prices, `workbench offers`, the planner, the advisor) never show them
    cpu_machines: bool = False
    #: the job's max runtime and node count: an offer whose ``extra`` says it runs jobs at most ``max_time_s`` (a
    #: cluster partition's time limit) or has fewer than ``nodes_total`` nodes cannot take it
    runtime_s: int | None = None
    nodes: int = 1

    @classmethod
    def from_spec(cls, spec: JobSpec, provider: str | None = None, region: str | None = None,
                  alternative: Alternative | None = None) -> "OfferQuery":
        """The query for ``spec``'s resources, or for one of its alternatives (its fields win)."""
        r = spec.resources
        alt = alternative or Alternative()
        gpu = alt.gpu or r.gpu
        return cls(
            gpu_model=gpu.model if gpu else None,
            gpu_count=gpu.count if gpu else None,
            min_gpu_memory_gb=gpu.min_memory_gb if gpu else None,
            max_gpu_count=gpu.max_count if gpu else None,
            max_gpu_memory_gb=gpu.max_memory_gb if gpu else None,
            provider=provider, region=region, spot=r.spot if alt.spot is None else alt.spot, max_price=r.max_price,
            cpus=r.cpus, memory_gb=r.memory_gb, network_min_gbps=r.network_min_gbps, rdma=r.rdma,
            instance_type=alt.instance_type, gpu_vendor=gpu.vendor if gpu else None, cpu_machines=gpu is None,
            runtime_s=spec.guards.max_runtime_minutes * 60 if spec.guards.max_runtime_minutes else None,
            nodes=spec.num_nodes,
        )


@dataclass(frozen=True)
class RankedOffer:
    profile: str  # "" for a catalog offer (no account answered for its cloud)
    offer: Offer
    price: float | None  # hourly price for the query's term (spot or on-demand)
    alternative: int | None = None  # index into the spec's alternatives this offer matched, if it has any
    needs_account: bool = False  # from the price catalog: compare it, add an account to launch it


def matches(offer: Offer, q: OfferQuery) -> bool:
    """True when ``offer`` satisfies every constraint of ``q``."""
    if q.provider and offer.provider != q.provider:
        return False
    if q.region and offer.region != q.region:
        return False
    if not q.cpu_machines and (offer.extra or {}).get(CPU_ONLY):
        return False
    if q.gpu_count is not None or q.gpu_model is not None:
        if offer.gpu_count < (q.gpu_count or 1):
            return False
        if q.gpu_model and (offer.gpu_model or "").upper() != q.gpu_model.upper():
            return False
    if q.min_gpu_memory_gb and offer.gpu_memory_gb < q.min_gpu_memory_gb:
        return False
    if q.max_gpu_count is not None and offer.gpu_count > q.max_gpu_count:
        return False
    if q.max_gpu_memory_gb is not None and offer.gpu_memory_gb > q.max_gpu_memory_gb:
        return False
    if q.instance_type and offer.instance_type.lower() != q.instance_type.lower():
        return False
    if q.gpu_vendor:
        known = GPU_MODELS.get(offer.gpu_model or "")
        if known is None or known.vendor.lower() != q.gpu_vendor.lower():
            return False
    if q.cpus and offer.vcpus < q.cpus:
        return False
    if q.memory_gb and offer.memory_gb < q.memory_gb:
        return False
    if q.network_min_gbps and (offer.network_gbps or 0) < q.network_min_gbps:
        return False
    if q.rdma and not offer.rdma:
        return False
    extra = offer.extra or {}
    if q.runtime_s and extra.get("max_time_s") and int(extra["max_time_s"]) < q.runtime_s:
        return False
    if q.nodes > 1 and extra.get("nodes_total") is not None and int(extra["nodes_total"]) < q.nodes:
        return False
    price = offer.hourly(q.spot)
    if q.spot and price is None:
        return False
    if q.max_price is not None and (price is None or price > q.max_price):
        return False
    return True


#: below this, an offer's network is no "fast interconnect" for multi-node training (without RDMA)
FAST_NETWORK_GBPS = 100.0


def interconnect(offer: Offer) -> str:
    """The offer's node-to-node network in a few words, e.g. "RDMA, 400 Gbps" or "25 Gbps"."""
    speed = f"{offer.network_gbps:g} Gbps" if offer.network_gbps else "speed unknown"
    return f"RDMA, {speed}" if offer.rdma else speed


def interconnect_note(offer: Offer) -> str | None:
    """What a multi-node job should know about ``offer``'s network; None for a fast interconnect."""
    if offer.rdma or (offer.network_gbps or 0) >= FAST_NETWORK_GBPS:
        return None
    return f"no fast interconnect ({interconnect(offer)}, no RDMA): multi-node training is network-bound"
