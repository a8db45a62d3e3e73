"""A multi-node launch's container sees the cluster folder (issue 34): the MPI hostfile that
WORKBENCH_MPI_HOSTFILE / DSTACK_MPI_HOSTFILE name, and the inter-node ssh files, read-only at the same path
as on the machine; a single-node container does not get it."""

from __future__ import annotations

import shlex

from workbench.core.domain.models import ContainerImage
from workbench.core.remote import cluster_files, container


def _run_line(text: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("set -- run "))
    return shlex.split(line.strip()[len("set -- "):])


def test_a_multi_node_container_mounts_the_cluster_folder_read_only_where_the_hostfile_variable_points():
    job = "/home/ubuntu/.workbench/jobs/L1"
    text = container.script(ContainerImage("ghcr.io/lab/mpi:1"), "L1", job, f"{job}/work",
                            {"run.sh": f"{job}/run.sh"}, rank=1)
    args = _run_line(text)
    mounts = [args[i + 1] for i, a in enumerate(args) if a == "-v"]
    cluster = f"{job}/{cluster_files.CLUSTER_DIR}"  # where the hostfile and the inter-node ssh files are written
    assert f"{cluster}:{cluster}:ro" in mounts and f"{cluster}/mpi_rsh.sh:/workbench/mpi_rsh.sh:ro" in mounts
    assert f"{job}/work:{job}/work" in mounts
    single = _run_line(container.script(ContainerImage("ghcr.io/lab/mpi:1"), "L1", job, f"{job}/work",
                                        {"run.sh": f"{job}/run.sh"}))
    assert not any("/cluster" in a for a in single)


def test_mpirun_s_remote_shell_starts_the_command_in_the_other_node_s_container(tmp_path):
    """mpi_rsh.sh, run for real with a recording ``ssh`` and ``docker``: Open MPI's ssh options are dropped, the
    launch's ssh_config is used, and the other node's shell runs the daemon's command, quotes and all, through
    ``docker exec`` in that node's container (its rank from ``peers``)."""
    import os
    import stat
    import subprocess

    nodes = [cluster_files.NodeAddress("10.0.0.5", 22, "ubuntu", None), cluster_files.NodeAddress("10.0.0.6", 22,
                                                                                                "ubuntu", None)]
    files = cluster_files.render("L:1", 0, str(tmp_path / "job"), nodes, 1, cluster_files.new_keypair("t"),
                                 "unit", "nohup")
    cdir = tmp_path / "job" / "cluster"
    cdir.mkdir(parents=True)
    for name, text in files.items():
        (cdir / name).write_text(text)
    agent = cdir / "mpi_rsh.sh"
    agent.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # ssh: record the target and run the remote command as the other node's shell would
    (bin_dir / "ssh").write_text('#!/bin/sh\necho "ssh $1 $2 $3" >> "$LOG"\nshift 3\nexec sh -c "$*"\n')
    (bin_dir / "docker").write_text('#!/bin/sh\nfor a in "$@"; do echo "arg:$a" >> "$LOG"; done\n'
                                    'shift 5\nexec sh -c "$1"\n')  # docker exec -i NAME sh -c CMD: run CMD
    for f in bin_dir.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "log"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG": str(log)}
    out = subprocess.run([str(agent), "-F", "/x/ssh_config", "-x", "10.0.0.6", "echo", '"it\'s"', "'a b'", "$((1+2))"],
                         env=env, capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "it's a b 3\n"  # what `ssh host echo "it's" 'a b' $((1+2))` would print
    lines = log.read_text().splitlines()
    assert lines[0] == f"ssh -F {cdir}/ssh_config 10.0.0.6"
    assert lines[1:6] == ["arg:exec", "arg:-i", f"arg:{container.container_name('L:1', 1)}", "arg:sh", "arg:-c"]
    refused = subprocess.run([str(agent), "10.9.9.9", "true"], env=env, capture_output=True, text=True, timeout=10)
    assert refused.returncode == 255 and "not a node of this launch" in refused.stderr


def test_open_mpi_is_pointed_at_it_only_for_a_job_in_a_container():
    assert "OMPI_MCA_plm_rsh_agent" not in cluster_files.tool_env("/j")
    # one path in every node's container (the daemons it starts read the variable too)
    assert cluster_files.tool_env("/j", in_container=True)["OMPI_MCA_plm_rsh_agent"] == "/workbench/mpi_rsh.sh"
