"""The variables every node of a multi-node launch gets before ``setup``, computed in one place.

The Local provider (N process groups on this computer, head 127.0.0.1) and the SSH runner
(N machines, their private addresses) both call :func:`node_env`, so a job sees the same
names everywhere:

* ours: ``WORKBENCH_NUM_NODES``, ``WORKBENCH_NODE_RANK`` (0 = head), ``WORKBENCH_NODE_IPS``
  (one address per line, head first), ``WORKBENCH_MASTER_ADDR``, ``WORKBENCH_MASTER_PORT``,
  ``WORKBENCH_GPUS_PER_NODE``, ``WORKBENCH_MPI_HOSTFILE`` (a file of ``ADDR slots=G`` lines);
* SkyPilot's ``SKYPILOT_NODE_IPS``, ``SKYPILOT_NODE_RANK``, ``SKYPILOT_NUM_NODES``,
  ``SKYPILOT_NUM_GPUS_PER_NODE`` and dstack's ``DSTACK_NODES_IPS``, ``DSTACK_MASTER_NODE_IP``,
  ``DSTACK_NODE_RANK``, ``DSTACK_NODES_NUM``, ``DSTACK_GPUS_PER_NODE``, ``DSTACK_GPUS_NUM``,
  ``DSTACK_MPI_HOSTFILE``, so job files written for those tools run unchanged;
* what ``torchrun`` and friends read when given no flags: ``MASTER_ADDR``, ``MASTER_PORT``,
  ``NNODES``, ``NODE_RANK`` (per-process ranks are the launcher's to set, not ours).

A spec's own ``env`` may set ``WORKBENCH_MASTER_PORT`` (or ``MASTER_PORT``): that port is then
used consistently by every variable (see :func:`master_port_of`).

Pure functions over plain values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

DEFAULT_MASTER_PORT = 29500
HOSTFILE_NAME = "hostfile"


@dataclass(frozen=True)
class ClusterLayout:
    """The nodes of one launch as the job sees them: addresses in rank order (head first)."""

    addresses: tuple[str, ...]
    gpus_per_node: int
    master_port: int = DEFAULT_MASTER_PORT
    hostfile: str = ""  # where the MPI hostfile lies on the node (written by whoever runs the node)

    @property
    def num_nodes(self) -> int:
        return len(self.addresses)

    @property
    def head(self) -> str:
        return self.addresses[0]


def master_port_of(spec_env: Mapping[str, str], default: int = DEFAULT_MASTER_PORT) -> int:
    """The rendezvous port: the spec's ``WORKBENCH_MASTER_PORT`` or ``MASTER_PORT`` when it is a port, else ``default``."""
    for key in ("WORKBENCH_MASTER_PORT", "MASTER_PORT"):
        raw = str(spec_env.get(key, "")).strip()
        if raw.isdecimal() and 0 < int(raw) < 65536:
            return int(raw)
    return default


def hostfile_text(addresses: Sequence[str], gpus_per_node: int) -> str:
    """An MPI hostfile: one ``ADDR slots=G`` line per node (one slot for a node without GPUs)."""
    slots = max(1, int(gpus_per_node))
    return "".join(f"{a} slots={slots}\n" for a in addresses)


def node_env(layout: ClusterLayout, rank: int) -> dict[str, str]:
    """Every cluster variable for node ``rank`` (see the module docstring)."""
    n = layout.num_nodes
    if not 0 <= rank < n:
        raise ValueError(f"node rank {rank} is outside 0..{n - 1}")
    ips = "\n".join(layout.addresses)
    gpus = max(0, int(layout.gpus_per_node))
    port = str(layout.master_port)
    head = layout.head
    return {
        "WORKBENCH_NUM_NODES": str(n),
        "WORKBENCH_NODE_RANK": str(rank),
        "WORKBENCH_NODE_IPS": ips,
        "WORKBENCH_MASTER_ADDR": head,
        "WORKBENCH_MASTER_PORT": port,
        "WORKBENCH_GPUS_PER_NODE": str(gpus),
        "WORKBENCH_MPI_HOSTFILE": layout.hostfile,
        "SKYPILOT_NODE_IPS": ips,
        "SKYPILOT_NODE_RANK": str(rank),
        "SKYPILOT_NUM_NODES": str(n),
        "SKYPILOT_NUM_GPUS_PER_NODE": str(gpus),
        "DSTACK_NODES_IPS": ips,
        "DSTACK_MASTER_NODE_IP": head,
        "DSTACK_NODE_RANK": str(rank),
        "DSTACK_NODES_NUM": str(n),
        "DSTACK_GPUS_PER_NODE": str(gpus),
        "DSTACK_GPUS_NUM": str(gpus * n),
        "DSTACK_MPI_HOSTFILE": layout.hostfile,
        "MASTER_ADDR": head,
        "MASTER_PORT": port,
        "NNODES": str(n),
        "NODE_RANK": str(rank),
    }


def node_rank_of(extra: Mapping[str, object]) -> int:
    """An instance's node rank from its ``extra`` (0 when it has none: a single machine)."""
    raw = extra.get("node_rank", 0)
    try:
        return int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
