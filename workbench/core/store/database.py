"""The local state store: one SQLite file under the data folder.

It holds profiles, launches, instances, GPU samples and a *spend ledger*: one
row per state/price transition of an instance, from which spend is computed.

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
    ``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1``.  To
    change the schema, write ``_migrate_2(conn)`` and append it to the list;
    all pending migrations run in one write transaction, so a failure leaves
    the database at its old version.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from workbench.core import paths
from workbench.core.domain.errors import NotFoundError, StoreError
from workbench.core.domain.models import Instance, InstanceState, Profile
from workbench.core.store.attempts import AttemptTables, migrate_4
from workbench.core.store.money import MoneyTables, migrate_2
from workbench.core.store.telemetry import TelemetryTables, migrate_3

log = logging.getLogger("workbench.store")

#: Written into the file header so another app's SQLite file is recognised ("GPUW").
APPLICATION_ID = 0x47505557
BUSY_TIMEOUT_S = 10.0

_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT = 5, 6, 11
_SQLITE_NOTADB = 26
_SIBLINGS = ("-wal", "-shm")


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


# --------------------------------------------------------------------------- schema

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


def _migrate_1(conn: sqlite3.Connection) -> None:
    """Create everything, and the install id (here, so concurrent first opens agree)."""
    for stmt in _SCHEMA_1:
        conn.execute(stmt)
    conn.execute("INSERT INTO meta (key, value) VALUES ('install_id', ?)", (uuid.uuid4().hex[:12],))


#: Ordered forward migrations: MIGRATIONS[i] takes the schema from version i to i + 1.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_migrate_1, migrate_2, migrate_3, migrate_4]


def latest_version() -> int:
    # Looked up at call time so tests (and future code) can extend MIGRATIONS.
    return len(MIGRATIONS)


# --------------------------------------------------------------------------- helpers


def _is_corruption(exc: sqlite3.Error) -> bool:
    """True for "not a database" / "malformed", False for locks, I/O, permissions."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def _is_busy(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _enable_wal(conn: sqlite3.Connection, path: Path) -> None:
    """Switch the file to WAL (persistent, so usually already done).

    Changing the journal mode needs an exclusive lock and SQLite does not wait
    for it through the busy handler, so processes creating the store together
    would fail at once; retry until the busy timeout instead.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    if mode.lower() != "wal":  # e.g. some network filesystems
        log.warning("state store %s cannot use WAL (journal mode %s); concurrency is reduced", path, mode)


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 64 * 1024
    except OSError:
        return False


def _store_error(action: str, path: Path, exc: BaseException) -> StoreError:
    msg = str(exc)
    if "disk is full" in msg or ("disk I/O error" in msg and _disk_full(path.parent)):
        # SQLite says "disk I/O error" when it cannot grow its WAL index: the store itself is fine
        return StoreError(f"cannot {action} the state store {path}: the disk is full",
                          hint=f"free some space on the disk that holds {path.parent}; nothing was lost")
    if "locked" in msg or "busy" in msg:
        hint = "another workbench process holds the state store; wait for it or close it and retry"
    elif "readonly" in msg or "unable to open" in msg or isinstance(exc, PermissionError):
        hint = f"make {path.parent} writable, or set {paths.ENV_HOME} to a folder you own"
    else:
        hint = "run `workbench doctor`; a damaged store is moved aside when it is next opened"
    return StoreError(f"cannot {action} the state store {path}: {msg}", hint=hint)


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def _move_aside(path: Path, expected: tuple[int, int] | None) -> Path | None:
    """Rename a bad store and its siblings; None if another process already did.

    ``expected`` is the identity of the file we inspected: if the path now names
    another file (another process moved the bad one and made a fresh store), we
    must not move that fresh store away.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = path.with_name(f"{path.name}.corrupt-{stamp}")
    dest, n = base, 0
    while any(Path(f"{dest}{s}").exists() for s in ("", *_SIBLINGS)):
        n += 1
        dest = base.with_name(f"{base.name}-{n}")
    if _file_key(path) != expected or expected is None:
        return None
    moved: list[str] = []
    try:
        # Siblings first: a stale -wal left beside a fresh main file would be
        # replayed into it by SQLite, corrupting the new store.
        for s in _SIBLINGS:
            if Path(f"{path}{s}").exists():
                os.rename(f"{path}{s}", f"{dest}{s}")
                moved.append(s)
        os.rename(path, dest)
    except OSError as exc:
        for s in moved:  # keep the bad file and its WAL together
            try:
                os.rename(f"{dest}{s}", f"{path}{s}")
            except OSError:
                pass
        if isinstance(exc, FileNotFoundError):
            return None
        raise StoreError(
            f"the state store {path} is damaged and could not be moved aside: {exc.strerror or exc}",
            hint=f"close other workbench windows, then move {path} away by hand",
        ) from exc
    return dest


def _dumps(value: Any) -> str:
    # default=str: a stray non-JSON value in `extra` must not lose a state write.
    return json.dumps(value, default=str, separators=(",", ":"))


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


# --------------------------------------------------------------------------- store


class Store(MoneyTables, TelemetryTables, AttemptTables):
    """A handle on the state store; thread-safe; use :meth:`open`, then :meth:`close`.

    Budgets, settings, spot prices, actual costs and guard events: see :class:`MoneyTables`;
    attempts of relaunched launches: :class:`AttemptTables`.
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
            expected = _file_key(path)
            # Probe even an empty main file: in WAL mode all content may still sit in -wal.
            problem = cls._inspect(path) if expected is not None else None
            if problem is None:
                conn = cls._connect(path)
                try:
                    cls._prepare(conn, path)
                except BaseException:
                    conn.close()
                    raise
                return cls(conn, path, recovered)
            moved = _move_aside(path, expected)
            if moved is not None:
                recovered = moved
                log.warning("state store %s %s; moved it to %s and started a fresh one", path, problem, moved)
        raise StoreError(f"cannot open the state store {path}: it keeps changing while being checked",
                         hint="close other workbench windows and retry")

    @staticmethod
    def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
        # Read-only for inspection: a read-write connection to a bad file deletes
        # its -wal/-shm on close (evidence we promise to keep) and may checkpoint.
        target = f"{path.absolute().as_uri()}?mode=ro" if read_only else str(path)
        try:
            # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves.
            conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False, uri=read_only)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")  # reads nothing yet
        except sqlite3.Error as exc:
            raise _store_error("open", path, exc) from exc
        return conn

    @classmethod
    def _inspect(cls, path: Path) -> str | None:
        """Read-only checks of an existing file: None if usable, else why it must be moved aside.

        Raises StoreError for a newer schema or for errors that are not damage
        (locks, permissions): those must never cause a move.
        """
        conn = cls._connect(path, read_only=True)
        try:
            return cls._check(conn, path)
        finally:
            conn.close()  # also before any rename: Windows cannot rename an open file

    @staticmethod
    def _check(conn: sqlite3.Connection, path: Path) -> str | None:
        try:
            # One read transaction = one snapshot: read separately, another process's
            # first migration could commit in between and make our own new store look
            # foreign (tables present, application_id still 0).
            conn.execute("BEGIN")
            try:
                app_id = conn.execute("PRAGMA application_id").fetchone()[0]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                has_schema = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
                if app_id != APPLICATION_ID and (has_schema or version):
                    return f"belongs to another application (application_id {app_id})"
                check = [row[0] for row in conn.execute("PRAGMA quick_check")]
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            if _is_corruption(exc):
                return f"is not a readable database ({exc})"
            raise _store_error("open", path, exc) from exc
        if check != ["ok"]:
            return f"failed its integrity check ({'; '.join(check[:3])})"
        if version > latest_version():
            raise StoreError(
                f"the state store {path} was written by a newer version of the workbench "
                f"(schema {version}; this version knows up to {latest_version()})",
                hint="upgrade Cloud GPU Workbench; your data is intact and was not changed",
            )
        return None

    @staticmethod
    def _prepare(conn: sqlite3.Connection, path: Path) -> None:
        """Switch to WAL and run pending migrations (the first writes to the file)."""
        try:
            # Per-connection; set after _inspect because they read the (maybe bad) file.
            # NORMAL is safe with WAL: a power loss may drop the last commits, never corrupt.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # A long-lived GUI keeps the WAL file; trim it after checkpoints instead of
            # leaving it at its high-water mark.
            conn.execute(f"PRAGMA journal_size_limit = {16 * 1024 * 1024}")
            _enable_wal(conn, path)
            if conn.execute("PRAGMA user_version").fetchone()[0] == latest_version():
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Re-read under the write lock: another process may have migrated meanwhile.
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > latest_version():
                    raise StoreError(f"the state store {path} was upgraded by a newer workbench while opening",
                                     hint="upgrade Cloud GPU Workbench")
                for step in MIGRATIONS[version:]:
                    step(conn)
                # PRAGMA takes no parameters; both values are ints we control.
                conn.execute(f"PRAGMA user_version = {latest_version():d}")
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
            except BaseException:
                if conn.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _store_error("prepare", path, exc) from exc

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
                raise _store_error("write", self.path, exc) from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._live().execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _store_error("read", self.path, exc) from exc

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

    # ----------------------------------------------------------------- profiles

    def save_profile(self, p: Profile) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO profiles (name, provider, region, endpoint_url, settings)"
                " VALUES (?, ?, ?, ?, ?)",
                (p.name, p.provider, p.region, p.endpoint_url, _dumps(dict(p.settings))),
            )

    @staticmethod
    def _profile(r: sqlite3.Row) -> Profile:
        return Profile(name=r["name"], provider=r["provider"], region=r["region"],
                       endpoint_url=r["endpoint_url"], settings=json.loads(r["settings"]))

    def get_profile(self, name: str) -> Profile:
        rows = self._query("SELECT * FROM profiles WHERE name = ?", (name,))
        if not rows:
            raise NotFoundError(f"no profile named {name!r}",
                                hint="list them with `workbench profile list`, or add one with `workbench profile add`")
        return self._profile(rows[0])

    def list_profiles(self) -> list[Profile]:
        return [self._profile(r) for r in self._query("SELECT * FROM profiles ORDER BY name")]

    def delete_profile(self, name: str) -> None:
        with self._write() as conn:
            gone = conn.execute("DELETE FROM profiles WHERE name = ?", (name,)).rowcount
        if not gone:
            raise NotFoundError(f"no profile named {name!r}", hint="list them with `workbench profile list`")

    # ----------------------------------------------------------------- launches

    def add_launch(self, rec: LaunchRecord) -> None:
        """Insert; an existing row with the same id is kept as is (retries are idempotent)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO launches (launch_id, name, provider, profile, region, created_at,"
                " status, spec, projected_cost, currency, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rec.launch_id, rec.name, rec.provider, rec.profile, rec.region, rec.created_at,
                 rec.status, None if rec.spec is None else _dumps(rec.spec), rec.projected_cost,
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
            fields["spec"] = _dumps(fields["spec"])
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
        storage = _storage_price(inst)
        with self._write() as conn:
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
                 inst.host, _dumps(dict(inst.extra)), ts),
            )
            if changed:
                conn.execute(
                    "INSERT INTO ledger (provider, profile, instance_id, ts, state, price_per_hour, storage_per_hour)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (inst.provider, inst.profile, inst.instance_id, ts, inst.state.value, inst.price_per_hour,
                     storage),
                )
        return changed

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

    @staticmethod
    def _filters(**given: str | None) -> tuple[str, list[str]]:
        # Keys are our own keyword names (column names), values are bound parameters.
        used = {k: v for k, v in given.items() if v is not None}
        if not used:
            return "", []
        return " WHERE " + " AND ".join(f"{k} = ?" for k in used), list(used.values())

    # samples: see TelemetryTables (workbench.core.store.telemetry)

    # ----------------------------------------------------------------- ledger

    def ledger(self, provider: str | None = None, profile: str | None = None,
               instance_id: str | None = None) -> list[LedgerEntry]:
        """State transitions matching every filter given, oldest first."""
        where, params = self._filters(provider=provider, profile=profile, instance_id=instance_id)
        rows = self._query(f"SELECT * FROM ledger{where} ORDER BY ts, id", params)
        return [LedgerEntry(provider=r["provider"], profile=r["profile"], instance_id=r["instance_id"],
                            ts=r["ts"], state=r["state"], price_per_hour=r["price_per_hour"],
                            storage_per_hour=r["storage_per_hour"]) for r in rows]
