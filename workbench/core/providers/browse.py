"""Comparing GPU offers across every cloud, with or without an account, and saying why nothing matched.

:func:`browse` asks every profile for offers (:func:`catalog.collect`), then adds the price catalog
(:mod:`price_snapshot`: the bundled snapshots plus the user's refreshed copies) for each cloud that no
profile answered for: no account yet, an account that could not be asked, or a provider whose SDK is
missing.  Those offers carry their price source and date and are marked ``needs_account`` with a note
("add an account to launch"), so a new user compares GPUs and prices before having any account, and
the launch wizard shows them without letting them be chosen.

When nothing matches, :func:`explain_empty` says the real reason: the query asks for something no
cloud offers (naming what exists instead), no account can launch it, or the price lists could not be
read; never a vague "ask for less".

Blocking (asks the providers): call from a worker thread.  Only WorkbenchErrors are returned (beside
the offers), none raised for one failing profile.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from workbench.core.domain.errors import AuthError, PluginError, TransientError, WorkbenchError
from workbench.core.domain.models import JobSpec, Offer, Profile
from workbench.core.domain.phrase import N_
from workbench.core.providers import price_snapshot
from workbench.core.providers.catalog import (OfferQuery, RankedOffer, collect, comparable_price, matches, rank,
                                              user_rate)

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

NEEDS_ACCOUNT_NOTE = N_("add an account to launch")

# kinds of EmptyReason (stable: shown in --json as "reason.kind")
NO_MATCH = "no_match"
NO_ACCOUNT = "no_account"
PRICES_FAILED = "price_api_failed"
ACCOUNTS_FAILED = "accounts_failed"


@dataclass(frozen=True)
class EmptyReason:
    """Why no offer matched: ``kind`` (one of the constants above) and a sentence for people."""

    kind: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Browse:
    """The offers of every account and, for clouds without a usable account, of the price catalog."""

    ranked: list[RankedOffer]
    errors: list[tuple[str, WorkbenchError]]
    catalog_providers: list[str]  # clouds priced from the catalog (no profile answered for them)
    reason: EmptyReason | None  # set when ``ranked`` is empty

    @property
    def oldest_price(self) -> str:
        """The oldest price date among the offers shown ('' when none)."""
        return min((r.offer.prices.as_of for r in self.ranked if r.offer.prices.as_of), default="")


def _catalog_note(provider: str, accounts: "Accounts", asked: set[str]) -> str:
    entry = accounts.entries.get(provider)
    if entry is not None and not entry.available:
        return f"{entry.display_name} is unavailable: " + (entry.fix or entry.reason or "see `workbench providers`")
    if provider in asked:
        return "your account did not answer: catalog price; " + NEEDS_ACCOUNT_NOTE + " that works"
    return NEEDS_ACCOUNT_NOTE


def catalog_offers(accounts: "Accounts", exclude: Iterable[str], asked: Iterable[str] = (),
                   provider: str | None = None) -> list[Offer]:
    """Catalog offers of every cloud not in ``exclude``, marked not launchable with the reason."""
    skip, asked_set = set(exclude), set(asked)
    out = []
    for offer in price_snapshot.offers(provider):
        if offer.provider in skip:
            continue
        note = _catalog_note(offer.provider, accounts, asked_set)
        out.append(dataclasses.replace(offer, available=False, availability_note=note,
                                       extra={**offer.extra, "needs_account": True}))
    return out


def browse(accounts: "Accounts", q: OfferQuery, profiles: Sequence[Profile] | None = None,
           include_catalog: bool = True) -> Browse:
    """Offers of every profile (or ``profiles``), plus the catalog for clouds no profile answered for.

    Each profile is asked once (for the query's provider and region only); the other constraints are
    applied here, so an empty answer can be explained from everything that was offered.
    """
    chosen = [p for p in (profiles if profiles is not None else accounts.profiles())
              if not q.provider or p.provider == q.provider]
    everything, errors = collect(accounts, OfferQuery(provider=q.provider, region=q.region), chosen)
    ranked = rank(((r.profile, r.offer) for r in everything), q, user_rate(accounts))
    failed = {name for name, _ in errors}
    answered = {p.provider for p in chosen if p.name not in failed}
    asked = {p.provider for p in chosen}
    extra: list[Offer] = []
    every: list[Offer] = []  # the catalog in every region (to explain an empty answer)
    if include_catalog:
        every = catalog_offers(accounts, answered, asked, q.provider)
        extra = [o for o in every if not q.region or o.region == q.region]
        matched = [RankedOffer("", o, o.hourly(q.spot), needs_account=True) for o in extra if matches(o, q)]
        ranked = _merge(ranked, matched, user_rate(accounts))
    catalog_providers = sorted({o.provider for o in extra})
    reason = None
    if not ranked:
        reason = explain_empty(q, [r.offer for r in everything] + every, errors,
                               has_cloud_account=any(p.provider != "local" for p in chosen),
                               catalog_included=include_catalog)
    return Browse(ranked, errors, catalog_providers, reason)


def _merge(live: list[RankedOffer], catalog: list[RankedOffer], cny_per_usd: float | None) -> list[RankedOffer]:
    """Live offers first in their ranking, then catalog offers cheapest first (they cannot be launched),
    CNY and USD compared at the user's rate like the live ones."""
    catalog = sorted(catalog, key=lambda r: (r.price is None, comparable_price(r, cny_per_usd) if r.price else 0.0,
                                             r.offer.gpu_count, r.offer.provider, r.offer.region,
                                             r.offer.instance_type))
    return live + catalog


def _money(x: float, currency: str) -> str:
    return f"{'$' if currency == 'USD' else currency + ' '}{x:,.2f}"


def explain_empty(q: OfferQuery, candidates: Sequence[Offer], errors: Sequence[tuple[str, WorkbenchError]],
                  has_cloud_account: bool, catalog_included: bool = True) -> EmptyReason:
    """The real reason why no offer in ``candidates`` (everything known, unfiltered) matches ``q``."""
    failed = [f"{name}: {exc.message}" for name, exc in errors]
    if not candidates:
        if errors and all(isinstance(e, (TransientError, PluginError)) for _, e in errors):
            return EmptyReason(PRICES_FAILED, "the price lists could not be read: " + "; ".join(failed))
        if errors:
            return EmptyReason(ACCOUNTS_FAILED, "no account could be asked: " + "; ".join(failed))
        if not has_cloud_account and not catalog_included:
            return EmptyReason(NO_ACCOUNT, "no cloud account is set up; add one in Accounts "
                                           "(`workbench profiles add aws NAME`)")
        return EmptyReason(PRICES_FAILED, "no price list is available: run `workbench catalog update`")
    model = (q.gpu_model or "").upper()
    pool = list(candidates)
    if q.provider:
        pool = [o for o in pool if o.provider == q.provider]
        if not pool:
            return EmptyReason(NO_MATCH, f"nothing is known from provider {q.provider!r}")
    if model:
        same = [o for o in pool if (o.gpu_model or "").upper() == model]
        if not same:
            if errors:  # an account that could not be asked may have offered it
                kind = PRICES_FAILED if all(isinstance(e, TransientError) for _, e in errors) else ACCOUNTS_FAILED
                return EmptyReason(kind, f"no answer offers {q.gpu_model} GPUs, and some accounts could not be "
                                         "asked: " + "; ".join(failed))
            known = sorted({o.gpu_model for o in pool if o.gpu_model})
            return EmptyReason(NO_MATCH, f"no cloud offers {q.gpu_model} GPUs"
                                         + (f"; known GPUs: {', '.join(known)}" if known else ""))
        pool = same
    want = q.gpu_count or (1 if model else 0)
    if want and not any(o.gpu_count >= want for o in pool):
        most = max(o.gpu_count for o in pool)
        return EmptyReason(NO_MATCH, f"no machine has {want} {q.gpu_model or 'GPU'}s; the largest has {most} "
                                     f"(a job can use several machines)")
    pool = [o for o in pool if o.gpu_count >= want]
    if q.region:
        here = [o for o in pool if o.region == q.region]
        if not here:
            where = sorted({o.region for o in pool})
            return EmptyReason(NO_MATCH, f"none in region {q.region}; offered in {', '.join(where[:8])}")
        pool = here
    for label, ok in (("GPU memory", lambda o: not q.min_gpu_memory_gb or o.gpu_memory_gb >= q.min_gpu_memory_gb),
                      ("vCPUs", lambda o: not q.cpus or o.vcpus >= q.cpus),
                      ("memory", lambda o: not q.memory_gb or o.memory_gb >= q.memory_gb),
                      ("network", lambda o: not q.network_min_gbps or (o.network_gbps or 0) >= q.network_min_gbps),
                      ("RDMA", lambda o: not q.rdma or o.rdma)):
        if not any(ok(o) for o in pool):
            return EmptyReason(NO_MATCH, f"none of the {len(pool)} machines of that kind has the {label} asked for")
        pool = [o for o in pool if ok(o)]
    if q.spot:
        spot = [o for o in pool if o.prices.spot is not None]
        if not spot:
            return EmptyReason(NO_MATCH, "none of them has a spot price; ask for on-demand")
        pool = spot
    if q.max_price is not None:
        cheapest = min(pool, key=lambda o: o.hourly(q.spot) or float("inf"))
        price = cheapest.hourly(q.spot)
        if price is not None:
            return EmptyReason(NO_MATCH, f"the cheapest is {_money(price, cheapest.prices.currency)}/h "
                                         f"({cheapest.provider} {cheapest.instance_type}), above the limit of "
                                         f"{q.max_price:g}/h")
    if failed:
        return EmptyReason(ACCOUNTS_FAILED, "; ".join(failed))
    if any(isinstance(e, AuthError) for _, e in errors):
        return EmptyReason(NO_ACCOUNT, "no account can launch it")
    return EmptyReason(NO_MATCH, "no offer fits every constraint of the job")


def browse_spec(accounts: "Accounts", spec: JobSpec, catalog: str = "when-nothing-launchable") -> Browse:
    """:func:`browse` for a job spec (the wizard's offer table), with its ``alternatives`` if it has any.

    Without alternatives it is ``browse`` of the spec's resources.  With them, the accounts' offers come
    from :func:`offer_choice.collect_spec_offers` (in the spec's order) and the catalog adds, for the
    clouds no account answered for, the offers that match one of the alternatives (tagged with it).

    ``catalog``: "always", or "when-nothing-launchable" (the wizard's default: catalog offers cannot be
    launched, so they are shown, with the reason, only when no account's offer can be chosen; the
    Prices view compares everything).
    """
    result = _browse_spec(accounts, spec)
    if catalog == "always" or not any(r.offer.available for r in result.ranked if not r.needs_account):
        return result
    live = [r for r in result.ranked if not r.needs_account]
    return Browse(live, result.errors, [], None)


def _browse_spec(accounts: "Accounts", spec: JobSpec) -> Browse:
    if not spec.alternatives:
        return browse(accounts, OfferQuery.from_spec(spec))
    from workbench.core.providers.offer_choice import collect_spec_offers

    ranked, errors = collect_spec_offers(accounts, spec)
    chosen = accounts.profiles()
    failed = {name for name, _ in errors}
    answered = {p.provider for p in chosen if p.name not in failed}
    every = catalog_offers(accounts, answered, {p.provider for p in chosen})
    seen: set[tuple[str, str, str]] = set()
    extra: list[RankedOffer] = []
    for index, alt in enumerate(spec.alternatives):
        q = OfferQuery.from_spec(spec, alternative=alt)
        for o in every:
            key = (o.provider, o.region, o.instance_type)
            if key not in seen and matches(o, q):
                seen.add(key)
                extra.append(RankedOffer("", o, o.hourly(q.spot), alternative=index, needs_account=True))
    ranked = _merge(ranked, extra, user_rate(accounts))
    reason = None
    if not ranked:
        first = OfferQuery.from_spec(spec, alternative=spec.alternatives[0])
        reason = explain_empty(first, every, errors, has_cloud_account=any(p.provider != "local" for p in chosen))
    return Browse(ranked, errors, sorted({r.offer.provider for r in extra}), reason)
