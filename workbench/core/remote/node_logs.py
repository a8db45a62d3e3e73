"""Following several nodes' logs at once: whole lines, each prefixed ``[node R] `` (CLI and GUI).

Each node of a multi-node launch writes its own file (``paths.node_log``); :class:`NodeLogTail`
reads what each file gained since the last call and writes complete lines only, so the lines of
different nodes never interleave mid-line.  Plain files, any one thread at a time.
"""

from __future__ import annotations

from typing import IO

from workbench.core import paths


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
