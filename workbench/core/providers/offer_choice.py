"""The offers a job spec may run on, with its ``alternatives`` (GPU choices, any_of/ordered, ranges).

A spec without alternatives is one query.  With alternatives, every alternative is a query of its
own (its fields over the spec's resources); an offer is kept once, tagged with the first
alternative it matches, and the list is ordered the way the spec chooses: ``cheapest`` of all, or
``in_order`` (the first alternative that has an offer wins, cheapest within it).

Threading and failures as :func:`workbench.core.providers.catalog.collect`: blocks on the provider,
runs on a worker thread, returns a provider's error beside the offers instead of raising.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.jobspec_choices import describe_alternative
from workbench.core.domain.models import CHOOSE_IN_ORDER, Alternative, JobSpec, Offer, Profile
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.catalog import OfferQuery, RankedOffer, collect, rank, rank_key


@dataclass(frozen=True)
class SpecOffers:
    """What :func:`spec_offers` found on one profile."""

    ranked: list[RankedOffer]
    errors: list[tuple[str, WorkbenchError]]
    #: (alternative index, why it was not considered here), e.g. it names another provider
    skipped: list[tuple[int, str]] = field(default_factory=list)


def queries_for(spec: JobSpec, prof: Profile, region: str | None, provider_from_user: bool = False,
                region_from_user: bool = False) -> tuple[list[tuple[int | None, OfferQuery]], list[tuple[int, str]]]:
    """The offer queries of ``spec`` on ``prof`` (index None: the spec's resources alone), and the skipped.

    An alternative naming another provider is skipped, unless the user chose this provider (or
    profile) for the launch: then its hardware is kept and its location dropped, as SkyPilot's
    ``--infra`` overrides a task's.  A region the user gave wins over the alternatives' regions.
    """
    if not spec.alternatives:
        return [(None, OfferQuery.from_spec(spec, provider=prof.provider, region=region))], []
    out: list[tuple[int | None, OfferQuery]] = []
    skipped: list[tuple[int, str]] = []
    for i, alt in enumerate(spec.alternatives):
        if alt.provider and alt.provider != prof.provider:
            if not provider_from_user:
                skipped.append((i, f"names provider {alt.provider}, not {prof.provider}"))
                continue
            alt = dataclasses.replace(alt, provider=None, region=None)
        if region_from_user or prof.provider == "local":
            alt = dataclasses.replace(alt, region=None)
        out.append((i, OfferQuery.from_spec(spec, provider=prof.provider, region=alt.region or region,
                                            alternative=alt)))
    return out, skipped


def spec_offers(accounts: Accounts, spec: JobSpec, prof: Profile, region: str | None,
                provider_from_user: bool = False, region_from_user: bool = False) -> SpecOffers:
    """Offers of ``prof`` that ``spec`` may run on, best first (see the module docstring and :func:`queries_for`)."""
    queries, skipped = queries_for(spec, prof, region, provider_from_user, region_from_user)
    if len(queries) == 1 and queries[0][0] is None:
        ranked, errors = collect(accounts, queries[0][1], profiles=[prof])
        return SpecOffers(ranked, errors, skipped)
    errors: list[tuple[str, WorkbenchError]] = []
    listed: dict[str | None, list[tuple[str, Offer]]] = {}
    for where in dict.fromkeys(q.region for _, q in queries):  # each region asked once, in order
        found, errs = collect(accounts, OfferQuery(provider=prof.provider, region=where), profiles=[prof])
        listed[where] = [(r.profile, r.offer) for r in found]
        errors.extend(errs)
    best: dict[tuple[str, str, str, str, bool], RankedOffer] = {}
    for index, q in queries:
        for r in rank(listed[q.region], q):
            key = (r.profile, r.offer.provider, r.offer.region, r.offer.instance_type, q.spot)
            if key not in best:  # the first alternative that matches it names it
                best[key] = dataclasses.replace(r, alternative=index)
    return SpecOffers(order_offers(list(best.values()), spec), errors, skipped)


def order_offers(ranked: list[RankedOffer], spec: JobSpec, cny_per_usd: float | None = None) -> list[RankedOffer]:
    """``ranked`` in the order ``spec`` chooses (sorted in place, and returned): cheapest first (yuan and
    dollars compared at ``cny_per_usd``, else the reference rate), or with ``choose: in_order`` the first
    alternative that has an offer, cheapest within it."""
    if spec.choose == CHOOSE_IN_ORDER:
        ranked.sort(key=lambda r: (not r.offer.available, r.alternative or 0, rank_key(r, cny_per_usd)))
    else:
        ranked.sort(key=lambda r: rank_key(r, cny_per_usd))
    return ranked


def effective_spot(spec: JobSpec, choice: RankedOffer) -> bool:
    """Spot or on-demand for the chosen offer: its alternative's choice, else the spec's."""
    alt = alternative_of(spec, choice)
    return spec.resources.spot if alt is None or alt.spot is None else alt.spot


def alternative_of(spec: JobSpec, choice: RankedOffer) -> Alternative | None:
    if choice.alternative is None or not 0 <= choice.alternative < len(spec.alternatives):
        return None
    return spec.alternatives[choice.alternative]


def describe_match(spec: JobSpec, choice: RankedOffer) -> str | None:
    """'alternative 2 of 4 (1× V100)' for a spec with alternatives, else None."""
    alt = alternative_of(spec, choice)
    if alt is None:
        return None
    assert choice.alternative is not None
    return f"alternative {choice.alternative + 1} of {len(spec.alternatives)} ({describe_alternative(alt)})"


def collect_spec_offers(accounts: Accounts, spec: JobSpec, max_workers: int = 8
                        ) -> tuple[list[RankedOffer], list[tuple[str, WorkbenchError]]]:
    """Every configured profile's offers that ``spec`` may run on (the wizard's offer table).

    Without alternatives this is :func:`collect` for the spec's resources.  With them, each
    profile is asked in parallel for the alternatives it can serve (an alternative naming
    another provider is skipped there), and the lists are merged in the spec's order.
    """
    if not spec.alternatives:
        return collect(accounts, OfferQuery.from_spec(spec), max_workers=max_workers)
    profiles = accounts.profiles()
    ranked: list[RankedOffer] = []
    errors: list[tuple[str, WorkbenchError]] = []
    if not profiles:
        return [], []
    with ThreadPoolExecutor(max_workers=min(max_workers, len(profiles)), thread_name_prefix="offers") as pool:
        futures = [pool.submit(spec_offers, accounts, spec, p, None) for p in profiles]
        for fut in futures:
            found = fut.result()  # spec_offers reports a provider's failure beside its offers
            ranked.extend(found.ranked)
            errors.extend(found.errors)
    return order_offers(ranked, spec), errors
