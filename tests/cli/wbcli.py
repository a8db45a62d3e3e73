"""Run the real `workbench` CLI in subprocesses against a throwaway WORKBENCH_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from secret_service import HAS_SECRET_SERVICE, needs_secret_service  # noqa: F401  (the one keyring marker)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_PLUGINS = ROOT / "tests" / "fixtures" / "plugins"
EXAMPLES = ROOT / "resources" / "examples"


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


class Workbench:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = dict(os.environ, WORKBENCH_HOME=str(home), PYTHONPATH=str(FIXTURE_PLUGINS),
                        QT_QPA_PLATFORM="offscreen")
        self.env.pop("WORKBENCH_CRASH_AT", None)

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "workbench", *args]

    def __call__(self, *args: str, stdin: str | None = None, env: dict | None = None,
                 timeout: float = 60) -> Result:
        proc = subprocess.run(self.argv(*args), input=stdin, capture_output=True, text=True,
                              env=env or self.env, timeout=timeout, stdin=None if stdin is not None else subprocess.DEVNULL)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def spec(self, name: str, run: str, extra: str = "") -> Path:
        path = self.home.parent / f"{name}.yaml"
        path.write_text(f"name: {name}\nrun: {json.dumps(run)}\nguards:\n  max_runtime: 10m\n{extra}")
        return path


def wait_for(pred: Callable[[], Any], timeout: float = 20.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)
