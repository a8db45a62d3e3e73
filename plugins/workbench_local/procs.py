"""Process groups of local jobs: identity, reaping, ending, env markers, usage.

A local job is one process group (its own session, so the group id equals
the wrapper's pid).  Nothing here trusts a bare pid: a pid names our job only
while the process with that pid also has the recorded start time
(``create_time``), or, once the leader is gone, while a member of the group
still carries our environment markers.  The kernel never hands out a pid that
is still in use as a group id, so a group with one marked member left is
still ours.

Threading: all functions may be called from any thread.  The child registry
is guarded by a lock; ``TreeMeter`` keeps its own lock.

Failure rules: "already gone" is never an error.  ``end_group`` raises
PluginError naming the pids that survive SIGKILL; nothing here signals our
own process group, pid 0 or pid 1.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import psutil

from workbench.core.domain.errors import PluginError

log = logging.getLogger(__name__)

ENV_MANAGED = "WORKBENCH_MANAGED"
ENV_OWNER = "WORKBENCH_OWNER"
ENV_LAUNCH = "WORKBENCH_LAUNCH_ID"

#: start times read through /proc are rounded to clock ticks; 0.05 s absorbs that.
CREATE_TIME_TOLERANCE_S = 0.05
POLL_S = 0.05
#: SIGKILL is asynchronous; a process in uninterruptible sleep may take a moment.
KILL_WAIT_S = 5.0

# Popen objects of jobs started by this process.  Kept so that Popen's
# destructor never warns about a running child, and reaped through poll().
_children: dict[int, subprocess.Popen[bytes]] = {}
_children_lock = threading.Lock()


def adopt(proc: subprocess.Popen[bytes]) -> None:
    """Keep a started job's Popen until ``reap`` sees it exit."""
    with _children_lock:
        _children[proc.pid] = proc


def reap(pid: int) -> None:
    """Collect the exit status of our own zombie child ``pid``; no-op for other processes.

    Call it only for a pid known to be the job (identity checked): waiting on
    a pid owned by some unrelated Popen would steal that Popen's status.
    """
    with _children_lock:
        proc = _children.get(pid)
    if proc is not None:
        if proc.poll() is not None:
            with _children_lock:
                _children.pop(pid, None)
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child (started by an earlier app run): init reaps it
    except OSError:
        log.debug("waitpid(%s) failed", pid, exc_info=True)


def find(pid: int, create_time: float) -> psutil.Process | None:
    """The process ``pid`` if it is still the one that started at ``create_time`` (zombies too)."""
    if pid <= 1:
        return None
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - create_time) > CREATE_TIME_TOLERANCE_S:
            return None  # the pid was reused by an unrelated process
        return proc
    except (psutil.Error, OSError, ValueError):
        return None


def is_running(pid: int, create_time: float) -> bool:
    """True while the recorded process exists, is the same one, and is not a zombie.

    A zombie that is our own child is reaped on the way, so a long-running
    GUI does not collect them.
    """
    proc = find(pid, create_time)
    if proc is None:
        return False
    try:
        if proc.status() != psutil.STATUS_ZOMBIE:
            return True
    except psutil.Error:
        return False
    reap(pid)
    return False


def markers(proc: psutil.Process) -> tuple[str, str] | None:
    """(owner, launch id) when ``proc`` carries our environment markers, else None."""
    try:
        env = proc.environ()
    except (psutil.Error, OSError):
        return None  # gone, another user's process, or a kernel thread
    if env.get(ENV_MANAGED) != "true":
        return None
    return env.get(ENV_OWNER, ""), env.get(ENV_LAUNCH, "")


def group_members(pgid: int) -> list[int]:
    """Pids of the live (non-zombie) processes of group ``pgid``.

    Zombies do not count: they use no resources, and one whose parent is not
    us (an orphan under an init that does not reap) may never go away.
    """
    if pgid <= 1:
        return []
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []  # fast path: the group is empty
    except PermissionError:
        pass  # exists but belongs to someone else; the scan below decides
    members = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) != pgid:
                continue
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                reap(pid)  # a zombie in the job's group is the job's leader: ours to reap
                continue
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
        except (psutil.AccessDenied, PermissionError):
            pass  # cannot inspect it, but it exists: count it
        members.append(pid)
    return members


def group_is_marked(pgid: int, launch_id: str) -> bool:
    """True when a live member of ``pgid`` carries ``launch_id``: the group is still the job's."""
    for pid in group_members(pgid):
        try:
            found = markers(psutil.Process(pid))
        except psutil.Error:
            continue
        if found is not None and found[1] == launch_id:
            return True
    return False


def group_made_by(pgid: int, owner: str) -> bool:
    """True when group ``pgid`` was made by one of our jobs: its leader is gone or carries our markers.

    A marked process inside some other group (say, a user's shell pipeline
    that copied our variables) must not take that whole group down with it.
    """
    try:
        leader = psutil.Process(pgid)
        if leader.status() == psutil.STATUS_ZOMBIE:
            return True
    except psutil.NoSuchProcess:
        return True  # the pgid stays reserved while members live, so the group is the job's
    except psutil.Error:
        return False
    mark = markers(leader)
    return mark is not None and mark[0] == owner


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the group; False when it no longer exists."""
    if pgid <= 1 or pgid == os.getpgrp():
        raise PluginError(f"refusing to signal process group {pgid}: it is not a job's group")
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError as exc:
        raise PluginError(f"not allowed to signal process group {pgid}: {exc.strerror}") from exc
    return True


def _wait_empty(pgid: int, seconds: float) -> list[int]:
    """Poll until the group has no live member or ``seconds`` pass; return who is left."""
    deadline = time.monotonic() + seconds
    while True:
        left = group_members(pgid)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(POLL_S)


def end_group(pgid: int, grace_s: float, what: str) -> None:
    """SIGTERM the group, wait ``grace_s``, SIGKILL what is left, and verify it is empty.

    Blocks for up to ``grace_s + KILL_WAIT_S``.  Raises PluginError naming the
    surviving pids; a group that is already gone is a success.
    """
    if not _signal_group(pgid, signal.SIGTERM):
        return
    if not _wait_empty(pgid, grace_s):
        return
    log.info("%s ignored SIGTERM for %.1fs; sending SIGKILL", what, grace_s)
    _signal_group(pgid, signal.SIGKILL)
    left = _wait_empty(pgid, KILL_WAIT_S)
    if left:
        raise PluginError(
            f"could not end {what}: process(es) {', '.join(map(str, left))} survived SIGKILL",
            hint="they may be stuck in the kernel (disk or driver); check them with `ps -o pid,stat,cmd`",
        )


def kill_one(pid: int, create_time: float) -> None:
    """SIGKILL a single process (for a marked process that shares our own group); gone is fine."""
    if find(pid, create_time) is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    except PermissionError as exc:
        raise PluginError(f"not allowed to kill process {pid}: {exc.strerror}") from exc
    deadline = time.monotonic() + KILL_WAIT_S
    while is_running(pid, create_time):
        if time.monotonic() >= deadline:
            raise PluginError(f"process {pid} survived SIGKILL")
        time.sleep(POLL_S)


@dataclass(frozen=True)
class MarkedProcess:
    """A live process that carries our environment markers."""

    pid: int
    pgid: int
    create_time: float
    launch_id: str
    name: str


def marked_processes(owner: str) -> list[MarkedProcess]:
    """Live processes whose environment says they belong to install ``owner``.

    One pass over the process table; another user's processes fail fast with
    AccessDenied, so the scan costs two small /proc reads per own process.
    """
    found = []
    me = os.getpid()
    # Fresh Process objects, not process_iter(): its module-wide cache keeps a Process (with
    # the start time it read then) for a pid that may since have been reused (pid_max is
    # often 32768), so a scan could report the old start time and a later identity check
    # would refuse to end the new, marked process.
    for pid in psutil.pids():
        if pid == me:
            continue
        try:
            proc = psutil.Process(pid)
        except (psutil.Error, OSError):
            continue
        mark = markers(proc)
        if mark is None or mark[0] != owner:
            continue
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            found.append(
                MarkedProcess(proc.pid, os.getpgid(proc.pid), proc.create_time(), mark[1], proc.name())
            )
        except (psutil.Error, OSError):
            continue
    return found


class TreeMeter:
    """CPU and memory of a job's process tree.

    psutil's ``cpu_percent`` measures since its previous call on the same
    Process object, so the objects are cached per instance; the first
    reading of a process is therefore 0 %.  Guarded by a lock: samples may
    be read from a pool.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, dict[int, psutil.Process]] = {}

    def measure(self, key: str, root: psutil.Process) -> tuple[float, int]:
        """(summed cpu percent of one core, summed RSS bytes) of ``root`` and its descendants."""
        with self._lock:
            cached = self._cache.setdefault(key, {})
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                return 0.0, 0
            cpu, rss, seen = 0.0, 0, {}
            for proc in tree:
                known = cached.get(proc.pid)
                if known is not None and known == proc:  # Process equality includes start time
                    proc = known
                try:
                    cpu += proc.cpu_percent(None)
                    rss += proc.memory_info().rss
                except psutil.Error:
                    continue  # exited between listing and reading
                seen[proc.pid] = proc
            self._cache[key] = seen
            return cpu, rss

    def forget(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)
