"""Storage mounts in a Slurm job folder (plugins/workbench_slurm/mounts.py): the storage agent's wrapping moved from
every node to once around the allocation, with the spec's own commands on the nodes (the e2e with a real Slurm, sshd
and moto S3 is tests/slurm/test_slurm_storage.py)."""

from __future__ import annotations

import dataclasses

import pytest
from workbench_slurm import batch, mounts

from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import JobSpec
from workbench.core.storage.machine import wrapped_commands

JOB = "/home/alice/.workbench/jobs/t-1"


def _wrapped(setup: str | None, run: str) -> JobSpec:
    spec = JobSpec(name="t", run=run, setup=setup)
    s, r = wrapped_commands(spec, "python3", f"{JOB}/workbench_storage.py", f"{JOB}/storage.json", errexit=False)
    return dataclasses.replace(spec, setup=s, run=r)


@pytest.mark.parametrize("setup, run", [
    ("pip install -r req.txt\n", "python3 train.py --x 'it''s' -c 3\n"),
    (None, 'echo "a -c b" > out/x; echo $HOME\nls data\n'),
])
def test_the_nodes_run_the_specs_own_commands_and_the_agent_runs_once_around_srun(setup, run):
    req = batch.BatchRequest("t-1", "inst9", "gpu", nodes=2, gpus_per_node=1)
    spec = _wrapped(setup, run)
    files = batch.render(req, JOB, {"setup.sh": spec.setup, "run.sh": spec.run, "env.sh": ""}, {}, agent_spec=spec)
    assert files["node_setup.sh"] == (setup or "") and files["node_run.sh"] == run
    assert files["setup.sh"] == f"python3 {JOB}/workbench_storage.py prepare --config {JOB}/storage.json\n"
    assert files["run.sh"].endswith(f"exec python3 {JOB}/workbench_storage.py run --config {JOB}/storage.json -- "
                                    f"/bin/sh {JOB}/spread.sh\n")
    assert "exec srun" in files["spread.sh"] and "srun" not in files["run.sh"]
    assert "rm -f \"$J/storage-credentials.json\"" in files["job.sbatch"]


def test_a_changed_wrapping_fails_loudly():
    spec = _wrapped("echo s\n", "echo r\n")
    with pytest.raises(WorkbenchError, match="not as the Slurm provider expects"):
        mounts.unwrap(dataclasses.replace(spec, run="python3 agent.py run -- sh -c 'echo r'\n"), JOB)


class _Login:
    def __init__(self, out: str) -> None:
        self.out, self.commands = out, []

    def run(self, command: str, timeout: float):
        self.commands.append(command)
        return type("R", (), {"out": self.out, "err": "", "rc": 0})()


def test_the_tools_check_names_what_to_install_or_set():
    login = _Login("rclone=/opt/rclone/bin/rclone\nrclone v1.60.1-DEV\npython3=/usr/bin/python3\n")
    assert mounts.check_tools(login, "hpc", "login.example", "~/bin/rclone") == "/opt/rclone/bin/rclone"
    assert 'command -v "$HOME"/bin/rclone' in login.commands[0]
    with pytest.raises(ConfigError, match="login node login.example has none at /x/rclone") as got:
        mounts.check_tools(_Login("rclone=\npython3=/usr/bin/python3\n"), "hpc", "login.example", "/x/rclone")
    assert "--set rclone=~/bin/rclone" in (got.value.hint or "")
    with pytest.raises(ConfigError, match="rclone at /usr/bin/rclone on the login node login.example does not run"):
        mounts.check_tools(_Login("rclone=/usr/bin/rclone\npython3=/usr/bin/python3\n"), "hpc", "login.example", None)
    with pytest.raises(ConfigError, match="need python3"):
        mounts.check_tools(_Login("rclone=/usr/bin/rclone\nrclone v1.60.1\npython3=\n"), "hpc", "login.example", None)
