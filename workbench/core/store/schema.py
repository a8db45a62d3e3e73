"""The store's file format: the application id, the version-1 schema and the migrations.

``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1``.  To
change the schema, write ``migrate_N(conn)`` (beside the tables it is about, as
:func:`workbench.core.store.money.migrate_2` is) and append it to the list;
all pending migrations run in one write transaction (``opening.prepare``), so a
failure leaves the database at its old version.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable

from workbench.core.store.attempts import migrate_4
from workbench.core.store.money import migrate_2
from workbench.core.store.telemetry import migrate_3, migrate_5, migrate_6

#: Written into the file header so another app's SQLite file is recognised ("GPUW").
APPLICATION_ID = 0x47505557

_SCHEMA_1 = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE profiles (
        name TEXT PRIMARY KEY, provider TEXT NOT NULL, region TEXT,
        endpoint_url TEXT, settings TEXT NOT NULL DEFAULT '{}')""",
    """CREATE TABLE launches (
        launch_id TEXT PRIMARY KEY, name TEXT NOT NULL, provider TEXT NOT NULL,
        profile TEXT NOT NULL, region TEXT, created_at REAL NOT NULL,
        status TEXT NOT NULL, spec TEXT, projected_cost REAL,
        currency TEXT NOT NULL DEFAULT 'USD', error TEXT)""",
    "CREATE INDEX launches_created ON launches (created_at)",
    # No foreign key to launches: a scan may find instances launched from another
    # computer, and those must still be recorded (their bill is real).
    """CREATE TABLE instances (
        provider TEXT NOT NULL, profile TEXT NOT NULL, instance_id TEXT NOT NULL,
        launch_id TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL,
        state TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', gpu_model TEXT,
        gpu_count INTEGER NOT NULL DEFAULT 0, price_per_hour REAL NOT NULL DEFAULT 0,
        currency TEXT NOT NULL DEFAULT 'USD', spot INTEGER NOT NULL DEFAULT 0,
        launched_at REAL, exit_code INTEGER, host TEXT, extra TEXT NOT NULL DEFAULT '{}',
        updated_at REAL NOT NULL,
        PRIMARY KEY (provider, profile, instance_id))""",
    "CREATE INDEX instances_launch ON instances (launch_id)",
    # UNIQUE makes re-sending the same reading harmless (INSERT OR IGNORE).
    """CREATE TABLE samples (
        instance_id TEXT NOT NULL, ts REAL NOT NULL, idx INTEGER NOT NULL,
        util_percent REAL NOT NULL, mem_used_mb REAL NOT NULL, mem_total_mb REAL NOT NULL,
        name TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL DEFAULT 'gpu',
        UNIQUE (instance_id, ts, idx, kind))""",
    # The ledger outlives instances on purpose (spend history), so no foreign key.
    """CREATE TABLE ledger (
        id INTEGER PRIMARY KEY, provider TEXT NOT NULL, profile TEXT NOT NULL,
        instance_id TEXT NOT NULL, ts REAL NOT NULL, state TEXT NOT NULL,
        price_per_hour REAL NOT NULL)""",
    "CREATE INDEX ledger_instance ON ledger (provider, profile, instance_id, ts)",
    "CREATE INDEX ledger_ts ON ledger (ts)",
)


def migrate_1(conn: sqlite3.Connection) -> None:
    """Create everything, and the install id (here, so concurrent first opens agree)."""
    for stmt in _SCHEMA_1:
        conn.execute(stmt)
    conn.execute("INSERT INTO meta (key, value) VALUES ('install_id', ?)", (uuid.uuid4().hex[:12],))


#: Ordered forward migrations: MIGRATIONS[i] takes the schema from version i to i + 1.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [migrate_1, migrate_2, migrate_3, migrate_4,
                                                         migrate_5, migrate_6]


def latest_version() -> int:
    # Looked up at call time so tests (and future code) can extend MIGRATIONS.
    return len(MIGRATIONS)
