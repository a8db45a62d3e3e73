"""The run-wide hooks of tests/support/honest_run.py, each in a pytest run of its own (a subprocess).

- under CI=true a skipped test fails the run (and says which and why); without CI it stays a skip;
- a process a test left running fails the run, is named with the test that started it, and is
  killed: a child still attached to a worker, and a detached grandchild found by the marker;
- a test that stops what it started passes, and processes of another run are not touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil

SUPPORT = Path(__file__).resolve().parents[1] / "support"
CONFTEST = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(SUPPORT)!r})
    from honest_run import (pytest_collectreport, pytest_configure, pytest_runtest_logreport,  # noqa: F401
                            pytest_runtest_setup, pytest_sessionfinish, pytest_terminal_summary)
""")


def _run(tmp_path: Path, tests: str, *args: str, ci: bool = False) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(tests))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "WORKBENCH_TEST_RUN", "WORKBENCH_TEST_RUN_DIR", "PYTEST_ADDOPTS")}
    env["WORKBENCH_LEFTOVER_GRACE_S"] = "0.5"
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                           str(tmp_path), "-c", os.devnull, *args, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


SKIPPING = """
    import pytest

    def test_runs():
        assert True

    def test_needs_something_missing():
        pytest.skip("the frobnicator is not installed")
"""


def test_under_ci_a_skip_fails_the_run_and_names_the_test(tmp_path):
    r = _run(tmp_path, SKIPPING, ci=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "skipped under CI=true" in r.stdout
    assert "test_inner.py::test_needs_something_missing: the frobnicator is not installed" in r.stdout


def test_without_ci_a_skip_stays_a_skip(tmp_path):
    r = _run(tmp_path, SKIPPING)
    assert r.returncode == 0 and "1 passed, 1 skipped" in r.stdout, r.stdout + r.stderr


LEAKING = """
    import subprocess, sys
    from pathlib import Path

    HERE = Path(__file__).parent

    def test_leaves_a_child_running():
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # leaked-child"])
        (HERE / "child.pid").write_text(str(p.pid))

    def test_leaves_a_detached_grandchild_running():
        # the middle process exits at once: the sleeper is nobody's child here any more
        code = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
                "'import time; time.sleep(120)  # leaked-orphan'], start_new_session=True, "
                "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        (HERE / "orphan.pid").write_text(out.stdout.strip())

    def test_stops_what_it_starts():
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        p.terminate()
        p.wait(10)
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_process_left_running_fails_the_run_is_named_and_killed(tmp_path):
    # an xdist run (as `make test`), under CI, with a skip too: both reach the controller's summary
    r = _run(tmp_path, LEAKING + SKIPPING, "-n", "1", ci=True)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "4 passed, 1 skipped" in out and "processes left running by the tests" in out
    assert "skipped under CI=true" in out and "test_needs_something_missing" in out
    child, orphan = int((tmp_path / "child.pid").read_text()), int((tmp_path / "orphan.pid").read_text())
    lines = [line for line in r.stdout.splitlines() if "leaked-" in line]
    assert any(f"pid {child} " in line and "test_leaves_a_child_running" in line for line in lines), out
    assert any(f"pid {orphan} " in line and "test_leaves_a_detached_grandchild_running" in line for line in lines), out
    assert len(lines) == 2, out  # the one that was stopped is not reported
    assert _gone(child) and _gone(orphan)


def test_a_run_that_stops_everything_passes_and_other_runs_processes_are_left_alone(tmp_path):
    # a process of "another run": same marker variable, another id
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             env=dict(os.environ, WORKBENCH_TEST_RUN="some-other-run"))
    try:
        r = _run(tmp_path, """
            import subprocess, sys

            def test_stops_what_it_starts():
                p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
                p.kill()
                p.wait(10)
        """)
        assert r.returncode == 0 and "processes left running" not in r.stdout, r.stdout + r.stderr
        assert other.poll() is None
    finally:
        other.kill()
        other.wait(10)
