"""Following a launch's log files on this computer: what they gained since the last look (CLI and GUI).

A job's output lands in files here (``paths.job_log``, ``paths.node_log``): the Local provider writes
them, a cloud job's stream (:mod:`workbench.core.remote.logs`) copies them down.  ``workbench logs``
and the Logs window read those files, never the machine:

* :class:`FileTail`: one file's new bytes as they come (a progress bar's ``\\r`` lines pass at once);
* :class:`NodeLogTail`: several nodes' files, whole lines each prefixed ``[node R] ``, so the lines
  of different nodes never interleave mid-line;
* :func:`follow`: the loop, writing what a tail gains until the job ends, then the rest.

Plain files; a tail is used by one thread at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Callable, Protocol

from workbench.core import paths


class LogTail(Protocol):
    """What :func:`follow` needs of a tail."""

    def pump(self, out: IO[bytes], final: bool = False) -> int: ...


class FileTail:
    """The bytes one log file gained since the last read (nothing while it does not exist)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pos = 0

    def read(self, limit: int = -1) -> bytes:
        """Up to ``limit`` new bytes (all when negative); the next read goes on from there."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.pos)
                data = fh.read(limit)
        except FileNotFoundError:
            return b""
        self.pos += len(data)
        return data

    def pump(self, out: IO[bytes], final: bool = False) -> int:
        """Write what the file gained (``final`` changes nothing: bytes are never held back)."""
        data = self.read()
        if data:
            out.write(data)
            out.flush()
        return len(data)

    def dump(self, out: IO[bytes]) -> int:
        """Everything so far."""
        return self.pump(out, final=True)


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


def follow(tail: LogTail, out: IO[bytes], running: Callable[[], bool], wait: Callable[[], object]) -> int:
    """Write what ``tail`` gains until the job ends, then what is left (unterminated last lines too).

    ``running()`` is asked only after a look that found nothing new (it may ask a cloud); once it says
    False the files are read once more, so nothing written just before the end is lost.  ``wait()``
    passes the time between looks (a sleep, or joining the thread that follows the machine).  Blocks;
    returns the bytes written.
    """
    wrote = 0
    while True:
        got = tail.pump(out)
        wrote += got
        if not got and not running():
            return wrote + tail.pump(out, final=True)
        wait()
