"""A job's state in the words every view uses: "finished · exit 0", "interrupted · relaunched as attempt 2".

Instances, the Logs window and the Monitor's picker say the same word for the same machine (the
outcome once the job has one, the machine's state before), from the session's snapshot.
"""

from __future__ import annotations

import time

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.domain.queue_words import end_words, queue_reason, queue_start, reason_words
from workbench.core.lifecycle.outcome import BY_GUARD, FAILED, FINISHED, INTERRUPTED, STOPPED, Outcome, job_outcome
from workbench.core.money.billing_status import on_this_computer
from workbench.core.store.database import LaunchRecord
from workbench.ui.common.format import say, state_label
from workbench.ui.i18n import tr


#: the job's outcome: colour (light, dark palette) and icon
OUTCOME_LOOK = {FINISHED: ("#2e7d32", "#81c784", "finished"), FAILED: ("#c62828", "#ff8a65", "failed"),
                STOPPED: ("#616161", "#bdbdbd", "stopped"), INTERRUPTED: ("#ef6c00", "#ffb74d", "warning")}


def outcome_text(out: Outcome) -> str:
    """"finished · exit 0", "failed · exit 2", "stopped by you", "stopped by a guard: <why>",
    "interrupted · relaunched as attempt 2"."""
    again = (" · " + tr("relaunched as attempt {n}").format(n=out.relaunched_as)) if out.relaunched_as else ""
    if out.kind == INTERRUPTED:
        return tr("interrupted") + again
    if out.kind == STOPPED:
        if out.by == BY_GUARD:
            return tr("stopped by a guard") + (f": {out.reason}" if out.reason else "")
        return tr("stopped by you")
    label = tr("finished") if out.kind == FINISHED else tr("failed")
    return f"{label} · " + tr("exit {code}").format(code=out.exit_code) + again


def state_text(inst: Instance, launch: LaunchRecord | None = None, guard_reason: str | None = None,
               relaunch: tuple[str, int] | None = None) -> str:
    """The state column: the job's outcome once it has one (with the machine's state while it bills)."""
    text = state_label(inst.state)
    if inst.extra.get("economical_stop") and not inst.state.active:
        # Alibaba's economical stop: the machine no longer bills compute, its disks do
        text = tr("stopped, no compute charge (disks still bill)")
    if (inst.extra.get("spot_interrupted") or inst.extra.get("evicted")) and relaunch is None:
        # the cloud took the spot machine back: its own state for the user, whatever the cloud calls it
        return tr("Spot interrupted") + f" ({text})"
    out = job_outcome(inst, launch.status if launch else None, guard_reason, relaunch)
    ended = end_words(inst.extra) if not inst.state.active else None  # "the time limit was reached"
    if out is None:
        return queue_text(inst, short=True) or (f"{text} · {say(ended)}" if ended else text)
    said = outcome_text(out) + (" · " + say(ended) if ended and out.kind != STOPPED else "")
    if inst.state.billable and not on_this_computer(inst):
        return said + " · " + tr("machine {state}").format(state=text)
    return said


def start_text(when: float, now: float | None = None) -> str:
    """An estimated start in local time: "14:05" today, "Dec 07 14:05" on another day."""
    now = time.time() if now is None else now
    same_day = time.localtime(when)[:3] == time.localtime(now)[:3]
    return time.strftime("%H:%M" if same_day else "%b %d %H:%M", time.localtime(when))


def queue_text(inst: Instance, now: float | None = None, short: bool = False) -> str | None:
    """A job waiting in its scheduler's queue: "queued: waiting for GPUs or nodes to become free (Resources) ·
    estimated start 14:05" (``short``, for a table cell: "queued (Resources) · estimated start 14:05"); None when it
    does not wait (any provider that fills ``extra["queue_reason"]``)."""
    reason = queue_reason(inst.extra)
    if reason is None or inst.state not in (InstanceState.PENDING, InstanceState.UNKNOWN):
        return None
    if short:  # the scheduler's own word (the one its words end with), the words in the tooltip
        words = reason_words(reason)
        word = words[words.rindex("(") + 1:-1] if words.endswith(")") and "(" in words else reason
        text = tr("queued ({reason})").format(reason=word if len(word) <= 32 else word[:31] + "…")
    else:
        text = tr("queued: {reason}").format(reason=say(reason_words(reason)))
    start = queue_start(inst.extra)
    if start is not None:
        text += " · " + tr("estimated start {time}").format(time=start_text(start, now))
    return text


def snapshot_state_text(inst: Instance, snap: object) -> str:
    """:func:`state_text` with what the session's snapshot knows of the launch (any ``Snapshot``)."""
    launch_id = inst.launch_id
    return state_text(inst, getattr(snap, "launches", {}).get(launch_id),
                      getattr(snap, "guard_ended", {}).get(launch_id), getattr(snap, "relaunched", {}).get(launch_id))


def queue_tip(inst: Instance) -> list[str]:
    """Tooltip lines of a job in a scheduler's queue: why it waits, and its job and partition."""
    lines = []
    reason = queue_reason(inst.extra)
    if reason is not None and queue_text(inst) is not None:
        lines.append(tr("Why it waits: {reason}").format(reason=say(reason_words(reason))))
    job = inst.extra.get("slurm_job_id")
    if job:
        part = inst.extra.get("partition")
        lines.append(tr("Slurm job {id} in partition {partition}").format(id=job, partition=part) if part
                     else tr("Slurm job {id}").format(id=job))
    return lines
