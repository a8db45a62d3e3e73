"""Crash of the GUI mid-launch: a process with the real MainWindow (gui_launch.py) launching on moto is
SIGKILLed at 4 points (after the key pair import, the security group's creation and run_instances, whose
answer is lost; and the launcher's "instances stored" point).  Then `workbench status` shows every
machine that exists and `workbench down --all` leaves nothing of ours in moto.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reltools import ROOT, Killer, aws_instances_by_launch, aws_kill_rule, aws_remains

SCRIPT = Path(__file__).with_name("gui_launch.py")
POINTS = ["ImportKeyPair", "CreateSecurityGroup", "RunInstances", "launch:instances-stored"]


@pytest.mark.timeout(120)
def test_sigkill_of_the_gui_mid_launch_is_recovered_by_status_and_down_all(wbhome, moto):
    wbhome.add_aws(moto)
    spec = wbhome.spec("guicrash")
    procs = []
    for i, point in enumerate(POINTS):
        env = dict(wbhome.env, AWS_ACCESS_KEY_ID=f"AKIAGUICRASH{i:02d}000001")
        killer = None
        if ":" in point:
            env["WORKBENCH_CRASH_AT"] = point
        else:
            killer = Killer(1)
            rule = aws_kill_rule(killer, env["AWS_ACCESS_KEY_ID"])
            inner = rule.when
            rule.when = lambda call, op=point, inner=inner: call.operation == op and inner(call)  # type: ignore[misc]
            moto.faults.add(rule)
        proc = subprocess.Popen([sys.executable, str(SCRIPT), str(spec), "aws", "60"], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        if killer is not None:
            killer.pid = proc.pid
        procs.append((point, proc, killer))
        time.sleep(0.3)
    try:
        for point, proc, killer in procs:
            try:
                rc = proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
                raise AssertionError(f"{point}: the GUI never reached its crash point") from None
            out, err = proc.communicate()
            assert rc == -signal.SIGKILL, f"{point}: rc {rc}\n{out}\n{err[-2000:]}"
            assert "launched" not in out
    finally:
        for _point, proc, _killer in procs:  # a failed check above must not leave the others running
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)

    install_id = wbhome.install_id()
    existing = aws_instances_by_launch(moto, install_id)
    assert len(existing) == 2  # run_instances (answer lost) and instances-stored made a machine
    status = wbhome.json("status")
    shown = {launch["launch_id"]: {i["instance_id"] for i in launch["instances"] if i["billable"]}
             for launch in status["launches"]}
    for lid, ids in existing.items():
        assert ids <= shown.get(lid, set()), f"status misses {lid}"
    assert wbhome.json("down", "--all", "--yes")["clean"]
    assert aws_remains(moto, install_id) == {"instances": [], "volumes": [], "addresses": [], "groups": [],
                                             "keys": []}
