"""Spend accrual: price × billable seconds, from the store's state ledger.

The ledger holds one entry per state or price change of an instance; each
entry's state and price hold until the next entry (or ``now``).  Provider
billing minimums (AWS 60 s, Azure per start) come with the spend issue; this
module is the single place they will live.
"""

from __future__ import annotations

import time
from typing import Iterable, Sequence

from .models import Instance, InstanceState
from .store import LedgerEntry


def accrued(entries: Sequence[LedgerEntry], now: float | None = None) -> float:
    """Money spent by one instance given its ledger entries (ordered by time)."""
    now = time.time() if now is None else now
    total = 0.0
    for cur, nxt in zip(entries, list(entries[1:]) + [None]):
        end = nxt.ts if nxt is not None else now
        if end > cur.ts and InstanceState(cur.state).billable:
            total += cur.price_per_hour * (end - cur.ts) / 3600.0
    return total


def spend_by_instance(ledger: Iterable[LedgerEntry], now: float | None = None) -> dict[tuple[str, str, str], float]:
    """Accrued spend keyed by (provider, profile, instance_id)."""
    grouped: dict[tuple[str, str, str], list[LedgerEntry]] = {}
    for e in ledger:
        grouped.setdefault((e.provider, e.profile, e.instance_id), []).append(e)
    return {k: accrued(sorted(v, key=lambda e: e.ts), now) for k, v in grouped.items()}


def burn_rate(instances: Iterable[Instance]) -> float:
    """Current $/h of everything still billable."""
    return sum(i.price_per_hour for i in instances if i.state.billable)


def projected_cost(price_per_hour: float | None, max_runtime_minutes: int | None) -> float | None:
    """Cost if the job runs to its max runtime; None when either is unknown."""
    if price_per_hour is None or max_runtime_minutes is None:
        return None
    return price_per_hour * max_runtime_minutes / 60.0
