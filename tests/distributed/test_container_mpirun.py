"""mpirun across two sshd "nodes" (AWS via moto) in a container image (issue 34): the image (Debian's
openmpi-bin and openssh-client, built here and cached like the torch one) is pulled on each node with the
login; mpirun in the head's container reads the app's hostfile (the cluster folder is mounted) and starts its
daemon on node 1 through the launch's mpi_rsh.sh: over node 1's SSH, then ``docker exec`` into node 1's
container, which a worker keeps with ``sleep infinity`` (as dstack's MPI examples do; the app stops it once the
head finished).  Each rank proves where it ran: ``/.dockerenv`` and the node rank of its container's
environment."""

from __future__ import annotations

import textwrap
import time

import pytest

from cluster_nodes import MotoCluster

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle import launch_secrets
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.job import JobOptions

pytestmark = pytest.mark.timeout(600)  # the first run builds the MPI image (debootstrap, about a minute)


def test_mpirun_in_a_container_across_two_sshd_nodes(tmp_path, monkeypatch, world):
    started = time.monotonic()
    image = world.image_with("python3,openmpi-bin,openssh-client", "mpi")
    print(f"MPI image ready in {time.monotonic() - started:.1f}s")
    # every "node" is on this computer's loopback (see tests/distributed/test_sshd_engines.py for these lines);
    # the image's user is root, which Open MPI wants confirmed
    spec = parse_spec(textwrap.dedent(f"""\
        name: mpi-in-container
        num_nodes: 2
        providers: [aws]
        resources:
          gpu: V100:1
        secrets: [REG_PW]
        image:
          name: '{image}'
          registry_auth: {{username: {world.user}, password: REG_PW}}
        env:
          OMPI_MCA_btl_tcp_if_include: lo
          OMPI_MCA_oob_tcp_if_include: lo
          OMPI_MCA_rtc_hwloc_vmhole: none
          OMPI_ALLOW_RUN_AS_ROOT: "1"
          OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: "1"
        run: |
          if [ "$WORKBENCH_NODE_RANK" = 0 ]; then
            cat "$WORKBENCH_MPI_HOSTFILE"
            mpirun --hostfile "$WORKBENCH_MPI_HOSTFILE" -np 2 --map-by node \\
              sh -c 'test -f /.dockerenv && echo "mpi rank $OMPI_COMM_WORLD_RANK in the container of node $WORKBENCH_NODE_RANK"'
          else
            sleep infinity  # keeps this node's container for mpirun's daemon; stopped after the head (dstack's way)
          fi
        """), source=str(tmp_path / "mpi.yaml"), base_dir=tmp_path)
    with MotoCluster.create(tmp_path, monkeypatch, sshd_env=world.env) as mc:
        nodes = mc.launch(spec, secret_env={"REG_PW": world.password})
        try:
            t0 = time.monotonic()
            code = ClusterJob(mc.accounts, nodes, spec, JobOptions(
                connect_deadline_s=60, key_grace_s=10, reconnect_deadline_s=60, driver_deadline_s=5, poll_s=0.1,
                grace_s=600, teardown_timeout_s=30), peer_grace_s=1.0).run()
            print(f"2-node mpirun in containers (pulls on both nodes, mpirun): {time.monotonic() - t0:.1f}s")
            lid = nodes[0].launch_id
            head = paths.node_log(lid, 0).read_text()
            assert code == 0, head + paths.node_log(lid, 1).read_text()
            ips = [i.extra["private_ip"] for i in nodes]
            assert f"{ips[0]} slots=1\n{ips[1]} slots=1\n" in head  # the hostfile, read inside the container
            assert "mpi rank 0 in the container of node 0" in head
            # rank 1 ran in node 1's container: its daemon was started there over node 1's SSH and docker exec
            assert "mpi rank 1 in the container of node 1" in head
            assert world.password not in head
        finally:
            launch_secrets.forget(nodes[0].launch_id)
