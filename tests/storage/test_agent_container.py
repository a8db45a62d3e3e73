"""The storage agent around a job in a container (``--container container.sh``), without a daemon: a stand-in
``container.sh`` records the signals it is asked to deliver.  On a notice the agent asks the container for TERM
and, when the job outlives the grace, KILL — and never signals the ``docker exec`` client itself, which must
live to carry the job's last output and exit code (``docker exec`` passes no signal on).  The real daemon's
path is tested in tests/remote/test_container_storage.py and tests/storage/test_container_local.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from agent_run import AGENT, wait_until

from workbench.core.storage.machine import container_wrapper

# the "docker exec" client: it notes a TERM it gets (and keeps running, as the job in the container would not see
# it); the "job" inside ignores TERM, so only the agent's KILL ends it
CLIENT = ("import signal, sys, time\n"
          "signal.signal(signal.SIGTERM, lambda *a: open('client-got-term', 'w').close())\n"
          "print('job: started', flush=True)\n"
          "while True: time.sleep(0.1)\n")
FAKE_CONTAINER_SH = """#!/bin/sh
case "$1" in
exec) shift; exec "$PY" client.py ;;
signal) echo "$2" >> signals.txt ;;
esac
"""


def test_the_notice_signals_the_job_through_its_container_term_then_kill_never_the_client(tmp_path):
    (tmp_path / "client.py").write_text(CLIENT)
    (tmp_path / "container.sh").write_text(FAKE_CONTAINER_SH)
    config = {"launch_id": "c-1", "state_dir": str(tmp_path), "work_dir": str(tmp_path), "mounts": [],
              "notice": {"cloud": "none", "file": str(tmp_path / "interrupt-notice"), "poll_s": 0.1},
              "term_grace_s": 1, "open_mounts": True}
    (tmp_path / "storage.json").write_text(json.dumps(config))
    wrapper = tmp_path / "storage.sh"  # what supervise.sh and the Local wrapper run
    wrapper.write_text(container_wrapper(sys.executable, str(AGENT), str(tmp_path / "storage.json")))
    log = open(tmp_path / "out.log", "wb")
    proc = subprocess.Popen(["sh", str(wrapper), "run", str(tmp_path / "container.sh"), "run.sh"], cwd=tmp_path,
                            stdout=log, stderr=subprocess.STDOUT, env={"PY": sys.executable, "PATH": "/usr/bin:/bin"})
    log.close()
    try:
        wait_until(lambda: "job: started" in (tmp_path / "out.log").read_text(), 20, "the job")
        (tmp_path / "interrupt-notice").write_text(json.dumps({"source": "a test", "not_after": time.time() + 1}))
        assert proc.wait(30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = (tmp_path / "out.log").read_text()
    assert "did not stop within 3 s: killing it" in out, out  # the grace's floor
    assert (tmp_path / "signals.txt").read_text() == "TERM\nKILL\n"
    assert not (tmp_path / "client-got-term").exists()  # the client was left alone until the KILL
    record = json.loads((tmp_path / "interrupted").read_text())
    assert record["job_exit"] == -9 and record["saved"] is True
    # open_mounts: what the agent writes is open to any container user (umask 0)
    assert (tmp_path / "interrupted").stat().st_mode & 0o777 == 0o666


# a Stop: the whole process group gets TERM.  The "docker exec" client would die of it at once (it passes no signal
# on), losing the job's last output and exit code, while the job inside still saves: the agent starts it in a session
# of its own, and it ends when the job inside does (a second after its TERM through container.sh signal)
STOPPING_CONTAINER_SH = """#!/bin/sh
case "$1" in
exec) shift; exec "$PY" -c '
import os, sys, time
print("job: started", flush=True)
while os.path.exists("job-running"):
    time.sleep(0.05)
print("job: saved and stopped", flush=True)
sys.exit(143)' ;;
signal) echo "$2" >> signals.txt; [ "$2" = TERM ] && { (sleep 1; rm -f job-running) & } ;;
esac
"""


def test_a_stop_of_the_agent_s_group_leaves_the_client_to_the_job_inside_the_container(tmp_path):
    (tmp_path / "container.sh").write_text(STOPPING_CONTAINER_SH)
    (tmp_path / "job-running").touch()
    config = {"launch_id": "c-2", "state_dir": str(tmp_path), "work_dir": str(tmp_path), "mounts": [],
              "term_grace_s": 20}
    (tmp_path / "storage.json").write_text(json.dumps(config))
    wrapper = tmp_path / "storage.sh"
    wrapper.write_text(container_wrapper(sys.executable, str(AGENT), str(tmp_path / "storage.json")))
    log = open(tmp_path / "out.log", "wb")
    proc = subprocess.Popen(["sh", str(wrapper), "run", str(tmp_path / "container.sh"), "run.sh"], cwd=tmp_path,
                            stdout=log, stderr=subprocess.STDOUT, env={"PY": sys.executable, "PATH": "/usr/bin:/bin"},
                            start_new_session=True)
    log.close()
    try:
        wait_until(lambda: "job: started" in (tmp_path / "out.log").read_text(), 20, "the job")
        os.killpg(proc.pid, signal.SIGTERM)  # what the Local provider's Stop does
        assert proc.wait(30) == 143
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = (tmp_path / "out.log").read_text()
    assert "job: saved and stopped" in out, out  # the client lived to the job's end and carried its last line
    assert not (tmp_path / "job-running").exists() and (tmp_path / "signals.txt").read_text() == "TERM\n"


def test_open_mounts_make_the_mount_folders_writable_by_the_container_s_user_keeping_special_bits(tmp_path):
    (tmp_path / "made-before").mkdir(mode=0o700)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared").chmod(0o1755)  # a sticky folder stays sticky
    mounts = [{"path": p, "mode": "sync", "source": "s3://b/x", "remote": str(tmp_path / "r"), "interval_s": 60}
              for p in ("made-before", str(tmp_path / "shared"), str(tmp_path / "new" / "deep"))]
    config = {"state_dir": str(tmp_path), "work_dir": str(tmp_path), "open_mounts": True, "mounts": mounts}
    (tmp_path / "storage.json").write_text(json.dumps(config))
    done = subprocess.run([sys.executable, str(AGENT), "prepare", "--config", str(tmp_path / "storage.json")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    modes = [(tmp_path / p).stat().st_mode & 0o7777 for p in ("made-before", "shared", "new/deep", "new")]
    assert modes == [0o777, 0o1777, 0o777, 0o777]
