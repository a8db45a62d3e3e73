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


def _loop_profile(home, sshd_server, port: int | None = None) -> None:
    """The profile ``loop`` of the sshcloud test provider: its machines are the test sshd (or ``port``, where
    nothing answers), which trusts the app's key."""
    sshd_server.authorize(ensure_keypair(home / "data").public_openssh)
    r = _wb(home, "profiles", "add", "sshcloud", "loop", "--set", f"port={port or sshd_server.port}",
            "--set", f"user={sshd_server.user}")
    assert r.returncode == 0, r.stderr


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
    _loop_profile(home, sshd_server)
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
    _loop_profile(home, sshd_server)
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
    _loop_profile(home, sshd_server)
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


LAUNCH_ONLY = """
import sys
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store

acc = Accounts(Store.open(), entries=discover())
spec = parse_spec(open(sys.argv[1]).read(), source=sys.argv[1])
(inst,) = execute(acc, choose_offer(acc, spec, provider="sshcloud"), secret_env={"S": sys.argv[2]})
print(inst.launch_id)
"""


def test_start_after_the_launching_process_is_gone_asks_for_the_secrets_again(sshd_server, tmp_path):
    """Issue 30: a launch whose upload never finished, started again by a new process.  The secret's value
    lived only in the launching process: `start` without it refuses naming it (it ran the job with an
    empty S and exited 0); with the value piped in, the job sees it."""
    home = tmp_path / "home"
    _loop_profile(home, sshd_server)
    spec = tmp_path / "secret.yaml"
    spec.write_text('name: secret-job\nrun: echo "S has ${#S} characters"\nsecrets: [S]\non_finish: keep\n')
    env = dict(os.environ, WORKBENCH_HOME=str(home), PYTHONPATH=str(REMOTE_PLUGINS))
    made = subprocess.run([sys.executable, "-c", LAUNCH_ONLY, str(spec), "first-value"], env=env,
                          capture_output=True, text=True, timeout=60)  # the machine is up; that process is gone
    assert made.returncode == 0, made.stderr
    lid = made.stdout.strip().splitlines()[-1]
    try:
        refused = _wb(home, "start", lid, "--json")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        error = json.loads(refused.stdout)["error"]
        assert error["kind"] == "config" and "no value for S" in error["message"]
        assert f"workbench start {lid} --secrets-stdin" in error["hint"]
        assert not (home / "data" / "jobs" / lid / "output.log").exists()  # nothing ran
        value = "second-value-of-22-chr"
        started = subprocess.run([sys.executable, "-m", "workbench", "start", lid, "--secrets-stdin"], env=env,
                                 input=json.dumps({"S": value}), capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        again = _wb(home, "start", lid, "--json")  # started: idempotent, no secrets asked
        assert again.returncode == 0 and json.loads(again.stdout)["started"] is True, again.stdout + again.stderr
        follow = _wb(home, "logs", lid, "--follow")
        assert follow.stdout == f"S has {len(value)} characters\n", follow.stdout + follow.stderr
        assert _wb(home, "down", lid, "--yes").returncode == 0
        ended = _wb(home, "start", lid, "--json", timeout=30)  # at once, not 30 minutes of SSH retries
        assert ended.returncode == 1 and "has ended" in json.loads(ended.stdout)["error"]["message"], ended.stdout
    finally:
        from workbench_sshcloud.provider import kill_job_processes

        kill_job_processes(lid)
        _wb(home, "down", lid, "--yes")


def test_a_failed_upload_says_the_machine_bills_and_gives_the_commands():
    import dataclasses

    import pytest

    from workbench.cli.remote import _still_billing
    from workbench.core.domain.models import JobSpec
    from workbench.core.remote.connection import ConnectionLost

    spec = dataclasses.replace(JobSpec(name="j", run="true"), secrets=("HF_TOKEN",))
    with pytest.raises(ConnectionLost) as caught:
        with _still_billing("j-1a2b", spec):
            raise ConnectionLost("the connection to j (10.0.0.1:22) was lost during the upload")
    hint = caught.value.hint
    assert "bills" in hint and "`workbench start j-1a2b`" in hint and "`workbench down j-1a2b`" in hint
    assert "HF_TOKEN" in hint and "--secrets-stdin" in hint


def test_down_ends_a_detached_launchs_background_start(sshd_server, tmp_path):
    """Issue 30: after `down`, the background `workbench start` of a `launch --detach` went on retrying
    SSH to the released machine for its whole 30-minute deadline; now it ends with the launch."""
    import socket
    import time

    import psutil

    home = tmp_path / "home"
    with socket.socket() as s:  # a port where nothing listens: the machine never answers on SSH
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    _loop_profile(home, sshd_server, dead_port)
    r = _wb(home, "launch", str(_spec(tmp_path, "unreachable")), "--provider", "sshcloud", "--yes", "--json",
            "--detach")
    assert r.returncode == 0, r.stderr
    lid = json.loads(r.stdout)["launch"]["launch_id"]
    job = home / "data" / "jobs" / lid
    pid = int((job / "start.pid").read_text())
    starter = psutil.Process(pid)
    try:
        deadline = time.monotonic() + 30  # positive evidence that it is retrying before the down
        while "retrying in" not in (job / "start.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "retrying in" in (job / "start.log").read_text()
        assert _wb(home, "down", lid, "--yes").returncode == 0
        starter.wait(45)  # it ends by itself (psutil.TimeoutExpired otherwise)
        assert "was released while the job was being started" in (job / "start.log").read_text()
    finally:
        if starter.is_running():
            starter.kill()
