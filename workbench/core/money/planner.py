"""The cost planner: N GPUs for H hours, priced every way you can pay for them.

For each offer of the requested GPU model (across providers and regions) the
planner prices the job on-demand, on spot (with the interruption caveat), on
1- and 3-year reserved / savings terms (you pay for the whole term: a
three-month job on a one-year term pays for twelve months), and compares it
with buying the hardware (purchase price, power and upkeep the user enters).

Machines needed = ceil(N / GPUs per machine); prices are per machine-hour.
Pure computation, safe on any thread; ``compare_costs_from_accounts`` asks providers
for offers and therefore blocks (run it on a worker).  Bad input raises
ConfigError.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from workbench.core.money.currency import CurrencySettings
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import Offer, Prices

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

log = logging.getLogger("workbench.planner")

HOURS_1Y = 8760.0
HOURS_3Y = 3 * HOURS_1Y
OPTIONS = ("on-demand", "spot", "reserved-1y", "reserved-3y", "buy")

SPOT_CAVEAT = ("may be interrupted at short notice (AWS gives 2 minutes, Azure 30 s); the job must checkpoint "
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
    note: str = ""
    profile: str | None = None
    price_source: str = ""
    price_as_of: str = ""

    @property
    def used_share(self) -> float:
        """The part of ``total`` the job itself uses (for a reserved term: hours used / hours paid)."""
        return self.total if self.paid_hours <= 0 else self.total * min(1.0, self._hours / self.paid_hours)

    _hours: float = 0.0

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("_hours")
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
        for r in self.rows:
            k = (r.option, r.provider)
            if k not in best or r.total < best[k].total:
                best[k] = r
        return sorted(best.values(), key=lambda r: (r.total, r.option))

    def to_json(self, all_rows: bool = True) -> dict[str, object]:
        rows = self.rows if all_rows else tuple(self.summary())
        return {"gpu_model": self.gpu_model, "gpus": self.gpus, "hours": self.hours,
                "rows": [r.to_json() for r in rows]}


def _terms(hours: float) -> dict[str, float]:
    return {"reserved-1y": HOURS_1Y * math.ceil(hours / HOURS_1Y),
            "reserved-3y": HOURS_3Y * math.ceil(hours / HOURS_3Y)}


def rows_for_offer(offer: Offer, gpus: int, hours: float, profile: str | None = None) -> list[CostRow]:
    """Every priced option of one offer for ``gpus`` GPUs over ``hours``."""
    if offer.gpu_count < 1:
        return []
    machines = math.ceil(gpus / offer.gpu_count)
    p = offer.prices
    notes = []
    if machines > 1:
        notes.append(f"{machines} machines: the job must train across machines")
    got = machines * offer.gpu_count
    if got > gpus:
        notes.append(f"{got} GPUs ({got - gpus} more than asked)")
    if not offer.available:
        notes.append(offer.availability_note or "not available to this account now")
    base = dict(provider=offer.provider, region=offer.region, instance_type=offer.instance_type,
                machines=machines, gpus=got, currency=p.currency, profile=profile,
                price_source=p.source, price_as_of=p.as_of, _hours=hours)
    out = []

    def add(option: str, price: float | None, paid: float, extra: str = "") -> None:
        if price is None:
            return
        note = "; ".join(x for x in (extra, *notes) if x)
        out.append(CostRow(option=option, hourly=price * machines, total=price * machines * paid,
                           paid_hours=paid, note=note, **base))  # type: ignore[arg-type]

    add("on-demand", p.on_demand, hours)
    add("spot", p.spot, hours, SPOT_CAVEAT)
    for option, paid in _terms(hours).items():
        price = p.reserved_1y if option == "reserved-1y" else p.reserved_3y
        term = "1-year" if option == "reserved-1y" else "3-year"
        extra = (f"you pay for the whole {term} term ({paid:,.0f} h) even though the job needs {hours:,.0f} h"
                 if paid > hours else f"{term} term")
        add(option, price, paid, extra)
    return out


def compare_costs(offers: Iterable[tuple[str | None, Offer]] | Iterable[Offer], gpu_model: str, gpus: int,
                  hours: float, hardware: Hardware | None = None,
                  fx: CurrencySettings | None = None) -> CostComparison:
    """Price the job on every offer of ``gpu_model`` (case-insensitive) and on bought hardware; cheapest first.

    Rows keep the currency they are priced in; ``fx`` (the user's rate) only orders rows of different
    currencies (without a rate, amounts are ordered as they are, each still labelled with its currency).
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
        power = hardware.power_kw * hardware.price_per_kwh
        rows.append(CostRow(
            option="buy", provider=None, region=None, instance_type=None, machines=1, gpus=gpus,
            hourly=power + hardware.upkeep_per_year / HOURS_1Y, total=hardware.cost(hours), paid_hours=hours,
            currency=hardware.currency, _hours=hours,
            note=(f"purchase {hardware.purchase_price:,.0f} + power {hardware.power_kw:g} kW × {hours:,.0f} h × "
                  f"{hardware.price_per_kwh:g}/kWh + upkeep {hardware.upkeep_per_year:,.0f}/year"
                  + (f" − resale {hardware.resale_value:,.0f}" if hardware.resale_value else
                     "; you keep the hardware afterwards (resale not counted)"))))
    def in_usd(r: CostRow) -> float:
        converted = fx.convert(r.total, r.currency, "USD") if fx is not None else None
        return round(r.total if converted is None else converted, 6)

    rows.sort(key=lambda r: (in_usd(r), OPTIONS.index(r.option), r.machines, r.provider or "", r.region or ""))
    return CostComparison(gpu_model, gpus, hours, tuple(rows))


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
        accounts: "Accounts", gpu_model: str, gpus: int, hours: float, hardware: Hardware | None = None,
        snapshot_folder: Path | None = None) -> tuple[CostComparison, list[tuple[str, WorkbenchError]]]:
    """Collect offers of ``gpu_model`` from every profile (blocks) and compare; provider errors returned beside.

    Providers without a working profile are priced from the bundled snapshots
    (labelled "bundled snapshot"), so the planner works before any account is set up.
    """
    from workbench.core.providers.catalog import OfferQuery, collect

    ranked, errors = collect(accounts, OfferQuery(gpu_model=gpu_model, gpu_count=1))
    live = {r.offer.provider for r in ranked}
    items: list[tuple[str | None, Offer]] = [(r.profile, r.offer) for r in ranked]
    items += [(None, o) for o in snapshot_offers(snapshot_folder) if o.provider not in live]
    from workbench.core.money import currency
    return compare_costs(items, gpu_model, gpus, hours, hardware, fx=currency.load(accounts.store)), errors
