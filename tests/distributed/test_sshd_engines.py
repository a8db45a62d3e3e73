"""The engines across real sshd "nodes" (the AWS plugin against moto, each node's private address its sshd):
torchrun from the Local example's spec, unchanged but for the provider, and mpirun with the app's hostfile
and the launch's inter-node key running an mpi4py allreduce."""

from __future__ import annotations

import pytest

import dataclasses
import socket
import textwrap

from cluster_nodes import MotoCluster
from workbench_testing import ROOT

from workbench.core import paths
from workbench.core.domain.jobspec import load_spec, parse_spec
from workbench.core.domain.models import GpuRequest, Resources
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.job import JobOptions

#: real processes, SSH and moto on a shared 2-core machine: slow under load
pytestmark = pytest.mark.timeout(400)

EXAMPLE = ROOT / "resources" / "examples" / "ddp-local-2nodes.yaml"
CLEAN = {"instances": [], "groups": [], "keys": [], "placement": []}


def _options() -> JobOptions:
    return JobOptions(connect_deadline_s=60, key_grace_s=10, reconnect_deadline_s=60, driver_deadline_s=5,
                      poll_s=0.1, grace_s=600, teardown_timeout_s=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_torchrun_example_across_two_sshd_nodes(tmp_path, monkeypatch):
    spec = load_spec(EXAMPLE)
    spec = dataclasses.replace(spec, providers=("aws",), resources=Resources(gpu=GpuRequest("V100", 1)),
                               env={**spec.env, "WORKBENCH_MASTER_PORT": str(_free_port())})
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        code = ClusterJob(mc.accounts, nodes, spec, _options()).run()
        lid = nodes[0].launch_id
        logs = [paths.node_log(lid, r).read_text() for r in (0, 1)]
        assert code == 0, logs
        for rank in (0, 1):
            assert f"rank {rank}/2 on node {rank}: all_reduce=3 ok, replicas in sync=True" in logs[rank]
        assert mc.aws_state() == CLEAN


MPI_SCRIPT = textwrap.dedent("""\
    import os
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    total = comm.allreduce(comm.Get_rank() + 1)
    assert total == comm.Get_size() * (comm.Get_size() + 1) // 2
    print(f"mpi rank {comm.Get_rank()} of {comm.Get_size()}: allreduce={total} ok on "
          f"{os.environ.get('WORKBENCH_REMOTE_DIR')}", flush=True)
    """)


def test_mpirun_across_sshd_nodes_with_the_apps_hostfile_and_key(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "allreduce_mpi.py").write_text(MPI_SCRIPT)
    # Every "node" lives on this computer's loopback, so MPI's TCP transports are pointed at it;
    # on real machines these two lines are not needed.  The third keeps Open MPI 4.1's daemon (orted)
    # from mapping the shared hardware topology into the "biggest hole" of its address space: here
    # that crashed orted in hwloc_shmem_topology_write about one run in fifteen (a segfault, then
    # "ORTE was unable to reliably start one or more daemons"); each process reads the topology itself.
    spec = parse_spec(textwrap.dedent(f"""\
        name: mpi-test
        num_nodes: 2
        workdir: {work}
        resources:
          gpu: V100:1
        env:
          OMPI_MCA_btl_tcp_if_include: lo
          OMPI_MCA_oob_tcp_if_include: lo
          OMPI_MCA_rtc_hwloc_vmhole: none
        run: |
          if [ "$WORKBENCH_NODE_RANK" = 0 ]; then
            cat "$WORKBENCH_MPI_HOSTFILE"
            mpirun --allow-run-as-root --hostfile "$WORKBENCH_MPI_HOSTFILE" -np "$WORKBENCH_NUM_NODES" \\
              --map-by node /usr/bin/python3 allreduce_mpi.py
          fi
        """), source=str(tmp_path / "mpi.yaml"), base_dir=tmp_path)
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        code = ClusterJob(mc.accounts, nodes, spec, _options()).run()
        lid = nodes[0].launch_id
        head = paths.node_log(lid, 0).read_text()
        assert code == 0, head
        ips = [i.extra["private_ip"] for i in nodes]
        assert f"{ips[0]} slots=1\n{ips[1]} slots=1\n" in head
        assert f"mpi rank 0 of 2: allreduce=3 ok on {mc.remote_dir(0)}" in head
        # rank 1 ran on node 1: started over SSH with the launch's key, inside node 1's sshd session
        assert f"mpi rank 1 of 2: allreduce=3 ok on {mc.remote_dir(1)}" in head
        assert mc.aws_state() == CLEAN
