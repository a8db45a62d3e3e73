"""The test Slurm cluster itself (tests/support/slurm.py): what the Slurm e2e tests rely on, proven once.

Layout and GRES, the stand-in nvidia-smi per node and allocation (in the app's own parser), PENDING for
busy GPUs with a start estimate, the second user, the AllowAccounts partition, a two-node step, the
login node over SSH with ``srun --overlap`` into a running job, and two clusters side by side with
nothing left running after ``stop``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

import slurm as slurm_support
from workbench.core.telemetry.nvidia_smi import QUERY_FIELDS, Reading, parse_line

QUERY = ["--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]


def _readings(text: str) -> list[Reading]:
    out = [parse_line(line) for line in text.splitlines() if line.strip()]
    assert out and all(isinstance(r, Reading) for r in out), text
    return out


def test_layout_nodes_gres_and_partitions(slurm_cluster):
    nodes = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%N|%P|%G|%c|%m|%T").stdout.split()
    assert sorted(nodes) == sorted([
        "node1|gpu*|gpu:v100:2|2|4000|idle", "node1|debug|gpu:v100:2|2|4000|idle",
        "node2|gpu*|gpu:v100:2|2|4000|idle", "node3|a100|gpu:2|2|4000|idle"])
    debug = slurm_cluster.run("scontrol", "show", "partition", "debug", "-o").stdout
    assert "AllowAccounts=physics" in debug and "MaxTime=00:02:00" in debug
    assert "MaxTime=00:30:00" in slurm_cluster.run("scontrol", "show", "partition", "gpu", "-o").stdout


def test_jobs_see_the_gpus_they_were_given(slurm_cluster):
    script = ('#!/bin/sh\necho "gpus=$SLURM_JOB_GPUS node=$SLURMD_NODENAME"\nnvidia-smi -L\n'
              f"nvidia-smi {' '.join(QUERY)}\n")
    one = slurm_cluster.submit(script, "--gres=gpu:v100:1", "--time=5")
    both = slurm_cluster.submit(script, "-p", "a100", "--gres=gpu:2", "--time=5", user=slurm_cluster.other_user)
    none = slurm_cluster.submit("#!/bin/sh\nnvidia-smi -L; echo rc=$?\n", "--time=5")
    for job in (one, both, none):
        record = slurm_cluster.wait_job(job, {"COMPLETED", "FAILED"})
        assert record["JobState"] == "COMPLETED", record
    assert slurm_cluster.job(both)["UserId"].startswith(slurm_cluster.other_user + "(")

    head, listing, csv = slurm_cluster.output(one).split("\n", 2)
    gpu = head.split()[0].removeprefix("gpus=")
    assert listing.startswith(f"GPU {gpu}: Tesla V100-SXM2-16GB (UUID: GPU-")
    [reading] = _readings(csv)
    assert (reading.index, reading.name, reading.mem_total) == (int(gpu), "Tesla V100-SXM2-16GB", 16384)
    assert reading.uuid in listing

    text = slurm_cluster.output(both, user=slurm_cluster.other_user)
    assert text.startswith("gpus=0,1 node=node3\n")
    readings = _readings(text.split("\n", 3)[3])
    assert [(r.index, r.name) for r in readings] == [(0, "NVIDIA A100-SXM4-40GB"), (1, "NVIDIA A100-SXM4-40GB")]
    assert readings[0].uuid != readings[1].uuid

    assert slurm_cluster.output(none) == "No devices were found\nrc=6\n"


def test_busy_gpus_pend_for_resources_with_a_start_estimate(slurm_cluster):
    mine = [slurm_cluster.submit("#!/bin/sh\nsleep 300\n", "--gres=gpu:v100:2", "--time=10", "-J", f"hold{i}")
            for i in range(2)]
    for job in mine:
        slurm_cluster.wait_job(job, {"RUNNING"}, timeout=15)
    waiting = slurm_cluster.submit("#!/bin/sh\ntrue\n", "--gres=gpu:v100:1", "--time=5", "-J", "waits",
                                   "--comment=wb:test", user=slurm_cluster.other_user)
    deadline = time.monotonic() + 10
    row: dict[str, str] = {}
    while time.monotonic() < deadline and row.get("REASON") != "Resources":
        row = next((r for r in slurm_cluster.queue() if r["JOBID"] == waiting), {})
        time.sleep(0.1)
    assert row == {"JOBID": waiting, "NAME": "waits", "USER": "wbother", "STATE": "PENDING", "REASON": "Resources",
                   "COMMENT": "wb:test", "PARTITION": "gpu", "NODELIST": ""}
    assert [r["JOBID"] for r in slurm_cluster.queue(user="wbother")] == [waiting]
    deadline = time.monotonic() + 10
    start = "N/A"
    while time.monotonic() < deadline and start in ("N/A", ""):
        start = slurm_cluster.run("squeue", "--start", "-h", "-j", waiting, "-o", "%S").stdout.strip()
        time.sleep(0.1)
    assert start[:2] == "20", start  # an ISO time: when the first holder's 10 minutes run out


def test_allow_accounts_without_slurmdbd_accepts_and_never_runs(slurm_cluster):
    job = slurm_cluster.submit("#!/bin/sh\ntrue\n", "-p", "debug", "-A", "physics")
    record = slurm_cluster.wait_job(job, {"PENDING"})
    deadline = time.monotonic() + 10
    while "account" not in record.get("Reason", "") and time.monotonic() < deadline:
        time.sleep(0.1)
        record = slurm_cluster.job(job)
    assert record["Reason"].startswith("Job's_account_not_known"), record
    assert record["Account"] == "physics"


def test_a_step_across_two_nodes(slurm_cluster):
    res = slurm_cluster.run("srun", "-N2", "--ntasks-per-node=1", "--immediate=10", "--time=1", "sh", "-c",
                            'echo "$SLURM_NODEID $SLURMD_NODENAME $SLURM_PROCID/$SLURM_NTASKS"')
    assert sorted(res.stdout.splitlines()) == ["0 node1 0/2", "1 node2 1/2"]


def _ssh(server, key: Path, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh", "-i", str(key), "-p", str(server.port), "-o", "BatchMode=yes",
                           "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                           "-o", "LogLevel=ERROR", f"{server.user}@127.0.0.1", command],
                          capture_output=True, text=True, timeout=30)


def test_login_node_submits_and_steps_into_a_running_job(slurm_cluster, slurm_login, slurm_data_dir):
    from workbench.core.providers.sshkeys import ensure_keypair

    key = ensure_keypair(slurm_data_dir).private_path
    sub = _ssh(slurm_login, key, "sbatch --parsable -p a100 --gres=gpu:1 --time=5 --wrap 'sleep 120'")
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip()
    slurm_cluster.wait_job(job, {"RUNNING"}, timeout=15)
    smi = _ssh(slurm_login, key, f"srun --jobid={job} --overlap nvidia-smi {' '.join(QUERY)}")
    assert smi.returncode == 0, smi.stderr
    [reading] = _readings(smi.stdout)
    assert reading.name == "NVIDIA A100-SXM4-40GB"
    slurm_cluster.gpu_period(50)  # a stream asking for one round per 10 s loops every 50 ms instead
    try:
        fast = slurm_cluster.run("srun", f"--jobid={job}", "--overlap", "timeout", "1", "nvidia-smi", *QUERY,
                                 "-lms", "10000", check=False)
    finally:
        slurm_cluster.gpu_period(None)
    assert len(_readings(fast.stdout)) >= 5
    queue = _ssh(slurm_login, key, "squeue -h -o '%i %T'")
    assert queue.stdout.split() == [job, "RUNNING"]
    local = _ssh(slurm_login, key, "nvidia-smi -L")  # the login node has no GPU driver
    assert local.returncode == 9 and "NVIDIA-SMI has failed" in local.stdout


def test_two_clusters_side_by_side_and_stop_leaves_nothing(slurm_cluster):
    root = Path(tempfile.mkdtemp(prefix="wb-slurm-", dir="/tmp"))
    started = time.monotonic()
    second = slurm_support.start_cluster(root)
    try:
        assert time.monotonic() - started < 10
        assert second.ctld_port != slurm_cluster.ctld_port
        job = second.submit("#!/bin/sh\necho second:$SLURMD_NODENAME\n", "--gres=gpu:1", "--time=1")
        second.wait_job(job, {"COMPLETED"})
        assert second.output(job).startswith("second:node")
        running = second.processes()
        names = sorted(p.name() for p in running)
        assert names.count("slurmd") == 3 and "slurmctld" in names and "munged" in names, names
    finally:
        second.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert second.processes() == []
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in running)
    # the session's cluster was not touched
    assert set(slurm_cluster.run("sinfo", "-h", "-N", "-o", "%N:%T").stdout.split()) == {
        "node1:idle", "node2:idle", "node3:idle"}
