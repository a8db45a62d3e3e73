"""Run the machine-side storage agent as a real process (helpers for the storage tests, no fixtures).

A "machine" is a folder: ``state/`` (the job folder: markers, config) and ``work/`` (the job's
current folder).  The agent's config and credentials come from core's ``machine_setup`` exactly
as a launch makes them; the credentials go in the agent's environment (the agent also takes them
from there; a launch writes them to its 0600 ``credentials_file``, see test_local_credentials.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from workbench_testing import ROOT

AGENT = ROOT / "resources" / "storage" / "workbench_storage.py"
#: the moto profile's own (long-lived) key: it must never reach a machine
KEY_ID = "AKIAWORKBENCHTEST01"
SECRET = "storage-test-secret-not-real"
#: settings that make an AWS provider fast against moto
FAST = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
        "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}
TRAIN = ROOT / "resources" / "examples" / "spot-resume" / "train.py"


@dataclass
class Machine:
    root: Path
    config: dict
    secret_env: dict

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def log(self) -> Path:
        return self.root / "output.log"

    def write_config(self, **changes) -> Path:
        self.config.update(changes)
        path = self.state / "storage.json"
        path.write_text(json.dumps(self.config))
        return path

    def env(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
        env.update(self.secret_env)
        env.update(extra)
        return env

    def agent(self, *args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(AGENT), *args, "--config", str(self.state / "storage.json")],
                              cwd=self.work, env=env or self.env(), capture_output=True, text=True, timeout=timeout)

    def start(self, cmd: list[str], **extra: str) -> subprocess.Popen:
        log = open(self.log, "ab")
        try:
            return subprocess.Popen([sys.executable, str(AGENT), "run", "--config", str(self.state / "storage.json"),
                                     "--", *cmd], cwd=self.work, env=self.env(**extra), stdout=log,
                                    stderr=subprocess.STDOUT)
        finally:
            log.close()

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


def new_machine(root: Path, setup) -> Machine:
    """A fresh machine folder for ``setup`` (a core MachineSetup made with state_dir=root/state)."""
    (root / "state").mkdir(parents=True, exist_ok=True)
    (root / "work").mkdir(parents=True, exist_ok=True)
    shutil.copy(TRAIN, root / "work" / "train.py")
    m = Machine(root, dict(setup.config), dict(setup.secret_env))
    m.write_config()
    return m


def wait_until(pred: Callable[[], object], timeout: float, what: str, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)
