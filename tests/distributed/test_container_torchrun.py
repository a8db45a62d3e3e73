"""A 2-node job in a container on two sshd "nodes" (AWS via moto): each node pulls the job's image from the
private registry with the login and runs the torchrun example's real gloo all_reduce inside it (host network,
so the rendezvous, the multi-node variables and the barrier work as without a container).  The image is built
here from Debian packages with python3-torch (tests/support/containers.py; cached in ~/.cache after the first
build, which takes minutes)."""

from __future__ import annotations

import dataclasses
import socket
import time

import pytest

from cluster_nodes import MotoCluster
from workbench_testing import ROOT

from workbench.core import paths
from workbench.core.domain.jobspec import load_spec
from workbench.core.domain.models import ContainerImage, GpuRequest, RegistryAuth, Resources
from workbench.core.lifecycle import launch_secrets
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.job import JobOptions

pytestmark = pytest.mark.timeout(900)  # the first run builds the torch image (debootstrap, minutes)

EXAMPLE = ROOT / "resources" / "examples" / "ddp-local-2nodes.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_torchrun_example_in_a_container_across_two_sshd_nodes(tmp_path, monkeypatch, world):
    started = time.monotonic()
    image = world.image_with("python3,python3-torch", "torch")
    print(f"torch image ready in {time.monotonic() - started:.1f}s: {world.timings}")
    spec = load_spec(EXAMPLE)
    spec = dataclasses.replace(
        spec, providers=("aws",), resources=Resources(gpu=GpuRequest("V100", 1)), secrets=("REG_PW",),
        image=ContainerImage(image, RegistryAuth(world.user, "REG_PW")),
        run='test -f /.dockerenv && echo "in the container on node $WORKBENCH_NODE_RANK"\n' + spec.run,
        env={**spec.env, "WORKBENCH_MASTER_PORT": str(_free_port())})
    with MotoCluster.create(tmp_path, monkeypatch, sshd_env=world.env) as mc:
        nodes = mc.launch(spec, secret_env={"REG_PW": world.password})
        try:
            t0 = time.monotonic()
            code = ClusterJob(mc.accounts, nodes, spec, JobOptions(
                connect_deadline_s=60, key_grace_s=10, reconnect_deadline_s=60, driver_deadline_s=5, poll_s=0.1,
                grace_s=600, teardown_timeout_s=30)).run()
            print(f"2-node container job (pulls on both nodes, rendezvous, all_reduce): {time.monotonic() - t0:.1f}s")
            lid = nodes[0].launch_id
            logs = [paths.node_log(lid, r).read_text() for r in (0, 1)]
            assert code == 0, logs
            for rank in (0, 1):
                assert f"in the container on node {rank}" in logs[rank]  # the host has torch too: the proof
                assert "Login Succeeded" in logs[rank] and "[workbench] pulled" in logs[rank], logs[rank]
                assert f"rank {rank}/2 on node {rank}: all_reduce=3 ok, replicas in sync=True" in logs[rank]
                assert world.password not in logs[rank]
        finally:
            launch_secrets.forget(nodes[0].launch_id)
