"""Asking the accounts: every chosen profile's provider is asked for its offers side by side
(:func:`workbench.core.providers.fan_out.each`), once per region a question needs, and its answer is
matched against the questions.

A question is an :class:`OfferQuery`, or a job spec: its resources, or each of its ``alternatives``
(GPU choices, any_of/ordered, ranges) as a query of its own (its fields over the spec's resources).  An
offer is kept once per profile, tagged with the first alternative it matches.

Threading: blocks on the providers (call from a worker thread).  Failures: a profile whose provider
fails is returned as (profile name, error) beside the others' offers, never raised; a plugin bug (not a
WorkbenchError) is logged and becomes a WorkbenchError naming it.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import JobSpec, Offer, Profile
from workbench.core.offers.order import rank
from workbench.core.offers.query import OfferQuery, RankedOffer
from workbench.core.providers.fan_out import each

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

log = logging.getLogger("workbench.offers")

#: (index into the spec's alternatives, or None for the spec's resources / a plain query; the query)
Questions = list[tuple[int | None, OfferQuery]]


@dataclass(frozen=True)
class Answer:
    """One profile's answer: what it offered (every offer, unmatched too) and what matched."""

    profile: Profile
    offered: list[Offer] = field(default_factory=list)
    ranked: list[RankedOffer] = field(default_factory=list)
    error: WorkbenchError | None = None
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (alternative index, why not here)


def questions_for(what: OfferQuery | JobSpec, prof: Profile, region: str | None = None,
                  provider_from_user: bool = False, region_from_user: bool = False
                  ) -> tuple[Questions, list[tuple[int, str]]]:
    """The queries ``what`` asks of ``prof`` (and the alternatives skipped there, with why).

    An alternative naming another provider is skipped, unless the user chose this provider (or
    profile) for the launch: then its hardware is kept and its location dropped, as SkyPilot's
    ``--infra`` overrides a task's.  A region the user gave wins over the alternatives' regions.
    """
    if isinstance(what, OfferQuery):
        return [(None, what)], []
    spec = what
    if not spec.alternatives:
        return [(None, OfferQuery.from_spec(spec, provider=prof.provider, region=region))], []
    out: Questions = []
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


def ask(accounts: "Accounts", prof: Profile, questions: Questions, skipped: list[tuple[int, str]] = ()
        ) -> Answer:
    """``prof``'s provider asked once per region the questions name; its offers matched against them."""
    try:
        provider = accounts.provider(prof)
        listed = {where: list(provider.offers(where)) for where in dict.fromkeys(q.region for _, q in questions)}
    except WorkbenchError as exc:
        return Answer(prof, error=exc, skipped=list(skipped))
    except Exception as exc:  # noqa: BLE001 - a plugin bug must not hide the other providers
        log.exception("offers from profile %s failed", prof.name)
        return Answer(prof, error=WorkbenchError(f"{type(exc).__name__}: {exc}"), skipped=list(skipped))
    best: dict[tuple[str, str, str, bool], RankedOffer] = {}
    for index, q in questions:
        for r in rank(((prof.name, o) for o in listed[q.region]), q):
            key = (r.offer.provider, r.offer.region, r.offer.instance_type, q.spot)
            if key not in best:  # the first alternative that matches it names it
                best[key] = dataclasses.replace(r, alternative=index)
    offered = [o for offers in listed.values() for o in offers]
    return Answer(prof, offered, list(best.values()), None, list(skipped))


def ask_all(accounts: "Accounts", what: OfferQuery | JobSpec, profiles: Sequence[Profile], region: str | None = None,
            provider_from_user: bool = False, region_from_user: bool = False) -> list[Answer]:
    """Every profile's :class:`Answer`, asked side by side, in the profiles' order."""

    def one(prof: Profile) -> Answer:
        questions, skipped = questions_for(what, prof, region, provider_from_user, region_from_user)
        if not questions:  # every alternative names another provider: nothing to ask here
            return Answer(prof, skipped=skipped)
        return ask(accounts, prof, questions, skipped)

    answers = each(list(profiles), one, "offers")
    return [a if isinstance(a, Answer) else Answer(p, error=WorkbenchError(f"{type(a).__name__}: {a}"))
            for p, a in zip(profiles, answers)]
