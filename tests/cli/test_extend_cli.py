"""`workbench extend`: a Local job with a 1-minute max runtime, extended by 2 minutes, outlives its first deadline.

The app-side guard is driven through `workbench watch --once --now T` (the guard judges as of T, the
established way to reach a deadline without waiting for it); the job is real, and the evidence that it
kept running is its own output, printed after the guard looked past the first deadline.  Local launches
have no instance-side guard (its machine-side counterpart is tested over SSH in
tests/remote/test_extend_remote.py).
"""

from __future__ import annotations

import json

import psutil
import pytest

from wbcli import wait_for

TICKS = "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"


def _spec(wb, name: str, runtime: str = "1m") -> str:
    path = wb.home.parent / f"{name}.yaml"
    path.write_text(f"name: {name}\nrun: {json.dumps(TICKS)}\nguards:\n  max_runtime: {runtime}\n")
    return str(path)


def _ticks(wb, lid: str) -> int:
    r = wb("logs", lid)
    return max((int(w.split()[1]) for w in r.out.splitlines() if w.startswith("tick ")), default=0)


def test_a_one_minute_job_extended_by_two_keeps_running_past_its_first_deadline(wb):
    assert wb("profiles", "add", "local", "local", "--set", "price_per_hour=3.6").rc == 0
    r = wb("launch", _spec(wb, "ext"), "--yes", "--json", "--profile", "local")
    assert r.rc == 0, r.err
    lid, pid = r.json["launch"]["launch_id"], r.json["instances"][0]["extra"]["pid"]
    created = wb("status", "--json").json["launches"][0]["created_at"]
    assert wait_for(lambda: _ticks(wb, lid) >= 1)

    r = wb("extend", lid, "--by", "2m", "--json")
    assert r.rc == 0, r.err
    got = r.json
    assert set(got) >= {"launch_id", "max_runtime_minutes", "ends_at", "projected_cost", "currency",
                        "cloud_release_moved"}
    assert got["launch_id"] == lid and got["max_runtime_minutes"] == 3 and got["currency"] == "USD"
    assert got["ends_at"] == pytest.approx(created + 180)
    assert got["cloud_release_moved"] is False and got["machines_told"] == []  # Local: the app's guard only
    assert got["projected_cost"] == pytest.approx(3.6 * 3 / 60, rel=0.05)  # was 3.6/60 for one minute
    st = wb("status", "--json").json["launches"][0]
    assert st["projected_cost"] == pytest.approx(got["projected_cost"])

    # past the first deadline: the guard leaves it, and the job itself says it still runs
    r = wb("watch", "--once", "--json", "--now", repr(created + 61))
    assert r.rc == 0 and r.out.strip() == "", r.out
    seen = _ticks(wb, lid)
    assert wait_for(lambda: _ticks(wb, lid) > seen + 2)
    assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    # the new deadline holds
    r = wb("watch", "--once", "--json", "--now", repr(created + 180))
    events = [json.loads(line) for line in r.out.splitlines()]
    assert [(e["guard"], e["action"]) for e in events] == [("max_runtime", "teardown"), ("max_runtime", "verified")]
    assert "0.05 h" in events[0]["message"]  # 3 minutes
    assert wb("status", "--json").json["billable"] == 0


def test_extend_refuses_clearly(wb):
    r = wb("extend", "no-such-launch", "--by", "30m", "--json")
    assert r.rc == 1 and "no launch" in r.out + r.err
    r = wb("launch", _spec(wb, "short", "10m"), "--yes", "--json", "--provider", "local")
    lid = r.json["launch"]["launch_id"]
    for bad in ("soon", "0", "90s", "-5m"):
        r = wb("extend", lid, "--by", bad)
        assert r.rc in (1, 2) and "--by" in r.err, (bad, r.err)
    assert wb("down", lid, "--yes").rc == 0
    r = wb("extend", lid, "--by", "30m", "--json")
    assert r.rc == 1
    assert "not running" in json.loads(r.out)["error"]["message"]
    assert wb("extend", "--help").out.count("--by") >= 1
