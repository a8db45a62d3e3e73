"""In what order offers are shown and chosen: cheapest first, yuan and dollars compared at the user's
rate (else a reference rate), unpriced and unavailable ones last; a spec's ``choose: in_order`` puts its
first alternative that has an offer first.  Pure functions, safe on any thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from workbench.core.domain.models import CHOOSE_IN_ORDER, JobSpec, Offer
from workbench.core.offers.query import OfferQuery, RankedOffer, matches

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

#: CNY per USD used only to ORDER offers priced in different currencies when the user has set no rate of
#: their own (``workbench.core.money.currency``); shown prices always keep their own currency
REFERENCE_CNY_PER_USD = 7.2


def user_rate(accounts: "Accounts") -> float | None:
    """The user's CNY-per-USD rate, if set (ordering across currencies); never raises."""
    try:  # the setting workbench.core.money.currency writes (read here: offers sit below money)
        rate = float(accounts.store.get_setting("currency.cny_per_usd") or "nan")
    except Exception:  # noqa: BLE001 - ordering falls back to the reference rate
        return None
    return rate if rate > 0 and rate != float("inf") else None


def comparable_price(r: RankedOffer, cny_per_usd: float | None = None) -> float:
    """The hourly price in USD for ordering only (0 when unpriced)."""
    if r.price is None:
        return 0.0
    if r.offer.prices.currency == "CNY":
        return r.price / (cny_per_usd or REFERENCE_CNY_PER_USD)
    return r.price


def rank_key(r: RankedOffer, cny_per_usd: float | None = None) -> tuple[object, ...]:
    """Cheapest first; unpriced last, unavailable (no quota/capacity) after priced; at one price the fewest GPUs,
    then a cluster's partition with nodes free now before one without."""
    return (not r.offer.available, r.price is None, comparable_price(r, cny_per_usd),
            r.offer.gpu_count, (r.offer.extra or {}).get("nodes_free", 1) == 0,  # a cluster's busy partitions after
            r.offer.provider, r.offer.region, r.offer.instance_type)


def rank(offers: Iterable[tuple[str, Offer]], q: OfferQuery,
         cny_per_usd: float | None = None) -> list[RankedOffer]:
    """Matching offers, cheapest first; unpriced last, unavailable (no quota/capacity) after priced.

    Prices in CNY are compared with USD ones at ``cny_per_usd`` (the user's rate) or, without one,
    at :data:`REFERENCE_CNY_PER_USD`.
    """
    out = [RankedOffer(p, o, o.hourly(q.spot)) for p, o in offers if matches(o, q)]
    out.sort(key=lambda r: rank_key(r, cny_per_usd))
    return out


def order_offers(ranked: list[RankedOffer], spec: JobSpec | None, cny_per_usd: float | None = None
                 ) -> list[RankedOffer]:
    """``ranked`` in the order ``spec`` chooses (sorted in place, and returned): cheapest first (yuan and
    dollars compared at ``cny_per_usd``, else the reference rate), or with ``choose: in_order`` the first
    alternative that has an offer, cheapest within it."""
    if spec is not None and spec.choose == CHOOSE_IN_ORDER:
        ranked.sort(key=lambda r: (not r.offer.available, r.alternative or 0, rank_key(r, cny_per_usd)))
    else:
        ranked.sort(key=lambda r: rank_key(r, cny_per_usd))
    return ranked


def after_live(live: list[RankedOffer], catalog: list[RankedOffer], cny_per_usd: float | None) -> list[RankedOffer]:
    """Live offers first in their order, then catalog offers cheapest first (they cannot be launched),
    CNY and USD compared at the user's rate like the live ones."""
    catalog = sorted(catalog, key=lambda r: (r.price is None, comparable_price(r, cny_per_usd) if r.price else 0.0,
                                             r.offer.gpu_count, r.offer.provider, r.offer.region,
                                             r.offer.instance_type))
    return live + catalog
