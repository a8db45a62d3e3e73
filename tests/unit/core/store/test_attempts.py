"""Schema 4: the attempts table; a store written by an earlier version (schema 2) loads and upgrades."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.store import database as store_mod
from workbench.core.store.attempts import AttemptRecord
from workbench.core.store.database import APPLICATION_ID, LaunchRecord, Store


def test_a_schema_2_store_with_data_loads_and_gains_the_attempts_table(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite3"
    conn = sqlite3.connect(db)
    for step in store_mod.MIGRATIONS[:2]:  # exactly what the previous app version made
        step(conn)
    conn.execute("INSERT INTO launches (launch_id, name, provider, profile, region, created_at, status, spec)"
                 " VALUES ('old-abc123', 'old', 'local', 'local', 'local', 1.0, 'finished', '{\"name\": \"old\"}')")
    conn.execute("INSERT INTO ledger (provider, profile, instance_id, ts, state, price_per_hour, storage_per_hour)"
                 " VALUES ('local', 'local', 'local-old-abc123', 1.0, 'running', 0.5, 0)")
    conn.execute("PRAGMA user_version = 2")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.commit()
    conn.close()
    with Store.open(db) as s:
        assert s.schema_version == store_mod.latest_version() >= 4
        assert s.recovered_from is None
        assert s.get_launch("old-abc123").spec == {"name": "old"}
        assert len(s.ledger()) == 1
        assert s.attempts("old-abc123") == [] and s.attempt_of("old-abc123") is None
        assert s.add_attempt(AttemptRecord("old-abc123-a2-0001", "old-abc123", 2, 5.0, "running"))


def test_attempts_record_each_try_and_their_end_once(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as s:
        s.add_launch(LaunchRecord("r-1", "r", "local", "local", "local", time.time()))
        assert s.add_attempt(AttemptRecord("r-1", "r-1", 1, 1.0, "running"))
        assert not s.add_attempt(AttemptRecord("r-1", "r-1", 1, 1.0, "running"))  # once per launch id
        s.add_attempt(AttemptRecord("r-1-a2-aaaa", "r-1", 2, 2.0, "launching"))
        s.update_attempt("r-1-a2-aaaa", status="launch_failed", detail="no capacity")
        s.add_attempt(AttemptRecord("r-1-a2-bbbb", "r-1", 2, 3.0, "running"))
        assert s.end_attempt("r-1", "preemption", "spot interruption", 10.0)
        assert not s.end_attempt("r-1", "failure", "again", 11.0)  # the first verdict stays
        got = s.attempts("r-1")
        assert [(a.launch_id, a.attempt, a.status) for a in got] == [
            ("r-1", 1, "ended"), ("r-1-a2-aaaa", 2, "launch_failed"), ("r-1-a2-bbbb", 2, "running")]
        assert (got[0].end_reason, got[0].detail, got[0].ended_at) == ("preemption", "spot interruption", 10.0)
        assert s.attempt_of("r-1-a2-bbbb").root_id == "r-1"
        # instances of attempts are ordinary instances of their own launch
        s.upsert_instance(Instance("local", "local", "i", "r-1-a2-bbbb", "local", "t", InstanceState.RUNNING))
        assert [i.launch_id for i in s.list_instances(launch_id="r-1-a2-bbbb")] == ["r-1-a2-bbbb"]
