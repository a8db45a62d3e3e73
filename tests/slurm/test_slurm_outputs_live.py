"""The plugin's pure parts on the live test cluster (tests/support/slurm.py), not only on recordings: the
snapshot command and the queue command run as they are now, their output parsed (so a drift of Slurm's
formats or of our commands fails here), the second user's jobs never in our queue, and a request the check
refuses refused by sbatch too (tests/plugins/slurm/ test the same functions on recorded outputs)."""

from __future__ import annotations

import time

import pytest
from workbench_slurm import cluster, queue

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import InstanceState

PREFIX = "workbench:live-test:"


def _snapshot(slurm_cluster) -> cluster.ClusterSnapshot:
    return cluster.parse_snapshot(slurm_cluster.run("sh", "-c", cluster.SNAPSHOT_COMMAND).stdout)


def _ours(slurm_cluster) -> dict[str, queue.QueuedJob]:
    return {j.job_id: j for j in queue.parse_squeue(slurm_cluster.run("sh", "-c", queue.squeue_command(PREFIX)).stdout)}


def _until(what, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout} s")
        time.sleep(0.1)


def test_snapshot_queue_and_job_records_of_the_live_cluster(slurm_cluster):
    idle = _snapshot(slurm_cluster)
    assert [p.name for p in idle.partitions] == ["gpu", "a100", "debug"] and idle.user == "root"
    assert [(n.name, n.gpu_type, n.gpus, n.gpus_used) for n in idle.nodes] == [
        ("node1", "v100", 2, 0), ("node2", "v100", 2, 0), ("node3", None, 2, 0)]
    # one GPU of node1 taken by a job of ours, and a job of the second user with our very prefix on node3
    mine = slurm_cluster.submit("#!/bin/sh\nsleep 300\n", "-p", "gpu", "-w", "node1", "--gres=gpu:v100:1",
                                "--time=5", "--job-name=wb-live", f"--comment={PREFIX}L-1")
    theirs = slurm_cluster.submit("#!/bin/sh\nsleep 300\n", "-p", "a100", "--gres=gpu:1", "--time=5",
                                  f"--comment={PREFIX}L-2", user=slurm_cluster.other_user)
    slurm_cluster.wait_job(mine, {"RUNNING"})
    slurm_cluster.wait_job(theirs, {"RUNNING"})
    busy = _snapshot(slurm_cluster)
    assert [(n.name, n.gpus_used) for n in busy.nodes] == [("node1", 1), ("node2", 0), ("node3", 1)]
    offers = {o.instance_type: o for o in cluster.offers(cluster.shapes(busy, {"a100": "A100"}), provider="slurm",
                                                          region="test", rate_per_gpu_hour=None, currency="USD",
                                                          as_of="today")}
    assert offers["gpu · 1×V100"].availability_note == "free now: 2 of 2 nodes"
    assert offers["gpu · 2×V100"].availability_note == "free now: 1 of 2 nodes"
    assert offers["a100 · 2×A100"].availability_note == "free now: 0 of 1 nodes"
    # a job that needs both of node1's GPUs and both of node2's waits for Resources, with an estimate
    waiting = slurm_cluster.submit("#!/bin/sh\ntrue\n", "-p", "gpu", "-N", "2", "--gres=gpu:v100:2", "--time=5",
                                   f"--comment={PREFIX}L-3")
    jobs = _until(lambda: (lambda q: q if q.get(waiting) and q[waiting].reason == "Resources"
                           and q[waiting].start_estimate else None)(_ours(slurm_cluster)))
    assert set(jobs) == {mine, waiting}  # never the second user's job, whatever its comment
    assert jobs[waiting].instance_state is InstanceState.PENDING and jobs[waiting].start_estimate > time.time() - 60
    assert (jobs[mine].state, jobs[mine].node_list, jobs[mine].name) == ("RUNNING", ("node1",), "wb-live")
    record = queue.parse_job(slurm_cluster.run("sh", "-c", queue.job_command(mine)).stdout)
    assert (record.state, record.node_list, record.comment, record.time_limit_s) == ("RUNNING", ("node1",), f"{PREFIX}L-1", 300)
    assert abs(record.start_time - jobs[mine].start_estimate) < 1 and abs(record.start_time - time.time()) < 120
    slurm_cluster.run("scancel", mine)
    ended = _until(lambda: (lambda r: r if r and r.ended else None)(
        queue.parse_job(slurm_cluster.run("sh", "-c", queue.job_command(mine)).stdout)))
    assert (ended.state, ended.signal) == ("CANCELLED", 15)
    assert queue.parse_job(slurm_cluster.run("sh", "-c", queue.job_command("999999") + " 2>&1",
                                             check=False).stdout) is None
    # the pending job made backfill plan node1 and node2 for it (State=…+PLANNED: not free for others) until
    # the next backfill pass after it is gone; the next test of this cluster expects idle nodes
    slurm_cluster.cancel_all()
    _until(lambda: all("PLANNED" not in n.state.upper() for n in _snapshot(slurm_cluster).nodes))


@pytest.mark.parametrize(("request_kw", "sbatch_args"), [
    (dict(partition="nosuch"), ["-p", "nosuch", "--gres=gpu:1"]),
    (dict(partition="gpu", gpus_per_node=3), ["-p", "gpu", "--gres=gpu:v100:3"]),
    (dict(partition="gpu", gpu_type="A100"), ["-p", "gpu", "--gres=gpu:a100:1"]),
])
def test_what_the_check_refuses_sbatch_refuses_too(slurm_cluster, request_kw, sbatch_args):
    snap = _snapshot(slurm_cluster)
    req = dict(partition=None, gpu_type=None, gpus_per_node=1, nodes=1, time_limit_s=300, account=None) | request_kw
    with pytest.raises(ConfigError):
        cluster.check_request(snap, **req)
    res = slurm_cluster.run("sbatch", "--test-only", "--time=5", *sbatch_args, "--wrap=true", check=False)
    assert res.returncode != 0
    assert isinstance(queue.sbatch_error(res.stderr), ConfigError)
