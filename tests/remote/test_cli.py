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
    assert os.path.isdir(json.loads(r.stdout)["to"])  # the path it prints exists
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


def _spec(tmp_path, name: str) -> "os.PathLike":
    work = tmp_path / f"work-{name}"
    work.mkdir()
    (work / "train.py").write_text("print('epoch 1', flush=True)\nprint('epoch 2')\n")
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(f"name: {name}\nrun: python3 train.py\nworkdir: {work}\nresources:\n  gpu: V100:1\n")
    return spec


def test_launch_detach_returns_once_the_machine_is_up_and_logs_follow_attaches(sshd_server, tmp_path):
    home = tmp_path / "home"
    sshd_server.authorize(ensure_keypair(home / "data").public_openssh)
    r = _wb(home, "profiles", "add", "sshcloud", "loop", "--set", f"port={sshd_server.port}",
            "--set", f"user={sshd_server.user}")
    assert r.returncode == 0, r.stderr
    r = _wb(home, "launch", str(_spec(tmp_path, "detached")), "--provider", "sshcloud", "--yes", "--json", "--detach")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    lid = out["launch"]["launch_id"]
    try:
        assert [i["state"] for i in out["instances"]] == ["running"]  # up before it returned
        assert "detached" in r.stderr and f"workbench logs {lid} --follow" in r.stderr
        assert "[uploading]" not in r.stderr and "[running]" not in r.stderr  # not this process's work
        follow = _wb(home, "logs", lid, "--follow")  # waits for the background start, then attaches
        assert follow.returncode == 0, follow.stderr
        assert follow.stdout == "epoch 1\nepoch 2\n" and "exit code: 0" in follow.stderr
        import psutil

        pid = int((home / "data" / "jobs" / lid / "start.pid").read_text())
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # it ended
        log = (home / "data" / "jobs" / lid / "start.log").read_text()
        assert "[uploading]" in log and "[running]" in log
    finally:
        from workbench_sshcloud.provider import kill_job_processes

        kill_job_processes(lid)


def test_launch_json_reaches_a_pipe_at_once(tmp_path):
    """The machine never answers on SSH (nothing listens on its port): `launch --json` goes on waiting,
    but a script reading its stdout through a real pipe already has the whole JSON document."""
    import socket
    import threading

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]  # closed again: connections are refused
    home = tmp_path / "home"
    r = _wb(home, "profiles", "add", "sshcloud", "dead", "--set", f"port={dead_port}", "--set", "user=nobody")
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, WORKBENCH_HOME=str(home), PYTHONPATH=str(REMOTE_PLUGINS))
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "launch", str(_spec(tmp_path, "piped")),
                             "--provider", "sshcloud", "--yes", "--json"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    got: dict = {}
    complete = threading.Event()

    def read() -> None:
        text = ""
        for line in proc.stdout:
            text += line
            try:
                got.update(json.loads(text))
            except ValueError:
                continue
            complete.set()
            return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert complete.wait(60), "the JSON document did not reach the pipe"
        assert proc.poll() is None  # still waiting for SSH: the output was flushed, not left in a buffer
        assert got["launch"]["provider"] == "sshcloud"
    finally:
        proc.kill()
        proc.wait(30)
        _wb(home, "down", "--all", "--yes")


def test_down_takes_the_machine_out_of_the_ssh_config_and_known_hosts(sshd_server, tmp_path):
    """Not only a job's own on_finish: `down` (the same teardown as Stop all and the guards) cleans up."""
    home = tmp_path / "home"
    sshd_server.authorize(ensure_keypair(home / "data").public_openssh)
    r = _wb(home, "profiles", "add", "sshcloud", "loop", "--set", f"port={sshd_server.port}",
            "--set", f"user={sshd_server.user}")
    assert r.returncode == 0, r.stderr
    spec = tmp_path / "kept.yaml"
    spec.write_text(f"name: kept\nrun: sleep 300\nworkdir: {tmp_path}\non_finish: keep\nresources:\n  gpu: V100:1\n")
    r = _wb(home, "launch", str(spec), "--provider", "sshcloud", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    lid = json.loads(r.stdout)["launch"]["launch_id"]
    iid = json.loads(r.stdout)["instances"][0]["instance_id"]
    try:
        config, known = home / "data" / "ssh" / "config", home / "data" / "ssh" / "known_hosts"
        assert f"Host {lid}" in config.read_text() and f"{iid}.sshcloud.workbench" in known.read_text()
        r = _wb(home, "down", lid, "--yes", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["clean"], r.stderr
        assert f"Host {lid}" not in config.read_text()
        assert f"{iid}.sshcloud.workbench" not in known.read_text()
    finally:
        from workbench_sshcloud.provider import kill_job_processes

        kill_job_processes(lid)
