"""The job's output, streamed back by byte offset into ``paths.job_log(launch_id)``.

The local copy is the offset: each :func:`pull` reads the remote ``output.log``
from the local file's size and appends what it got, under an exclusive lock on a
``.lock`` file beside it.  So a dropped connection, a restarted app, or the GUI and
``workbench logs --follow`` pulling the same job at once never duplicate nor skip
a byte, and the log stays on this computer after the machine is gone.

Threading: any thread; the file lock serialises pullers in this and other processes.
Failure rules: ConnectionLost when the connection breaks mid-read; a remote log
that does not exist yet reads as empty.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from workbench.core.remote.connection import Connection, ConnectionLost

CHUNK = 1 << 20  # per pull: a huge backlog arrives over several pulls, keeping each short


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            lock.seek(0)
            msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                lock.seek(0)
                msvcrt.locking(lock.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def local_size(local: Path) -> int:
    try:
        return local.stat().st_size
    except FileNotFoundError:
        return 0


def pull(conn: Connection, remote_log: str, local: Path, max_bytes: int = CHUNK) -> int:
    """Append the remote log's bytes past the local copy's end; returns how many were added."""
    import paramiko

    with _locked(local):
        offset = local_size(local)
        try:
            sftp = conn.sftp()
            try:
                fh = sftp.open(remote_log, "rb")
            except FileNotFoundError:
                return 0
            with fh:
                size = fh.stat().st_size
                if size <= offset:
                    return 0
                n = min(max_bytes, size - offset)
                fh.seek(offset)
                fh.prefetch(offset + n)  # pipelined reads: one round trip's latency, not one per 32 KiB
                data = fh.read(n)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise ConnectionLost(f"the connection to {conn.target.where} was lost while reading the job log "
                                 f"({exc or type(exc).__name__})") from exc
        if data:
            with open(local, "ab") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
        return len(data)
