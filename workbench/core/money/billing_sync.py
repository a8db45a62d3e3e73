"""Fetch what providers know better than our estimate: billed cost and spot price history.

* Actual cost (``SupportsBilling``: AWS Cost Explorer, Azure Cost Management)
  is cached in the store per profile and refreshed at most every
  ``max_age_s`` (default 6 h): those APIs lag by hours and Cost Explorer
  charges per request.
* Spot price history (``SupportsSpotHistory``) is stored per spot instance so
  that spend uses the prices of the run, not today's.

Both block on providers (run them on a worker) and never raise for one
profile: failures come back as (profile name, error) pairs.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from dataclasses import dataclass

from workbench.core.applog import first_time
from workbench.core.providers.accounts import Accounts
from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.contract import SupportsBilling, SupportsSpotHistory

log = logging.getLogger("workbench.spend")

DEFAULT_MAX_AGE_S = 6 * 3600.0


def _as_error(exc: Exception) -> WorkbenchError:
    if isinstance(exc, WorkbenchError):
        return exc
    if first_time("billing sync", f"{type(exc).__name__}: {exc}"):  # not a traceback on every refresh
        log.warning("billing sync failed", exc_info=exc)
    return WorkbenchError(f"{type(exc).__name__}: {exc}")


def sync_actual_costs(accounts: Accounts, since_day: str, now: float | None = None,
                      max_age_s: float = DEFAULT_MAX_AGE_S, force: bool = False) -> list[tuple[str, WorkbenchError]]:
    """Refresh the cached actual costs of every profile whose provider reports them."""
    now = time.time() if now is None else now
    today = _dt.datetime.fromtimestamp(now, _dt.timezone.utc).date().isoformat()
    errors: list[tuple[str, WorkbenchError]] = []
    store = accounts.store
    for prof in accounts.profiles():
        try:
            prov = accounts.provider(prof)
            if not isinstance(prov, SupportsBilling):
                continue
            fetched = store.actual_costs_fetched_at(prof.provider, prof.name)
            if not force and fetched is not None and now - fetched < max_age_s:
                continue
            costs = prov.actual_costs(since_day, today)
            store.put_actual_costs(prof.provider, prof.name, costs, fetched_at=now)
        except Exception as exc:  # noqa: BLE001 - one profile never hides the others
            errors.append((prof.name, _as_error(exc)))
    return errors


def sync_spot_history(accounts: Accounts, now: float | None = None, lookback_s: float = 31 * 86400.0,
                      max_age_s: float = 0.0) -> list[tuple[str, WorkbenchError]]:
    """Store the spot price history of spot instances launched in the last ``lookback_s``.

    With ``max_age_s`` > 0 nothing is asked when the last sync is younger than that
    (the GUI calls this after every refresh).
    """
    now = time.time() if now is None else now
    store = accounts.store
    errors: list[tuple[str, WorkbenchError]] = []
    last = store.get_setting("spot_history.synced_at")
    if max_age_s > 0 and last is not None and now - float(last) < max_age_s:
        return errors
    store.set_setting("spot_history.synced_at", repr(now))
    first_ts: dict[tuple[str, str, str], float] = {}
    for e in store.ledger():
        first_ts.setdefault((e.provider, e.profile, e.instance_id), e.ts)
    for inst in store.list_instances():
        start = inst.launched_at or first_ts.get((inst.provider, inst.profile, inst.instance_id))
        if not inst.spot or start is None or start < now - lookback_s:
            continue
        try:
            prov = accounts.provider(accounts.profile(inst.profile))
            if isinstance(prov, SupportsSpotHistory):
                points = prov.spot_price_history(inst, start, now)
                store.add_spot_prices(inst.provider, inst.profile, inst.instance_id, points)
        except Exception as exc:  # noqa: BLE001
            errors.append((inst.profile, _as_error(exc)))
    return errors


@dataclass(frozen=True)
class Actual:
    """Billed cost summed over days, for one launch (or one provider/profile, or one day)."""

    amount: float
    currency: str
    source: str


def actual_by(store, by: str, since_day: str) -> dict[str, Actual]:
    """Cached actual costs from ``since_day`` grouped like :meth:`SpendBook.group` ("launch"/"provider"/"day")."""
    out: dict[str, Actual] = {}
    for c in store.actual_costs(since_day):
        key = c.launch_id if by == "launch" else f"{c.provider}/{c.profile}" if by == "provider" else c.day
        if by == "launch" and not key:
            key = f"(untagged) {c.provider}/{c.profile}"
        prev = out.get(key)
        out[key] = Actual((prev.amount if prev else 0.0) + c.amount, c.currency, c.source)
    return out
