"""Makes tests/support importable from every test folder and installs the run-wide hooks.

- tests/support/honest_run.py: under CI a skip fails the run; a process a test left running
  fails the run (and is killed); every process the tests start carries WORKBENCH_TEST_RUN.
- tests/support/secret_service.py: the one ``keyring`` marker for tests that need the real
  (private) Secret Service that `make test` starts.
- ``world``: the container tests' Docker daemon and password registry (tests/support/containers.py), one per process.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

import honest_run  # noqa: E402
from honest_run import (pytest_collectreport, pytest_configure, pytest_runtest_logreport,  # noqa: E402,F401
                        pytest_sessionfinish, pytest_terminal_summary)
from secret_service import skip_without_secret_service  # noqa: E402


def pytest_runtest_setup(item):
    honest_run.pytest_runtest_setup(item)
    skip_without_secret_service(item)


@pytest.fixture(scope="session")
def world():
    """The container test world (tests/support/containers.py): one Docker daemon and one private registry with a
    password per test process, started by the first test that asks and stopped at the end."""
    import time

    from containers import start as start_containers, stop as stop_containers

    started = time.monotonic()
    try:
        w = start_containers()
    except RuntimeError as exc:  # fail, never skip: `make test` installs what this needs
        pytest.fail(f"the container test world could not start: {exc}")
    print(f"container world ready in {time.monotonic() - started:.1f}s: {w.timings}")
    yield w
    stop_containers()
