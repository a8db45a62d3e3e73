"""A remote job's record on this computer (its phase, its exit code) and the options and events of the
code that drives it (:mod:`workbench.core.remote.job`, :mod:`workbench.core.remote.cluster`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from workbench.core import paths
from workbench.core.remote import supervisor

STATE_FILE = "remote.json"
EXIT_FILE = "exit_code"


@dataclass(frozen=True)
class JobEvent:
    launch_id: str
    phase: str
    message: str = ""
    kind: str = "phase"  # phase | upload | log | exit | warning | error
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class JobOptions:
    connect_deadline_s: float = 30 * 60  # SSH must answer within this (boot)
    key_grace_s: float = 10 * 60  # a refused key counts as "booting" this long
    reconnect_deadline_s: float = 30 * 60  # a lost machine is given up after this
    driver_deadline_s: float = 15 * 60  # then the job starts anyway, with a warning
    poll_s: float = 1.0  # how long one look at the job waits on the machine for a new line or phase
    grace_s: int = supervisor.DEFAULT_GRACE_S  # the machine's own on_finish waits this long
    teardown_timeout_s: float = 600.0
    apply_on_finish: bool = True
    #: The GUI's finish guard (core.lifecycle.guards) ends the machine after its grace period, with "keep
    #: running" in between; then on_finish here only downloads the outputs.
    teardown_by_guards: bool = False


def read_state(launch_id: str) -> dict[str, Any]:
    """The last saved state of a remote job ({} when none)."""
    try:
        return json.loads((paths.job_dir(launch_id) / STATE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def recorded_exit_code(launch_id: str) -> int | None:
    try:
        return int((paths.job_dir(launch_id) / EXIT_FILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
