"""Budgets: one per launch and one global monthly budget, with warnings at 50, 80 and 100 %.

A launch's budget is the one the user set for it in the store (``launch:<id>``)
or else its job spec's ``guards.budget_usd``.  The monthly budget covers all
spend of the current calendar month (local time).  Budgets are compared with
spend converted into the budget's currency (see :mod:`workbench.core.money.currency`);
when no rate is known the budget cannot be checked and says so.

Pure functions over a :class:`~workbench.core.money.spend.SpendBook`; the guards
decide what to do with a status (warn once per threshold; tear down at 100 %
when the budget is enforced).  Thread-safe; raise ConfigError for bad input.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.domain.errors import ConfigError
from workbench.core.money.spend import SpendBook, start_of_month
from workbench.core.store.money import Budget

if TYPE_CHECKING:
    from workbench.core.store.database import LaunchRecord, Store

THRESHOLDS = (50, 80, 100)
MONTHLY = "monthly"


@dataclass(frozen=True)
class BudgetStatus:
    """How much of a budget is used; ``spent`` None when it could not be converted."""

    budget: Budget
    spent: float | None
    period: str  # "2026-12" for the monthly budget, the launch id for a launch budget

    @property
    def percent(self) -> float | None:
        if self.spent is None:
            return None
        return 100.0 * self.spent / self.budget.amount if self.budget.amount > 0 else math.inf

    @property
    def reached(self) -> int:
        """The highest threshold reached (0, 50, 80 or 100)."""
        p = self.percent
        return max([t for t in THRESHOLDS if p is not None and p >= t], default=0)

    def to_json(self) -> dict[str, object]:
        return {"scope": self.budget.scope, "amount": self.budget.amount, "currency": self.budget.currency,
                "enforce": self.budget.enforce, "spent": None if self.spent is None else round(self.spent, 6),
                "percent": None if self.percent is None else round(self.percent, 2),
                "reached": self.reached, "period": self.period}


def launch_scope(launch_id: str) -> str:
    return f"launch:{launch_id}"


def check_amount(amount: float) -> float:
    if not isinstance(amount, (int, float)) or not math.isfinite(amount) or amount <= 0:
        raise ConfigError(f"a budget must be a positive amount, not {amount!r}")
    return float(amount)


def set_monthly(store: "Store", amount: float, currency: str = "USD", enforce: bool = True) -> Budget:
    b = Budget(MONTHLY, check_amount(amount), currency, enforce)
    store.set_budget(b)
    return b


def set_launch(store: "Store", launch_id: str, amount: float, currency: str = "USD", enforce: bool = True) -> Budget:
    store.get_launch(launch_id)  # NotFoundError for an unknown launch
    b = Budget(launch_scope(launch_id), check_amount(amount), currency, enforce)
    store.set_budget(b)
    return b


def launch_budget(store: "Store", rec: "LaunchRecord") -> Budget | None:
    """The user's budget for this launch, else its spec's ``budget_usd`` (enforced), else None."""
    own = store.get_budget(launch_scope(rec.launch_id))
    if own is not None:
        return own
    amount = ((rec.spec or {}).get("guards") or {}).get("budget_usd")
    if amount:
        return Budget(launch_scope(rec.launch_id), float(amount), "USD", True)
    return None


def _spent_in(book: SpendBook, budget: Budget, launch_id: str | None, now: float, since: float) -> float | None:
    """Spend in the budget's currency; None when some of it cannot be converted."""
    total = 0.0
    for key in book.entries:
        if launch_id is not None and book.launch_of(key) != launch_id:
            continue
        amount = book.cost(key, now, since).total
        if amount == 0.0:
            continue
        converted = book.currency.convert(amount, book.currency_of(key), budget.currency)
        if converted is None:
            return None
        total += converted
    return total


def statuses(store: "Store", book: SpendBook, now: float | None = None,
             launch_ids: set[str] | None = None) -> list[BudgetStatus]:
    """The monthly budget's status (if set) and each launch budget's (of ``launch_ids``, default all)."""
    now = time.time() if now is None else now
    out: list[BudgetStatus] = []
    monthly = store.get_budget(MONTHLY)
    if monthly is not None:
        period = time.strftime("%Y-%m", time.localtime(now))
        out.append(BudgetStatus(monthly, _spent_in(book, monthly, None, now, start_of_month(now)), period))
    for rec in book.launches.values():
        if launch_ids is not None and rec.launch_id not in launch_ids:
            continue
        b = launch_budget(store, rec)
        if b is not None:
            out.append(BudgetStatus(b, _spent_in(book, b, rec.launch_id, now, 0.0), rec.launch_id))
    return out
