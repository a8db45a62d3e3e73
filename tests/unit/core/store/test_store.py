"""Tests of the SQLite state store (workbench.core.store.database)."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from workbench.core.store import database as store_mod
from workbench.core.store import launches as launches_mod
from workbench.core.store import schema as schema_mod
from workbench.core.domain.errors import ConfigError, NotFoundError, StoreError
from workbench.core.domain.models import GpuSample, Instance, InstanceState, Profile
from workbench.core.store.database import LaunchRecord, LedgerEntry, Store


def _inst(iid: str = "i-1", state: InstanceState = InstanceState.RUNNING, price: float = 1.5, **kw) -> Instance:
    base = dict(provider="aws", profile="default", instance_id=iid, launch_id="L1", region="us-east-1",
                instance_type="g5.xlarge", state=state, price_per_hour=price)
    base.update(kw)
    return Instance(**base)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "state.sqlite3"


@pytest.fixture
def st(db: Path):
    s = Store.open(db)
    yield s
    s.close()


def _siblings(p: Path) -> list[Path]:
    return [Path(f"{p}{s}") for s in ("-wal", "-shm")]


# ----------------------------------------------------------------- basics


def test_fresh_store_settings(st: Store, db: Path) -> None:
    assert st.path == db and st.recovered_from is None
    assert st.schema_version == store_mod.latest_version() == len(store_mod.MIGRATIONS)
    assert st.integrity() == "ok"
    conn = st._live()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == store_mod.APPLICATION_ID
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_default_path_uses_workbench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    with Store.open() as s:
        assert s.path == (tmp_path / "home").resolve() / "data" / "state.sqlite3"
        assert s.path.exists()


def test_install_id_stable_across_reopen(db: Path) -> None:
    with Store.open(db) as s:
        first = s.install_id
    assert len(first) == 12 and int(first, 16) >= 0
    with Store.open(db) as s:
        assert s.install_id == first
    with Store.open(db.parent / "other.sqlite3") as s:
        assert s.install_id != first


def test_closed_store_raises(db: Path) -> None:
    s = Store.open(db)
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.list_profiles()


# ----------------------------------------------------------------- entities


def test_profile_round_trip(st: Store) -> None:
    p = Profile(name="work", provider="aws", region="eu-west-1", endpoint_url="http://x",
                settings={"a": "1", "b": "two"})
    st.save_profile(p)
    st.save_profile(Profile(name="alpha", provider="azure"))
    assert st.get_profile("work") == p
    assert [x.name for x in st.list_profiles()] == ["alpha", "work"]
    changed = Profile(name="work", provider="aws", region="us-east-1")
    st.save_profile(changed)  # replace by name
    assert st.get_profile("work") == changed
    st.delete_profile("work")
    with pytest.raises(NotFoundError, match="no profile named 'work'") as ei:
        st.get_profile("work")
    assert ei.value.hint
    with pytest.raises(NotFoundError):
        st.delete_profile("work")


def test_launch_round_trip(st: Store) -> None:
    a = LaunchRecord(launch_id="L1", name="train", provider="aws", profile="default", region="us-east-1",
                     created_at=100.0, spec={"name": "train", "resources": {"gpu": {"count": 2}}},
                     projected_cost=3.25)
    b = LaunchRecord(launch_id="L2", name="eval", provider="local", profile="local", region=None,
                     created_at=200.0)
    st.add_launch(a)
    st.add_launch(b)
    assert st.get_launch("L1") == a
    assert st.find_launch("L2") == b
    assert st.find_launch("nope") is None
    with pytest.raises(NotFoundError):
        st.get_launch("nope")
    assert [r.launch_id for r in st.list_launches()] == ["L2", "L1"]  # newest first

    st.add_launch(LaunchRecord(launch_id="L1", name="other", provider="x", profile="y", region=None,
                               created_at=1.0))
    assert st.get_launch("L1") == a  # idempotent: existing row kept

    st.update_launch("L1", status="failed", error="boom", projected_cost=9.0)
    got = st.get_launch("L1")
    assert (got.status, got.error, got.projected_cost, got.spec) == ("failed", "boom", 9.0, a.spec)
    st.update_launch("L1", spec={"x": 1})
    assert st.get_launch("L1").spec == {"x": 1}
    with pytest.raises(NotFoundError):
        st.update_launch("nope", status="running")
    with pytest.raises(TypeError):
        st.update_launch("L1", bogus=1)


def test_instance_round_trip_and_filters(st: Store) -> None:
    i1 = _inst("i-1", name="n", gpu_model="A10G", gpu_count=1, currency="EUR", spot=True, launched_at=5.0,
               exit_code=0, host="1.2.3.4", extra={"zone": "a", "n": [1, 2]})
    i2 = _inst("i-2", launch_id="L2", state=InstanceState.PENDING)
    i3 = _inst("j-1", provider="azure", profile="az", launch_id="L2")
    for i in (i1, i2, i3):
        st.upsert_instance(i)
    assert st.get_instance("aws", "default", "i-1") == i1
    assert st.get_instance("aws", "default", "missing") is None
    assert st.list_instances() == [i1, i2, i3]  # ordered by (provider, profile, instance_id)
    assert {i.instance_id for i in st.list_instances(launch_id="L2")} == {"i-2", "j-1"}
    assert [i.instance_id for i in st.list_instances(provider="azure")] == ["j-1"]
    assert [i.instance_id for i in st.list_instances(launch_id="L2", profile="default")] == ["i-2"]
    assert st.list_instances(profile="nobody") == []


def test_samples_round_trip(st: Store) -> None:
    s = [GpuSample(instance_id="i-1", ts=float(t), index=g, util_percent=50.0 + g, mem_used_mb=100.0,
                   mem_total_mb=24000.0, name="A10G") for t in range(3) for g in range(2)]
    cpu = GpuSample(instance_id="i-1", ts=1.0, index=0, util_percent=3.0, mem_used_mb=1.0, mem_total_mb=2.0,
                    kind="cpu")
    other = GpuSample(instance_id="i-2", ts=1.0, index=0, util_percent=0.0, mem_used_mb=0.0, mem_total_mb=1.0)
    st.add_samples([*s, cpu, other])
    st.add_samples(s[:2])  # repeats are ignored
    st.add_samples([])
    got = st.samples("i-1")
    assert len(got) == 7 and set(got) == {*s, cpu}
    assert [x.ts for x in got] == sorted(x.ts for x in got)
    assert set(st.samples("i-1", since=2.0)) == {x for x in s if x.ts >= 2.0}
    assert st.samples("i-2") == [other]


def test_ledger_appended_only_on_change(st: Store) -> None:
    assert st.upsert_instance(_inst(state=InstanceState.PENDING, price=1.0), ts=10.0) is True
    assert st.upsert_instance(_inst(state=InstanceState.PENDING, price=1.0), ts=11.0) is False
    # other fields change: stored, but no ledger entry
    assert st.upsert_instance(_inst(state=InstanceState.PENDING, price=1.0, host="h"), ts=12.0) is False
    assert st.get_instance("aws", "default", "i-1").host == "h"
    assert st.upsert_instance(_inst(state=InstanceState.RUNNING, price=1.0), ts=20.0) is True
    assert st.upsert_instance(_inst(state=InstanceState.RUNNING, price=2.0), ts=30.0) is True
    assert st.upsert_instance(_inst(state=InstanceState.TERMINATED, price=2.0), ts=40.0) is True
    st.upsert_instance(_inst("i-2", provider="azure", profile="az"), ts=5.0)
    led = st.ledger(provider="aws", instance_id="i-1")
    assert led == [
        LedgerEntry("aws", "default", "i-1", 10.0, "pending", 1.0),
        LedgerEntry("aws", "default", "i-1", 20.0, "running", 1.0),
        LedgerEntry("aws", "default", "i-1", 30.0, "running", 2.0),
        LedgerEntry("aws", "default", "i-1", 40.0, "terminated", 2.0),
    ]
    assert [e.ts for e in st.ledger()] == [5.0, 10.0, 20.0, 30.0, 40.0]
    assert [e.instance_id for e in st.ledger(profile="az")] == ["i-2"]


def test_default_ledger_ts_is_now(st: Store) -> None:
    before = time.time()
    st.upsert_instance(_inst())
    (entry,) = st.ledger()
    assert before <= entry.ts <= time.time()


def test_failed_write_rolls_back(st: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    boom = RuntimeError("boom")

    def bad_dumps(value):
        raise boom

    monkeypatch.setattr(launches_mod, "dumps", bad_dumps)
    with pytest.raises(RuntimeError):
        st.upsert_instance(_inst())
    monkeypatch.undo()
    assert st.list_instances() == [] and st.ledger() == []
    st.upsert_instance(_inst())  # the connection is usable afterwards
    assert len(st.ledger()) == 1


# ----------------------------------------------------------------- damage and recovery


def _populate(db: Path) -> None:
    with Store.open(db) as s:
        s.save_profile(Profile(name="p", provider="aws"))


def test_corrupt_file_moved_aside(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    db.parent.mkdir(parents=True)
    junk = os.urandom(8192)
    db.write_bytes(junk)
    for sib in _siblings(db):
        sib.write_bytes(b"sibling " + sib.name.encode())
    with caplog.at_level(logging.WARNING, logger="workbench.store"):
        s = Store.open(db)
    try:
        moved = s.recovered_from
        assert moved is not None and moved.parent == db.parent
        assert moved.name.startswith("state.sqlite3.corrupt-")
        assert moved.read_bytes() == junk  # never deleted, byte-identical
        # the WAL may hold data and is kept as it was; -shm is only SQLite's scratch index
        assert Path(f"{moved}-wal").read_bytes() == b"sibling state.sqlite3-wal"
        assert Path(f"{moved}-shm").exists()
        assert any(str(moved) in r.getMessage() for r in caplog.records)
        # the fresh store works
        assert s.integrity() == "ok"
        s.save_profile(Profile(name="p", provider="aws"))
        assert s.get_profile("p").provider == "aws"
    finally:
        s.close()
    with Store.open(db) as again:  # and is not moved again
        assert again.recovered_from is None


def test_second_corruption_same_second_gets_suffix(db: Path) -> None:
    db.parent.mkdir(parents=True)
    moved = []
    for _ in range(2):
        db.write_bytes(os.urandom(4096))
        with Store.open(db) as s:
            moved.append(s.recovered_from)
        db.unlink()
        for sib in _siblings(db):
            sib.unlink(missing_ok=True)
    assert moved[0] != moved[1] and all(m.exists() for m in moved)


def test_damaged_pages_fail_quick_check_and_are_moved(db: Path) -> None:
    with Store.open(db) as s:
        s.add_samples([GpuSample(instance_id=f"i-{n}", ts=float(n), index=0, util_percent=1.0,
                                 mem_used_mb=1.0, mem_total_mb=1.0, name="x" * 200) for n in range(2000)])
    size = db.stat().st_size
    assert size > 20 * 4096 and not Path(f"{db}-wal").exists()
    with open(db, "r+b") as f:  # keep the header (page 1) valid, smash the b-tree pages
        for page in range(2, size // 4096, 3):
            f.seek(page * 4096 + 20)
            f.write(b"\xff" * 200)
    damaged = db.read_bytes()
    with Store.open(db) as s:
        assert s.recovered_from is not None
        assert s.recovered_from.read_bytes() == damaged
        assert s.samples("i-1") == []


def test_foreign_database_moved_aside(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    conn.commit()
    conn.close()
    with Store.open(db) as s:
        assert s.recovered_from is not None
        assert s.list_profiles() == []
        assert s.schema_version == store_mod.latest_version()
    old = sqlite3.connect(s.recovered_from)
    assert old.execute("SELECT url FROM moz_places").fetchall() == [("https://example.org",)]
    old.close()


def test_empty_file_with_other_application_id_is_adopted(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA application_id = 1234")
    conn.close()
    with Store.open(db) as s:
        assert s.recovered_from is None
        assert s._live().execute("PRAGMA application_id").fetchone()[0] == store_mod.APPLICATION_ID


def test_newer_schema_refused_and_untouched(db: Path) -> None:
    _populate(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = db.read_bytes()
    with pytest.raises(StoreError) as ei:
        Store.open(db)
    text = str(ei.value)
    assert "newer" in text and "upgrade" in text.lower()
    assert db.read_bytes() == before
    assert list(db.parent.glob("*.corrupt-*")) == []


def test_unwritable_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    # a parent that is a regular file fails even for root (chmod would not)
    with pytest.raises(StoreError) as ei:
        Store.open(blocker / "state.sqlite3")
    assert str(blocker) in str(ei.value) and ei.value.hint
    monkeypatch.setenv("WORKBENCH_HOME", str(blocker / "home"))
    with pytest.raises((StoreError, ConfigError)):
        Store.open()
    assert blocker.read_text() == "not a folder"


# ----------------------------------------------------------------- migrations


def _migrate_next(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('added by next')")


def test_migration_forward_from_current_version(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(db)
    nxt = store_mod.latest_version() + 1
    monkeypatch.setattr(schema_mod, "MIGRATIONS", [*schema_mod.MIGRATIONS, _migrate_next])
    with Store.open(db) as s:
        assert s.schema_version == nxt
        assert s._live().execute("SELECT body FROM notes").fetchall()[0][0] == "added by next"
        assert s.get_profile("p").provider == "aws"  # old data kept
    with Store.open(db) as s:  # not run twice
        assert s._live().execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    with Store.open(db.parent / "fresh.sqlite3") as s:  # fresh file runs every step
        assert s.schema_version == nxt


def test_failed_migration_leaves_old_version(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(db)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(schema_mod, "MIGRATIONS", [*schema_mod.MIGRATIONS, broken])
    with pytest.raises(RuntimeError):
        Store.open(db)
    monkeypatch.undo()
    with Store.open(db) as s:
        assert s.schema_version == store_mod.latest_version()
        assert s._live().execute("SELECT count(*) FROM sqlite_master WHERE name='half_done'").fetchone()[0] == 0


# ----------------------------------------------------------------- concurrency


def test_threads_share_one_store_and_two_handles(db: Path) -> None:
    a, b = Store.open(db), Store.open(db)
    errors: list[BaseException] = []

    def work(s: Store, t: int) -> None:
        try:
            for n in range(50):
                s.upsert_instance(_inst(f"t{t}-{n}", price=float(n)), ts=float(n))
                s.upsert_instance(_inst(f"t{t}-{n}", state=InstanceState.TERMINATED, price=float(n)), ts=n + 0.5)
                s.list_instances(provider="aws")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(a if t % 2 else b, t)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert len(a.list_instances()) == 8 * 50
        assert len(b.ledger()) == 8 * 50 * 2
        assert a.integrity() == "ok"
    finally:
        a.close()
        b.close()


_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.store.database import LaunchRecord, Store
    path, wid, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    (go.parent / f"ready-{wid}").touch()  # imports done: the test starts every worker at once
    deadline = time.time() + 20
    while not go.exists() and time.time() < deadline:
        time.sleep(0.005)
    with Store.open(path) as s:
        s.add_launch(LaunchRecord(launch_id="L-" + wid, name=wid, provider="aws", profile="p",
                                  region=None, created_at=time.time()))
        for n in range(200):
            s.upsert_instance(Instance(provider="aws", profile="p", instance_id=f"{wid}-{n}",
                                       launch_id="L-" + wid, region="r", instance_type="t",
                                       state=InstanceState.RUNNING, price_per_hour=float(n)))
        s.update_launch("L-" + wid, status="finished")
    """
)


def test_concurrent_processes(db: Path) -> None:
    db.parent.mkdir(parents=True)
    go = db.parent / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(db), f"w{w}", str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for w in range(4)]
    deadline = time.monotonic() + 30
    while len(list(db.parent.glob("ready-*"))) < 4:  # all imported, so the writes really overlap
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a worker never got ready"
        time.sleep(0.01)
    go.touch()
    errs = []
    for p in procs:
        _, err = p.communicate(timeout=40)
        errs.append(err.decode())
        assert p.returncode == 0, err.decode()
    # nobody mistook the store being created by a sibling for a foreign/corrupt one
    assert list(db.parent.glob("*.corrupt-*")) == [], errs
    with Store.open(db) as s:
        assert s.recovered_from is None
        assert len(s.list_instances()) == 4 * 200
        assert len(s.ledger()) == 4 * 200
        assert {r.status for r in s.list_launches()} == {"finished"}
        assert len(s.list_launches()) == 4
        assert s._live().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
