"""A job's state in the words every view uses: "finished · exit 0", "interrupted · relaunched as attempt 2".

Instances, the Logs window and the Monitor's picker say the same word for the same machine (the
outcome once the job has one, the machine's state before), from the session's snapshot.
"""

from __future__ import annotations

from workbench.core.domain.models import Instance
from workbench.core.lifecycle.outcome import BY_GUARD, FAILED, FINISHED, INTERRUPTED, STOPPED, Outcome, job_outcome
from workbench.core.money.billing_status import on_this_computer
from workbench.core.store.database import LaunchRecord
from workbench.ui.common.format import state_label
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
    if out is None:
        return text
    if inst.state.billable and not on_this_computer(inst):
        return outcome_text(out) + " · " + tr("machine {state}").format(state=text)
    return outcome_text(out)


def snapshot_state_text(inst: Instance, snap: object) -> str:
    """:func:`state_text` with what the session's snapshot knows of the launch (any ``Snapshot``)."""
    launch_id = inst.launch_id
    return state_text(inst, getattr(snap, "launches", {}).get(launch_id),
                      getattr(snap, "guard_ended", {}).get(launch_id), getattr(snap, "relaunched", {}).get(launch_id))
