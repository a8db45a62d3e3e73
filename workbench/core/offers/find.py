"""Which offers, in what order: the one entry point (:func:`find_offers`) for the wizard's offer table,
Prices and `workbench offers`, the cost planner, a launch's choice and recovery's relaunch.

It asks the chosen profiles (:mod:`.collect`: every provider side by side, once per region a question
needs), orders what matched (:mod:`.order`: cheapest first at the user's exchange rate, or a spec's
``choose: in_order``) and, when asked to, adds the price catalog (:mod:`.catalog`) for each cloud that
no profile answered for: no account yet, an account that could not be asked, or a provider whose SDK is
missing.  Those offers carry their price source and date and are marked ``needs_account`` ("add an
account to launch"), so a new user compares GPUs and prices before having any account.  A price thus
travels one way: the catalog's CSV (or a cloud's price API) → the provider's offers → here → the caller.

When nothing matches, :func:`explain_empty` says the real reason: the query asks for something no
cloud offers (naming what exists instead), no account can launch it, or the price lists could not be
read; never a vague "ask for less".

Blocking (asks the providers): call from a worker thread.  Only WorkbenchErrors are returned (beside
the offers), none raised for one failing profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from workbench.core.domain.errors import AuthError, PluginError, TransientError, WorkbenchError
from workbench.core.domain.models import JobSpec, Offer, Profile
from workbench.core.offers.catalog import catalog_offers
from workbench.core.offers.collect import ask_all
from workbench.core.offers.order import after_live, order_offers, user_rate
from workbench.core.offers.query import OfferQuery, RankedOffer, matches

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

# kinds of EmptyReason (stable: shown in --json as "reason.kind")
NO_MATCH = "no_match"
NO_ACCOUNT = "no_account"
PRICES_FAILED = "price_api_failed"
ACCOUNTS_FAILED = "accounts_failed"

#: when the price catalog joins the accounts' offers (``find_offers(catalog=…)``)
ALWAYS = "always"  # Prices, `workbench offers`, the planner: compare everything
WHEN_NOTHING_LAUNCHABLE = "when-nothing-launchable"  # the wizard: catalog offers cannot be chosen
NEVER = "never"  # a launch's choice and recovery: only what an account can launch


@dataclass(frozen=True)
class EmptyReason:
    """Why no offer matched: ``kind`` (one of the constants above) and a sentence for people."""

    kind: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Found:
    """The offers of every profile asked and, for clouds without a usable account, of the price catalog."""

    ranked: list[RankedOffer]
    errors: list[tuple[str, WorkbenchError]]
    catalog_providers: list[str]  # clouds priced from the catalog (no profile answered for them)
    reason: EmptyReason | None  # set when ``ranked`` is empty
    #: (alternative index, why it was not considered), e.g. it names another provider than the profile's
    skipped: list[tuple[int, str]] = field(default_factory=list)

    @property
    def oldest_price(self) -> str:
        """The oldest price date among the offers shown ('' when none)."""
        return min((r.offer.prices.as_of for r in self.ranked if r.offer.prices.as_of), default="")


def find_offers(accounts: "Accounts", what: OfferQuery | JobSpec, *, profiles: Sequence[Profile] | None = None,
                region: str | None = None, provider_from_user: bool = False, region_from_user: bool = False,
                catalog: str = ALWAYS) -> Found:
    """The offers ``what`` (a query, or a job spec with its alternatives) may run on, best first.

    ``profiles``: the accounts to ask (default: every profile; a query's provider narrows them).
    ``region``, ``provider_from_user``, ``region_from_user``: where a spec is launched (see
    :func:`.collect.questions_for`).  ``catalog``: :data:`ALWAYS`, :data:`WHEN_NOTHING_LAUNCHABLE` (shown,
    with why, only when no account's offer can be chosen) or :data:`NEVER`.
    """
    spec = what if isinstance(what, JobSpec) else None
    chosen = list(profiles) if profiles is not None else accounts.profiles()
    if isinstance(what, OfferQuery) and what.provider:
        chosen = [p for p in chosen if p.provider == what.provider]
    answers = ask_all(accounts, what, chosen, region, provider_from_user, region_from_user)
    rate = user_rate(accounts)
    live = order_offers([r for a in answers for r in a.ranked], spec, rate)
    errors = [(a.profile.name, a.error) for a in answers if a.error is not None]
    skipped = [s for a in answers for s in a.skipped]
    every: list[Offer] = []  # the catalog in every region (to explain an empty answer)
    extra: list[RankedOffer] = []
    if catalog != NEVER:
        failed = {name for name, _ in errors}
        answered = {p.provider for p in chosen if p.name not in failed}
        every = catalog_offers(accounts, answered, {p.provider for p in chosen},
                               what.provider if isinstance(what, OfferQuery) else None)
        extra = _catalog_matches(every, what, region)
    if catalog == WHEN_NOTHING_LAUNCHABLE and any(r.offer.available for r in live):
        return Found(live, errors, [], None, skipped)
    ranked = after_live(live, extra, rate)
    reason = None
    if not ranked:
        reason = explain_empty(_first_question(what), [o for a in answers for o in a.offered] + every, errors,
                               has_cloud_account=any(p.provider != "local" for p in chosen),
                               catalog_included=catalog != NEVER)
    return Found(ranked, errors, _catalog_providers(every, extra, what, region), reason, skipped)


def _catalog_providers(every: list[Offer], extra: list[RankedOffer], what: OfferQuery | JobSpec,
                       region: str | None) -> list[str]:
    """The clouds priced from the catalog: for a query, every cloud the catalog has in its region (what
    was compared); for a spec, those with an offer it may run on."""
    if isinstance(what, OfferQuery):
        where = what.region or region
        return sorted({o.provider for o in every if not where or o.region == where})
    return sorted({r.offer.provider for r in extra})


def _questions(what: OfferQuery | JobSpec) -> list[tuple[int | None, OfferQuery]]:
    if isinstance(what, OfferQuery):
        return [(None, what)]
    if not what.alternatives:
        return [(None, OfferQuery.from_spec(what))]
    return [(i, OfferQuery.from_spec(what, alternative=alt)) for i, alt in enumerate(what.alternatives)]


def _first_question(what: OfferQuery | JobSpec) -> OfferQuery:
    return _questions(what)[0][1]


def _catalog_matches(every: list[Offer], what: OfferQuery | JobSpec, region: str | None) -> list[RankedOffer]:
    """The catalog offers that match ``what`` (each once, tagged with the first alternative it matches)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[RankedOffer] = []
    for index, q in _questions(what):
        where = q.region or region
        for o in every:
            key = (o.provider, o.region, o.instance_type)
            if key not in seen and (not where or o.region == where) and matches(o, q):
                seen.add(key)
                out.append(RankedOffer("", o, o.hourly(q.spot), alternative=index, needs_account=True))
    return out


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
            catalog = [o for o in pool if (o.extra or {}).get("needs_account")]
            return EmptyReason(NO_MATCH, "none of them has a spot price; ask for on-demand" + (
                " (the price catalog has no spot price for them: spot prices come live, with an account of "
                "that cloud)" if catalog and len(catalog) == len(pool) else ""))
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
