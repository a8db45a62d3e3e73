"""Offers across every configured profile: filter, sort cheapest first.

Each provider supplies its own offers (live prices with a bundled snapshot
as fallback); this module asks all profiles in parallel on a bounded pool,
keeps going when one provider fails (its error is returned beside the
offers), and ranks what matches a query or a job spec.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterable

from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.domain.models import Alternative, JobSpec, Offer, Profile

log = logging.getLogger("workbench.catalog")


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
            instance_type=alt.instance_type, gpu_vendor=gpu.vendor if gpu else None,
        )


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
    price = offer.hourly(q.spot)
    if q.spot and price is None:
        return False
    if q.max_price is not None and (price is None or price > q.max_price):
        return False
    return True


#: CNY per USD used only to ORDER offers priced in different currencies when the user has set no rate of
#: their own (``workbench.core.money.currency``); shown prices always keep their own currency
REFERENCE_CNY_PER_USD = 7.2


def rank(offers: Iterable[tuple[str, Offer]], q: OfferQuery,
         cny_per_usd: float | None = None) -> list[RankedOffer]:
    """Matching offers, cheapest first; unpriced last, unavailable (no quota/capacity) after priced.

    Prices in CNY are compared with USD ones at ``cny_per_usd`` (the user's rate) or, without one,
    at :data:`REFERENCE_CNY_PER_USD`.
    """
    out = [RankedOffer(p, o, o.hourly(q.spot)) for p, o in offers if matches(o, q)]
    out.sort(key=lambda r: rank_key(r, cny_per_usd))
    return out


def comparable_price(r: RankedOffer, cny_per_usd: float | None = None) -> float:
    """The hourly price in USD for ordering only (0 when unpriced)."""
    if r.price is None:
        return 0.0
    if r.offer.prices.currency == "CNY":
        return r.price / (cny_per_usd or REFERENCE_CNY_PER_USD)
    return r.price


def rank_key(r: RankedOffer, cny_per_usd: float | None = None) -> tuple[object, ...]:
    """Cheapest first; unpriced last, unavailable (no quota/capacity) after priced."""
    return (not r.offer.available, r.price is None, comparable_price(r, cny_per_usd),
            r.offer.gpu_count, r.offer.provider, r.offer.region, r.offer.instance_type)


def collect(accounts: Accounts, q: OfferQuery, profiles: Iterable[Profile] | None = None,
            max_workers: int = 8) -> tuple[list[RankedOffer], list[tuple[str, WorkbenchError]]]:
    """Ask every (matching) profile's provider for offers in parallel.

    Returns the ranked offers and, separately, (profile name, error) for each
    provider that failed, so one broken account never hides the others.
    """
    chosen = [p for p in (profiles if profiles is not None else accounts.profiles())
              if not q.provider or p.provider == q.provider]

    def one(p: Profile) -> list[tuple[str, Offer]]:
        return [(p.name, o) for o in accounts.provider(p).offers(q.region)]

    found: list[tuple[str, Offer]] = []
    errors: list[tuple[str, WorkbenchError]] = []

    def settle(name: str, get: Callable[[], list[tuple[str, Offer]]]) -> None:
        try:
            found.extend(get())
        except WorkbenchError as exc:
            errors.append((name, exc))
        except Exception as exc:  # a plugin bug must not hide the other providers
            log.exception("offers from profile %s failed", name)
            errors.append((name, WorkbenchError(f"{type(exc).__name__}: {exc}")))

    if len(chosen) == 1:  # one profile (often Local alone): no thread to start for it
        settle(chosen[0].name, lambda: one(chosen[0]))
    elif chosen:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(chosen)), thread_name_prefix="offers") as pool:
            futures = {p.name: pool.submit(one, p) for p in chosen}
            for name, fut in futures.items():
                settle(name, fut.result)
    else:
        return [], []
    return rank(found, q, user_rate(accounts)), errors


def user_rate(accounts: Accounts) -> float | None:
    """The user's CNY-per-USD rate, if set (ordering across currencies); never raises."""
    try:  # the setting workbench.core.money.currency writes (read here: providers sit below money)
        rate = float(accounts.store.get_setting("currency.cny_per_usd") or "nan")
    except Exception:  # noqa: BLE001 - ordering falls back to the reference rate
        return None
    return rate if rate > 0 and rate != float("inf") else None
