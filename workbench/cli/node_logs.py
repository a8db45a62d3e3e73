"""``workbench logs`` for a multi-node launch: every node's lines prefixed ``[node R] ``, or one node's.

Each node's output is its own file (``paths.node_log``); :class:`NodeLogTail` reads what each
file gained since the last call and prints whole lines with the node's prefix, so lines of
different nodes never interleave mid-line.  Without ``--follow`` the nodes are printed one after
the other (head first).
"""

from __future__ import annotations

import argparse
from typing import IO, Any

from workbench.core import paths
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


class NodeLogTail:
    """Prints new complete lines of some nodes' logs (see the module doc)."""

    def __init__(self, launch_id: str, ranks: list[int], prefix: bool) -> None:
        self.launch_id = launch_id
        self.ranks = ranks
        self.prefix = prefix
        self.pos = {r: 0 for r in ranks}
        self.partial = {r: b"" for r in ranks}

    def _label(self, rank: int) -> bytes:
        return f"[node {rank}] ".encode() if self.prefix else b""

    def pump(self, out: IO[bytes], final: bool = False) -> int:
        """Write what every chosen node's log gained; ``final`` also writes unterminated last lines."""
        wrote = 0
        for rank in self.ranks:
            path = paths.node_log(self.launch_id, rank)
            if not path.exists():
                continue
            with open(path, "rb") as fh:
                fh.seek(self.pos[rank])
                chunk = fh.read()
            self.pos[rank] += len(chunk)
            data = self.partial[rank] + chunk
            lines = data.split(b"\n")
            self.partial[rank] = lines.pop()
            if final and self.partial[rank]:
                lines.append(self.partial[rank])
                self.partial[rank] = b""
            for line in lines:
                out.write(self._label(rank) + line + b"\n")
                wrote += len(line) + 1
        if wrote:
            out.flush()
        return wrote

    def dump(self, out: IO[bytes]) -> int:
        """Everything so far, one node after the other."""
        wrote = 0
        for rank in self.ranks:
            one = NodeLogTail(self.launch_id, [rank], self.prefix)
            wrote += one.pump(out, final=True)
            self.pos[rank] = one.pos[rank]
        return wrote
