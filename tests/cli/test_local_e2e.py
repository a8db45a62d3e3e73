"""The 'done when' of the foundation: launch, status, logs, down with the Local provider, for real."""

from __future__ import annotations

import os
import signal
import subprocess

import psutil
import pytest

from wbcli import EXAMPLES, wait_for


def _launch(wb, spec, *extra):
    r = wb("launch", str(spec), "--provider", "local", "--yes", "--json", *extra)
    assert r.rc == 0, r.err
    return r.json


def _status(wb):
    r = wb("status", "--json")
    assert r.rc == 0, r.err
    return r.json


def _launch_entry(status, launch_id):
    return next(x for x in status["launches"] if x["launch_id"] == launch_id)


def test_the_examples_try_it_command_runs_it_and_follows_the_log(wb):
    """local-smoke.yaml says "Try it with: workbench run …": that command launches and follows the log."""
    text = (EXAMPLES / "local-smoke.yaml").read_text()
    assert "workbench run resources/examples/local-smoke.yaml" in text
    r = wb("run", str(EXAMPLES / "local-smoke.yaml"), "--yes", "--interval", "0.2", timeout=90)
    assert r.rc == 0, r.err
    assert "launch id: local-smoke-" in r.out and "epoch 5" in r.out
    assert "follow the log" not in r.out  # it follows the log itself (issue 29)
    assert "exit code: 0" in r.err
    [launch] = _status(wb)["launches"]
    assert launch["status"] == "finished"


def test_example_runs_end_to_end(wb):
    data = _launch(wb, EXAMPLES / "local-smoke.yaml")
    lid = data["launch"]["launch_id"]
    assert data["launch"]["provider"] == "local" and data["launch"]["price_per_hour"] == 0
    assert data["instances"][0]["state"] == "running" and data["instances"][0]["billable"]
    logs = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)
    assert logs.rc == 0
    assert "epoch 5" in logs.out
    entry = _launch_entry(_status(wb), lid)
    assert entry["status"] == "finished"
    assert entry["instances"][0]["state"] == "terminated" and entry["instances"][0]["exit_code"] == 0
    # results came home: the job's work folder is under the data directory
    metrics = list((wb.home / "data").rglob("results/metrics.json"))
    assert metrics, "train.py should have written results/metrics.json"
    down = wb("down", "--all", "--yes", "--json")
    assert down.rc == 0 and down.json["clean"] and down.json["terminated"] == []


def test_down_terminates_a_running_job_and_verifies(wb):
    spec = wb.spec("sleeper", "echo started; sleep 120")
    lid = _launch(wb, spec)["launch"]["launch_id"]
    st = _status(wb)
    assert st["billable"] == 1
    # a free job on this computer runs, it does not bill: the app badge's words (issue 29)
    assert st["billing"] == 0 and st["running_here"] == 1 and not _launch_entry(st, lid)["instances"][0]["billing"]
    text = wb("status")
    assert text.rc == 0 and "nothing billing · 1 running here, burn rate $0.00/h" in text.out, text.out
    assert "1 billable" not in text.out
    pid = _launch_entry(st, lid)["instances"][0]["extra"]["pid"]
    assert psutil.pid_exists(pid)
    r = wb("down", lid, "--yes", "--json")
    assert r.rc == 0, r.err
    assert [i["launch_id"] for i in r.json["terminated"]] == [lid]
    assert r.json["clean"] and r.json["remaining"] == []
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    st = _status(wb)
    assert st["billable"] == 0
    assert _launch_entry(st, lid)["status"] == "terminated"


def test_survives_sigkill_of_the_cli_between_commands(wb):
    spec = wb.spec("sleeper", "for i in 1 2 3 4 5 6 7 8 9; do echo tick $i; sleep 1; done; sleep 100")
    lid = _launch(wb, spec)["launch"]["launch_id"]
    follower = subprocess.Popen(wb.argv("logs", lid, "--follow", "--interval", "0.2"), env=wb.env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    assert b"tick 1" in follower.stdout.readline()
    os.kill(follower.pid, signal.SIGKILL)
    follower.wait(10)
    st = _status(wb)
    inst = _launch_entry(st, lid)["instances"][0]
    assert inst["state"] == "running"
    r = wb("down", "--all", "--yes", "--include-own", "--json")
    assert r.rc == 0 and r.json["clean"]
    assert not psutil.pid_exists(inst["extra"]["pid"]) or \
        psutil.Process(inst["extra"]["pid"]).status() == psutil.STATUS_ZOMBIE
    assert _status(wb)["billable"] == 0


@pytest.mark.parametrize("point", ["launch:recorded", "launch:provider-returned", "launch:instances-stored"])
def test_crash_mid_launch_is_recovered(wb, point):
    spec = wb.spec("crashy", "sleep 120")
    env = dict(wb.env, WORKBENCH_CRASH_AT=point)
    r = wb("launch", str(spec), "--provider", "local", "--yes", "--json", env=env)
    assert r.rc == -signal.SIGKILL
    st = _status(wb)
    assert len(st["launches"]) == 1
    launched = point != "launch:recorded"
    assert st["billable"] == (1 if launched else 0)
    r = wb("down", "--all", "--yes", "--include-own", "--json")
    assert r.rc == 0 and r.json["clean"], r.out + r.err
    assert len(r.json["terminated"]) == (1 if launched else 0)
    assert _status(wb)["billable"] == 0


def test_lost_store_is_refilled_from_the_provider(wb):
    spec = wb.spec("orphan", "sleep 120")
    lid = _launch(wb, spec)["launch"]["launch_id"]
    db = wb.home / "data" / "state.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(db) + suffix):
            os.remove(str(db) + suffix)
    st = _status(wb)
    assert st["recovered"] == [lid]
    assert _launch_entry(st, lid)["status"] == "running"
    assert wb("down", lid, "--yes").rc == 0
    assert _status(wb)["billable"] == 0


def test_failed_job_reports_exit_code_and_keeps_logs(wb):
    spec = wb.spec("failing", "echo about to fail; exit 7")
    lid = _launch(wb, spec)["launch"]["launch_id"]
    wait_for(lambda: _launch_entry(_status(wb), lid)["status"] == "failed")
    entry = _launch_entry(_status(wb), lid)
    assert entry["instances"][0]["exit_code"] == 7
    logs = wb("logs", lid)
    assert logs.rc == 0 and "about to fail" in logs.out
    human = wb("status")
    assert "exit 7" in human.out and lid in human.out


def test_download_of_a_local_launch_prints_where_its_files_are_and_that_folder_exists(wb, tmp_path):
    from pathlib import Path

    spec = wb.spec("writes", "echo model > model.txt")
    data = _launch(wb, spec)
    lid = data["launch"]["launch_id"]
    wait_for(lambda: _launch_entry(_status(wb), lid)["status"] == "finished", timeout=30)
    r = wb("download", lid)
    assert r.rc == 0, r.err
    folder = Path(r.out.strip().rsplit(" ", 1)[-1])
    assert folder.is_dir() and (folder / "model.txt").read_text() == "model\n"
    j = wb("download", lid, "--json")
    assert j.rc == 0 and Path(j.json["to"]) == folder
