"""`workbench down --all` and the jobs on the user's own hardware (this computer, their cluster).

A free job there is precious (a cluster job may have waited days in the queue): `down --all` asks on a
terminal before ending it; without a terminal, or with --yes, it keeps running and the output says so with
`--include-own`.  A job on the user's hardware that has a price is ended like a cloud machine.  The cluster is
the ``fakecluster`` test plugin (tests/fixtures/cluster_plugins); the jobs on this computer are real processes.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

import psutil

from wbcli import FIXTURE_PLUGINS, ROOT, Workbench, wait_for

CLUSTER_PLUGINS = ROOT / "tests" / "fixtures" / "cluster_plugins"
BUSY = "waiting for GPUs or nodes to become free (Resources)"


def _env(wb: Workbench) -> dict:
    return dict(wb.env, PYTHONPATH=f"{FIXTURE_PLUGINS}{os.pathsep}{CLUSTER_PLUGINS}")


def _setup(wb: Workbench) -> dict[str, dict]:
    """A free queued cluster job, a cluster job with a rate and a free job on this computer: name → instance."""
    env = _env(wb)
    for args in (("hpc", "--set", "host=login.hpc.example", "--set", "queue=Resources"),
                 ("paid", "--set", "host=paid.example", "--set", "gpu_hour_rate=0.5")):
        r = wb("profiles", "add", "fakecluster", *args, env=env)
        assert r.rc == 0, r.err
    gpu = wb.spec("t", "python3 train.py", "resources:\n  gpu: V100:1\n")
    out = {}
    for name, where in (("hpc", ("--profile", "hpc")), ("paid", ("--profile", "paid"))):
        r = wb("launch", str(gpu), *where, "--yes", "--json", env=env)
        assert r.rc == 0, r.err
        out[name] = r.json["instances"][0]
    r = wb("launch", str(wb.spec("here", "sleep 120")), "--provider", "local", "--yes", "--json", env=env)
    assert r.rc == 0, r.err
    out["here"] = r.json["instances"][0]
    assert out["hpc"]["state"] == "pending" and out["hpc"]["price_per_hour"] == 0
    assert out["paid"]["price_per_hour"] == 0.5 and psutil.pid_exists(out["here"]["extra"]["pid"])
    return out


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_without_a_terminal_free_jobs_on_your_own_hardware_keep_running(wb):
    jobs = _setup(wb)
    env = _env(wb)
    r = wb("down", "--all", "--yes", "--json", env=env)
    assert r.rc == 0 and r.json["clean"], r.err
    assert [i["instance_id"] for i in r.json["terminated"]] == [jobs["paid"]["instance_id"]]  # it has a rate
    assert sorted(i["instance_id"] for i in r.json["kept"]) == sorted(
        [jobs["hpc"]["instance_id"], jobs["here"]["instance_id"]])
    assert psutil.pid_exists(jobs["here"]["extra"]["pid"])  # its training goes on

    text = wb("down", "--all", "--yes", env=env)
    assert text.rc == 0, text.err
    assert "kept running: 2 free job(s) on your own hardware (pass --include-own to end them too)" in text.out
    assert (f"fakecluster/hpc (login.hpc.example) {jobs['hpc']['instance_id']} (t): queued: {BUSY}"
            in text.out), text.out
    assert f"local/local {jobs['here']['instance_id']} (here): running" in text.out

    r = wb("down", "--all", "--yes", "--include-own", "--json", env=env)
    assert r.rc == 0 and r.json["clean"] and r.json["kept"] == []
    assert sorted(i["instance_id"] for i in r.json["terminated"]) == sorted(
        [jobs["hpc"]["instance_id"], jobs["here"]["instance_id"]])
    assert _gone(jobs["here"]["extra"]["pid"])
    st = wb("status", "--json", env=env).json
    assert st["billable"] == 0


def _on_terminal(wb: Workbench, answers: list[str], *args: str) -> str:
    """Run `workbench ARGS` on a pseudo-terminal, answering each [y/N] question in turn; its whole output."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(wb.argv(*args), env=_env(wb), stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out, asked = b"", 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the other end closed: the command is done
                    break
                if not chunk:
                    break
                out += chunk
                if out.count(b"[y/N] ") > asked and asked < len(answers):
                    os.write(master, answers[asked].encode() + b"\n")
                    asked += 1
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=30) == 0, out.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert asked == len(answers), out.decode(errors="replace")
    return out.decode(errors="replace").replace("\r\n", "\n")


def test_on_a_terminal_it_asks_before_ending_them(wb):
    jobs = _setup(wb)
    out = _on_terminal(wb, ["y", "n"], "down", "--all")
    assert "Tear down everything this app launched (1 billable instance(s)" in out
    assert "2 free job(s) on your own hardware (this computer, your cluster) would end too:" in out
    assert f"queued: {BUSY}" in out and "End them too? [y/N]" in out
    assert "kept running: 2 free job(s) on your own hardware" in out
    assert psutil.pid_exists(jobs["here"]["extra"]["pid"])
    st = {i["instance_id"]: i["state"] for launch in wb("status", "--json", env=_env(wb)).json["launches"]
          for i in launch["instances"]}
    assert st[jobs["paid"]["instance_id"]] == "terminated" and st[jobs["hpc"]["instance_id"]] == "pending"

    out = _on_terminal(wb, ["y", "y"], "down", "--all")
    assert "kept running" not in out and "verified: nothing of it is billing any more" in out
    wait_for(lambda: _gone(jobs["here"]["extra"]["pid"]), timeout=10)
    assert wb("status", "--json", env=_env(wb)).json["billable"] == 0
