"""The queue as Slurm shows it: our jobs in ``squeue``, one job in ``scontrol show job``, what its state and
reason mean, and Slurm's refusals as the workbench's errors.

Commands here are text for the login node (the provider runs them over SSH); every one sets ``TZ=UTC`` and
Slurm's standard time format, so the times parsed here are UTC whatever the cluster's time zone, and wraps
itself in ``sh -c`` so a login shell of csh/tcsh (common on older clusters) runs it alike.

Facts checked on Debian's slurm-wlm 22.05.8 (``tests/fixtures/slurm/recorded/``): ``squeue``'s ``%S`` is
the backfill scheduler's start estimate for a pending job (``N/A`` until backfill has run, a few seconds);
a job cancelled while running ends ``CANCELLED`` with ``ExitCode=0:15``, one killed at its time limit
``TIMEOUT`` with ``ExitCode=0:15``, a script that exits 3 ``FAILED`` with ``ExitCode=3:0``; without
``EnforcePartLimits`` a job over a partition's time or node limit is *accepted* and pends for ever
(``PartitionTimeLimit``, ``PartitionNodeLimit``) — why :func:`cluster.check_request` checks before ``sbatch``.

Pure functions; any thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.core.domain.errors import (ConfigError, PluginError, QuotaError, TransientError,
                                          WorkbenchError)
from workbench.core.domain.models import InstanceState
from workbench.core.domain import queue_words

from .formats import (MARK, SLURM_ENV, expand_hostlist, none_if_empty, parse_duration, record, sections,
                      time_limit, utc_time)

__all__ = ["QueuedJob", "JobRecord", "STATES", "END_STATES", "REASONS", "squeue_command", "parse_squeue",
           "job_command", "parse_job", "state_of", "end_words", "reason_words", "sbatch_error", "command_error",
           "time_limit", "parse_duration"]

SEP = "|#|"
#: job id, state (long), reason, node count, start time (or estimate), node list, name, comment — the two
#: free texts last, the comment last of all (our prefix is matched at its start)
SQUEUE_FORMAT = SEP.join(("%i", "%T", "%r", "%D", "%S", "%N", "%j", "%k"))
_FIELDS = 8
_SAFE = re.compile(r"^[A-Za-z0-9_.:@/+=-]*$")


def squeue_command(comment_prefix: str) -> str:
    """The current user's jobs (``--user="$(id -un)"``: never another user's) whose comment starts with
    ``comment_prefix`` (all of them for ""), then a ``rc=`` marker line: an empty queue is told from a
    ``squeue`` that failed.  ``comment_prefix`` is one word of ``[A-Za-z0-9_.:@/+=-]``."""
    if not _SAFE.match(comment_prefix):
        raise ValueError(f"a comment prefix must be one plain word, not {comment_prefix!r}")
    listing = (f'{SLURM_ENV} squeue --user="$(id -un)" --noheader --format="{SQUEUE_FORMAT}" 2>&1; '
               f'echo "{MARK} rc=$?"')
    if not comment_prefix:
        return f"sh -c '{listing}'"
    # rows of fewer fields (errors, the rc line) pass; rows are kept when the comment starts with the prefix
    keep = f'awk -F "[|]#[|]" -v p={comment_prefix} "NF < {_FIELDS} || index(\\${_FIELDS}, p) == 1"'
    return f"sh -c '{{ {listing}; }} | {keep}'"


@dataclass(frozen=True)
class QueuedJob:
    """One row of ``squeue``.  ``start_estimate``: POSIX seconds, the real start of a running job, the
    scheduler's estimate for a pending one, None while it has none (``N/A``)."""

    job_id: str
    name: str
    state: str
    reason: str | None
    comment: str | None
    nodes: int
    node_list: tuple[str, ...]
    start_estimate: float | None

    @property
    def instance_state(self) -> InstanceState:
        return state_of(self.state)


def parse_squeue(text: str) -> list[QueuedJob]:
    """The rows of :func:`squeue_command`'s answer.  Raises the matching error when ``squeue`` failed
    (TransientError when the controller did not answer) or the answer ended early."""
    part = sections("@@workbench-slurm@@ squeue\n" + text).get("squeue")
    if part is None or part.rc is None:
        raise TransientError("the answer of squeue ended early", hint="try again; the SSH connection may have dropped")
    if part.rc != 0:
        raise command_error(part.text, "reading the queue")
    jobs = []
    for line in part.text.splitlines():
        cells = line.split(SEP, _FIELDS - 1)
        if len(cells) != _FIELDS:
            continue  # a warning squeue printed beside the rows
        job_id, state, reason, nodes, start, node_list, name, comment = cells
        jobs.append(QueuedJob(job_id=job_id.strip(), name=name, state=state.strip(),
                              reason=_reason(reason), comment=none_if_empty(comment),
                              nodes=int(nodes) if nodes.strip().isdigit() else 0,
                              node_list=expand_hostlist(node_list), start_estimate=utc_time(start)))
    return jobs


def _reason(text: str | None) -> str | None:
    text = none_if_empty(text)
    # scontrol writes a free-text reason with "_" for spaces ("Job's_account_not_known,_so…"); squeue with spaces
    return text.replace("_", " ") if text and " " not in text and "_" in text else text


def job_command(job_id: str) -> str:
    """``scontrol show job -o`` of one job, times in UTC."""
    if not re.fullmatch(r"[0-9]+(?:[_+][0-9]+)?", job_id):
        raise ValueError(f"not a Slurm job id: {job_id!r}")
    return f"{SLURM_ENV} scontrol show job -o {job_id}"


@dataclass(frozen=True)
class JobRecord:
    """One job as ``scontrol show job`` has it (while the controller still remembers it: ``MinJobAge``,
    300 s by default, after its end).  Times are POSIX seconds or None; ``end_time`` of a running job is
    when its time limit will end it.  ``exit_code``/``signal`` from ``ExitCode=3:0`` / ``0:15`` of a job that
    ended (None before: Slurm shows ``0:0`` then)."""

    job_id: str
    name: str
    user: str | None
    state: str
    reason: str | None
    exit_code: int | None
    signal: int | None
    submit_time: float | None
    start_time: float | None
    end_time: float | None
    time_limit_s: int | None
    node_list: tuple[str, ...]
    comment: str | None
    partition: str | None
    account: str | None
    num_nodes: int | None
    std_out: str | None

    @property
    def instance_state(self) -> InstanceState:
        return state_of(self.state)

    @property
    def ended(self) -> bool:
        return state_of(self.state) is InstanceState.TERMINATED


def parse_job(text: str) -> JobRecord | None:
    """The job in ``scontrol show job -o ID``'s output; None for "Invalid job id specified" (never
    submitted, or forgotten by the controller).  Other failures raise as :func:`command_error` says."""
    if "Invalid job id specified" in text:
        return None
    lines = [line for line in text.splitlines() if line.startswith("JobId=")]
    if not lines:
        raise command_error(text, "reading the job") if text.strip() else PluginError(
            "scontrol show job printed nothing", hint="the login node's Slurm commands may be broken")
    f = record(lines[0])
    ended = state_of(f.get("JobState")) is InstanceState.TERMINATED
    code, _, sig = (f.get("ExitCode") or "").partition(":") if ended else ("", "", "")
    user = none_if_empty(f.get("UserId"))
    return JobRecord(
        job_id=f.get("JobId", ""), name=f.get("JobName", ""), user=user.split("(")[0] if user else None,
        state=f.get("JobState", "UNKNOWN"), reason=_reason(f.get("Reason")),
        exit_code=int(code) if code.isdigit() else None, signal=int(sig) if sig.isdigit() else None,
        submit_time=utc_time(f.get("SubmitTime")), start_time=utc_time(f.get("StartTime")),
        end_time=utc_time(f.get("EndTime")), time_limit_s=_duration(f.get("TimeLimit")),
        node_list=expand_hostlist(f.get("NodeList")), comment=none_if_empty(f.get("Comment")),
        partition=none_if_empty(f.get("Partition")), account=none_if_empty(f.get("Account")),
        num_nodes=int(f["NumNodes"]) if f.get("NumNodes", "").isdigit() else None,
        std_out=none_if_empty(f.get("StdOut")))


def _duration(text: str | None) -> int | None:
    try:
        return parse_duration(text)
    except ValueError:
        return None


# -- states -----------------------------------------------------------------------------------------------
_P, _R, _T = InstanceState.PENDING, InstanceState.RUNNING, InstanceState.TERMINATED
#: every job state of Slurm 22.05 (``squeue --help``'s list) → the workbench's
STATES: dict[str, InstanceState] = {
    "PENDING": _P, "CONFIGURING": _P, "REQUEUED": _P, "REQUEUE_FED": _P, "REQUEUE_HOLD": _P,
    "RESV_DEL_HOLD": _P, "SPECIAL_EXIT": _P, "RESIZING": _R,
    "RUNNING": _R, "COMPLETING": _R, "SUSPENDED": _R, "STOPPED": _R, "SIGNALING": _R, "STAGE_OUT": _R,
    "UPDATE_DB": _R,
    "COMPLETED": _T, "FAILED": _T, "TIMEOUT": _T, "CANCELLED": _T, "NODE_FAIL": _T, "PREEMPTED": _T,
    "OUT_OF_MEMORY": _T, "BOOT_FAIL": _T, "DEADLINE": _T, "REVOKED": _T,
}
# SUSPENDED and STOPPED keep their nodes (and, on a cluster that charges, the bill): RUNNING, not PENDING.


def state_of(name: str | None) -> InstanceState:
    """The workbench state of a Slurm state (long or as ``sacct`` writes it: ``CANCELLED by 1000``, flags
    after ``+``); UNKNOWN for anything else."""
    if not name:
        return InstanceState.UNKNOWN
    word = name.strip().split()[0].split("+")[0].upper() if name.strip() else ""
    return STATES.get(word, InstanceState.UNKNOWN)


#: how a job ended, and why a job waits, in plain words: the core's vocabulary (workbench.core.domain.queue_words),
#: which the app, the CLI and this plugin share (one set of words, translated once)
END_STATES: dict[str, str] = queue_words.END_STATES
REASONS: dict[str, str] = queue_words.REASONS


def end_words(state: str | None) -> str | None:
    """How a job in ``state`` ended, in plain words ("the time limit was reached (TIMEOUT)"); None while it
    has not ended."""
    if state is None or state_of(state) is not InstanceState.TERMINATED:
        return None
    return END_STATES.get(state.strip().split()[0].split("+")[0].upper())


def reason_words(reason: str | None) -> str | None:
    """Why a job waits, in plain words: the known reasons of :data:`REASONS` (also when Slurm appends
    details, ``ReqNodeNotAvail, UnavailableNodes:node2``), else Slurm's own text; None for no reason."""
    reason = none_if_empty(reason)
    return None if reason is None else queue_words.reason_words(reason)


# -- refusals -------------------------------------------------------------------------------------------------
_RULES: tuple[tuple[str, type[WorkbenchError], str, str], ...] = (
    # (what Slurm says: a regular expression over its lower-cased output) → error class, plain words, hint
    ("unable to contact slurm controller", TransientError, "the cluster's Slurm controller did not answer",
     "try again in a minute; if it lasts, the cluster may be down for maintenance"),
    ("socket timed out", TransientError, "the cluster's Slurm controller was too slow to answer",
     "the controller is busy; try again in a minute"),
    ("communication connection failure", TransientError, "the connection to the Slurm controller broke",
     "try again in a minute"),
    ("backup controller in standby", TransientError, "the cluster's Slurm controller is switching over",
     "try again in a minute"),
    ("fetch_config", ConfigError, "Slurm on the login node found no configuration in this SSH session",
     "the login node needs SLURM_CONF (or a slurm.conf in /etc/slurm) for commands run over SSH"),
    ("could not establish a configuration source", ConfigError,
     "Slurm on the login node found no configuration in this SSH session",
     "the login node needs SLURM_CONF (or a slurm.conf in /etc/slurm) for commands run over SSH"),
    ("invalid partition", ConfigError, "the cluster has no such partition",
     "pick one of the cluster's partitions (its offers list them)"),
    ("requested time limit is invalid", ConfigError,
     "the time limit is beyond what the partition (or your QOS) allows",
     "lower the job's max runtime to the partition's limit (its offers show it), or pick a partition with a longer one"),
    ("invalid --time specification", ConfigError, "Slurm did not understand the time limit",
     "give the max runtime in minutes"),
    ("invalid generic resource", ConfigError, "the partition has no GPUs of the kind or number asked for",
     "ask for a GPU model and count the partition has (its offers list them)"),
    ("invalid account or account/partition", ConfigError, "that account may not use this partition",
     "set an account the partition allows in the profile, or pick another partition"),
    ("invalid account", ConfigError, "Slurm does not know that account",
     "set one of your accounts in the profile (sacctmgr show assoc user=$USER lists them)"),
    ("invalid qos", ConfigError, "Slurm does not know that QOS, or your account may not use it",
     "set a QOS of your account in the profile, or none"),
    ("node count specification invalid", ConfigError, "the partition does not have (or allow) that many nodes",
     "ask for fewer nodes, or pick a partition with more"),
    ("memory specification can not be satisfied", ConfigError, "no node of the partition has that much memory",
     "ask for less memory per node (the partition's offers show each node's)"),
    ("required partition not available", ConfigError, "the partition takes no new jobs now (inactive or drained)",
     "pick another partition, or wait until the cluster's administrators open it again"),
    ("requested node configuration is not available", ConfigError,
     "no node of the partition has the GPUs, CPUs or memory asked for",
     "ask for at most the GPUs per node the partition's offers show"),
    ("requested partition configuration not available now", ConfigError,
     "the partition cannot take this job now (its limits, or it is down or drained)",
     "check the partition's limits and state in its offers, or pick another partition"),
    ("memory required by task is not available", ConfigError, "no node of the partition has that much memory",
     "ask for less memory per node"),
    ("more processors requested than permitted", ConfigError, "the job asks more CPUs than the partition allows",
     "ask for fewer CPUs per node"),
    ("group not permitted to use this partition", ConfigError, "your Unix group may not use this partition",
     "pick another partition, or ask the cluster's administrators"),
    ("invalid feature specification", ConfigError, "no node of the partition has the feature asked for",
     "remove the constraint, or pick a partition whose nodes have it"),
    ("job violates accounting/qos policy", QuotaError, "your account's or QOS's limits do not allow this job",
     "ask for fewer GPUs, nodes or less time, or ask the cluster's administrators for a higher limit"),
    ("qosmaxsubmitjobperuserlimit", QuotaError, "you have as many jobs queued as your QOS allows",
     "wait for some of your jobs to end, or cancel some"),
    ("access/permission denied", ConfigError, "Slurm refused the job: permission denied",
     "your user may not submit to this partition; ask the cluster's administrators"),
    ("command not found", ConfigError, "the login node has no Slurm commands in this SSH session",
     "check the login node: sbatch, squeue and scontrol must be on the PATH of a plain SSH command"),
    (r"(sbatch|squeue|scontrol|scancel|sinfo|srun): (\S+: )?not found", ConfigError,
     "the login node has no Slurm commands in this SSH session",
     "check the login node: sbatch, squeue and scontrol must be on the PATH of a plain SSH command"),
)


def _slurm_lines(output: str) -> str:
    """What Slurm said, its own lines kept (errors first); at most 400 characters."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith(MARK)]
    errors = [line for line in lines if "error" in line.lower() or "fatal" in line.lower()] or lines
    text = "; ".join(errors)
    return text if len(text) <= 400 else text[:397] + "…"


def command_error(output: str, doing: str) -> WorkbenchError:
    """The error for a Slurm command that failed while ``doing`` something ("submitting the job"): plain
    words, a hint, and Slurm's own line kept (Slurm's refusals hold no secret)."""
    said = _slurm_lines(output)
    low = output.lower()
    for needle, cls, message, hint in _RULES:
        if re.search(needle, low):
            named = re.search(r"invalid partition specified: (\S+)", output)
            if named and cls is ConfigError and needle == "invalid partition":
                message = f"the cluster has no partition {named.group(1)}"
            return cls(f"{message} ({doing}; Slurm said: {said})", hint=hint)
    return PluginError(f"Slurm failed {doing}: {said or 'no output'}",
                       hint="run the same command on the login node to see more")


def sbatch_error(stderr: str) -> WorkbenchError:
    """The error for ``sbatch``'s refusal (its stderr); see :func:`command_error`."""
    return command_error(stderr, "submitting the job")
