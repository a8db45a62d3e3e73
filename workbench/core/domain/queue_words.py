"""A batch scheduler's words in plain language: why a job waits in the queue, how it ended.

A provider whose launches are jobs in a scheduler's queue (Slurm) puts in ``Instance.extra``:

- ``queue_reason``: why a pending job waits, as the scheduler says it ("Resources", "Priority", …);
  only while it waits;
- ``queue_start``: the scheduler's estimate of its start, POSIX seconds (absent when it has none);
- ``slurm_state``: the scheduler's own state of the job ("PENDING", "TIMEOUT", "NODE_FAIL", …).

Instances, the Monitor and Stop all billing read them through these functions, so a view never imports a
plugin.  The words are :func:`N_` literals (the app passes them through ``tr()``; the CLI shows them in
English).  Plain functions; any thread.
"""

from __future__ import annotations

from typing import Any, Mapping

from workbench.core.domain.phrase import N_

QUEUE_REASON = "queue_reason"
QUEUE_START = "queue_start"
SCHEDULER_STATE = "slurm_state"

#: why a job waits (Slurm's squeue %r reasons), in plain words
REASONS: dict[str, str] = {
    "Resources": N_("the GPUs or nodes it asks for are busy"),
    "Priority": N_("jobs with a higher priority go first"),
    "Dependency": N_("it waits for another job to finish"),
    "DependencyNeverSatisfied": N_("the job it depends on failed: it will never start"),
    "BeginTime": N_("it was asked to start later"),
    "QOSMaxGRESPerUser": N_("you already use as many GPUs as your QoS allows"),
    "QOSMaxJobsPerUserLimit": N_("you already run as many jobs as your QoS allows"),
    "QOSGrpGRES": N_("your group already uses as many GPUs as its QoS allows"),
    "AssocGrpGRES": N_("your account already uses as many GPUs as it may"),
    "AssocMaxJobsLimit": N_("your account already runs as many jobs as it may"),
    "ReqNodeNotAvail": N_("a node it needs is not available (down, drained or reserved)"),
    "PartitionDown": N_("the partition is down"),
    "PartitionInactive": N_("the partition is inactive"),
    "PartitionTimeLimit": N_("its time limit is longer than the partition allows"),
    "PartitionNodeLimit": N_("it asks for more nodes than the partition allows"),
    "Reservation": N_("it waits for its reservation to start"),
    "JobHeldUser": N_("held by you"),
    "JobHeldAdmin": N_("held by an administrator"),
    "launch failed requeued held": N_("its start failed; it is held"),
    "None": N_("just submitted: the scheduler has not looked at it yet"),
}

#: how a job ended, by the scheduler's final state (only the ones that say more than failed/finished)
ENDS: dict[str, str] = {
    "TIMEOUT": N_("the time limit was reached"),
    "NODE_FAIL": N_("a node failed"),
    "OUT_OF_MEMORY": N_("it ran out of memory"),
    "PREEMPTED": N_("preempted by another job"),
    "BOOT_FAIL": N_("a node failed to boot"),
    "DEADLINE": N_("its deadline passed"),
}


def queue_reason(extra: Mapping[str, Any]) -> str | None:
    """The scheduler's reason a job waits ("Resources"), or None when it does not wait in a queue."""
    raw = extra.get(QUEUE_REASON)
    return str(raw).strip("() ") or None if raw else None


def reason_words(reason: str) -> str:
    """Plain words (English, an N_ literal) for a queue reason; the reason itself when it has none."""
    return REASONS.get(reason, reason)


def queue_start(extra: Mapping[str, Any]) -> float | None:
    """The scheduler's estimated start (POSIX seconds), or None."""
    try:
        value = float(extra.get(QUEUE_START) or 0.0)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def end_words(extra: Mapping[str, Any]) -> str | None:
    """How the scheduler ended the job in plain words (TIMEOUT: "the time limit was reached"), or None."""
    state = str(extra.get(SCHEDULER_STATE) or "").split(" ")[0].upper()
    return ENDS.get(state)
