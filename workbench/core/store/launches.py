"""The store's launches, instances and spend ledger.

A launch is what the user asked for; its instances are what the providers
made; the ledger has one row per state/price transition of an instance, from
which spend is computed (``workbench.core.money.spend``).  An instance row and
its ledger row are written in one transaction.  Mixed into
:class:`~workbench.core.store.database.Store` (see :mod:`.tables`).
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass, fields
from typing import Any

from workbench.core.domain.errors import NotFoundError
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.store.tables import Tables, dumps


@dataclass(frozen=True)
class LaunchRecord:
    """One ``launch`` the user asked for (it may create several instances)."""

    launch_id: str
    name: str
    provider: str
    profile: str
    region: str | None
    created_at: float  # POSIX seconds
    status: str = "launching"  # launching | running | finished | failed | terminated | recovered
    spec: dict | None = None  # JSON-serialisable job spec dict
    projected_cost: float | None = None
    currency: str = "USD"
    error: str | None = None


@dataclass(frozen=True)
class LedgerEntry:
    """An instance entered ``state`` at ``ts``, billed at ``price_per_hour`` from then on."""

    provider: str
    profile: str
    instance_id: str
    ts: float
    state: str  # an InstanceState value
    price_per_hour: float
    storage_per_hour: float = 0.0  # the instance's disks (bill while stopped too); schema 2


def launch_to_json(rec: LaunchRecord) -> dict[str, Any]:
    """The record as plain JSON (the controller's board carries launches between stores)."""
    return {f.name: getattr(rec, f.name) for f in fields(rec)}


def launch_from_json(data: dict[str, Any]) -> LaunchRecord:
    """The record back from :func:`launch_to_json` (unknown keys ignored; a missing field is a KeyError)."""
    names = {f.name for f in fields(LaunchRecord)}
    return LaunchRecord(**{k: v for k, v in data.items() if k in names})


def _row_to_instance(r: sqlite3.Row) -> Instance:
    return Instance(
        provider=r["provider"], profile=r["profile"], instance_id=r["instance_id"],
        launch_id=r["launch_id"], region=r["region"], instance_type=r["instance_type"],
        state=InstanceState(r["state"]), name=r["name"], gpu_model=r["gpu_model"],
        gpu_count=r["gpu_count"], price_per_hour=r["price_per_hour"], currency=r["currency"],
        spot=bool(r["spot"]), launched_at=r["launched_at"], exit_code=r["exit_code"],
        host=r["host"], extra=json.loads(r["extra"]),
    )


def _row_to_launch(r: sqlite3.Row) -> LaunchRecord:
    return LaunchRecord(
        launch_id=r["launch_id"], name=r["name"], provider=r["provider"], profile=r["profile"],
        region=r["region"], created_at=r["created_at"], status=r["status"],
        spec=json.loads(r["spec"]) if r["spec"] is not None else None,
        projected_cost=r["projected_cost"], currency=r["currency"], error=r["error"],
    )


def _storage_price(inst: Instance) -> float:
    """The disks' $/h a provider put in ``extra["storage_per_hour"]``; 0 when absent or not a number."""
    try:
        value = float(inst.extra.get("storage_per_hour") or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return value if math.isfinite(value) and value >= 0 else 0.0


_LAUNCH_FIELDS = frozenset(f.name for f in fields(LaunchRecord)) - {"launch_id"}


class LaunchTables(Tables):
    """Store methods for launches, instances and the ledger."""

    def add_launch(self, rec: LaunchRecord) -> None:
        """Insert; an existing row with the same id is kept as is (retries are idempotent)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO launches (launch_id, name, provider, profile, region, created_at,"
                " status, spec, projected_cost, currency, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rec.launch_id, rec.name, rec.provider, rec.profile, rec.region, rec.created_at,
                 rec.status, None if rec.spec is None else dumps(rec.spec), rec.projected_cost,
                 rec.currency, rec.error),
            )

    def find_launch(self, launch_id: str) -> LaunchRecord | None:
        rows = self._query("SELECT * FROM launches WHERE launch_id = ?", (launch_id,))
        return _row_to_launch(rows[0]) if rows else None

    def get_launch(self, launch_id: str) -> LaunchRecord:
        rec = self.find_launch(launch_id)
        if rec is None:
            raise NotFoundError(f"no launch with id {launch_id!r}", hint="list them with `workbench status`")
        return rec

    def list_launches(self) -> list[LaunchRecord]:
        """Newest first (ties: last inserted first)."""
        return [_row_to_launch(r) for r in
                self._query("SELECT * FROM launches ORDER BY created_at DESC, rowid DESC")]

    def update_launch(self, launch_id: str, **fields: Any) -> None:
        """Set some LaunchRecord fields (status, error, projected_cost, ...).

        Unknown field names raise TypeError (a programming error); a missing
        launch raises NotFoundError.
        """
        unknown = set(fields) - _LAUNCH_FIELDS
        if unknown:
            raise TypeError(f"update_launch() got unknown fields: {', '.join(sorted(unknown))}")
        if "spec" in fields and fields["spec"] is not None:
            fields["spec"] = dumps(fields["spec"])
        with self._write() as conn:
            if fields:
                # Column names come from the LaunchRecord field whitelist above, never from input.
                sets = ", ".join(f"{k} = ?" for k in fields)
                n = conn.execute(f"UPDATE launches SET {sets} WHERE launch_id = ?",
                                 (*fields.values(), launch_id)).rowcount
            else:
                n = len(conn.execute("SELECT 1 FROM launches WHERE launch_id = ?", (launch_id,)).fetchall())
        if not n:
            raise NotFoundError(f"no launch with id {launch_id!r}", hint="list them with `workbench status`")

    # ----------------------------------------------------------------- instances

    def upsert_instance(self, inst: Instance, ts: float | None = None) -> bool:
        """Insert or update; append a ledger entry if the row is new or its state/price changed.

        The disks' price, when the provider reports it in
        ``inst.extra["storage_per_hour"]``, is recorded beside the compute
        price (a change of it is a ledger entry too).  A known exit code is kept when
        ``inst`` has none (a cloud listing cannot see it).  Row and ledger entry are written in
        one transaction, so the ledger never misses or duplicates a transition
        even with several writers.  Returns True exactly when a ledger entry was
        appended; changes to other fields (host, exit code, ...) are stored but
        return False.
        """
        ts = time.time() if ts is None else ts
        with self._write() as conn:
            return _upsert(conn, inst, ts)

    def upsert_instances(self, insts: list[Instance], ts: float | None = None) -> list[bool]:
        """:meth:`upsert_instance` for each, all in one transaction (reconcile writes a whole listing:
        one commit instead of one per machine).  Returns the per-instance results."""
        ts = time.time() if ts is None else ts
        with self._write() as conn:
            return [_upsert(conn, inst, ts) for inst in insts]

    def instances_version(self) -> tuple[int, float]:
        """(rows, newest ``updated_at``) of the instances table: it changes whenever an instance is written."""
        rows = self._query("SELECT count(*), coalesce(max(updated_at), 0) FROM instances", ())
        return int(rows[0][0]), float(rows[0][1])

    def get_instance(self, provider: str, profile: str, instance_id: str) -> Instance | None:
        rows = self._query("SELECT * FROM instances WHERE provider = ? AND profile = ? AND instance_id = ?",
                           (provider, profile, instance_id))
        return _row_to_instance(rows[0]) if rows else None

    def list_instances(self, launch_id: str | None = None, provider: str | None = None,
                       profile: str | None = None) -> list[Instance]:
        """Instances matching every filter given, ordered by (provider, profile, instance_id)."""
        where, params = self._filters(launch_id=launch_id, provider=provider, profile=profile)
        rows = self._query(f"SELECT * FROM instances{where} ORDER BY provider, profile, instance_id", params)
        return [_row_to_instance(r) for r in rows]

    def ledger(self, provider: str | None = None, profile: str | None = None,
               instance_id: str | None = None) -> list[LedgerEntry]:
        """State transitions matching every filter given, oldest first."""
        where, params = self._filters(provider=provider, profile=profile, instance_id=instance_id)
        rows = self._query(f"SELECT * FROM ledger{where} ORDER BY ts, id", params)
        return [LedgerEntry(provider=r["provider"], profile=r["profile"], instance_id=r["instance_id"],
                            ts=r["ts"], state=r["state"], price_per_hour=r["price_per_hour"],
                            storage_per_hour=r["storage_per_hour"]) for r in rows]


def _upsert(conn: Any, inst: Instance, ts: float) -> bool:
    """The body of :meth:`LaunchTables.upsert_instance`, inside the caller's transaction."""
    storage = _storage_price(inst)
    old = conn.execute(
        "SELECT state, price_per_hour, exit_code FROM instances"
        " WHERE provider = ? AND profile = ? AND instance_id = ?",
        (inst.provider, inst.profile, inst.instance_id),
    ).fetchone()
    # an exit code, once known (e.g. recorded by the remote runner), stays: a cloud's
    # listing cannot see it and must not erase it
    exit_code = inst.exit_code if inst.exit_code is not None or old is None else old[2]
    last = conn.execute(
        "SELECT storage_per_hour FROM ledger WHERE provider = ? AND profile = ? AND instance_id = ?"
        " ORDER BY ts DESC, id DESC LIMIT 1", (inst.provider, inst.profile, inst.instance_id),
    ).fetchone()
    changed = (old is None or old[0] != inst.state.value or old[1] != inst.price_per_hour
               or (last is not None and last[0] != storage))
    conn.execute(
        "INSERT OR REPLACE INTO instances (provider, profile, instance_id, launch_id, region,"
        " instance_type, state, name, gpu_model, gpu_count, price_per_hour, currency, spot,"
        " launched_at, exit_code, host, extra, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (inst.provider, inst.profile, inst.instance_id, inst.launch_id, inst.region,
         inst.instance_type, inst.state.value, inst.name, inst.gpu_model, inst.gpu_count,
         inst.price_per_hour, inst.currency, int(inst.spot), inst.launched_at, exit_code,
         inst.host, dumps(dict(inst.extra)), ts),
    )
    if changed:
        conn.execute(
            "INSERT INTO ledger (provider, profile, instance_id, ts, state, price_per_hour, storage_per_hour)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (inst.provider, inst.profile, inst.instance_id, ts, inst.state.value, inst.price_per_hour,
             storage),
        )
    return changed
