"""A Slurm cluster as one more target (issue 35), for real: the `workbench` CLI in subprocesses, a real sshd as the
login node, a real Slurm (munge, slurmctld, three slurmd with stand-in GPUs: tests/support/slurm.py).

Each test launches through the same path a user's `workbench run` takes: offers read from the cluster (sinfo /
scontrol), the launch checked with `sbatch --test-only`, the workdir uploaded to the login node, the batch job queued
by `sbatch`, its log followed from the output file, its end read from Slurm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from wbcli import Workbench, wait_for  # noqa: E402

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def slurm_login_for(slurm_cluster, tmp_path):
    """login(home): a real sshd in front of the cluster that lets in the app key of the CLI home ``home``."""
    from workbench.core.providers.sshkeys import ensure_keypair

    started = []

    def login(home: Path):
        data = home / "data"
        data.mkdir(parents=True, exist_ok=True)
        server = slurm_cluster.login_node(tmp_path / f"login{len(started)}", ensure_keypair(data).public_openssh)
        started.append(server)
        return server

    yield login
    for server in started:
        server.stop()


@pytest.fixture
def hpc(tmp_path, slurm_cluster, slurm_login_for):
    """A CLI home with a Slurm profile `hpc` whose login node is a real sshd in front of the cluster."""
    wb = Workbench(tmp_path / "home")
    login = slurm_login_for(wb.home)
    wb.settings = ["host=127.0.0.1", f"port={login.port}", f"user={login.user}", "gpu_models=a100=A100"]
    r = wb("profiles", "add", "slurm", "hpc", *[a for kv in wb.settings for a in ("--set", kv)])
    assert r.rc == 0, r.err
    wb.cluster = slurm_cluster
    wb.login = login
    yield wb
    subprocess.run(wb.argv("down", "--all", "--yes", "--include-own", "--timeout", "30"), env=wb.env,
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def _spec(wb: Workbench, name: str, body: str) -> Path:
    path = wb.home.parent / f"{name}.yaml"
    path.write_text(f"name: {name}\n{body}")
    return path


def _ours(cluster) -> list[dict[str, str]]:
    return [j for j in cluster.queue() if j.get("NAME", "").startswith("wb-")]


def _instance(wb: Workbench, launch_id: str) -> dict:
    r = wb("status", "--json")
    assert r.rc == 0, r.err
    launch = next(x for x in r.json["launches"] if x["launch_id"] == launch_id)
    return launch["instances"][0]


def test_offers_come_from_the_cluster(hpc):
    r = hpc("offers", "--profile", "hpc", "--json")
    assert r.rc == 0, r.err
    offers = r.json["offers"] if isinstance(r.json, dict) else r.json
    mine = [o for o in offers if o["provider"] == "slurm"]
    v100 = {o["gpu_count"] for o in mine if o["gpu_model"] == "V100"}
    assert v100 == {1, 2}  # 1 or 2 of a node's two GPUs: a job asking one gets exactly one
    assert any(o["gpu_model"] == "A100" for o in mine)  # untyped GRES named by the profile's partition mapping
    open_ = [o for o in mine if o["extra"]["partition"] != "debug"]
    assert open_ and all(o["available"] and o["availability_note"].startswith("free now: ") for o in open_)
    # debug takes only the account physics (AllowAccounts): listed, not launchable, saying why
    debug = [o for o in mine if o["extra"]["partition"] == "debug"]
    assert debug and all(not o["available"] and "physics" in o["availability_note"] for o in debug)


def test_a_one_gpu_job_runs_with_its_gpu_env_and_secret_and_returns_its_exit_code(hpc):
    spec = _spec(hpc, "onegpu", """\
resources:
  gpu: V100:1
secrets: [TOKEN]
guards:
  max_runtime: 10m
run: |
  echo "gpus=$CUDA_VISIBLE_DEVICES job=$SLURM_JOB_ID node=$SLURMD_NODENAME"
  nvidia-smi -L
  echo "token=${#TOKEN}"
  exit 3
""")
    env = dict(hpc.env, TOKEN="s3cret-value-22-chars!")
    r = hpc("run", str(spec), "--profile", "hpc", "--yes", "--secret-env", "TOKEN", "--interval", "0.3",
            env=env, timeout=180)
    assert "exit code: 3" in r.err, r.err
    assert "gpus=0 " in r.out or "gpus=1 " in r.out, r.out
    assert "Tesla V100-SXM2-16GB" in r.out and "token=22" in r.out
    lid = next(line.split()[-1] for line in r.out.splitlines() + r.err.splitlines() if "launch id:" in line)
    inst = wait_for(lambda: (lambda i: i if i["state"] == "terminated" else None)(_instance(hpc, lid)), timeout=60)
    assert inst["exit_code"] == 3 and inst["extra"]["slurm_state"] in ("FAILED", "COMPLETED")
    assert not _ours(hpc.cluster)
    # the secret never reached a command line or a file the job folder keeps outside env.sh (0600)
    job_dir = Path(hpc.login.remote_dir) / "jobs" / lid
    assert oct((job_dir / "env.sh").stat().st_mode & 0o777) == "0o600"
    for f in job_dir.iterdir():
        if f.is_file() and f.name != "env.sh":
            assert b"s3cret-value" not in f.read_bytes(), f


def test_a_two_node_job_runs_a_real_torchrun_gloo_all_reduce(hpc, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "allreduce.py").write_text("""\
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"node {os.environ['WORKBENCH_NODE_RANK']} rank {dist.get_rank()}/{dist.get_world_size()} sum {t.item():.0f}",
      flush=True)
""")
    port = 29000 + os.getpid() % 900
    spec = _spec(hpc, "twonode", f"""\
workdir: {work}
num_nodes: 2
resources:
  gpu: V100:1
env:
  GLOO_SOCKET_IFNAME: lo
  MASTER_PORT: "{port}"
guards:
  max_runtime: 10m
run: |
  /usr/bin/python3 -m torch.distributed.run --redirects 1 --tee 1 --nnodes "$NNODES" --node_rank "$NODE_RANK" \\
    --nproc_per_node 1 --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT" allreduce.py
""")
    r = hpc("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", timeout=200)
    assert "exit code: 0" in r.err, r.out + r.err
    assert "node 0 rank 0/2 sum 3" in r.out and "node 1 rank 1/2 sum 3" in r.out, r.out


def queue_behind_other_user(hpc) -> tuple[str, dict, str]:
    """A free job of ours PENDING on Resources while another user holds every V100 of the gpu partition:
    (our launch id, its instance as status shows it, the other user's Slurm job id)."""
    cluster = hpc.cluster
    other = cluster.submit("#!/bin/sh\nsleep 300\n", "-p", "gpu", "-N", "2", "--gres=gpu:v100:2", "--time=10",
                           user=cluster.other_user)
    cluster.wait_job(other, {"RUNNING"})
    spec = _spec(hpc, "waits", "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 10m\nrun: echo never\n")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", timeout=120)
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    inst = wait_for(lambda: (lambda i: i if i["extra"].get("queue_reason") == "Resources" else None)(
        _instance(hpc, lid)), timeout=60, interval=0.5)
    return lid, inst, other


def test_a_job_waits_for_busy_gpus_with_its_reason_and_cancel_leaves_nothing_of_ours(hpc):
    cluster = hpc.cluster
    lid, inst, other = queue_behind_other_user(hpc)
    assert inst["state"] == "pending" and inst["extra"]["slurm_state"] == "PENDING"
    assert "queued (Resources)" in hpc("status").out  # the table says why it waits
    down = hpc("down", lid, "--yes", "--json", timeout=120)
    assert down.rc == 0, down.err
    assert not _ours(cluster)
    assert cluster.job(other)["JobState"] == "RUNNING"  # the second user's job is never touched
    assert _instance(hpc, lid)["state"] == "terminated"


def test_the_time_limit_is_enforced_and_shown(hpc):
    spec = _spec(hpc, "slow", "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 5m\nrun: sleep 600\n")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", timeout=120)
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    running = wait_for(lambda: (lambda i: i if i["state"] == "running" and i["extra"].get("slurm_job_id")
                                else None)(_instance(hpc, lid)), timeout=60, interval=0.5)
    assert hpc.cluster.job(running["extra"]["slurm_job_id"])["TimeLimit"] == "00:05:00"
    hpc.cluster.time_out(running["extra"]["slurm_job_id"])  # its end moved to now: Slurm's own check ends it
    ended = wait_for(lambda: (lambda i: i if i["state"] == "terminated" else None)(_instance(hpc, lid)),
                     timeout=90, interval=1.0)
    assert ended["extra"]["slurm_state"] == "TIMEOUT"
    assert "terminated (TIMEOUT)" in hpc("status").out


def test_the_app_killed_right_after_sbatch_finds_its_job_again(hpc):
    spec = _spec(hpc, "crash", "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 10m\nrun: echo found-again\n")
    env = dict(hpc.env, WORKBENCH_CRASH_AT="slurm:submitted")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", env=env, timeout=120)
    assert r.rc == -9, r.err  # SIGKILL right after sbatch answered
    r = hpc("status", "--json")
    [launch] = r.json["launches"]
    lid = launch["launch_id"]
    logs = hpc("logs", lid, "--follow", "--interval", "0.3", timeout=120)
    assert "found-again" in logs.out, logs.out + logs.err
    inst = wait_for(lambda: (lambda i: i if i["state"] == "terminated" else None)(_instance(hpc, lid)), timeout=60)
    assert inst["extra"]["slurm_job_id"] and inst["extra"]["slurm_state"] == "COMPLETED"


GPU1 = "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 10m\n"


@pytest.mark.parametrize("settings, body, words", [
    ((), "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 2h\n",
     "beyond every partition's time limit"),  # gpu allows 30 min, a100 60 min
    (("partition=nope",), GPU1, "the cluster has no partition nope"),
    ((), "resources:\n  gpu: V100:3\nguards:\n  max_runtime: 10m\n", "matches 3× V100"),  # 2 per node at most
    (("partition=debug", "account=chemistry"), GPU1.replace("10m", "1m"), "takes only the accounts physics"),
    ((), GPU1.replace("  gpu: V100:1\n", "  gpu: V100:1\n  memory_gb: 100\n"), "with 100 GB memory"),  # nodes have 4000 MB
    ((), "num_nodes: 3\n" + GPU1, "the largest partition on hpc has 2"),
], ids=["time-limit", "partition", "gres", "account", "memory", "nodes"])
def test_bad_input_is_refused_before_anything_is_queued(hpc, settings, body, words):
    if settings:
        assert hpc("profiles", "add", "slurm", "hpc",
                   *[a for kv in hpc.settings + list(settings) for a in ("--set", kv)]).rc == 0
    spec = _spec(hpc, "bad", body + "run: echo hi\n")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", timeout=120)
    assert r.rc != 0
    assert words in (r.out + r.err), r.out + r.err
    assert not _ours(hpc.cluster)


def test_the_monitor_reads_the_jobs_own_gpus_on_its_nodes(hpc, monkeypatch):
    """Telemetry of a running batch job: `srun --jobid … --overlap nvidia-smi` on its node, its GPU only."""
    spec = _spec(hpc, "watched", "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 10m\nrun: sleep 120\n")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", timeout=120)
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    wait_for(lambda: _instance(hpc, lid)["extra"].get("slurm_state") == "RUNNING", timeout=60, interval=0.5)
    monkeypatch.setenv("WORKBENCH_HOME", str(hpc.home))
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.monitor.monitor_poll import poll_instance

    store = Store.open()
    try:
        acc = Accounts(store, entries=discover())
        [inst] = store.list_instances(launch_id=lid)
        got = poll_instance(acc, inst, load_history=False, hub=None)
        assert got.telemetry and got.error is None
        [(key, batch)] = list(got.live.items())  # one GPU: the one Slurm gave the job, not the node's two
        stored = store.samples(inst.instance_id, since=0)
        assert stored and stored[0].name == "Tesla V100-SXM2-16GB"
        # in the app, the job's GPUs are polled through Slurm into the same hub as a cloud machine's stream
        from workbench.core.remote.batchstream import BatchGpuSampler
        from workbench.core.telemetry.hub import TelemetryHub

        hub = TelemetryHub(store)
        sampler = BatchGpuSampler(hub, acc, inst, period_s=0.5)
        sampler.start()
        try:
            wait_for(lambda: sampler.rounds >= 2, timeout=30)
        finally:
            sampler.stop()
            sampler.join(10)
        assert hub.status(inst.instance_id)[0] == "stopped" and not sampler.is_alive()
        readings = hub.since(inst.instance_id)
        assert {s.index for s in readings} == {0} and all(s.name == "Tesla V100-SXM2-16GB" for s in readings)
    finally:
        store.close()


def test_down_cancels_a_running_job_and_verifies_nothing_of_ours_is_left(hpc):
    spec = _spec(hpc, "busy", "resources:\n  gpu: V100:2\nguards:\n  max_runtime: 10m\nrun: echo started; sleep 300\n")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", timeout=120)
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    running = wait_for(lambda: (lambda i: i if i["extra"].get("slurm_state") == "RUNNING" else None)(
        _instance(hpc, lid)), timeout=60, interval=0.5)
    job_id = running["extra"]["slurm_job_id"]
    down = hpc("down", lid, "--yes", "--json", timeout=120)
    assert down.rc == 0 and down.json["clean"], down.out + down.err
    assert not _ours(hpc.cluster)  # verified by the provider before down answered, not eventually
    assert hpc.cluster.job(job_id)["JobState"] == "CANCELLED"
    ended = _instance(hpc, lid)
    assert ended["state"] == "terminated" and ended["extra"]["slurm_state"] == "CANCELLED"
