"""Recovery end to end on this computer, through the real CLI: a job that checkpoints to a ``sync`` mount
(moto S3, real rclone) gets an interruption notice, saves, and its "machine" dies (SIGKILL of every
process of the job); ``workbench watch`` relaunches it; the job's own output proves it resumed from the
last checkpoint, the bucket holds the checkpoints, and the launch's history lists both attempts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

import aws_moto
from agent_run import wait_until
from workbench_testing import ROOT

EXAMPLE = ROOT / "resources" / "examples" / "spot-resume"


class Cli:
    def __init__(self, home: Path) -> None:
        self.home = home
        # no keyring entry: the AWS default chain takes these (moto accepts any key)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "WORKBENCH_"))}
        self.env.update(WORKBENCH_HOME=str(home), AWS_ACCESS_KEY_ID="AKIARECOVERYTEST0001",
                        AWS_SECRET_ACCESS_KEY="recovery/test/value", QT_QPA_PLATFORM="offscreen")

    def __call__(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT)

    def log(self, lid: str) -> str:
        path = self.home / "data" / "jobs" / lid / "output.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def moto():
    stack = aws_moto.start()
    stack.reset()
    yield stack
    stack.reset()


def steps_in(s3, bucket: str, prefix: str) -> list[int]:
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found += [int(o["Key"].rsplit("step-", 1)[1].split(".")[0]) for o in page.get("Contents") or []]
    return sorted(found)


def kill_job(cli: Cli, lid: str) -> None:
    """The machine dies: SIGKILL to every process of the job (its process group), as a reclaim would."""
    pgid = json.loads((cli.home / "data" / "local" / lid / "job.json").read_text())["pgid"]
    os.killpg(pgid, signal.SIGKILL)

    def gone() -> bool:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, 30, "every process of the job to be gone")


@pytest.mark.timeout(240)  # eight real CLI runs and two jobs; about 30 s on an idle machine
def test_interrupted_local_job_resumes_from_its_last_checkpoint(moto, tmp_path):
    if shutil.which("rclone") is None:
        pytest.fail("needs rclone (Debian package rclone; `make test` installs it)")
    cli = Cli(tmp_path / "home")
    r = cli("profiles", "add", "aws", "moto", "--region", "us-east-1", "--endpoint-url", moto.url,
            "--set", "retry_backoff_cap_s=0.02", "--set", "pricing=snapshot")
    assert r.returncode == 0, r.stderr
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="AKIAX",
                      aws_secret_access_key="x")
    s3.create_bucket(Bucket="ckpt-bucket")
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE, work)
    spec = tmp_path / "resume.yaml"
    spec.write_text(f"""name: resume
providers: [local]
workdir: {work}
run: python3 train.py
env: {{STEPS: 100000, STEP_SECONDS: 0.3}}
storage:
  - {{path: checkpoints, source: s3://ckpt-bucket/run1, mode: sync, interval: 1s}}
recovery: {{max_restarts: 2, on: [preemption]}}
guards: {{max_runtime: 30m}}
""")
    r = cli("launch", str(spec), "--provider", "local", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)["launch"]["launch_id"]
    try:
        wait_until(lambda: len(steps_in(s3, "ckpt-bucket", "run1/")) >= 3, 60, "three checkpoints in the bucket")
        assert "attempt 1: starting at step 0" in cli.log(first)

        r = cli("interrupt", first, "--after", "600")  # the notice; the "reclaim" is our SIGKILL below
        assert r.returncode == 0, r.stderr
        wait_until(lambda: "saved the sync mounts; waiting for the machine to be taken" in cli.log(first), 60,
                   "the last save after the notice")
        out1 = cli.log(first)
        last = int(out1.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
        assert steps_in(s3, "ckpt-bucket", "run1/")[-1] == last  # the last checkpoint reached the bucket
        kill_job(cli, first)

        r = cli("watch", "--once", "--json")
        assert r.returncode == 0, r.stderr
        events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        (relaunch,) = [e for e in events if e.get("guard") == "recovery" and e["action"] == "relaunched"]
        second = relaunch["launch_id"]
        assert relaunch["root_id"] == first and relaunch["attempt"] == 2 and second != first
        assert "interruption notice: a rehearsal (workbench interrupt)" in relaunch["message"]

        wait_until(lambda: f"\ncheckpoint step {last + 1}\n" in cli.log(second), 60, "attempt 2's first step")
        out2 = cli.log(second)
        assert f"attempt 2: resumed from checkpoint step {last}\n" in out2  # the job's own words
        assert "\ncheckpoint step 1\n" not in out2
        assert f"resume: restore s3://ckpt-bucket/run1 -> checkpoints (attempt 2)" in out2
        assert "relaunching as attempt 2" in cli.log(first)  # the story, in the first attempt's log
        wait_until(lambda: steps_in(s3, "ckpt-bucket", "run1/")[-1] > last, 30, "attempt 2's checkpoints in the bucket")
        assert steps_in(s3, "ckpt-bucket", "run1/")[:last] == list(range(1, last + 1))

        hist = json.loads(cli("attempts", second, "--json").stdout)
        assert hist["root_id"] == first and [a["attempt"] for a in hist["attempts"]] == [1, 2]
        a1, a2 = hist["attempts"]
        assert a1["end_reason"] == "preemption" and a1["launch_id"] == first and a1["instance_type"] == "this-computer"
        assert a2["status"] == "running" and a2["launch_id"] == second and a2["end_reason"] is None
        # the first attempt reads as interrupted and relaunched everywhere, not "failed" (issue 29)
        st = json.loads(cli("status", "--json").stdout)
        entry = next(x for x in st["launches"] if x["launch_id"] == first)
        assert entry["outcome"] == "interrupted · relaunched as attempt 2" and entry["relaunched_as"] == 2
        assert f"[interrupted · relaunched as attempt 2]" in cli("status").stdout
        cost = json.loads(cli("cost", "--by", "launch", "--json").stdout)
        assert next(r for r in cost["rows"] if r["launch"] == first)["outcome"] == \
            "interrupted · relaunched as attempt 2"
    finally:
        r = cli("down", "--all", "--yes", "--include-own", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    down = json.loads(r.stdout)
    assert down["clean"] and down["remaining"] == []  # verified: no process of either attempt is left


@pytest.mark.timeout(180)
def test_a_failed_run_is_relaunched_only_where_failure_is_asked_for(tmp_path):
    """``recovery.on: [failure]``: a run that exits non-zero is relaunched as attempt 2 (which succeeds
    here); the same job with ``on: [preemption]`` ends failed and stays ended."""
    cli = Cli(tmp_path / "home")
    run = ('if [ "${WORKBENCH_ATTEMPT:-1}" = 1 ]; then echo "attempt 1 fails"; exit 3; fi; '
           'echo "attempt $WORKBENCH_ATTEMPT works"')
    launched: dict[str, str] = {}
    try:
        for on in ("failure", "preemption"):
            spec = tmp_path / f"{on}.yaml"
            spec.write_text(f"name: flaky-{on}\nproviders: [local]\nrun: '{run}'\n"
                            f"recovery: {{max_restarts: 2, on: [{on}]}}\nguards: {{max_runtime: 10m}}\n")
            r = cli("launch", str(spec), "--provider", "local", "--yes", "--json")
            assert r.returncode == 0, r.stderr
            launched[on] = lid = json.loads(r.stdout)["launch"]["launch_id"]
            wait_until(lambda lid=lid: (cli.home / "data" / "local" / lid / "exit_code").exists(), 60,
                       f"the first attempt of {lid} to end")
            assert (cli.home / "data" / "local" / lid / "exit_code").read_text().split()[0] == "3"

        r = cli("watch", "--once", "--json")
        assert r.returncode == 0, r.stderr
        events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        relaunches = [e for e in events if e.get("guard") == "recovery" and e["action"] == "relaunched"]
        assert [e["root_id"] for e in relaunches] == [launched["failure"]], events  # not the preemption-only one
        second = relaunches[0]["launch_id"]
        assert relaunches[0]["attempt"] == 2 and "exited with code 3" in relaunches[0]["message"]
        wait_until(lambda: (cli.home / "data" / "local" / second / "exit_code").exists(), 60, "attempt 2 to end")
        assert (cli.home / "data" / "local" / second / "exit_code").read_text().split()[0] == "0"
        assert "attempt 2 works" in cli.log(second)

        hist = json.loads(cli("attempts", second, "--json").stdout)
        assert [(a["attempt"], a["end_reason"]) for a in hist["attempts"]][0] == (1, "failure")
        other = json.loads(cli("attempts", launched["preemption"], "--json").stdout)
        assert [a["attempt"] for a in other["attempts"]] == [1]  # ended failed, never relaunched
        st = {x["launch_id"]: x for x in json.loads(cli("status", "--json").stdout)["launches"]}
        assert st[launched["failure"]]["outcome"] == "failed · relaunched as attempt 2"
        assert st[launched["preemption"]]["outcome"] == st[launched["preemption"]]["status"] == "failed"
        assert st[launched["preemption"]]["relaunched_as"] is None
    finally:
        r = cli("down", "--all", "--yes", "--include-own", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["clean"]
