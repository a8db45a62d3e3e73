"""The store's money tables: budgets, settings, spot price history, actual costs, guard events.

Schema version 2 (:func:`migrate_2`) adds them, plus the disk price column of
the ledger.  :class:`MoneyTables` is mixed into :class:`~workbench.core.store.database.Store`
and uses its locked ``_write``/``_query`` plumbing, so the threading and
failure rules of the store hold here too: any number of threads may share one
Store; every write is one ``BEGIN IMMEDIATE`` transaction; SQLite failures
become :class:`StoreError`.

Guard events double as a cross-process claim: ``claim_event`` inserts a row
keyed by (launch, guard, key) and reports whether *this* call inserted it, so
a GUI and a ``workbench watch`` running side by side never warn twice or
start the same teardown twice.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Sequence

from workbench.core.domain.models import ActualCost

_SCHEMA_2 = (
    # price of the instance's disks per hour; they bill while stopped/deallocated too
    "ALTER TABLE ledger ADD COLUMN storage_per_hour REAL NOT NULL DEFAULT 0",
    # scope: 'monthly' (all spend this calendar month) or 'launch:<launch id>'
    """CREATE TABLE budgets (
        scope TEXT PRIMARY KEY, amount REAL NOT NULL, currency TEXT NOT NULL DEFAULT 'USD',
        enforce INTEGER NOT NULL DEFAULT 1, updated_at REAL NOT NULL)""",
    "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # the spot price of one instance as the provider reported it over time
    """CREATE TABLE spot_prices (
        provider TEXT NOT NULL, profile TEXT NOT NULL, instance_id TEXT NOT NULL,
        ts REAL NOT NULL, price REAL NOT NULL,
        PRIMARY KEY (provider, profile, instance_id, ts))""",
    # billed cost as the provider reports it (Cost Explorer / Cost Management), per launch and day
    """CREATE TABLE actual_costs (
        provider TEXT NOT NULL, profile TEXT NOT NULL, launch_id TEXT NOT NULL DEFAULT '',
        day TEXT NOT NULL, amount REAL NOT NULL, currency TEXT NOT NULL, source TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        PRIMARY KEY (provider, profile, launch_id, day))""",
    """CREATE TABLE guard_events (
        id INTEGER PRIMARY KEY, launch_id TEXT NOT NULL, guard TEXT NOT NULL, key TEXT NOT NULL,
        ts REAL NOT NULL, level TEXT NOT NULL, message TEXT NOT NULL,
        UNIQUE (launch_id, guard, key))""",
    "CREATE INDEX guard_events_ts ON guard_events (ts)",
)


def migrate_2(conn: sqlite3.Connection) -> None:
    """Version 1 → 2: money tables (see the module docstring)."""
    for stmt in _SCHEMA_2:
        conn.execute(stmt)


@dataclass(frozen=True)
class Budget:
    """A spending limit; ``enforce`` False means warnings only (50/80/100 %), no teardown."""

    scope: str  # "monthly" or "launch:<id>"
    amount: float
    currency: str = "USD"
    enforce: bool = True

    @property
    def launch_id(self) -> str | None:
        return self.scope.split(":", 1)[1] if self.scope.startswith("launch:") else None


@dataclass(frozen=True)
class GuardRecord:
    """Something a guard decided or did, kept for the log views and to act only once."""

    launch_id: str  # '' for account-wide events (monthly budget)
    guard: str
    key: str
    ts: float
    level: str  # info | warning | error
    message: str


class MoneyTables:
    """Store methods for the version-2 tables (mixed into Store)."""

    _write: Any  # provided by Store
    _query: Any

    # -- settings ---------------------------------------------------------------
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        rows = self._query("SELECT value FROM settings WHERE key = ?", (key,))
        return rows[0][0] if rows else default

    def set_setting(self, key: str, value: str | None) -> None:
        """Store a string setting; None deletes it."""
        with self._write() as conn:
            if value is None:
                conn.execute("DELETE FROM settings WHERE key = ?", (key,))
            else:
                conn.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, value))

    # -- budgets ----------------------------------------------------------------
    def set_budget(self, budget: Budget) -> None:
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO budgets (scope, amount, currency, enforce, updated_at)"
                         " VALUES (?, ?, ?, ?, ?)",
                         (budget.scope, budget.amount, budget.currency, int(budget.enforce), time.time()))

    def clear_budget(self, scope: str) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM budgets WHERE scope = ?", (scope,)).rowcount > 0

    def budgets(self) -> list[Budget]:
        return [Budget(r["scope"], r["amount"], r["currency"], bool(r["enforce"]))
                for r in self._query("SELECT * FROM budgets ORDER BY scope")]

    def get_budget(self, scope: str) -> Budget | None:
        rows = self._query("SELECT * FROM budgets WHERE scope = ?", (scope,))
        return Budget(rows[0]["scope"], rows[0]["amount"], rows[0]["currency"], bool(rows[0]["enforce"])) \
            if rows else None

    # -- spot price history -------------------------------------------------------
    def add_spot_prices(self, provider: str, profile: str, instance_id: str,
                        points: Sequence[tuple[float, float]]) -> int:
        """Record (ts, price) points of one spot instance; repeats are ignored. Returns rows added."""
        if not points:
            return 0
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany("INSERT OR IGNORE INTO spot_prices (provider, profile, instance_id, ts, price)"
                             " VALUES (?, ?, ?, ?, ?)",
                             [(provider, profile, instance_id, float(t), float(p)) for t, p in points])
            return conn.total_changes - before

    def spot_prices(self, provider: str | None = None, profile: str | None = None,
                    instance_id: str | None = None) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
        """(provider, profile, instance id) → [(ts, price)] oldest first."""
        where, params = self._filters(provider=provider, profile=profile, instance_id=instance_id)  # type: ignore[attr-defined]
        out: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
        for r in self._query(f"SELECT * FROM spot_prices{where} ORDER BY ts", params):
            out.setdefault((r["provider"], r["profile"], r["instance_id"]), []).append((r["ts"], r["price"]))
        return out

    # -- actual costs ---------------------------------------------------------------
    def put_actual_costs(self, provider: str, profile: str, costs: Sequence[ActualCost],
                         fetched_at: float | None = None) -> None:
        """Replace the cached actual costs of these (launch, day) pairs for one profile."""
        fetched_at = time.time() if fetched_at is None else fetched_at
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO actual_costs (provider, profile, launch_id, day, amount, currency, source,"
                " fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(provider, profile, c.launch_id or "", c.day, c.amount, c.currency, c.source, fetched_at)
                 for c in costs])
            conn.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                         (f"actual_costs.fetched.{provider}/{profile}", repr(fetched_at)))

    def actual_costs(self, since_day: str | None = None) -> list[ActualCost]:
        rows = self._query("SELECT * FROM actual_costs WHERE day >= ? ORDER BY day, provider, profile, launch_id",
                           (since_day or "",))
        return [ActualCost(r["provider"], r["profile"], r["launch_id"], r["day"], r["amount"], r["currency"],
                           r["source"], r["fetched_at"]) for r in rows]

    def actual_costs_fetched_at(self, provider: str, profile: str) -> float | None:
        value = self.get_setting(f"actual_costs.fetched.{provider}/{profile}")
        return float(value) if value is not None else None

    # -- guard events -----------------------------------------------------------------
    def claim_event(self, rec: GuardRecord) -> bool:
        """Record ``rec`` unless one with the same (launch, guard, key) exists; True if this call did."""
        with self._write() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO guard_events (launch_id, guard, key, ts, level, message)"
                " VALUES (?, ?, ?, ?, ?, ?)", (rec.launch_id, rec.guard, rec.key, rec.ts, rec.level, rec.message))
            return cur.rowcount > 0

    def has_event(self, launch_id: str, guard: str, key: str) -> bool:
        return bool(self._query("SELECT 1 FROM guard_events WHERE launch_id = ? AND guard = ? AND key = ?",
                                (launch_id, guard, key)))

    def guard_events(self, launch_id: str | None = None, since: float = 0.0) -> list[GuardRecord]:
        """Events oldest first, optionally of one launch, with ``ts >= since``."""
        sql = "SELECT * FROM guard_events WHERE ts >= ?"
        params: list[Any] = [since]
        if launch_id is not None:
            sql += " AND launch_id = ?"
            params.append(launch_id)
        rows = self._query(sql + " ORDER BY ts, id", params)
        return [GuardRecord(r["launch_id"], r["guard"], r["key"], r["ts"], r["level"], r["message"]) for r in rows]

