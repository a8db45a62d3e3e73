"""The CLI face of remote jobs, as a user runs it: launch (upload + start), download, logs --follow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from workbench.core.providers.sshkeys import ensure_keypair

from .conftest import REMOTE_PLUGINS

sys.path.insert(0, str(REMOTE_PLUGINS)) if str(REMOTE_PLUGINS) not in sys.path else None


def _wb(home, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_HOME=str(home), PYTHONPATH=str(REMOTE_PLUGINS))
    return subprocess.run([sys.executable, "-m", "workbench", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_launch_download_follow_and_terminate(sshd_server, tmp_path):
    home = tmp_path / "home"
    sshd_server.authorize(ensure_keypair(home / "data").public_openssh)
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "train.py").write_text("import time, os\nos.makedirs('out', exist_ok=True)\n"
                                   "open('out/model.txt', 'w').write('weights')\nprint('step 1', flush=True)\n"
                                   "time.sleep(1.5)\nprint('step 2')\nraise SystemExit(3)\n")
    (work / "data" / "big.ignored").write_text("x")
    (work / ".workbenchignore").write_text("*.ignored\n")
    spec = tmp_path / "job.yaml"
    spec.write_text(f"name: cli-remote\nrun: python3 train.py\nworkdir: {work}\noutputs: [out]\n"
                    "resources:\n  gpu: V100:1\n")
    r = _wb(home, "profiles", "add", "sshcloud", "loop", "--set", f"port={sshd_server.port}",
            "--set", f"user={sshd_server.user}")
    assert r.returncode == 0, r.stderr
    r = _wb(home, "launch", str(spec), "--provider", "sshcloud", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    lid = json.loads(r.stdout)["launch"]["launch_id"]
    try:
        _after_launch(home, sshd_server, tmp_path, lid, r)
    finally:
        from workbench_sshcloud.provider import kill_job_processes

        kill_job_processes(lid)  # whatever happened, nothing of the job outlives the test


def _after_launch(home, sshd_server, tmp_path, lid, r) -> None:
    assert "[uploading]" in r.stderr and "[running]" in r.stderr and f"ssh {lid}" in r.stderr
    remote_job = sshd_server.remote_dir / "jobs" / lid
    assert (remote_job / "work" / "train.py").exists() and not (remote_job / "work" / "data" / "big.ignored").exists()

    dest = tmp_path / "fetched"
    for _ in range(100):  # the job writes out/ first thing; poll until it did
        if (remote_job / "work" / "out" / "model.txt").exists():
            break
        subprocess.run(["sleep", "0.05"])
    r = _wb(home, "download", lid, "out", "--to", str(dest), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["files"] == ["out/model.txt"]
    assert (dest / "out" / "model.txt").read_text() == "weights"

    r = _wb(home, "logs", lid, "--follow")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "step 1\nstep 2\n"
    assert "exit code: 3" in r.stderr and "[terminating]" in r.stderr and "[done] terminated and verified" in r.stderr
    assert (home / "data" / "jobs" / lid / "outputs" / "out" / "model.txt").read_text() == "weights"
    r = _wb(home, "status", "--json")
    launch = next(x for x in json.loads(r.stdout)["launches"] if x["launch_id"] == lid)
    assert launch["status"] in ("terminated", "failed")
    # the log stays after the machine is gone
    r = _wb(home, "logs", lid)
    assert r.stdout == "step 1\nstep 2\n"
