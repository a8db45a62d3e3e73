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

#: why a job waits, in plain words with Slurm's own word (squeue's %r reasons); the same words as the slurm
#: plugin's ``queue.REASONS`` (one vocabulary, one translation)
REASONS: dict[str, str] = {
    "Resources": N_("waiting for GPUs or nodes to become free (Resources)"),
    "Priority": N_("other jobs are ahead in the queue (Priority)"),
    "Dependency": N_("waiting for another job to finish (Dependency)"),
    "DependencyNeverSatisfied": N_("the job it depends on failed: it will never start (DependencyNeverSatisfied)"),
    "BeginTime": N_("waiting for its start time (BeginTime)"),
    "JobHeldUser": N_("held by you: release it with scontrol release (JobHeldUser)"),
    "JobHeldAdmin": N_("held by the cluster's administrators (JobHeldAdmin)"),
    "ReqNodeNotAvail": N_("a node it needs is down, drained or reserved (ReqNodeNotAvail)"),
    # what 22.05's squeue prints for a job whose only nodes are down or drained (recorded)
    "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions":
        N_("the nodes it needs are down, drained or reserved (ReqNodeNotAvail)"),
    "PartitionTimeLimit": N_("its time limit is beyond the partition's: it will never start (PartitionTimeLimit)"),
    "PartitionNodeLimit": N_("it asks more nodes than the partition allows: it will never start (PartitionNodeLimit)"),
    "PartitionConfig": N_("it asks more CPUs or memory than the partition's nodes have: it will never start "
                          "(PartitionConfig)"),
    "PartitionDown": N_("the partition is down (PartitionDown)"),
    "PartitionInactive": N_("the partition is inactive (PartitionInactive)"),
    "NodeDown": N_("a node it needs is down (NodeDown)"),
    "BadConstraints": N_("no node has what it asks for (BadConstraints)"),
    "Reservation": N_("waiting for its reservation to start (Reservation)"),
    "Licenses": N_("waiting for a license (Licenses)"),
    "QOSMaxJobsPerUserLimit": N_("you already run as many jobs as your QOS allows (QOSMaxJobsPerUserLimit)"),
    "QOSMaxGRESPerUser": N_("you already use as many GPUs as your QOS allows (QOSMaxGRESPerUser)"),
    "QOSMaxWallDurationPerJobLimit": N_("its time limit is beyond your QOS's (QOSMaxWallDurationPerJobLimit)"),
    "QOSGrpGRES": N_("your QOS's group already uses all the GPUs it may (QOSGrpGRES)"),
    "QOSResourceLimit": N_("your QOS's limits are reached (QOSResourceLimit)"),
    "AssocGrpGRES": N_("your account already uses all the GPUs it may (AssocGrpGRES)"),
    "AssocGrpCPULimit": N_("your account already uses all the CPUs it may (AssocGrpCPULimit)"),
    "AssocMaxJobsLimit": N_("your account already runs as many jobs as it may (AssocMaxJobsLimit)"),
    "AssocGrpBillingMinutes": N_("your account's allocation of compute time is used up (AssocGrpBillingMinutes)"),
    "AssocGrpGRESMinutes": N_("your account's allocation of GPU time is used up (AssocGrpGRESMinutes)"),
    "InvalidAccount": N_("the job's account is not valid (InvalidAccount)"),
    "InvalidQOS": N_("the job's QOS is not valid (InvalidQOS)"),
    "launch failed requeued held": N_("its start failed; held for an administrator (launch failed requeued held)"),
    "Cleaning": N_("a node is being cleaned up after a previous job (Cleaning)"),
    "Prolog": N_("the cluster's prolog script is running (Prolog)"),
    "NodeRebooting": N_("a node is rebooting for it (NodeRebooting)"),
    "PowerUp": N_("a powered-down node is starting for it (PowerUp)"),
}

#: how a job ended, by the scheduler's final state (the same words as the plugin's ``queue.END_STATES``)
END_STATES: dict[str, str] = {
    "COMPLETED": N_("finished (COMPLETED)"),
    "FAILED": N_("the job exited with an error (FAILED)"),
    "TIMEOUT": N_("the time limit was reached (TIMEOUT)"),
    "CANCELLED": N_("cancelled (CANCELLED)"),
    "NODE_FAIL": N_("a node of the job failed (NODE_FAIL)"),
    "PREEMPTED": N_("preempted by a job of higher priority (PREEMPTED)"),
    "OUT_OF_MEMORY": N_("the job ran out of memory (OUT_OF_MEMORY)"),
    "BOOT_FAIL": N_("a node failed to boot (BOOT_FAIL)"),
    "DEADLINE": N_("its deadline passed before it could run (DEADLINE)"),
    "REVOKED": N_("revoked: it runs on another cluster of the federation (REVOKED)"),
}
#: the ends the job's outcome ("finished", "failed · exit 1", "stopped by you") already says
PLAIN_ENDS = frozenset({"COMPLETED", "FAILED", "CANCELLED"})


def queue_reason(extra: Mapping[str, Any]) -> str | None:
    """The scheduler's reason a job waits ("Resources"), or None when it does not wait in a queue."""
    raw = extra.get(QUEUE_REASON)
    return str(raw).strip("() ") or None if raw else None


def reason_words(reason: str) -> str:
    """Plain words (English, an N_ literal) for a queue reason (also when Slurm appends details:
    ``ReqNodeNotAvail, UnavailableNodes:node2``); the reason itself when it has none."""
    return REASONS.get(reason) or REASONS.get(reason.split(",")[0].strip()) or reason


def queue_start(extra: Mapping[str, Any]) -> float | None:
    """The scheduler's estimated start (POSIX seconds), or None."""
    try:
        value = float(extra.get(QUEUE_START) or 0.0)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def end_words(extra: Mapping[str, Any]) -> str | None:
    """How the scheduler ended the job in plain words (TIMEOUT: "the time limit was reached (TIMEOUT)"), or None;
    None too for an end the job's outcome already says (COMPLETED, FAILED, CANCELLED)."""
    words = str(extra.get(SCHEDULER_STATE) or "").strip().split()
    state = words[0].split("+")[0].upper() if words else ""
    return None if state in PLAIN_ENDS else END_STATES.get(state)
