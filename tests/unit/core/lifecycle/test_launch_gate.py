"""The profile gate: a teardown waits for the launches in flight, a covered launch does not start,
the order holds across processes, and a dead process's hold does not block anyone."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from workbench.core.domain.errors import TransientError
from workbench.core.lifecycle.launch_gate import LaunchCancelled, ProfileGate

WAIT = 20.0


def _gate(tmp_path) -> ProfileGate:
    return ProfileGate(tmp_path, "aws", "default")


def test_a_teardown_waits_for_the_launch_in_flight_then_runs(tmp_path):
    gate = _gate(tmp_path)
    order: list[str] = []
    inside, release, waiting, done = (threading.Event() for _ in range(4))
    told: list[list[str]] = []

    def launch() -> None:
        with gate.launching("job-1"):
            inside.set()
            release.wait(WAIT)
            order.append("launch returned")

    def stop() -> None:
        with gate.stopping(None, on_wait=lambda ids: (told.append(ids), waiting.set())):
            order.append("teardown ran")
        done.set()

    t1 = threading.Thread(target=launch)
    t1.start()
    assert inside.wait(WAIT)
    assert gate.in_flight() == ["job-1"]
    t2 = threading.Thread(target=stop)
    t2.start()
    assert waiting.wait(WAIT), "the teardown never said it waits for the launch"
    assert told == [["job-1"]]
    release.set()
    assert done.wait(WAIT)
    t1.join(WAIT)
    t2.join(WAIT)
    assert order == ["launch returned", "teardown ran"]
    assert gate.in_flight() == [] and gate.stops() == []


def test_a_launch_does_not_start_while_stop_all_runs_on_its_profile(tmp_path):
    gate = _gate(tmp_path)
    with gate.stopping(None):
        with pytest.raises(LaunchCancelled, match="Stop all billing"):
            with gate.launching("job-2"):
                pytest.fail("the launch started during Stop all")
    with gate.launching("job-2"):  # after it, launches go again
        assert gate.in_flight() == ["job-2"]


def test_a_teardown_of_other_launches_delays_a_launch_but_does_not_cancel_it(tmp_path):
    gate = _gate(tmp_path)
    ran = threading.Event()
    errors: list[BaseException] = []
    stop_held, stop_release = threading.Event(), threading.Event()

    def stop() -> None:
        with gate.stopping({"old-job"}):
            stop_held.set()
            stop_release.wait(WAIT)

    def launch() -> None:
        try:
            with gate.launching("new-job"):
                ran.set()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    ts = threading.Thread(target=stop)
    ts.start()
    assert stop_held.wait(WAIT)
    tl = threading.Thread(target=launch)
    tl.start()
    assert gate.stops() and gate.stops()[0]["ids"] == ["old-job"]
    stop_release.set()
    assert ran.wait(WAIT) and not errors
    ts.join(WAIT)
    tl.join(WAIT)


def test_a_teardown_that_covers_the_launch_in_flight_asks_the_provider_to_cancel(tmp_path):
    gate = _gate(tmp_path)
    cancelled = threading.Event()
    asked: list[str] = []
    inside = threading.Event()

    def cancel(launch_id: str) -> bool:
        asked.append(launch_id)
        cancelled.set()
        return True

    def launch() -> None:
        with gate.launching("job-3", cancel=cancel):
            inside.set()
            cancelled.wait(WAIT)  # a provider's launch returns once it was cancelled (rolled back)

    t = threading.Thread(target=launch)
    t.start()
    assert inside.wait(WAIT)
    with gate.stopping(["job-3"], timeout=WAIT):
        assert asked == ["job-3"]
    t.join(WAIT)


def test_a_launch_that_never_returns_makes_the_teardown_fail_not_lie(tmp_path):
    gate = _gate(tmp_path)
    now = [0.0]
    inside, release = threading.Event(), threading.Event()

    def launch() -> None:
        with gate.launching("stuck-job"):
            inside.set()
            release.wait(WAIT)

    t = threading.Thread(target=launch)
    t.start()
    assert inside.wait(WAIT)

    def clock() -> float:
        now[0] += 1.0  # each look at the clock is a second later: the deadline passes without waiting
        return now[0]

    try:
        with pytest.raises(TransientError, match="stuck-job on default was still starting after 5 s"):
            with gate.stopping(None, timeout=5, clock=clock):
                pytest.fail("the teardown ran while the launch was in flight")
    finally:
        release.set()
        t.join(WAIT)


HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from workbench.core.lifecycle.launch_gate import ProfileGate

    gate = ProfileGate(Path(sys.argv[1]), "aws", "default")
    cm = gate.launching("other-process") if sys.argv[2] == "launch" else gate.stopping(None)
    with cm:
        print("inside", flush=True)
        sys.stdin.readline()
    print("left", flush=True)
""")


def _holder(tmp_path, what: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), what], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "inside"
    return p


def test_the_order_holds_across_processes(tmp_path):
    gate = _gate(tmp_path)
    proc = _holder(tmp_path, "launch")
    try:
        told: list[list[str]] = []
        ran = threading.Event()

        def stop() -> None:
            with gate.stopping(None, on_wait=told.append):
                ran.set()

        t = threading.Thread(target=stop)
        t.start()
        while not told:  # the teardown reports the other process's launch before it waits on
            t.join(0.02)
        assert told == [["other-process"]]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "left"
        assert ran.wait(WAIT)
        t.join(WAIT)
    finally:
        proc.kill()
        proc.wait(WAIT)


def test_a_teardown_process_that_died_does_not_block_or_cancel_launches(tmp_path):
    gate = _gate(tmp_path)
    proc = _holder(tmp_path, "stop")
    with pytest.raises(LaunchCancelled):  # alive: its Stop all covers new launches
        with gate.launching("job-4"):
            pass
    proc.kill()
    proc.wait(WAIT)
    for marker in gate.dir.glob("stop-*.json"):  # as if it died a while ago
        import os

        os.utime(marker, (0, 0))
    with gate.launching("job-5"):  # its lock went with it; its marker is recognised as stale
        assert gate.in_flight() == ["job-5"]
    assert not list(gate.dir.glob("stop-*.json"))
