"""How a job ended, in words the user reads: finished · exit 0, failed · exit 2, stopped by you or by a guard,
interrupted · relaunched as attempt 2.

The machine's state (running, terminated …) says what bills; the outcome says what became of the
*job*.  It is derived from what the app already knows: the job's exit code (Local's wrapper, the
remote runner's exit file), the Local provider's "terminated by user" mark, the launch's status
("terminated": the app tore it down), the guard that acted on the launch (its "act" event) and the
launch's attempts (:func:`relaunches`: recovery ended this attempt for a preemption or a failure and
started the next).  A spot machine the cloud took back is *interrupted*, whatever exit code the
job's process got on the way down (143 for the SIGTERM), never "failed".

Plain values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.store.attempts import FAILURE, PREEMPTION, AttemptRecord, AttemptTables

FINISHED, FAILED, STOPPED, INTERRUPTED = "finished", "failed", "stopped", "interrupted"
BY_YOU, BY_GUARD = "you", "guard"


@dataclass(frozen=True)
class Outcome:
    """``kind``: finished | failed | stopped | interrupted; ``by``: you | guard (stopped only); ``reason``: the
    guard's; ``relaunched_as``: the attempt recovery started after this one (None when it started none)."""

    kind: str
    exit_code: int | None = None
    by: str = ""
    reason: str = ""
    relaunched_as: int | None = None


def job_outcome(inst: Instance, launch_status: str | None = None, guard_reason: str | None = None,
                relaunch: tuple[str, int] | None = None) -> Outcome | None:
    """The job's outcome, or None while it has none yet (running, starting, a machine merely stopped).

    ``relaunch``: (end reason, next attempt) when recovery relaunched after this attempt (:func:`relaunches`).
    """
    if relaunch is not None:
        reason, nxt = relaunch
        if reason == PREEMPTION:
            return Outcome(INTERRUPTED, inst.exit_code, relaunched_as=nxt)
        if reason == FAILURE and inst.exit_code is not None:
            return Outcome(FAILED, inst.exit_code, relaunched_as=nxt)
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


def relaunches(attempts: Iterable[AttemptRecord]) -> Mapping[str, tuple[str, int]]:
    """launch id → (why it ended, the attempt recovery started next), for attempts that were relaunched.

    ``attempts``: the store's attempt records (any order).  An attempt counts as relaunched when one
    with the next number exists that did not fail to launch.
    """
    rows = list(attempts)
    started = {(a.root_id, a.attempt) for a in rows if a.status != "launch_failed"}
    return {a.launch_id: (a.end_reason, a.attempt + 1) for a in rows
            if a.end_reason in (PREEMPTION, FAILURE) and (a.root_id, a.attempt + 1) in started}


def relaunch_of(store: AttemptTables, launch_id: str) -> tuple[str, int] | None:
    """:func:`relaunches` for one launch, read from the store (None for a launch with no attempts)."""
    mine = store.attempt_of(launch_id)
    return relaunches(store.attempts(mine.root_id)).get(launch_id) if mine is not None else None


def launch_words(status: str, relaunch: tuple[str, int] | None) -> str:
    """A launch's status as the CLI shows it: its status, or "interrupted · relaunched as attempt 2" (a
    preemption) / "failed · relaunched as attempt 2" (a failure) when recovery went on after it."""
    if relaunch is None:
        return status
    reason, nxt = relaunch
    return f"{'interrupted' if reason == PREEMPTION else 'failed'} · relaunched as attempt {nxt}"
