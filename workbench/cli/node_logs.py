"""``workbench logs`` for a multi-node launch: every node's lines prefixed ``[node R] ``, or one node's.

Each node's output is its own file (``paths.node_log``); ``NodeLogTail``
(:mod:`workbench.core.remote.log_tail`, shared with the GUI's logs dialog) reads what each file
gained and prints whole lines with the node's prefix.  Without ``--follow`` the nodes are printed
one after the other (head first).  This module says which nodes.
"""

from __future__ import annotations

import argparse
from typing import Any

from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.errors import ConfigError


def launch_nodes(store: Any, launch_id: str) -> int:
    """How many nodes the launch has (its spec's num_nodes, or its ranked instances)."""
    rec = store.find_launch(launch_id)
    spec = getattr(rec, "spec", None)
    n = int(spec.get("num_nodes") or 1) if isinstance(spec, dict) else 1
    ranks = {node_rank_of(i.extra) for i in store.list_instances(launch_id=launch_id)}
    return max(n, max(ranks) + 1 if ranks else 1)


def chosen_ranks(args: argparse.Namespace, nodes: int) -> list[int] | None:
    """The ranks to print (None: the single-node log as it always was)."""
    node = getattr(args, "node", None)
    if node is not None:
        if not 0 <= node < nodes:
            raise ConfigError(f"--node {node}: the launch has {nodes} node(s), ranks 0 to {nodes - 1}")
        return [node]
    return list(range(nodes)) if nodes > 1 else None
