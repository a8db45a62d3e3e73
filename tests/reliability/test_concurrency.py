"""Concurrency on one store: GUI + CLI + `workbench watch` at once; two `down --all` at once; a launch
and a teardown of the same launch racing.

Every process is the real thing (the CLI, `watch`, a MainWindow process) on one WORKBENCH_HOME.
Checks: no process fails or says "database is locked", the store stays intact, every machine that
exists is shown, and the end state has nothing of ours left in moto.  The races are forced, not
hoped for: the raced request is parked in the server by a hold rule (tests/support/holds.py)
until the other side has done its part.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reltools import ROOT, aws_instances_by_launch, aws_remains

SCRIPT = Path(__file__).with_name("gui_launch.py")
LOCAL = "name: {name}\nrun: sleep 60\nguards:\n  max_runtime: 5m\n"


def _no_lock_trouble(*texts: str) -> None:
    for t in texts:
        assert "locked" not in t and "Traceback" not in t, t[-3000:]


@pytest.mark.timeout(120)
def test_gui_cli_and_watch_at_once_on_one_store(wbhome, tmp_path):
    specs = []
    for name in ("cli-a", "cli-b", "gui-a"):
        p = tmp_path / f"{name}.yaml"
        p.write_text(LOCAL.format(name=name))
        specs.append(p)
    watch = wbhome.popen("watch", "--interval", "0.3")
    gui = subprocess.Popen([sys.executable, str(SCRIPT), str(specs[2]), "local", "6"], env=wbhome.env, cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        outs = []
        launchers = [wbhome.popen("launch", str(s), "--provider", "local", "--yes", "--json") for s in specs[:2]]
        for _ in range(4):
            r = wbhome("status", "--json")
            assert r.returncode == 0, r.stderr
            outs.append(r.stderr)
        for p in launchers:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            outs += [out, err]
        gout, gerr = gui.communicate(timeout=60)
        assert gui.returncode == 0 and "launched gui-a-" in gout, gout + gerr
        _no_lock_trouble(*outs, gerr)
        st = wbhome.json("status")
        names = {launch["name"] for launch in st["launches"] if launch["status"] == "running"}
        assert names == {"cli-a", "cli-b", "gui-a"} and st["billable"] == 3
    finally:
        watch.terminate()
        wout, werr = watch.communicate(timeout=30)
        if gui.poll() is None:
            gui.kill()
    _no_lock_trouble(werr)
    report = wbhome.json("down", "--all", "--yes", "--include-own")  # the jobs on this computer too
    assert report["clean"] and len(report["terminated"]) == 3
    with sqlite3.connect(wbhome.path / "data" / "state.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _launch_in_process(wbhome, moto, monkeypatch, n: int) -> list[str]:
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    from reltools import GPU_SPEC

    monkeypatch.setenv("WORKBENCH_HOME", str(wbhome.path))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("aws", "moto", {"access_key_id": "AKIACONCURRENT000001", "secret_access_key": "concurrent/secret"})
    acc = Accounts(store, credentials=creds)
    ids = []
    try:
        for i in range(n):
            lp = choose_offer(acc, parse_spec(GPU_SPEC.format(name=f"twice{i}", gpu="V100:1")), provider="aws")
            execute(acc, lp)
            ids.append(lp.launch_id)
    finally:
        store.close()
    return ids


@pytest.mark.timeout(120)
def test_two_down_all_at_once(wbhome, moto, monkeypatch):
    wbhome.add_aws(moto)
    ids = _launch_in_process(wbhome, moto, monkeypatch, 3)
    install_id = wbhome.install_id()
    assert set(aws_instances_by_launch(moto, install_id)) == set(ids)
    hold = moto.faults.hold("TerminateInstances", count=2)  # both teardowns inside TerminateInstances at once
    a = wbhome.popen("down", "--all", "--yes", "--json")
    b = wbhome.popen("down", "--all", "--yes", "--json")
    try:
        hold.wait_arrived(2, timeout=60)
    finally:
        hold.release()
    (aout, aerr), (bout, berr) = a.communicate(timeout=90), b.communicate(timeout=90)
    assert not hold.timed_out
    assert a.returncode == 0 and b.returncode == 0, aerr + berr
    _no_lock_trouble(aerr, berr)
    ra, rb = json.loads(aout), json.loads(bout)
    assert ra["clean"] and rb["clean"]
    assert aws_remains(moto, install_id) == {"instances": [], "volumes": [], "addresses": [], "groups": [],
                                             "keys": []}
    assert wbhome.json("status")["billable"] == 0


@pytest.mark.timeout(180)
def test_a_launch_and_a_teardown_of_it_racing(wbhome, moto):
    """`down ID` starts while `launch` is inside run_instances: its RunInstances request is parked in the
    server (a hold rule).  The teardown waits for the launch in flight (the profile's gate, across
    processes: its marker file is the evidence), then ends the machine the launch made, and says clean
    only after that: status shows nothing billing and moto holds nothing of ours."""
    wbhome.add_aws(moto, "moto", "read_timeout=150")  # the parked request must not be sent twice by botocore
    spec = wbhome.spec("race")
    hold = moto.faults.hold("RunInstances", timeout_s=150)
    launch = wbhome.popen("launch", str(spec), "--provider", "aws", "--yes", "--json")
    try:
        hold.wait_arrived(timeout=60)  # key pair and security group made, run_instances sent
        (lid,) = [launch_["launch_id"] for launch_ in wbhome.json("status")["launches"]]
        down = wbhome.popen("down", lid, "--yes", "--json")
        locks = wbhome.path / "data" / "locks" / "aws.moto"
        deadline = time.monotonic() + 60
        while not list(locks.glob("stop-*.json")):  # the teardown is at the gate, waiting for the launch
            assert time.monotonic() < deadline and down.poll() is None, "down never reached the gate"
            time.sleep(0.02)
        assert hold.held == 1 and launch.poll() is None and down.poll() is None
    finally:
        hold.release()
    hold.wait_answered()  # moto has made the machine; the teardown ends it once the launch has returned
    dout, derr = down.communicate(timeout=120)
    launch.kill()  # it goes on to wait for SSH on the machine that is gone
    lout, lerr = launch.communicate(timeout=60)
    assert not hold.timed_out
    _no_lock_trouble(derr, lerr)
    assert down.returncode == 0, derr
    report = json.loads(dout)
    assert report["clean"] and [i["launch_id"] for i in report["terminated"]] == [lid]
    install_id = wbhome.install_id()
    assert aws_instances_by_launch(moto, install_id) == {}
    assert wbhome.json("status")["billable"] == 0
    assert aws_remains(moto, install_id) == {"instances": [], "volumes": [], "addresses": [], "groups": [],
                                             "keys": []}
