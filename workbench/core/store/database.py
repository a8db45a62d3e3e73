"""The local state store: one SQLite file under the data folder.

It holds profiles, launches, instances, GPU and host samples and a *spend
ledger*: one row per state/price transition of an instance, from which spend is
computed.  :class:`Store` is one connection and one lock; its tables come in
groups, one module each, mixed into it: :mod:`.profiles`, :mod:`.launches`
(launches, instances, ledger), :mod:`.telemetry` (GPU and host samples),
:mod:`.money` (budgets, settings, prices, actual costs, guard events).  Opening
the file safely is :mod:`.opening`; the file format and migrations are
:mod:`.schema`.

Threading and processes
    The CLI, the GUI and a watcher process may share the file at once, each with
    several threads.  A :class:`Store` owns one connection (opened with
    ``check_same_thread=False``) and serialises its use with an ``RLock``, so
    one ``Store`` may be shared by any number of threads.  Across processes
    SQLite's WAL mode lets readers run beside one writer; every write is a
    ``BEGIN IMMEDIATE`` transaction (takes the write lock up front, so two
    writers never deadlock upgrading a read lock) and waits up to
    ``BUSY_TIMEOUT_S`` for that lock before failing with :class:`StoreError`.

Failure rules
    * A file that is not a database, fails ``PRAGMA quick_check``, or is another
      application's database (different ``application_id`` and has tables) is
      *moved aside* -- renamed with its ``-wal``/``-shm`` siblings to
      ``<name>.corrupt-YYYYmmdd-HHMMSS[-n]``, never deleted -- and a fresh
      store is opened; ``Store.recovered_from`` says where the old file went and
      a warning is logged on the ``workbench.store`` logger.
    * A database written by a newer app (``user_version`` above what this code
      knows) is refused with :class:`StoreError` and left untouched: it is not
      corrupt, the app is old.
    * An unwritable folder raises :class:`StoreError` (explicit path) or
      :class:`ConfigError` (default path, from ``paths``) naming the folder.
    * Any other SQLite failure (lock timeout, disk full) becomes StoreError.

Schema changes
    ``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1``
    (:mod:`.schema`): write ``migrate_N(conn)`` and append it to the list; all
    pending migrations run in one write transaction, so a failure leaves the
    database at its old version.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.core import paths
from workbench.core.domain.errors import StoreError
from workbench.core.store import opening
from workbench.core.store.launches import LaunchRecord, LaunchTables, LedgerEntry
from workbench.core.store.attempts import AttemptTables
from workbench.core.store.money import MoneyTables
from workbench.core.store.opening import BUSY_TIMEOUT_S, store_error
from workbench.core.store.profiles import ProfileTables
from workbench.core.store.schema import APPLICATION_ID, MIGRATIONS, latest_version
from workbench.core.store.telemetry import TelemetryTables

# Re-exported: callers import the store's records and constants from here.
__all__ = ["APPLICATION_ID", "BUSY_TIMEOUT_S", "MIGRATIONS", "LaunchRecord", "LedgerEntry", "Store",
           "latest_version"]

log = logging.getLogger("workbench.store")


class Store(ProfileTables, LaunchTables, TelemetryTables, MoneyTables, AttemptTables):
    """A handle on the state store; thread-safe; use :meth:`open`, then :meth:`close`.

    Profiles: :class:`ProfileTables`; launches, instances and the ledger: :class:`LaunchTables`;
    GPU and host samples: :class:`TelemetryTables`; budgets, settings, spot prices, actual costs and
    guard events: :class:`MoneyTables`; attempts of relaunched launches: :class:`AttemptTables`.
    """

    path: Path
    recovered_from: Path | None

    def __init__(self, conn: sqlite3.Connection, path: Path, recovered_from: Path | None) -> None:
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()
        self._install_id: str | None = None
        self.path = path
        self.recovered_from = recovered_from

    # ----------------------------------------------------------------- open / close

    @classmethod
    def open(cls, path: Path | None = None) -> "Store":
        """Open (creating or migrating) the store at ``path``, default ``paths.store_path()``."""
        if path is None:
            path = paths.store_path()  # ConfigError if the data folder is unwritable
        else:
            path = Path(path).expanduser()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the folder {path.parent} for the state store: {exc.strerror or exc}",
                    hint=f"choose a writable location, or set {paths.ENV_HOME} to a folder you own",
                ) from exc
        recovered: Path | None = None
        for _ in range(5):  # more than one round only if other processes race us
            expected = opening.file_key(path)
            # Probe even an empty main file: in WAL mode all content may still sit in -wal.
            problem = opening.inspect_file(path) if expected is not None else None
            if problem is None:
                conn = opening.connect(path)
                try:
                    opening.prepare(conn, path)
                except BaseException:
                    conn.close()
                    raise
                return cls(conn, path, recovered)
            moved = opening.move_aside(path, expected)
            if moved is not None:
                recovered = moved
                log.warning("state store %s %s; moved it to %s and started a fresh one", path, problem, moved)
        raise StoreError(f"cannot open the state store {path}: it keeps changing while being checked",
                         hint="close other workbench windows and retry")

    def close(self) -> None:
        """Close the connection; idempotent.  Later calls raise StoreError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- plumbing

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the state store {self.path} is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One BEGIN IMMEDIATE transaction, committed on success, rolled back on any error."""
        with self._lock:
            conn = self._live()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise store_error("write", self.path, exc) from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._live().execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise store_error("read", self.path, exc) from exc

    # ----------------------------------------------------------------- meta

    @property
    def install_id(self) -> str:
        """A random id for this installation, made once and kept forever."""
        if self._install_id is None:
            rows = self._query("SELECT value FROM meta WHERE key = 'install_id'")
            if not rows:  # only if someone deleted the row; recreate rather than fail
                with self._write() as conn:
                    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('install_id', ?)",
                                 (uuid.uuid4().hex[:12],))
                rows = self._query("SELECT value FROM meta WHERE key = 'install_id'")
            self._install_id = rows[0][0]
        return self._install_id

    @property
    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    def integrity(self) -> str:
        """``PRAGMA quick_check`` result: "ok", or the problems found, one per line."""
        return "\n".join(str(r[0]) for r in self._query("PRAGMA quick_check"))

