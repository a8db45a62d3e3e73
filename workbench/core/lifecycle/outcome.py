"""How a job ended, in words the user reads: finished · exit 0, failed · exit 2, stopped by you or by a guard.

The machine's state (running, terminated …) says what bills; the outcome says what became of the
*job*.  It is derived from what the app already knows: the job's exit code (Local's wrapper, the
remote runner's exit file), the Local provider's "terminated by user" mark, the launch's status
("terminated": the app tore it down) and the guard that acted on the launch (its "act" event).

Plain values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from workbench.core.domain.models import Instance, InstanceState

FINISHED, FAILED, STOPPED = "finished", "failed", "stopped"
BY_YOU, BY_GUARD = "you", "guard"


@dataclass(frozen=True)
class Outcome:
    """``kind``: finished | failed | stopped; ``by``: you | guard (stopped only); ``reason``: the guard's."""

    kind: str
    exit_code: int | None = None
    by: str = ""
    reason: str = ""


def job_outcome(inst: Instance, launch_status: str | None = None, guard_reason: str | None = None) -> Outcome | None:
    """The job's outcome, or None while it has none yet (running, starting, a machine merely stopped)."""
    by_user = inst.extra.get("reason") == "terminated by user"
    if inst.exit_code is not None and not by_user:
        return Outcome(FINISHED if inst.exit_code == 0 else FAILED, inst.exit_code)
    if inst.state.active:
        return None
    if guard_reason:
        return Outcome(STOPPED, inst.exit_code, BY_GUARD, guard_reason)
    if by_user or (launch_status == "terminated" and inst.state == InstanceState.TERMINATED):
        return Outcome(STOPPED, inst.exit_code, BY_YOU)
    return None


def guard_endings(events: Iterable[object]) -> Mapping[str, str]:
    """launch id → the reason a guard tore it down or stopped it (from the store's guard events)."""
    out: dict[str, str] = {}
    for ev in events:
        key = str(getattr(ev, "key", ""))
        if getattr(ev, "guard", "") == "act" and (key.startswith("teardown:") or key.startswith("stop:")):
            out[str(getattr(ev, "launch_id", ""))] = str(getattr(ev, "message", "") or "")
    return out
