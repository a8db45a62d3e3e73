"""Which currency money is shown in, and the user's exchange rate.

Amounts are kept in the currency the provider priced them in (USD for almost
everything; CNY where a provider prices in CNY, e.g. the China regions).
Display is USD by default; a user who reads CNY sets the display currency and
the rate (CNY per USD) themselves -- the app never fetches rates -- and every
converted figure is labelled as converted at the user's rate.

Settings live in the store's ``settings`` table.  Values are immutable and
safe to share between threads.  ``load`` never raises for a bad stored value
(it is ignored); ``save`` raises ConfigError for an unknown currency or a
rate that is not a positive number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.domain.errors import ConfigError

if TYPE_CHECKING:
    from workbench.core.store.database import Store

SUPPORTED = ("USD", "CNY")
_KEY_DISPLAY = "currency.display"
_KEY_RATE = "currency.cny_per_usd"


@dataclass(frozen=True)
class CurrencySettings:
    """Display currency and the user-set rate (CNY per USD; None when not set)."""

    display: str = "USD"
    cny_per_usd: float | None = None

    def rate(self, from_currency: str, to_currency: str) -> float | None:
        """Multiply an amount in ``from_currency`` by this to get ``to_currency``; None without a rate."""
        if from_currency == to_currency:
            return 1.0
        if self.cny_per_usd is None:
            return None
        if (from_currency, to_currency) == ("USD", "CNY"):
            return self.cny_per_usd
        if (from_currency, to_currency) == ("CNY", "USD"):
            return 1.0 / self.cny_per_usd
        return None

    def convert(self, amount: float, from_currency: str, to_currency: str | None = None) -> float | None:
        """``amount`` in ``to_currency`` (default: the display currency); None when no rate is known."""
        r = self.rate(from_currency, to_currency or self.display)
        return None if r is None else amount * r

    def note(self, source_currencies: set[str] | frozenset[str] = frozenset({"USD"})) -> str:
        """How figures in the display currency were obtained, for labels and --json."""
        converted = sorted(c for c in source_currencies if c != self.display)
        if not converted:
            return f"{self.display}, as the provider prices it"
        if self.cny_per_usd is None:
            return f"{self.display}; amounts in {', '.join(converted)} are not converted (no rate set)"
        return (f"{self.display}; {', '.join(converted)} converted at your rate of "
                f"{self.cny_per_usd:g} CNY per USD")


def load(store: "Store") -> CurrencySettings:
    display = store.get_setting(_KEY_DISPLAY) or "USD"
    if display not in SUPPORTED:
        display = "USD"
    raw = store.get_setting(_KEY_RATE)
    rate: float | None = None
    if raw is not None:
        try:
            rate = float(raw)
        except ValueError:
            rate = None
        if rate is not None and (not math.isfinite(rate) or rate <= 0):
            rate = None
    return CurrencySettings(display, rate)


def save(store: "Store", settings: CurrencySettings) -> None:
    if settings.display not in SUPPORTED:
        raise ConfigError(f"unsupported currency {settings.display!r}", hint=f"use one of {', '.join(SUPPORTED)}")
    rate = settings.cny_per_usd
    if rate is not None and (not math.isfinite(rate) or rate <= 0):
        raise ConfigError(f"the exchange rate must be a positive number, not {rate!r}")
    store.set_setting(_KEY_DISPLAY, settings.display)
    store.set_setting(_KEY_RATE, None if rate is None else repr(float(rate)))
