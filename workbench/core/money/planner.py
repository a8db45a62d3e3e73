"""The cost planner: N GPUs for H hours, priced every way you can pay for them.

For each offer of the requested GPU model (across providers and regions) the
planner prices the job on-demand, on spot (with the interruption caveat), on
1- and 3-year reserved terms and savings plans (you pay for the whole term: a
three-month job on a one-year term pays for twelve months), and compares it
with buying the hardware (purchase price, power and upkeep the user enters, or
the documented reference price of :mod:`.hardware_reference` when they enter none).
Rows keep their own currency unless a display currency is asked for: then every
row is converted at the user's rate and says so.

Machines needed = ceil(N / GPUs per machine); prices are per machine-hour.  Rows come cheapest
first, but within one way of paying a set-up of fewer machines is preferred when it costs at most
:data:`FEWER_MACHINES_TOLERANCE` more (one 8-GPU machine over eight 1-GPU machines that save 0.04 %:
training across machines is slower and fails in more ways); both rows say so.
Pure computation, safe on any thread; ``compare_costs_from_accounts`` asks providers
for offers and therefore blocks (run it on a worker).  Bad input raises
ConfigError.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from workbench.core.money.currency import CurrencySettings
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import Offer
from workbench.core.domain.phrase import N_, Phrase, joined, phrase

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

log = logging.getLogger("workbench.planner")

HOURS_1Y = 8760.0
HOURS_3Y = 3 * HOURS_1Y
OPTIONS = ("on-demand", "spot", "reserved-1y", "reserved-3y", "savings-plan-1y", "savings-plan-3y", "buy")
#: option → (Prices field, term in years) for the committed terms
TERMS = {"reserved-1y": ("reserved_1y", 1), "reserved-3y": ("reserved_3y", 3),
         "savings-plan-1y": ("savings_plan_1y", 1), "savings-plan-3y": ("savings_plan_3y", 3)}

#: the buy row's price source when the figures are the user's own
YOUR_FIGURES = N_("your figures")

#: how much more (a share of the cheaper total) a set-up of fewer machines may cost and still be preferred
FEWER_MACHINES_TOLERANCE = 0.02

SPOT_CAVEAT = phrase("may be interrupted at short notice (AWS gives 2 minutes, Azure 30 s); the job must checkpoint "
                     "and resume, and the price changes over time")


@dataclass(frozen=True)
class Hardware:
    """Buying the GPUs: what the user paid or was quoted, and what running them costs."""

    purchase_price: float  # the whole machine(s) with N GPUs
    power_kw: float = 0.0  # average draw while training, all machines
    price_per_kwh: float = 0.0
    upkeep_per_year: float = 0.0  # rack space, cooling, support contract, admin time
    resale_value: float = 0.0  # what it fetches when sold after the job (0: not counted)
    currency: str = "USD"
    source: str = ""  # where a reference price comes from (empty: the user's own figures)
    as_of: str = ""
    reference: bool = False  # the documented reference price, not the user's quote
    servers: int = 1
    gpus_per_server: int = 0

    def __post_init__(self) -> None:
        for name in ("purchase_price", "power_kw", "price_per_kwh", "upkeep_per_year", "resale_value"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name.replace('_', ' ')} must be a number >= 0, not {value!r}")

    def cost(self, hours: float) -> float:
        return (self.purchase_price + self.power_kw * hours * self.price_per_kwh
                + self.upkeep_per_year * hours / HOURS_1Y - self.resale_value)


@dataclass(frozen=True)
class CostRow:
    """One way to pay for the job."""

    option: str  # one of OPTIONS
    provider: str | None
    region: str | None
    instance_type: str | None
    machines: int
    gpus: int  # GPUs you get (>= requested)
    hourly: float  # all machines together, per hour
    total: float  # what the job costs you this way
    paid_hours: float  # hours you pay for (a reserved term's full length)
    currency: str
    notes: tuple[Phrase, ...] = ()  # what to know about this row, as translatable phrases (``note``: in English)
    profile: str | None = None
    price_source: str = ""
    price_as_of: str = ""
    original_currency: str | None = None  # set when the row was converted to a display currency

    @property
    def used_share(self) -> float:
        """The part of ``total`` the job itself uses (for a reserved term: hours used / hours paid)."""
        return self.total if self.paid_hours <= 0 else self.total * min(1.0, self._hours / self.paid_hours)

    _hours: float = 0.0

    @property
    def note(self) -> str:
        """The notes in English, as one text ("a; b")."""
        return joined(self.notes)

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("_hours")
        d.pop("notes")
        d["note"] = self.note
        d["total"] = round(self.total, 2)
        d["hourly"] = round(self.hourly, 4)
        d["used_share"] = round(self.used_share, 2)
        return d


@dataclass(frozen=True)
class CostComparison:
    gpu_model: str
    gpus: int
    hours: float
    rows: tuple[CostRow, ...]

    def cheapest(self, option: str) -> CostRow | None:
        return next((r for r in self.rows if r.option == option), None)

    def summary(self) -> list[CostRow]:
        """The cheapest row of each option per provider, cheapest first (the side-by-side table)."""
        best: dict[tuple[str, str | None], CostRow] = {}
        for r in self.rows:  # already cheapest first, currencies compared (compare_costs)
            best.setdefault((r.option, r.provider), r)
        return [r for r in self.rows if best.get((r.option, r.provider)) is r]

    def to_json(self, all_rows: bool = True) -> dict[str, object]:
        rows = self.rows if all_rows else tuple(self.summary())
        return {"gpu_model": self.gpu_model, "gpus": self.gpus, "hours": self.hours,
                "rows": [r.to_json() for r in rows]}


def _paid_hours(hours: float, years: int) -> float:
    term = HOURS_1Y * years
    return term * math.ceil(hours / term)


#: what a price snapshot's source says of term prices that are not the provider's published figures
ESTIMATED_MARK = "ESTIMATED"
ESTIMATED_FIELDS = ("reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y")


def rows_for_offer(offer: Offer, gpus: int, hours: float, profile: str | None = None) -> list[CostRow]:
    """Every priced option of one offer for ``gpus`` GPUs over ``hours``."""
    if offer.gpu_count < 1:
        return []
    machines = math.ceil(gpus / offer.gpu_count)
    p = offer.prices
    notes: list[Phrase] = []
    if machines > 1:
        notes.append(phrase("{machines} machines: the job must train across machines", machines=machines))
    got = machines * offer.gpu_count
    if got > gpus:
        notes.append(phrase("{got} GPUs ({more} more than asked)", got=got, more=got - gpus))
    if not offer.available and not (offer.extra or {}).get("needs_account"):  # a catalog price: compared, fine
        # a provider's own words ("no quota: request an increase for …") stay as they are
        notes.append(Phrase("{note}", {"note": offer.availability_note}) if offer.availability_note
                     else phrase("not available to this account now"))
    base = dict(provider=offer.provider, region=offer.region, instance_type=offer.instance_type,
                machines=machines, gpus=got, currency=p.currency, profile=profile, _hours=hours)
    out = []
    # an older catalog or cache says ESTIMATED once for the row; the current one says it per price (basis)
    row_estimated = not p.details and ESTIMATED_MARK in f"{p.source} {(offer.extra or {}).get('price_list', '')}"

    def add(option: str, field: str, paid: float, *extra: Phrase) -> None:
        price = getattr(p, field, None)
        if price is None:
            return
        d = p.detail(field)
        what: list[Phrase] = []
        if ESTIMATED_MARK in d.basis or (row_estimated and field in ESTIMATED_FIELDS):
            what.append(phrase("ESTIMATED price (on-demand × a typical discount; `workbench catalog update` "
                               "reads the published one)"))
        elif d.basis:  # a published figure of a kind beyond its term: say which, exactly
            what.append(phrase("published price: {basis}", basis=Phrase(d.basis)))
        out.append(CostRow(option=option, hourly=price * machines, total=price * machines * paid,
                           paid_hours=paid, notes=(*what, *extra, *notes), price_source=d.source,
                           price_as_of=d.as_of, **base))  # type: ignore[arg-type]

    add("on-demand", "on_demand", hours)
    add("spot", "spot", hours, SPOT_CAVEAT)
    for option, (field, years) in TERMS.items():
        paid = _paid_hours(hours, years)
        add(option, field, paid, _term_note(option.startswith("savings"), years, paid, hours))
    return out


def _term_note(plan: bool, years: int, paid: float, hours: float) -> Phrase:
    """What a committed term means for this job (one phrase per case, so each translates whole)."""
    if paid > hours:
        if plan:
            return phrase("you pay for the whole {years}-year savings plan commitment ({paid:,.0f} h) even though "
                          "the job needs {hours:,.0f} h", years=years, paid=paid, hours=hours)
        return phrase("you pay for the whole {years}-year term ({paid:,.0f} h) even though the job needs "
                      "{hours:,.0f} h", years=years, paid=paid, hours=hours)
    if plan:
        return phrase("{years}-year savings plan commitment", years=years)
    return phrase("{years}-year term", years=years)


def buy_row(hardware: Hardware, gpus: int, hours: float) -> CostRow:
    """The "buy" row: purchase, power and upkeep for ``hours`` (a reference price says where it comes from)."""
    power = hardware.power_kw * hardware.price_per_kwh
    notes: list[Phrase] = []
    if hardware.reference:  # where the figure comes from is the row's price_source (shown beside the note)
        notes.append(phrase("reference price of {as_of}, not a quote: {servers} server(s) of {per} GPUs at "
                            "{each:,.0f} each", as_of=hardware.as_of, servers=hardware.servers,
                            per=hardware.gpus_per_server, each=hardware.purchase_price / max(1, hardware.servers)))
    notes.append(phrase("purchase {price:,.0f} + power {kw:g} kW × {hours:,.0f} h × {kwh:g}/kWh + upkeep "
                        "{upkeep:,.0f}/year", price=hardware.purchase_price, kw=hardware.power_kw, hours=hours,
                        kwh=hardware.price_per_kwh, upkeep=hardware.upkeep_per_year))
    notes.append(phrase("− resale {resale:,.0f}", resale=hardware.resale_value) if hardware.resale_value
                 else phrase("you keep the hardware afterwards (resale not counted)"))
    notes.append(phrase("per hour: purchase, power and upkeep over the job's {hours:,.0f} h", hours=hours))
    # Per hour: what the job costs this way (purchase, power, upkeep; resale not counted) over its hours,
    # like the cloud rows' all-in hourly price, not just the running costs beside them.
    spent = hardware.purchase_price + power * hours + hardware.upkeep_per_year * hours / HOURS_1Y
    return CostRow(
        option="buy", provider=None, region=None, instance_type=None, machines=hardware.servers, gpus=gpus,
        hourly=spent / hours, total=hardware.cost(hours), paid_hours=hours,
        currency=hardware.currency, _hours=hours,
        price_source=hardware.source or YOUR_FIGURES, price_as_of=hardware.as_of, notes=tuple(notes))


def reference_hardware(gpu_model: str, gpus: int) -> Hardware | None:
    """The documented reference price of ``gpus`` GPUs of ``gpu_model`` (whole servers), or None without one."""
    from workbench.core.money.hardware_reference import reference_for

    ref = reference_for(gpu_model)
    if ref is None or ref.gpu_count < 1 or gpus < 1:
        return None
    servers = math.ceil(gpus / ref.gpu_count)
    return Hardware(purchase_price=servers * ref.purchase_price, power_kw=servers * ref.power_kw,
                    price_per_kwh=ref.kwh_price, upkeep_per_year=servers * ref.upkeep_per_year,
                    currency=ref.currency, source=ref.source, as_of=ref.as_of, reference=True, servers=servers,
                    gpus_per_server=ref.gpu_count)


class RateNeeded(ConfigError):
    """Rows in ``source`` currency cannot be shown in ``target`` without the user's exchange rate."""

    def __init__(self, source: str, target: str) -> None:
        super().__init__(f"showing {source} prices in {target} needs your exchange rate",
                         hint="set it once with `workbench currency CNY --rate 7.2`, or pass --rate")
        self.source = source
        self.target = target


def convert_rows(rows: Iterable[CostRow], display: str, fx: CurrencySettings | None) -> list[CostRow]:
    """Every row in ``display`` currency at the user's rate (ConfigError when a rate is needed but not set)."""
    from dataclasses import replace

    out = []
    for r in rows:
        if r.currency == display:
            out.append(r)
            continue
        rate = fx.rate(r.currency, display) if fx is not None else None
        if rate is None:
            raise RateNeeded(r.currency, display)
        out.append(replace(r, hourly=r.hourly * rate, total=r.total * rate, currency=display,
                           original_currency=r.currency))
    return out


def compare_costs(offers: Iterable[tuple[str | None, Offer]] | Iterable[Offer], gpu_model: str, gpus: int,
                  hours: float, hardware: Hardware | None = None, fx: CurrencySettings | None = None,
                  display: str | None = None) -> CostComparison:
    """Price the job on every offer of ``gpu_model`` (case-insensitive) and on bought hardware; cheapest first.

    Rows keep the currency they are priced in; ``fx`` (the user's rate) only orders rows of different
    currencies (without one, at the reference rate the offers table states, each still labelled with its currency).
    ``display`` converts every row to that currency at the user's rate (ConfigError without one).
    """
    if gpus < 1:
        raise ConfigError(f"the number of GPUs must be at least 1, not {gpus}")
    if not math.isfinite(hours) or hours <= 0:
        raise ConfigError(f"the duration must be a positive number of hours, not {hours!r}")
    rows: list[CostRow] = []
    seen: set[tuple[str, str, str]] = set()
    for item in offers:
        profile, offer = item if isinstance(item, tuple) else (None, item)
        if (offer.gpu_model or "").upper() != gpu_model.upper():
            continue
        key = (offer.provider, offer.region, offer.instance_type)
        if key in seen:  # two profiles of one provider offer the same thing
            continue
        seen.add(key)
        rows.extend(rows_for_offer(offer, gpus, hours, profile))
    if hardware is not None:
        rows.append(buy_row(hardware, gpus, hours))
    if display:
        rows = convert_rows(rows, display.upper(), fx)

    def in_usd(r: CostRow) -> float:
        converted = fx.convert(r.total, r.currency, "USD") if fx is not None else None
        if converted is None and r.currency == "CNY":  # no rate of the user's: the stated reference rate
            from workbench.core.offers.order import REFERENCE_CNY_PER_USD

            converted = r.total / REFERENCE_CNY_PER_USD
        return round(r.total if converted is None else converted, 6)

    rows.sort(key=lambda r: (in_usd(r), OPTIONS.index(r.option), r.machines, r.provider or "", r.region or ""))
    return CostComparison(gpu_model, gpus, hours, tuple(prefer_fewer_machines(rows, in_usd)))


def prefer_fewer_machines(rows: list[CostRow], value: Callable[[CostRow], float]) -> list[CostRow]:
    """``rows`` (cheapest first by ``value``) with, per option, the set-up of fewest machines within
    :data:`FEWER_MACHINES_TOLERANCE` of that option's cheapest moved to its place; both rows' notes say why."""
    from dataclasses import replace

    out = list(rows)
    for option in OPTIONS:
        group = [r for r in out if r.option == option]
        if not group:
            continue
        cheapest = group[0]
        limit = value(cheapest) * (1 + FEWER_MACHINES_TOLERANCE)
        fewer = [r for r in group if r.machines < cheapest.machines and value(r) <= limit]
        if not fewer:
            continue
        pick = min(fewer, key=lambda r: (r.machines, value(r)))
        more = (value(pick) / value(cheapest) - 1) * 100 if value(cheapest) > 0 else 0.0

        values = dict(machines=pick.machines, other=cheapest.machines, more=more, tolerance=FEWER_MACHINES_TOLERANCE,
                      provider=cheapest.provider, type=cheapest.instance_type)
        why = (phrase("preferred: 1 machine instead of {other} for {more:.2f} % more (fewer machines win within "
                      "{tolerance:.0%}); the cheapest is {provider} {type} × {other}", **values) if pick.machines == 1
               else phrase("preferred: {machines} machines instead of {other} for {more:.2f} % more (fewer machines "
                           "win within {tolerance:.0%}); the cheapest is {provider} {type} × {other}", **values))
        chosen = replace(pick, notes=(why, *pick.notes))
        passed = replace(cheapest, notes=(phrase(
            "{more:.2f} % cheaper than {provider} {type} × {machines}, but needs {other} machines", more=more,
            provider=pick.provider, type=pick.instance_type, machines=pick.machines, other=cheapest.machines),
            *cheapest.notes))
        at = out.index(cheapest)
        out.remove(pick)
        out[out.index(cheapest)] = passed
        out.insert(at, chosen)
    return out


def break_even_hours(hardware: Hardware, hourly_cloud: float) -> float | None:
    """Hours after which buying is cheaper than paying ``hourly_cloud``; None if it never is."""
    running = hardware.power_kw * hardware.price_per_kwh + hardware.upkeep_per_year / HOURS_1Y
    if hourly_cloud <= running:
        return None
    return (hardware.purchase_price - hardware.resale_value) / (hourly_cloud - running)


def snapshot_offers(folder: Path | None = None) -> list[Offer]:
    """Offers from the price snapshots (bundled, plus the user's refreshed copies), for planning without an
    account; ``folder`` reads every ``*.csv`` there instead.  Files that do not parse are skipped (logged).
    One reader and one layout for every cloud: :mod:`workbench.core.providers.price_snapshot`."""
    from workbench.core.providers import price_snapshot

    return price_snapshot.offers(folder=folder)


def compare_costs_from_accounts(
        accounts: "Accounts", gpu_model: str, gpus: int, hours: float, hardware: Hardware | None = None, *,
        use_reference: bool = True, display: str | None = None,
        fx: CurrencySettings | None = None) -> tuple[CostComparison, list[tuple[str, WorkbenchError]]]:
    """Collect offers of ``gpu_model`` from every profile (blocks) and compare; provider errors returned beside.

    Providers without a working profile are priced from the price snapshots (labelled "bundled
    snapshot" or "price cache"), so the planner works before any account is set up.  Without
    ``hardware`` the documented reference price of the GPU model (if any) gives the buy row.
    ``fx`` overrides the stored exchange rate; ``display`` converts every row (see :func:`compare_costs`).
    """
    from workbench.core.offers.find import ALWAYS, find_offers
    from workbench.core.offers.query import OfferQuery

    found = find_offers(accounts, OfferQuery(gpu_model=gpu_model, gpu_count=1), catalog=ALWAYS)
    errors = found.errors
    items: list[tuple[str | None, Offer]] = [(r.profile or None, r.offer) for r in found.ranked]
    from workbench.core.money import currency

    if hardware is None and use_reference:
        hardware = reference_hardware(gpu_model, gpus)
    rate = fx or currency.load(accounts.store)
    return compare_costs(items, gpu_model, gpus, hours, hardware, fx=rate, display=display), errors
