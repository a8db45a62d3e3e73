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


def accrued(entries: Sequence[LedgerEntry], now: float | None = None, since: float = 0.0) -> float:
    """Money spent by one instance given its ledger entries (ordered by time), from ``since`` to ``now``."""
    now = time.time() if now is None else now
    total = 0.0
    for cur, nxt in zip(entries, list(entries[1:]) + [None]):
        start = max(cur.ts, since)
        end = min(nxt.ts if nxt is not None else now, now)
        if end > start and InstanceState(cur.state).billable:
            total += cur.price_per_hour * (end - start) / 3600.0
    return total


def spend_by_instance(ledger: Iterable[LedgerEntry], now: float | None = None,
                      since: float = 0.0) -> dict[tuple[str, str, str], float]:
    """Accrued spend (from ``since``) keyed by (provider, profile, instance_id)."""
    grouped: dict[tuple[str, str, str], list[LedgerEntry]] = {}
    for e in ledger:
        grouped.setdefault((e.provider, e.profile, e.instance_id), []).append(e)
    return {k: accrued(sorted(v, key=lambda e: e.ts), now, since) for k, v in grouped.items()}


def start_of_today(now: float | None = None) -> float:
    """Local midnight of the day containing ``now`` (POSIX seconds)."""
    t = time.localtime(time.time() if now is None else now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))


def burn_rate(instances: Iterable[Instance]) -> float:
    """Current $/h of everything still billable."""
    return sum(i.price_per_hour for i in instances if i.state.billable)


def projected_cost(price_per_hour: float | None, max_runtime_minutes: int | None) -> float | None:
    """Cost if the job runs to its max runtime; None when either is unknown."""
    if price_per_hour is None or max_runtime_minutes is None:
        return None
    return price_per_hour * max_runtime_minutes / 60.0


def spend_by_day(ledger: Iterable[LedgerEntry], days: int = 30, now: float | None = None) -> list[tuple[float, float]]:
    """(local midnight, money spent that day) for the last ``days`` days, oldest first."""
    now = time.time() if now is None else now
    entries = list(ledger)
    starts = []
    day = start_of_today(now)
    for _ in range(days):
        starts.append(day)
        day = start_of_today(day - 3600)  # previous local midnight, DST-safe
    starts.reverse()
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else now
        total = sum(spend_by_instance(entries, end, since=start).values())
        out.append((start, total))
    return out
