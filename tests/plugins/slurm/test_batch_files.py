"""The Slurm job folder's files (plugins/workbench_slurm/batch.py): what sbatch is asked for, and what each node of
the allocation exports, run for real with /bin/sh (the e2e with a real Slurm is tests/slurm)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from workbench_slurm import batch

from workbench.core.domain.models import JobSpec
from workbench.core.remote import supervisor


def _files(tmp: Path, req: batch.BatchRequest, env: dict[str, str] | None = None) -> dict[str, str]:
    spec = JobSpec(name="t", run="echo run-$WORKBENCH_NODE_RANK", setup="echo setup", env=env or {})
    job_env = supervisor.job_env(spec, _inst(), "t-1")
    rendered = supervisor.render(spec, "t-1", job_env, "batch", job_dir=str(tmp))
    return batch.render(req, str(tmp), rendered.files, spec.env)


def _inst():
    from workbench.core.domain.models import Instance, InstanceState

    return Instance("slurm", "hpc", "wb-t-1", "t-1", "c", "gpu", InstanceState.RUNNING, gpu_count=2)


def test_the_batch_script_asks_for_what_the_launch_needs(tmp_path):
    req = batch.BatchRequest("t-1", "inst9", "gpu", nodes=2, gpus_per_node=2, gres_type="v100", time_limit_s=5400,
                             account="physics", qos="normal")
    files = _files(tmp_path, req)
    head = [line for line in files["job.sbatch"].splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH --gres=gpu:v100:2" in head and "#SBATCH --nodes=2" in head
    assert "#SBATCH --time=01:30:00" in head and "#SBATCH --account=physics" in head
    assert "#SBATCH --job-name=wb-t-1" in head and "#SBATCH --comment=workbench:inst9:t-1" in head
    assert batch.parse_comment("workbench:inst9:t-1") == ("inst9", "t-1")
    assert batch.parse_comment("someone else's comment") is None
    assert batch.slurm_time(61) == "00:02:00" and batch.slurm_time(2 * 86400 + 60) == "2-00:01:00"
    assert files["setup.sh"] == "" and files["node_setup.sh"].strip() == "echo setup"
    assert "CUDA_VISIBLE_DEVICES" not in files["env.sh"]  # Slurm's own value stays
    for name in ("job.sbatch", "run.sh", "node.sh", "submit.sh", "on_finish.sh"):
        subprocess.run(["sh", "-n"], input=files[name], text=True, check=True)  # valid shell


def test_each_node_exports_the_cluster_variables_of_its_rank(tmp_path):
    req = batch.BatchRequest("t-1", "inst9", "gpu", nodes=2, gpus_per_node=1, gres_type="v100")
    files = _files(tmp_path, req, env={"MASTER_PORT": "29123"})
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "work").mkdir()
    (tmp_path / "node_run.sh").write_text(
        "echo rank=$WORKBENCH_NODE_RANK nodes=$NNODES master=$MASTER_ADDR:$MASTER_PORT sky=$SKYPILOT_NODE_RANK "
        "ips=$(echo $WORKBENCH_NODE_IPS | tr '\\n' ' ') hostfile=$WORKBENCH_MPI_HOSTFILE\n")
    out = {}
    for rank in (0, 1):
        env = {"PATH": "/usr/bin:/bin", "SLURM_NODEID": str(rank), "WB_ADDR_0": "10.0.0.5", "WB_ADDR_1": "10.0.0.6"}
        out[rank] = subprocess.run(["sh", str(tmp_path / "node.sh")], env=env, capture_output=True, text=True,
                                   check=True).stdout
    assert "rank=1 nodes=2 master=10.0.0.5:29123 sky=1 ips=10.0.0.5 10.0.0.6" in out[1], out[1]
    assert "rank=0 nodes=2 master=10.0.0.5:29123" in out[0] and "setup" in out[0]
    assert f"hostfile={tmp_path}/cluster/hostfile" in out[0]
