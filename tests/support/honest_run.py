"""A pytest plugin that keeps a test run honest (tests/conftest.py loads it for every run).

1. Under CI (``CI=true``) a skipped test fails the run: the summary lists every skip with its
   reason and the exit status becomes 1, so a missing install step cannot hide behind a skip.
   Outside CI a skip stays a skip (a developer without, say, a Secret Service can still run
   the rest).

2. Tests stop what they start: when the session ends, every process a test left running fails
   the run.  Two ways to find them:

   * the process tree of each pytest process (an xdist worker checks its own descendants when
     its session ends, after the session fixtures were torn down, and hands what it found to
     the controller through a file);
   * the marker variable ``WORKBENCH_TEST_RUN``: set to a fresh id when the run starts, it is
     inherited by every process the tests start (the CLI in a subprocess, a Local job that
     ``setsid``-ed away from its parent, a remote job under the test sshd, whose ``SetEnv``
     passes it on), so the controller finds those even when their parent is gone.
     ``WORKBENCH_TEST_NODE`` names the test that was running when a process was started, and
     the report shows it.

   Each leftover gets a grace period (``WORKBENCH_LEFTOVER_GRACE_S``, default 5 s) to exit
   on its own (a process that is being stopped right now), then is listed, killed, and the
   run fails.  Other runs on the same machine carry other ids and are never touched.

Tested by tests/unit/test_honest_run.py (pytest runs of their own in subprocesses).  A pytest run
started from inside a test gets an id of its own, so it never counts the outer run's processes.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterable

import psutil
import pytest

RUN_VAR = "WORKBENCH_TEST_RUN"
NODE_VAR = "WORKBENCH_TEST_NODE"
REPORT_DIR_VAR = "WORKBENCH_TEST_RUN_DIR"
GRACE_S = float(os.environ.get("WORKBENCH_LEFTOVER_GRACE_S", "5"))

_skips: list[tuple[str, str]] = []
_found: list[str] = []


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- the marker --------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):  # workers inherit the controller's id; they are pytest's own, never leftovers
        if os.environ.get(REPORT_DIR_VAR):
            Path(os.environ[REPORT_DIR_VAR], f"worker-{os.getpid()}.pid").touch()
        return
    # a fresh id for every run, even one started from inside a test (whose tests must not count
    # the outer run's processes as theirs)
    os.environ[RUN_VAR] = uuid.uuid4().hex
    os.environ[REPORT_DIR_VAR] = tempfile.mkdtemp(prefix="wb-test-run-")


def pytest_runtest_setup(item: pytest.Item) -> None:
    os.environ[NODE_VAR] = item.nodeid


# -- skips under CI --------------------------------------------------------------------------
def _note_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        _skips.append((report.nodeid, reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _note_skip(report)  # a module skipped as a whole (pytest.skip(allow_module_level=True), importorskip)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    if in_ci() and _skips:
        terminalreporter.section("skipped under CI=true: a skip is a failure", sep="=", red=True)
        for nodeid, reason in _skips:
            terminalreporter.line(f"{nodeid}: {reason}")
    if _found:
        terminalreporter.section("processes left running by the tests (killed now)", sep="=", red=True)
        for line in _found:
            terminalreporter.line(line)


# -- processes left behind ----------------------------------------------------------------------
def _environ(p: psutil.Process) -> dict[str, str]:
    try:
        return p.environ()
    except (psutil.Error, OSError):
        return {}


def leftovers(run_id: str | None, root: psutil.Process | None = None,
              exclude: Iterable[int] = ()) -> list[psutil.Process]:
    """Live processes that descend from ``root`` or carry ``WORKBENCH_TEST_RUN == run_id``.

    ``exclude``: pids never reported (this process, its ancestors).  Zombies do not count:
    they hold no resources but a table slot and vanish when their parent reaps them.
    """
    skip = set(exclude)
    found: dict[int, psutil.Process] = {}
    if root is not None:
        try:
            for p in root.children(recursive=True):
                found[p.pid] = p
        except psutil.Error:
            pass
    if run_id:
        for p in psutil.process_iter():
            if p.pid not in found and _environ(p).get(RUN_VAR) == run_id:
                found[p.pid] = p
    out = []
    for pid, p in sorted(found.items()):
        try:
            if pid in skip or p.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        out.append(p)
    return out


def describe(p: psutil.Process) -> str:
    """'pid 123 (age 4.2 s, started by tests/x.py::test_y): sh /…/on_finish.sh 0'."""
    try:
        cmd = " ".join(p.cmdline()) or p.name()
        age = time.time() - p.create_time()
    except psutil.Error:
        return f"pid {p.pid} (gone)"
    node = _environ(p).get(NODE_VAR, "?")
    return f"pid {p.pid} (age {age:.1f} s, started during {node}): {cmd[:300]}"


def settle_and_kill(procs: list[psutil.Process], grace_s: float = GRACE_S) -> list[str]:
    """Wait up to ``grace_s`` for ``procs`` to end; describe and kill the ones still alive."""
    if not procs:
        return []
    _gone, alive = psutil.wait_procs(procs, timeout=grace_s)
    alive = [p for p in alive if _alive(p)]
    lines = [describe(p) for p in alive]
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    return lines


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _own_lineage() -> set[int]:
    me = psutil.Process()
    return {me.pid, *(a.pid for a in me.parents())}


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int):
    # After the yield: every session fixture is torn down and (on the controller) xdist has
    # stopped its workers, so whatever is still running was left behind by a test.
    result = yield
    config = session.config
    report_dir = os.environ.get(REPORT_DIR_VAR)
    if _is_worker(config):
        lines = settle_and_kill(leftovers(None, psutil.Process(), _own_lineage()))
        if lines and report_dir:
            worker = config.workerinput.get("workerid", "worker")
            Path(report_dir, f"{worker}.json").write_text(json.dumps(lines))
        return result
    workers = ({int(f.name[len("worker-"):-len(".pid")]) for f in Path(report_dir).glob("worker-*.pid")}
               if report_dir else set())
    _found.extend(settle_and_kill(leftovers(os.environ.get(RUN_VAR), psutil.Process(), _own_lineage() | workers)))
    if report_dir and Path(report_dir).is_dir():
        for f in sorted(Path(report_dir).glob("*.json")):
            _found.extend(f"{f.stem}: {line}" for line in json.loads(f.read_text()))
        for f in Path(report_dir).iterdir():
            f.unlink()
        Path(report_dir).rmdir()
    failed = bool(_found) or (in_ci() and bool(_skips))
    if failed and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return result
