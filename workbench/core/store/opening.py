"""Opening the store file safely: connect, inspect, move a damaged file aside, WAL, migrations.

Used by :meth:`workbench.core.store.database.Store.open` (see its module
docstring for the failure rules these functions implement).  Every function
here works on one file path and its own short-lived or given connection; none
keeps state.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from pathlib import Path

from workbench.core import paths
from workbench.core.domain.errors import StoreError
from workbench.core.store import schema
from workbench.core.store.schema import APPLICATION_ID, latest_version

log = logging.getLogger("workbench.store")

BUSY_TIMEOUT_S = 10.0

_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT = 5, 6, 11
_SQLITE_NOTADB = 26
_SIBLINGS = ("-wal", "-shm")


def is_corruption(exc: sqlite3.Error) -> bool:
    """True for "not a database" / "malformed", False for locks, I/O, permissions."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def is_busy(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def enable_wal(conn: sqlite3.Connection, path: Path) -> None:
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
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    if mode.lower() != "wal":  # e.g. some network filesystems
        log.warning("state store %s cannot use WAL (journal mode %s); concurrency is reduced", path, mode)


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 64 * 1024
    except OSError:
        return False


def store_error(action: str, path: Path, exc: BaseException) -> StoreError:
    """The StoreError for a failed SQLite ``action`` on ``path``, with the hint that fits the cause."""
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


def file_key(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``; None when it does not exist."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def move_aside(path: Path, expected: tuple[int, int] | None) -> Path | None:
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
    if file_key(path) != expected or expected is None:
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


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """A connection to ``path`` (autocommit: callers issue BEGIN IMMEDIATE / COMMIT themselves)."""
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
        raise store_error("open", path, exc) from exc
    return conn


def inspect_file(path: Path) -> str | None:
    """Read-only checks of an existing file: None if usable, else why it must be moved aside.

    Raises StoreError for a newer schema or for errors that are not damage
    (locks, permissions): those must never cause a move.
    """
    conn = connect(path, read_only=True)
    try:
        return check(conn, path)
    finally:
        conn.close()  # also before any rename: Windows cannot rename an open file


def check(conn: sqlite3.Connection, path: Path) -> str | None:
    """None if the open file is ours and intact, else why not; StoreError for a newer schema."""
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
            found = [row[0] for row in conn.execute("PRAGMA quick_check")]
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        if is_corruption(exc):
            return f"is not a readable database ({exc})"
        raise store_error("open", path, exc) from exc
    if found != ["ok"]:
        return f"failed its integrity check ({'; '.join(found[:3])})"
    if version > latest_version():
        raise StoreError(
            f"the state store {path} was written by a newer version of the workbench "
            f"(schema {version}; this version knows up to {latest_version()})",
            hint="upgrade Cloud GPU Workbench; your data is intact and was not changed",
        )
    return None


def prepare(conn: sqlite3.Connection, path: Path) -> None:
    """Switch to WAL and run pending migrations (the first writes to the file)."""
    try:
        # Per-connection; set after inspect_file because they read the (maybe bad) file.
        # NORMAL is safe with WAL: a power loss may drop the last commits, never corrupt.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # A long-lived GUI keeps the WAL file; trim it after checkpoints instead of
        # leaving it at its high-water mark.
        conn.execute(f"PRAGMA journal_size_limit = {16 * 1024 * 1024}")
        enable_wal(conn, path)
        if conn.execute("PRAGMA user_version").fetchone()[0] == latest_version():
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > latest_version():
                raise StoreError(f"the state store {path} was upgraded by a newer workbench while opening",
                                 hint="upgrade Cloud GPU Workbench")
            for step in schema.MIGRATIONS[version:]:  # looked up now: tests extend the list
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
        raise store_error("prepare", path, exc) from exc
