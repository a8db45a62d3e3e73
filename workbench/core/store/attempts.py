"""The store's attempts table: every attempt of a launch that recovery relaunched (schema version 4).

A launch with a ``recovery`` policy may run several times: after a spot interruption (or a failure,
when the spec says so) the app relaunches it as a new launch (its own id, machines, tags and log)
and records it here as attempt N of the first launch, the *root*.  Attempt 1 is the root itself;
its row is written when its end is first recorded.  Launches without recovery have no rows, and
every older store loads unchanged (:func:`migrate_4` only adds the table).

:class:`AttemptTables` is mixed into :class:`~workbench.core.store.database.Store` and uses its
locked plumbing: the threading and failure rules of the store hold here too.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

_SCHEMA_4 = (
    """CREATE TABLE attempts (
        launch_id TEXT PRIMARY KEY, root_id TEXT NOT NULL, attempt INTEGER NOT NULL,
        started_at REAL NOT NULL, status TEXT NOT NULL DEFAULT 'launching',
        ended_at REAL, end_reason TEXT, detail TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX attempts_root ON attempts (root_id, attempt)",
)

#: how an attempt ended (``end_reason``); '' / None while it runs
PREEMPTION, FAILURE, FINISHED, STOPPED = "preemption", "failure", "finished", "stopped"


def migrate_4(conn: sqlite3.Connection) -> None:
    """Version 3 → 4: the attempts table (see the module docstring)."""
    for stmt in _SCHEMA_4:
        conn.execute(stmt)


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt of a launch: ``status`` launching | running | launch_failed | ended."""

    launch_id: str
    root_id: str
    attempt: int
    started_at: float
    status: str = "launching"
    ended_at: float | None = None
    end_reason: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return {"launch_id": self.launch_id, "root_id": self.root_id, "attempt": self.attempt,
                "started_at": self.started_at, "status": self.status, "ended_at": self.ended_at,
                "end_reason": self.end_reason, "detail": self.detail}


def _row(r: sqlite3.Row) -> AttemptRecord:
    return AttemptRecord(r["launch_id"], r["root_id"], r["attempt"], r["started_at"], r["status"], r["ended_at"],
                         r["end_reason"], r["detail"])


class AttemptTables:
    """Attempts of relaunched launches (mixed into Store)."""

    def add_attempt(self, rec: AttemptRecord) -> bool:
        """Insert ``rec`` unless its launch id is known; True if this call inserted it."""
        with self._write() as conn:  # type: ignore[attr-defined]
            cur = conn.execute(
                "INSERT OR IGNORE INTO attempts (launch_id, root_id, attempt, started_at, status, ended_at,"
                " end_reason, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (rec.launch_id, rec.root_id, rec.attempt, rec.started_at, rec.status, rec.ended_at, rec.end_reason,
                 rec.detail))
            return cur.rowcount > 0

    def update_attempt(self, launch_id: str, **fields: object) -> None:
        allowed = {"status", "ended_at", "end_reason", "detail"}
        bad = set(fields) - allowed
        if bad:
            raise TypeError(f"update_attempt() got unknown fields: {', '.join(sorted(bad))}")
        if not fields:
            return
        with self._write() as conn:  # type: ignore[attr-defined]
            sets = ", ".join(f"{k} = ?" for k in fields)  # names from the whitelist above
            conn.execute(f"UPDATE attempts SET {sets} WHERE launch_id = ?", (*fields.values(), launch_id))

    def attempt_of(self, launch_id: str) -> AttemptRecord | None:
        rows = self._query("SELECT * FROM attempts WHERE launch_id = ?", (launch_id,))  # type: ignore[attr-defined]
        return _row(rows[0]) if rows else None

    def attempts(self, root_id: str) -> list[AttemptRecord]:
        """The attempts of ``root_id``, first first (failed tries to relaunch included)."""
        rows = self._query("SELECT * FROM attempts WHERE root_id = ? ORDER BY attempt, started_at",  # type: ignore
                           (root_id,))
        return [_row(r) for r in rows]

    def all_attempts(self) -> list[AttemptRecord]:
        return [_row(r) for r in self._query("SELECT * FROM attempts ORDER BY root_id, attempt, started_at")]  # type: ignore

    def end_attempt(self, launch_id: str, reason: str, detail: str, ts: float | None = None) -> bool:
        """Record how an attempt ended, once (True if this call recorded it)."""
        with self._write() as conn:  # type: ignore[attr-defined]
            cur = conn.execute("UPDATE attempts SET status = 'ended', ended_at = ?, end_reason = ?, detail = ?"
                               " WHERE launch_id = ? AND ended_at IS NULL",
                               (time.time() if ts is None else ts, reason, detail, launch_id))
            return cur.rowcount > 0
