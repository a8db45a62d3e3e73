"""Jobs outlive their launcher; terminate ends whole groups and never a stranger's process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

import workbench
import workbench_local
from workbench.core.domain.models import InstanceState, JobSpec, Profile
from workbench.core.providers.contract import ProviderContext
from workbench_local.provider import LocalProvider

from .helpers import LocalSetup, alive, group_alive, wait_for

LAUNCHER = """
import pathlib, sys, time
from workbench.core.domain.models import JobSpec, LaunchRequest, Profile
from workbench.core.providers.contract import ProviderContext, launch_tags
from workbench_local.provider import LocalProvider

data, owner, launch_id, go = sys.argv[1:5]
provider = LocalProvider(Profile("local-test", "local"), {}, ProviderContext(owner, pathlib.Path(data)))
run = 'echo waiting; while [ ! -e "%s" ]; do sleep 0.05; done; echo done; exit 7' % go
request = LaunchRequest(launch_id, JobSpec(name="orphan", run=run), next(iter(provider.offers())),
                        "local-test", launch_tags(launch_id, owner))
provider.launch(request)
print("launched", flush=True)
time.sleep(60)
"""


def _pythonpath() -> str:
    # The launcher must import the same code as this test, installed or not.
    roots = {str(Path(workbench.__file__).parents[1]), str(Path(workbench_local.__file__).parents[1])}
    return os.pathsep.join([*sorted(roots), os.environ.get("PYTHONPATH", "")])


def test_job_survives_its_launcher_being_sigkilled(local: LocalSetup, tmp_path: Path) -> None:
    go = tmp_path / "go"
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(local.data_dir), local.install_id, "orphan-1", str(go)],
        env={**os.environ, "PYTHONPATH": _pythonpath()},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    local.track(launcher.pid)
    try:
        wait_for(lambda: (local.state_dir("orphan-1") / "job.json").exists(), "the launcher to record the job")
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=5)
    finally:
        launcher.kill()
        launcher.wait(timeout=5)
        assert launcher.stdout is not None
        launcher.stdout.close()

    fresh = local.provider()
    inst = local.current(fresh, "orphan-1")
    assert inst is not None and inst.state is InstanceState.RUNNING
    assert psutil.Process(inst.extra["pid"]).ppid() != launcher.pid
    wait_for(lambda: "waiting" in local.log("orphan-1"), "the orphaned job's output")

    go.touch()
    done = local.wait_finished(fresh, "orphan-1")
    assert done.exit_code == 7
    assert "done" in local.log("orphan-1")


@pytest.mark.parametrize("stranger", ["spawned", "this test process"])
def test_reused_pid_is_not_our_job_and_is_never_signalled(
    local: LocalSetup, tmp_path: Path, stranger: str
) -> None:
    provider = local.provider(grace_seconds="0.2")
    inst = local.launch(provider, JobSpec(name="victim", run="sleep 30"))
    provider.terminate([inst])  # the real job is gone; its pid may now be anyone's

    if stranger == "spawned":
        other = subprocess.Popen(["sleep", "30"], start_new_session=True)
        local.track(other.pid)
        pid, pgid = other.pid, other.pid
    else:
        other = None
        pid, pgid = os.getpid(), os.getpgrp()
    record_path = local.state_dir(inst.launch_id) / "job.json"
    record = json.loads(record_path.read_text())
    # the recorded job started well before whoever holds the pid now
    started = psutil.Process(pid).create_time() - 5.0
    record.update(pid=pid, pgid=pgid, create_time=started, terminated_by_user=False)
    record_path.write_text(json.dumps(record))

    listed = local.current(provider, inst.launch_id)
    assert listed is not None and listed.state is InstanceState.TERMINATED
    provider.terminate([listed])
    assert provider.samples(listed) == []
    assert alive(pid)
    if other is not None:
        other.kill()
        other.wait(timeout=5)


def test_tampered_create_time_reads_as_ended(local: LocalSetup) -> None:
    provider = local.provider(grace_seconds="0.2")
    inst = local.launch(provider, JobSpec(name="tampered", run="sleep 30"))
    record_path = local.state_dir(inst.launch_id) / "job.json"
    record = json.loads(record_path.read_text())
    record["create_time"] -= 1000.0  # as if the pid now belonged to a process started later
    record_path.write_text(json.dumps(record))
    listed = local.current(provider, inst.launch_id)
    assert listed is not None and listed.state is InstanceState.TERMINATED
    assert listed.exit_code is None and listed.extra["reason"] == "killed"
    # the still-running real process now shows up as a leftover rather than vanishing
    assert any(r.launch_id == inst.launch_id for r in provider.leftovers())


def test_terminate_escalates_to_sigkill_for_a_job_that_ignores_sigterm(
    local: LocalSetup, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    run = f"trap '' TERM; sleep 60 & echo $! >> {pids}; echo $$ >> {pids}; sleep 60"
    provider = local.provider(grace_seconds="0.5")
    inst = local.launch(provider, JobSpec(name="stubborn", run=run))
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, "the job to write its pids")
    job_pids = [int(p) for p in pids.read_text().split()]
    assert all(alive(p) for p in job_pids)

    started = time.monotonic()
    provider.terminate([inst])
    elapsed = time.monotonic() - started
    assert elapsed >= 0.45  # it waited out the grace period first
    assert group_alive(inst.extra["pgid"]) == []
    assert not any(alive(p) for p in job_pids)

    done = local.current(provider, inst.launch_id)
    assert done is not None and done.state is InstanceState.TERMINATED
    assert done.extra["reason"] == "terminated by user" and done.exit_code is None
    provider.terminate([inst])  # again: already gone is fine


def test_terminate_ends_grandchildren_too(local: LocalSetup, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    run = f"sh -c 'sleep 60 & echo $! > {pidfile}; wait' & wait"
    provider = local.provider(grace_seconds="2")
    inst = local.launch(provider, JobSpec(name="family", run=run))
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the grandchild's pid")
    grandchild = int(pidfile.read_text())
    assert os.getpgid(grandchild) == inst.extra["pgid"]

    provider.terminate([inst])
    assert not alive(grandchild)
    assert group_alive(inst.extra["pgid"]) == []


def test_terminate_after_the_job_finished_keeps_its_exit_code(local: LocalSetup) -> None:
    provider = local.provider()
    inst = local.launch(provider, JobSpec(name="quick", run="exit 5"))
    local.wait_finished(provider, inst.launch_id)
    provider.terminate([inst])
    done = local.current(provider, inst.launch_id)
    assert done is not None and done.exit_code == 5 and done.extra["reason"] == "exited"


def test_only_our_install_sees_and_ends_its_jobs(local: LocalSetup) -> None:
    provider = local.provider()
    inst = local.launch(provider, JobSpec(name="mine", run="sleep 30"))
    other = LocalProvider(Profile("other", "local"), {}, ProviderContext("someone-else", local.data_dir))
    assert other.instances() == [] and other.leftovers() == []
    other.terminate([inst])
    assert alive(inst.extra["pid"])
    provider.terminate([inst])
