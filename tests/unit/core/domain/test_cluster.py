"""The cluster variables: one function, every name the issue lists, consistent across nodes."""

from __future__ import annotations

import pytest

from workbench.core.domain.cluster import ClusterLayout, hostfile_text, master_port_of, node_env, node_rank_of
from workbench.core.domain.jobspec import parse_spec
from workbench.core.money.spend import projected_cost

LAYOUT = ClusterLayout(("10.0.0.5", "10.0.0.6", "10.0.0.7"), gpus_per_node=8, hostfile="/j/cluster/hostfile")


def test_every_name_for_every_node():
    for rank in range(3):
        env = node_env(LAYOUT, rank)
        assert env["WORKBENCH_NUM_NODES"] == env["SKYPILOT_NUM_NODES"] == env["DSTACK_NODES_NUM"] == env["NNODES"] == "3"
        assert env["WORKBENCH_NODE_RANK"] == env["SKYPILOT_NODE_RANK"] == env["DSTACK_NODE_RANK"] == str(rank)
        assert env["NODE_RANK"] == str(rank)
        assert env["WORKBENCH_NODE_IPS"] == env["SKYPILOT_NODE_IPS"] == env["DSTACK_NODES_IPS"] == \
            "10.0.0.5\n10.0.0.6\n10.0.0.7"
        assert env["WORKBENCH_MASTER_ADDR"] == env["DSTACK_MASTER_NODE_IP"] == env["MASTER_ADDR"] == "10.0.0.5"
        assert env["WORKBENCH_MASTER_PORT"] == env["MASTER_PORT"] == "29500"
        assert env["WORKBENCH_GPUS_PER_NODE"] == env["SKYPILOT_NUM_GPUS_PER_NODE"] == env["DSTACK_GPUS_PER_NODE"] == "8"
        assert env["DSTACK_GPUS_NUM"] == "24"
        assert env["WORKBENCH_MPI_HOSTFILE"] == env["DSTACK_MPI_HOSTFILE"] == "/j/cluster/hostfile"
    with pytest.raises(ValueError):
        node_env(LAYOUT, 3)


def test_hostfile_and_port_and_rank():
    assert hostfile_text(("a", "b"), 8) == "a slots=8\nb slots=8\n"
    assert hostfile_text(("a",), 0) == "a slots=1\n"  # a CPU node still runs one process
    assert master_port_of({}) == 29500
    assert master_port_of({"MASTER_PORT": "1234"}) == 1234
    assert master_port_of({"WORKBENCH_MASTER_PORT": "2345", "MASTER_PORT": "1234"}) == 2345
    assert master_port_of({"MASTER_PORT": "nope"}, default=7) == 7
    assert node_rank_of({"node_rank": "2"}) == 2 and node_rank_of({}) == 0 and node_rank_of({"node_rank": "x"}) == 0


def test_projected_cost_counts_every_node():
    spec = parse_spec("name: n\nrun: x\nnum_nodes: 4\nguards:\n  max_runtime: 2h\n")
    assert spec.num_nodes == 4
    assert projected_cost(3.0, 120, 4) == pytest.approx(24.0)
    assert projected_cost(3.0, 120) == pytest.approx(6.0)


def test_the_shipped_examples_are_multi_node():
    from workbench.core.domain.jobspec import load_spec
    from workbench.core.paths import resources_dir

    local = load_spec(resources_dir() / "examples" / "ddp-local-2nodes.yaml")
    assert (local.num_nodes, local.providers, local.resources.gpu) == (2, ("local",), None)
    assert "torch.distributed.run" in local.run and "$WORKBENCH_NODE_RANK" in local.run
    a100 = load_spec(resources_dir() / "examples" / "ddp-2nodes-a100.yaml")
    assert a100.num_nodes == 2 and a100.resources.gpu.model == "A100" and a100.resources.gpu.count == 8
    assert (a100.resources.network_min_gbps, a100.resources.rdma) == (100.0, True)
    assert a100.run.startswith("torchrun ") and "$WORKBENCH_GPUS_PER_NODE" in a100.run
