"""Spend: price × billable seconds, from the store's state ledger and each provider's billing rule.

The ledger holds one entry per state or price change of an instance; each
entry's state and prices hold until the next entry (or ``now``).  How states
turn into money is the provider's :class:`~workbench.core.money.billing_rules.BillingRule`:

* compute bills in the rule's compute states (AWS: running; Azure: running,
  stopping and stopped -- a Stopped but not Deallocated VM keeps billing);
* every continuous compute run ("start") bills at least the rule's minimum
  (AWS Linux 60 s, Azure 300 s); the top-up is counted at the run's start,
  because the provider is owed it from that moment;
* disks bill ``storage_per_hour`` in the rule's storage states (stopped and
  deallocated included); when the plugin reports no disk price, the book uses the
  spec's ``disk_gb`` at the rule's list price per GB-month;
* an UNKNOWN state (a failed look-up) bills as the state before it did, or as
  compute when nothing came before: never less than the provider may charge;
* a spot instance with recorded price history pays the price of each moment,
  not today's price.

Everything here is pure computation on values read from the store; it is
safe on any thread.  :class:`SpendBook` reads one consistent set of inputs
and answers the questions the CLI, the GUI and the guards ask.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as _dt
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from workbench.core.money.billing_rules import BillingRule, rule_for
from workbench.core.money.currency import CurrencySettings
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.store.database import LaunchRecord, LedgerEntry

Key = tuple[str, str, str]  # (provider, profile, instance_id)
HOURS_PER_MONTH = 730.0  # the clouds' own convention for monthly prices
History = Sequence[tuple[float, float]]  # (ts, price per hour), oldest first


@dataclass(frozen=True)
class Cost:
    """Money of one instance in one window: compute (including per-start minimums) and disks."""

    compute: float = 0.0
    storage: float = 0.0
    billed_seconds: float = 0.0  # compute seconds billed (minimum top-ups included)

    @property
    def total(self) -> float:
        return self.compute + self.storage


def _state(value: str) -> InstanceState:
    try:
        return InstanceState(value)
    except ValueError:
        return InstanceState.UNKNOWN


def _integrate(a: float, b: float, price: float, history: History | None) -> float:
    """∫ price dt over [a, b) in hours; ``history`` overrides ``price`` from its first point on."""
    if b <= a:
        return 0.0
    if not history:
        return price * (b - a) / 3600.0
    times = [t for t, _ in history]
    i = bisect.bisect_right(times, a) - 1
    current = history[i][1] if i >= 0 else price
    total, t = 0.0, a
    for pt, pp in history[i + 1:]:
        if pt >= b:
            break
        total += current * (pt - t) / 3600.0
        t, current = pt, pp
    return total + current * (b - t) / 3600.0


def _price_at(t: float, price: float, history: History | None) -> float:
    if not history:
        return price
    i = bisect.bisect_right([p for p, _ in history], t) - 1
    return history[i][1] if i >= 0 else price


def instance_cost(entries: Sequence[LedgerEntry], rule: BillingRule | None = None, now: float | None = None,
                  since: float = 0.0, until: float | None = None, spot_history: History | None = None) -> Cost:
    """Money one instance cost in [since, until) as of ``now``; ``entries`` ordered by time."""
    now = time.time() if now is None else now
    until = now if until is None else min(until, now)
    if not entries:
        return Cost()
    rule = rule or rule_for(entries[0].provider)
    compute = storage = billed = 0.0
    run_start: float | None = None  # start of the compute run we are in
    run_len = 0.0
    run_price = 0.0
    prev_compute: bool | None = None
    prev_storage: bool | None = None

    def close_run() -> None:
        nonlocal compute, billed, run_start, run_len
        if run_start is not None:
            top_up = rule.billed_seconds(run_len) - run_len
            if since <= run_start < until:
                compute += run_price * top_up / 3600.0
                billed += top_up
        run_start, run_len = None, 0.0

    for cur, nxt in zip(entries, [*entries[1:], None]):
        start = cur.ts
        end = min(nxt.ts if nxt is not None else now, now)
        state = _state(cur.state)
        if state == InstanceState.UNKNOWN:
            bills_compute = True if prev_compute is None else prev_compute
            bills_storage = True if prev_storage is None else prev_storage
        else:
            bills_compute, bills_storage = rule.bills_compute(state), rule.bills_storage(state)
        prev_compute, prev_storage = bills_compute, bills_storage
        if start >= now:
            break
        if bills_compute:
            if run_start is None:
                run_start, run_price = start, _price_at(start, cur.price_per_hour, spot_history)
            run_len += max(0.0, end - start)
            a, b = max(start, since), min(end, until)
            compute += _integrate(a, b, cur.price_per_hour, spot_history)
            billed += max(0.0, b - a)
        else:
            close_run()
        if bills_storage and cur.storage_per_hour:
            storage += _integrate(max(start, since), min(end, until), cur.storage_per_hour, None)
    close_run()
    return Cost(compute, storage, billed)


def rate_now(entries: Sequence[LedgerEntry], rule: BillingRule | None = None, now: float | None = None,
             spot_history: History | None = None) -> float:
    """What the instance costs per hour at ``now`` (compute if billing, plus disks)."""
    now = time.time() if now is None else now
    past = [e for e in entries if e.ts <= now]
    if not past:
        return 0.0
    rule = rule or rule_for(past[0].provider)
    last = past[-1]
    state = _state(last.state)
    known = [_state(e.state) for e in past if _state(e.state) != InstanceState.UNKNOWN]
    basis = known[-1] if state == InstanceState.UNKNOWN and known else state
    rate = 0.0
    if basis == InstanceState.UNKNOWN or rule.bills_compute(basis):
        rate += _price_at(now, last.price_per_hour, spot_history)
    if basis == InstanceState.UNKNOWN or rule.bills_storage(basis):
        rate += last.storage_per_hour
    return rate


# -- the older, simpler entry points (kept: the GUI's plots and the CLI's status use them) ----------
def accrued(entries: Sequence[LedgerEntry], now: float | None = None, since: float = 0.0) -> float:
    """Money spent by one instance given its ledger entries (ordered by time), from ``since`` to ``now``."""
    return instance_cost(entries, None, now, since).total


def group_ledger(ledger: Iterable[LedgerEntry]) -> dict[Key, list[LedgerEntry]]:
    grouped: dict[Key, list[LedgerEntry]] = {}
    for e in ledger:
        grouped.setdefault((e.provider, e.profile, e.instance_id), []).append(e)
    for v in grouped.values():
        v.sort(key=lambda e: e.ts)
    return grouped


def spend_by_instance(ledger: Iterable[LedgerEntry], now: float | None = None, since: float = 0.0,
                      spot: Mapping[Key, History] | None = None) -> dict[Key, float]:
    """Accrued spend (from ``since``) keyed by (provider, profile, instance_id)."""
    spot = spot or {}
    return {k: instance_cost(v, None, now, since, spot_history=spot.get(k)).total
            for k, v in group_ledger(ledger).items()}


def start_of_today(now: float | None = None) -> float:
    """Local midnight of the day containing ``now`` (POSIX seconds)."""
    t = time.localtime(time.time() if now is None else now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))


def start_of_month(now: float | None = None) -> float:
    """Local midnight of the first day of the month containing ``now``."""
    t = time.localtime(time.time() if now is None else now)
    return time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))


def day_starts(days: int, now: float) -> list[float]:
    """Local midnights of the last ``days`` days, oldest first (DST-safe)."""
    starts = []
    day = start_of_today(now)
    for _ in range(days):
        starts.append(day)
        day = start_of_today(day - 3600)
    return starts[::-1]


def burn_rate(instances: Iterable[Instance]) -> float:
    """Current cost per hour of these instances under their providers' rules (compute + reported disks).

    An AWS instance that is stopped costs only its disks; an Azure VM that is
    stopped but not deallocated still costs its full price.
    """
    total = 0.0
    for i in instances:
        rule = rule_for(i.provider)
        unknown = i.state == InstanceState.UNKNOWN
        if unknown or rule.bills_compute(i.state):
            total += i.price_per_hour
        if unknown or rule.bills_storage(i.state):
            try:
                total += max(0.0, float(i.extra.get("storage_per_hour") or 0.0))
            except (TypeError, ValueError):
                pass
    return total


def projected_cost(price_per_hour: float | None, max_runtime_minutes: int | None, nodes: int = 1) -> float | None:
    """Cost if the job runs to its max runtime on ``nodes`` machines of that price; None when unknown."""
    if price_per_hour is None or max_runtime_minutes is None:
        return None
    return price_per_hour * max(1, nodes) * max_runtime_minutes / 60.0


def spend_by_day(ledger: Iterable[LedgerEntry], days: int = 30, now: float | None = None) -> list[tuple[float, float]]:
    """(local midnight, money spent that day) for the last ``days`` days, oldest first."""
    now = time.time() if now is None else now
    book = SpendBook(list(ledger), [], [])
    return book.by_day(days, now)


# -- the book -------------------------------------------------------------------------------------
class SpendBook:
    """Ledger, instances, launches, spot history and currency settings, read once; answers spend questions.

    Amounts of one instance are in its own currency; sums across instances are
    converted to the display currency where a rate is known (see
    ``unconverted`` for currencies that could not be converted and were added
    as they are).
    """

    def __init__(self, ledger: Sequence[LedgerEntry], instances: Sequence[Instance],
                 launches: Sequence[LaunchRecord], spot: Mapping[Key, History] | None = None,
                 currency: CurrencySettings | None = None,
                 rules: Callable[[str], BillingRule] = rule_for) -> None:
        self.entries = group_ledger(ledger)
        self.instances = {(i.provider, i.profile, i.instance_id): i for i in instances}
        self.launches = {r.launch_id: r for r in launches}
        self.spot = dict(spot or {})
        self.currency = currency or CurrencySettings()
        self.rules = rules
        self.unconverted: set[str] = set()

    @classmethod
    def load(cls, store, currency: CurrencySettings | None = None) -> "SpendBook":
        """Read everything from ``store`` (blocks on SQLite; call from a worker in the GUI)."""
        from workbench.core.money import currency as currency_mod
        return cls(store.ledger(), store.list_instances(), store.list_launches(), store.spot_prices(),
                   currency or currency_mod.load(store))

    # -- per instance ----------------------------------------------------------
    def currency_of(self, key: Key) -> str:
        inst = self.instances.get(key)
        return inst.currency if inst is not None else "USD"

    def launch_of(self, key: Key) -> str | None:
        inst = self.instances.get(key)
        return inst.launch_id if inst is not None else None

    def _entries(self, key: Key) -> list[LedgerEntry]:
        """The instance's ledger; without a disk price from the plugin, the spec's disk at the rule's list price."""
        entries = self.entries.get(key, [])
        rule = self.rules(key[0])
        if not entries or not rule.disk_usd_per_gb_month or any(e.storage_per_hour for e in entries):
            return entries
        rec = self.launches.get(self.launch_of(key) or "")
        disk_gb = ((rec.spec or {}).get("resources") or {}).get("disk_gb") if rec is not None else None
        if not disk_gb:
            return entries
        hourly = float(disk_gb) * rule.disk_usd_per_gb_month / HOURS_PER_MONTH
        return [dataclasses.replace(e, storage_per_hour=hourly) for e in entries]

    def cost(self, key: Key, now: float, since: float = 0.0, until: float | None = None) -> Cost:
        entries = self._entries(key)
        if not entries:
            return Cost()
        return instance_cost(entries, self.rules(key[0]), now, since, until, self.spot.get(key))

    def rate(self, key: Key, now: float) -> float:
        entries = self._entries(key)
        return rate_now(entries, self.rules(key[0]), now, self.spot.get(key)) if entries else 0.0

    def _display(self, amount: float, key: Key) -> float:
        cur = self.currency_of(key)
        converted = self.currency.convert(amount, cur)
        if converted is None:
            self.unconverted.add(cur)
            return amount
        return converted

    # -- sums --------------------------------------------------------------------
    def by_instance(self, now: float, since: float = 0.0, until: float | None = None) -> dict[Key, float]:
        """Native-currency totals per instance."""
        return {k: self.cost(k, now, since, until).total for k in self.entries}

    def total(self, now: float, since: float = 0.0, until: float | None = None) -> float:
        """Everything, in the display currency."""
        return sum(self._display(self.cost(k, now, since, until).total, k) for k in self.entries)

    def group(self, by: str, now: float, since: float = 0.0, until: float | None = None) -> dict[str, float]:
        """Display-currency totals by "launch" (launch id), "provider" ("provider/profile") or "instance"."""
        out: dict[str, float] = {}
        for k in self.entries:
            if by == "launch":
                label = self.launch_of(k) or f"(unknown launch) {k[2]}"
            elif by == "provider":
                label = f"{k[0]}/{k[1]}"
            else:
                label = "/".join(k)
            out[label] = out.get(label, 0.0) + self._display(self.cost(k, now, since, until).total, k)
        return out

    def launch_total(self, launch_id: str, now: float, since: float = 0.0) -> float:
        """Native-currency spend of one launch (a launch has one provider, so one currency)."""
        return sum(self.cost(k, now, since).total for k in self.entries if self.launch_of(k) == launch_id)

    def launch_rate(self, launch_id: str, now: float) -> float:
        return sum(self.rate(k, now) for k in self.entries if self.launch_of(k) == launch_id)

    def rate_total(self, now: float) -> float:
        """Burn rate now, display currency, per hour."""
        return sum(self._display(self.rate(k, now), k) for k in self.entries)

    def by_day(self, days: int, now: float) -> list[tuple[float, float]]:
        """(local midnight, display-currency spend that day) for the last ``days`` days, oldest first."""
        starts = day_starts(days, now)
        ends = [*starts[1:], now]
        return [(s, self.total(now, s, e)) for s, e in zip(starts, ends)]

    def days_since(self, since: float, now: float) -> list[tuple[str, float]]:
        """(ISO local date, display-currency spend) for every day from ``since`` to ``now``."""
        out = []
        day = start_of_today(since)
        while day < now:
            nxt = start_of_today(day + 36 * 3600)
            out.append((_dt.date.fromtimestamp(day).isoformat(), self.total(now, max(day, since), min(nxt, now))))
            day = nxt
        return out

    def projection(self, launch_id: str, now: float) -> float | None:
        """Spend of the launch if it runs to its max runtime at today's rate; None without a limit."""
        rec = self.launches.get(launch_id)
        if rec is None or not rec.spec:
            return None
        minutes = (rec.spec.get("guards") or {}).get("max_runtime_minutes")
        if minutes is None:
            return None
        end = rec.created_at + float(minutes) * 60.0
        spent = self.launch_total(launch_id, now)
        return spent + self.launch_rate(launch_id, now) * max(0.0, end - now) / 3600.0
