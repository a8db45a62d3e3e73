"""Launches and teardowns of one profile happen in order, across threads and processes.

A teardown (Stop all, Terminate, quit, a guard, on_finish, ``workbench down``) must never say
"0 billable resources remain" while a launch of the same profile is inside its provider call:
the machine that call makes would appear after the teardown looked.  So, per profile:

* a launch is *in flight* while its provider call runs and holds the profile's gate *shared*
  (several launches of one profile may be in flight at once);
* a teardown holds the gate *exclusively* while it terminates, sweeps and verifies: it first
  waits for the launches in flight to return (a provider that can, such as Azure, is asked to
  cancel them early), then finds what they made by its tags and ends it;
* a launch that has not reached its provider call while a teardown covering it (everything,
  or its own launch id) is waiting or running, or that began before such a teardown and was
  still waiting at the gate, does not start: it raises :class:`LaunchCancelled`.

The gate is a file lock (``flock``, one open file per holder, so threads of one process are
ordered like processes): the GUI and the CLI on one store are ordered too, and a process that
dies releases what it held.  Files, under ``<data>/locks/<provider>.<profile>/``:

===================  ==========================================================================
``gate``             the lock itself
``stop-*.json``      a teardown waiting or running, and which launches it covers; its teardown
                     keeps it locked, so one left by a dead process is recognised and removed
``last-stop-all``    when the latest teardown of everything began
``launch-<id>``      a launch in flight, locked by it (what :meth:`ProfileGate.in_flight` reads)
===================  ==========================================================================

Writer preference: a launch waits while any teardown waits or runs on its profile, so a stream
of launches cannot starve a teardown.  On Windows msvcrt has no shared lock: launches of one
profile then take turns.  Threading: any thread; everything blocks (run it on a worker).
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Collection, Iterator

from workbench.core.domain.errors import TransientError, WorkbenchError

log = logging.getLogger("workbench.gate")

POLL_S = 0.05
WATCH_S = 0.2  # how often a launch in flight looks for a teardown that wants it cancelled
FRESH_S = 2.0  # an unlocked marker younger than this is being written, not stale


class LaunchCancelled(WorkbenchError):
    """A teardown covering this launch ran while it waited to start: nothing was launched."""

    kind = "cancelled"


# -- the lock primitive ---------------------------------------------------------------------------
def _try_lock(fh: IO[bytes], shared: bool) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        fh.seek(0)
        try:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _lock(fh: IO[bytes]) -> None:
    """Exclusive, waiting (only for files nobody else holds for long: a reader's quick probe)."""
    while not _try_lock(fh, shared=False):
        time.sleep(0.01)


def _unlock(fh: IO[bytes]) -> None:
    try:
        if sys.platform == "win32":  # pragma: no cover
            import msvcrt

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except OSError:  # closing releases it anyway
        pass


def _held(path: Path) -> bool | None:
    """True when someone holds ``path`` locked; False when not; None when the file is gone."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return None
    with fh:
        if _try_lock(fh, shared=True):
            _unlock(fh)
            return False
        return True


def _forget(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # Windows: someone has it open this instant; it is seen as stale later
        pass


def _stale(path: Path) -> bool:
    """Unlocked and not just being written: its owner died (the file can go)."""
    try:
        return time.time() - path.stat().st_mtime > FRESH_S
    except FileNotFoundError:
        return False


def _covers(stop: dict[str, Any], launch_id: str) -> bool:
    if stop.get("all"):
        return launch_id not in (stop.get("keep") or ())
    return launch_id in (stop.get("ids") or ())


# -- the gate -----------------------------------------------------------------------------------------
class ProfileGate:
    """The ordering of one profile's launches and teardowns (see the module doc)."""

    def __init__(self, data_dir: Path, provider: str, profile: str) -> None:
        self.provider, self.profile = provider, profile
        self.dir = Path(data_dir) / "locks" / re.sub(r"[^A-Za-z0-9_.-]", "_", f"{provider}.{profile}")

    @classmethod
    def of(cls, accounts: Any, provider: str, profile: str) -> "ProfileGate":
        """The gate of ``provider/profile`` in the data folder of ``accounts``' store."""
        return cls(accounts.store.path.parent, provider, profile)

    def _open_gate(self) -> IO[bytes]:
        self.dir.mkdir(parents=True, exist_ok=True)
        return open(self.dir / "gate", "a+b")

    # -- reading ------------------------------------------------------------------------------
    def stops(self) -> list[dict[str, Any]]:
        """The teardowns waiting or running on this profile now (stale markers are removed)."""
        found = []
        for path in sorted(self.dir.glob("stop-*.json")) if self.dir.is_dir() else ():
            held = _held(path)
            if held is None:
                continue
            if not held and _stale(path):
                _forget(path)
                continue
            try:
                found.append(json.loads(path.read_text(encoding="utf-8") or "{}"))
            except (OSError, ValueError):
                found.append({})  # being written: a teardown all the same (covers nothing yet)
        return found

    def in_flight(self) -> list[str]:
        """Launch ids inside their provider call on this profile now, in any process."""
        ids = []
        for path in sorted(self.dir.glob("launch-*")) if self.dir.is_dir() else ():
            held = _held(path)
            if held:
                ids.append(path.name[len("launch-"):])
            elif held is False and _stale(path):
                _forget(path)
        return ids

    def _last_stop_all(self) -> float:
        try:
            return float((self.dir / "last-stop-all").read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return 0.0

    # -- a launch --------------------------------------------------------------------------------
    @contextmanager
    def launching(self, launch_id: str, cancel: Callable[[str], Any] | None = None) -> Iterator[None]:
        """Hold the gate shared around a launch's provider call (blocks while a teardown runs).

        Raises :class:`LaunchCancelled` when a teardown covering ``launch_id`` is under way, or
        began after this call did.  While inside, ``cancel(launch_id)`` (a provider's
        ``cancel_launch``) is called once if a teardown covering this launch starts waiting.
        """
        entered = time.time()
        gate = self._open_gate()
        try:
            while True:
                stops = self.stops()
                self._refuse_if_covered(stops, launch_id)
                if not stops and _try_lock(gate, shared=True):
                    try:
                        self._refuse_if_covered(self.stops(), launch_id)
                        if self._last_stop_all() > entered:
                            raise LaunchCancelled(
                                f"not launched: Stop all billing ran on {self.profile} while launch {launch_id} "
                                f"was waiting to start", hint="launch it again if you still want it")
                    except BaseException:
                        _unlock(gate)
                        raise
                    break
                time.sleep(POLL_S)
            mark = self.dir / f"launch-{launch_id}"
            fh = open(mark, "a+b")
            _lock(fh)
            watcher = _Watcher(self, launch_id, cancel) if cancel is not None else None
            try:
                yield
            finally:
                if watcher is not None:
                    watcher.stop()
                _unlock(fh)
                fh.close()
                _forget(mark)
                _unlock(gate)
        finally:
            gate.close()

    def _refuse_if_covered(self, stops: list[dict[str, Any]], launch_id: str) -> None:
        for stop in stops:
            if _covers(stop, launch_id):
                what = "Stop all billing" if stop.get("all") else "a teardown of this launch"
                raise LaunchCancelled(f"not launched: {what} is running on {self.profile}",
                                      hint="launch it again once the teardown has finished")

    # -- a teardown ------------------------------------------------------------------------------
    @contextmanager
    def stopping(self, launch_ids: Collection[str] | None, keep: Collection[str] = (), timeout: float = 600.0,
                 on_wait: Callable[[list[str]], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
        """Hold the gate exclusively around a teardown of ``launch_ids`` (None: all but ``keep``).

        Waits for the launches in flight (``on_wait(their ids)`` is called once when there are
        some); raises TransientError when they have not returned within ``timeout`` seconds.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        everything = launch_ids is None
        marker = self.dir / f"stop-{os.getpid()}-{secrets.token_hex(4)}.json"
        mfh = open(marker, "w+b")
        _lock(mfh)
        gate = None
        try:
            body = {"all": everything, "ids": sorted(launch_ids or ()), "keep": sorted(keep), "pid": os.getpid(),
                    "since": time.time()}
            mfh.write(json.dumps(body).encode())
            mfh.flush()
            if everything:
                tmp = self.dir / f"last-stop-all.{os.getpid()}.{secrets.token_hex(3)}"
                tmp.write_text(f"{body['since']:.6f}\n", encoding="utf-8")
                os.replace(tmp, self.dir / "last-stop-all")
            gate = self._open_gate()
            deadline = clock() + timeout
            told = False
            while not _try_lock(gate, shared=False):
                if clock() >= deadline:
                    names = ", ".join(self.in_flight()) or "a launch"
                    raise TransientError(f"{names} on {self.profile} was still starting after {timeout:g} s and "
                                         f"may be billing", hint="run `workbench down` again once it has started")
                if not told and on_wait is not None:
                    told = True
                    try:
                        on_wait(self.in_flight())
                    except Exception:  # noqa: BLE001 - a display never stops a teardown
                        log.exception("gate on_wait callback failed")
                time.sleep(POLL_S)
            try:
                yield
            finally:
                _unlock(gate)
        finally:
            if gate is not None:
                gate.close()
            _unlock(mfh)
            mfh.close()
            _forget(marker)


class _Watcher:
    """While a launch is in flight: ask its provider to cancel once a teardown covering it waits."""

    def __init__(self, gate: ProfileGate, launch_id: str, cancel: Callable[[str], Any]) -> None:
        self.gate, self.launch_id, self.cancel = gate, launch_id, cancel
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"gate-watch-{launch_id}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(WATCH_S):
            if any(_covers(s, self.launch_id) for s in self.gate.stops()):
                log.info("launch %s: a teardown wants it; asking the provider to cancel", self.launch_id)
                try:
                    self.cancel(self.launch_id)
                except Exception:  # noqa: BLE001 - the teardown waits for the launch anyway
                    log.exception("cancelling launch %s failed", self.launch_id)
                return

    def stop(self) -> None:
        self._done.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
