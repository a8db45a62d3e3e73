"""The one harness of the crash-mid-launch tests (test_crash_aws, _azure, _alibaba).

Each cloud's test says only what is its own: where a launch can die (its API calls, counted by its test
server, and the launcher's own ``WORKBENCH_CRASH_AT`` points), how the server kills the process after the
call it carried out, and what of ours exists afterwards.  The harness does the rest alike for all three:
:func:`sigkill_launches` starts one real `workbench launch` per point at once on one store and checks
each died by SIGKILL at its point (never a timeout or an exit); :func:`status_then_down_all` checks that
a fresh `workbench status` shows every machine that exists under its launch, and that `workbench down
--all` leaves nothing of ours, as the server itself says.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from reltools import Killer

#: the launcher's own crash points (workbench/core/lifecycle/crashpoints.py)
CORE_POINTS = ["launch:recorded", "launch:provider-returned", "launch:instances-stored"]


@dataclass
class Crash:
    """One launch that must die at ``point``: by ``killer`` (the server's Nth call) or by the launcher's crash
    point (``WORKBENCH_CRASH_AT``, set in ``env`` when ``killer`` is None)."""

    point: Any
    env: dict[str, str]
    args: list[str]  # how the launch chooses its cloud: ["--provider", "aws"] or ["--profile", NAME]
    killer: Killer | None = None
    #: undoes what was installed on the server to kill this launch (run whatever happened)
    cleanup: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.killer is None:
            self.env = dict(self.env, WORKBENCH_CRASH_AT=str(self.point))


def sigkill_launches(wbhome: Any, spec: Path, crashes: Iterable[Crash], wait_s: float = 60,
                     stagger_s: float = 0.3) -> None:
    """Start every crash's launch at once (``stagger_s`` apart), then check each died by SIGKILL at its point."""
    crashes = list(crashes)
    procs = []
    try:
        for c in crashes:
            # faulthandler: a launch that never reaches its point is asked (SIGABRT) where it is stuck
            env = dict(c.env, PYTHONFAULTHANDLER="1")
            proc = wbhome.popen("launch", str(spec), *c.args, "--yes", "--json", env=env)
            if c.killer is not None:
                c.killer.pid = proc.pid
            procs.append((c, proc))
            time.sleep(stagger_s)  # the interpreter start-ups a little apart on a busy machine
        for c, proc in procs:
            try:
                rc = proc.wait(wait_s)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack on stderr
                try:
                    _out, err = proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    _out, err = proc.communicate(timeout=10)
                raise AssertionError(f"{c.point}: the launch never reached its crash point in {wait_s:g} s; "
                                     f"where it was:\n{err[-6000:]}") from None
            out, err = proc.communicate()
            assert rc == -signal.SIGKILL, f"{c.point}: rc {rc}\n{out}\n{err[-2000:]}"
            assert c.killer is None or c.killer.fired.wait(10), c.point  # set just after its kill: wait, not peek
    finally:
        for c in crashes:
            for undo in c.cleanup:
                undo()
        for _c, proc in procs:  # a failed check above must not leave the others running
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)


def status_then_down_all(wbhome: Any, existing: Mapping[str, set[str]], machines: int,
                         remains: Callable[[], Mapping[str, Any]], env: dict[str, str] | None = None) -> dict:
    """A fresh `status` shows each launch of ``existing`` (launch id → the ids of its machines in the
    server; an empty set: any billable machine) with its machines, ``machines`` billable in all; then
    `down --all` is clean and ``remains()`` (the server's leftovers of ours, by kind) is empty.  Returns
    the first status."""
    status = wbhome.json("status", env=env)
    shown = {launch["launch_id"]: {i["instance_id"] for i in launch["instances"] if i["billable"]}
             for launch in status["launches"]}
    for lid, ids in existing.items():
        assert shown.get(lid), f"status misses {lid} (shows {sorted(k for k, v in shown.items() if v)})"
        assert ids <= shown[lid], f"status misses machines of {lid}: {ids} (shows {shown[lid]})"
    assert status["billable"] == machines, (status["billable"], existing)
    report = wbhome.json("down", "--all", "--yes", env=env)
    assert report["clean"], report
    left = {kind: items for kind, items in remains().items() if items}
    assert left == {}, f"down --all left: {left}"
    assert wbhome.json("status", env=env)["billable"] == 0
    return status
