"""Our jobs in the queue, one job's record, states, reasons, Slurm's refusals and its time formats
(plugins/workbench_slurm/queue.py, formats.py), on outputs recorded from a real Slurm 22.05
(tests/fixtures/slurm/recorded/README.md)."""

from __future__ import annotations

import calendar
import subprocess
from pathlib import Path

import pytest
from workbench_slurm import formats, queue

from workbench.core.domain.errors import ConfigError, PluginError, QuotaError, TransientError
from workbench.core.domain.models import InstanceState

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "slurm" / "recorded"


def text(name: str) -> str:
    return (RECORDED / name).read_text()


def utc(stamp: str) -> float:
    return float(calendar.timegm(__import__("time").strptime(stamp, "%Y-%m-%dT%H:%M:%S")))


def test_the_recorded_queues_are_the_output_of_the_command_as_it_is_now():
    assert queue.squeue_command("workbench:") in text("README.md")
    assert queue.job_command("4") in text("README.md").replace("ID", "4")


def test_pending_job_with_its_reason_and_start_estimate():
    jobs = {j.job_id: j for j in queue.parse_squeue(text("squeue_pending.txt"))}
    assert set(jobs) == {"1", "3", "4"}  # job 5 (no comment of ours) filtered out on the login node
    wait = jobs["4"]
    assert (wait.name, wait.state, wait.reason, wait.nodes, wait.node_list) == ("wb-wait", "PENDING", "Resources", 2, ())
    assert wait.comment == "workbench:L-wait" and wait.instance_state is InstanceState.PENDING
    # squeue's %S of a pending job is the estimate `squeue --start` shows, recorded at the same moment
    start_col = text("squeue_start.txt").splitlines()[1].split()[5]
    assert wait.start_estimate == utc(start_col) == utc("2026-12-05T03:42:00")
    assert queue.reason_words(wait.reason) == "waiting for GPUs or nodes to become free (Resources)"
    run = jobs["3"]
    assert (run.state, run.reason, run.node_list, run.start_estimate) == ("RUNNING", None, ("node1",), utc("2026-12-05T03:22:00"))
    assert run.instance_state is InstanceState.RUNNING


def test_two_node_job_expands_its_node_list():
    (job,) = queue.parse_squeue(text("squeue_two_nodes.txt"))
    assert (job.job_id, job.nodes, job.node_list) == ("14", 2, ("node1", "node2"))


def test_reasons_in_plain_words_held_dependency_down_nodes():
    jobs = {j.name: j for j in queue.parse_squeue(text("squeue_variant.txt"))}
    assert queue.reason_words(jobs["wb-held"].reason) == "held by you: release it with scontrol release (JobHeldUser)"
    assert queue.reason_words(jobs["wb-after"].reason) == "waiting for another job to finish (Dependency)"
    assert queue.reason_words(jobs["wb-down"].reason) == "the nodes it needs are down, drained or reserved (ReqNodeNotAvail)"
    # scontrol writes the same reason with underscores for spaces: read alike
    record = queue.parse_job(text("job_nodes_down.txt"))
    assert record.reason == jobs["wb-down"].reason
    assert queue.reason_words("ReqNodeNotAvail, UnavailableNodes:node2") == REASON_REQ
    assert queue.reason_words("SomethingNew") == "SomethingNew" and queue.reason_words("None") is None


REASON_REQ = "a node it needs is down, drained or reserved (ReqNodeNotAvail)"


def test_jobs_over_partition_limits_pend_for_ever_and_say_why():
    # recorded without the comment filter or rc line: what sbatch accepts without EnforcePartLimits
    jobs = {j.job_id: j for j in queue.parse_squeue(text("squeue_partition_limits.txt") + "@@workbench-slurm@@ rc=0\n")}
    assert "never start" in queue.reason_words(jobs["9"].reason)  # PartitionTimeLimit
    assert "never start" in queue.reason_words(jobs["8"].reason)  # PartitionNodeLimit
    assert jobs["11"].reason.startswith("Job's account not known") and jobs["11"].comment is None
    # -c 8 on 2-CPU nodes, and a partition set down then inactive after the job was queued
    later = {j.job_id: j for j in queue.parse_squeue(text("squeue_partition_config.txt") + "@@workbench-slurm@@ rc=0\n")}
    assert (later["2"].reason, later["3"].reason) == ("PartitionConfig", "PartitionInactive")
    assert queue.reason_words("PartitionInactive") == "the partition is inactive (PartitionInactive)"


def test_squeue_failure_is_not_an_empty_queue():
    with pytest.raises(TransientError, match="Unable to contact slurm controller"):
        queue.parse_squeue(text("squeue_controller_down.txt"))
    with pytest.raises(TransientError, match="ended early"):
        queue.parse_squeue(text("squeue_pending.txt").replace("@@workbench-slurm@@ rc=0\n", ""))
    assert queue.parse_squeue("@@workbench-slurm@@ rc=0\n") == []


def test_squeue_command_filters_by_comment_in_sh_and_keeps_errors(tmp_path):
    # a stand-in squeue on PATH prints the recorded rows plus one job of ours and one of another tool, then fails
    rows = [line for line in text("squeue_partition_limits.txt").splitlines()]
    fake = tmp_path / "squeue"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(rows) + "\n42|#|RUNNING|#|None|#|1|#|N/A|#|node1|#|x|#|"
                    "workbench:abc:L-1\nsqueue: error: something broke\nEOF\nexit 1\n")
    fake.chmod(0o755)
    out = subprocess.run(["sh", "-c", queue.squeue_command("workbench:abc:")], capture_output=True, text=True,
                         timeout=30, env={"PATH": f"{tmp_path}:/usr/bin:/bin"}).stdout
    assert "42|#|RUNNING" in out and "|#|wrap|#|" not in out  # only our comment prefix
    assert "squeue: error: something broke" in out and "@@workbench-slurm@@ rc=1" in out
    with pytest.raises(PluginError, match="something broke"):
        queue.parse_squeue(out)
    with pytest.raises(ValueError):
        queue.squeue_command("x'; rm -rf ~")


@pytest.mark.parametrize(("name", "state", "exit_code", "signal", "words"), [
    ("job_exit3.txt", "FAILED", 3, 0, "the job exited with an error (FAILED)"),
    ("job_timeout.txt", "TIMEOUT", 0, 15, "the time limit was reached (TIMEOUT)"),
    ("job_cancelled_running.txt", "CANCELLED", 0, 15, "cancelled (CANCELLED)"),
    ("job_cancelled.txt", "CANCELLED", 0, 0, "cancelled (CANCELLED)"),
    ("job_completed.txt", "COMPLETED", 0, 0, "finished (COMPLETED)"),
])
def test_ended_jobs(name, state, exit_code, signal, words):
    job = queue.parse_job(text(name))
    assert (job.state, job.exit_code, job.signal) == (state, exit_code, signal)
    assert job.ended and job.instance_state is InstanceState.TERMINATED
    assert queue.end_words(job.state) == words
    assert job.user == "root" and job.comment and job.comment.startswith("workbench:")


def test_job_record_fields():
    job = queue.parse_job(text("job_timeout.txt"))
    assert (job.job_id, job.name, job.partition, job.node_list, job.num_nodes) == ("1", "wb-timeout", "a100", ("node3",), 1)
    assert (job.time_limit_s, job.reason, job.account) == (60, "TimeLimit", None)
    assert job.start_time == utc("2026-12-05T03:22:00") and job.end_time == utc("2026-12-05T03:23:26")
    assert job.std_out == "/scratch/rec/out/1.out" and job.comment == "workbench:L-timeout"
    pending = queue.parse_job(text("job_pending.txt"))
    assert (pending.state, pending.reason, pending.exit_code, pending.signal) == ("PENDING", "Resources", None, None)
    assert not pending.ended and pending.node_list == ()
    two = queue.parse_job(text("job_two_nodes.txt"))
    assert (two.state, two.node_list, two.num_nodes, two.exit_code) == ("RUNNING", ("node1", "node2"), 2, None)


def test_unknown_job_is_none_and_a_failing_controller_raises():
    assert queue.parse_job(text("job_invalid.txt")) is None
    with pytest.raises(TransientError):
        queue.parse_job(text("job_controller_down.txt"))
    with pytest.raises(ValueError):
        queue.job_command("1; scancel -u me")


def test_states():
    for name in ("PENDING", "CONFIGURING", "REQUEUED", "RESV_DEL_HOLD", "REQUEUE_HOLD"):
        assert queue.state_of(name) is InstanceState.PENDING
    for name in ("RUNNING", "COMPLETING", "SUSPENDED"):
        assert queue.state_of(name) is InstanceState.RUNNING
    for name in ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                 "BOOT_FAIL", "DEADLINE"):
        assert queue.state_of(name) is InstanceState.TERMINATED
        assert queue.end_words(name).endswith(f"({name})")
    assert queue.state_of("CANCELLED by 1000") is InstanceState.TERMINATED  # as sacct writes it
    assert queue.state_of("WHATEVER") is InstanceState.UNKNOWN and queue.state_of(None) is InstanceState.UNKNOWN
    assert queue.end_words("RUNNING") is None


@pytest.mark.parametrize(("name", "cls", "words"), [
    ("sbatch_unknown_partition.txt", ConfigError, "the cluster has no partition nosuch"),
    ("sbatch_too_many_gpus.txt", ConfigError, "no node of the partition has the GPUs"),
    ("sbatch_unknown_gpu_type.txt", ConfigError, "no node of the partition has the GPUs"),
    ("sbatch_bad_gres_syntax.txt", ConfigError, "no GPUs of the kind or number"),
    ("sbatch_bad_time_format.txt", ConfigError, "did not understand the time limit"),
    ("sbatch_enforce_time_over_max.txt", ConfigError, "time limit is beyond"),
    ("sbatch_enforce_time_over_max_gpu.txt", ConfigError, "time limit is beyond"),
    ("sbatch_enforce_too_many_nodes.txt", ConfigError, "that many nodes"),
    ("sbatch_enforce_account_not_allowed.txt", ConfigError, "that account may not use this partition"),
    ("sbatch_enforce_account_named.txt", ConfigError, "that account may not use this partition"),
    ("sbatch_controller_down.txt", TransientError, "did not answer"),
    ("sbatch_too_much_memory.txt", ConfigError, "no node of the partition has that much memory"),
    ("sbatch_partition_drained.txt", ConfigError, "takes no new jobs now"),
    ("sbatch_partition_inactive.txt", ConfigError, "takes no new jobs now"),
])
def test_sbatch_refusals_in_plain_words_with_slurms_line(name, cls, words):
    recorded = text(name)
    err = queue.sbatch_error(recorded)
    assert type(err) is cls and words in err.message and err.hint
    slurm_line = next(line for line in recorded.splitlines() if "error" in line)
    assert slurm_line in err.message  # the original Slurm line is kept


def test_other_refusals():
    err = queue.sbatch_error("sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
                             "(job submit limit, user's size and/or time limits)")
    assert isinstance(err, QuotaError) and "limits" in err.message
    err = queue.sbatch_error("sbatch: error: Batch job submission failed: Memory required by task is not available")
    assert isinstance(err, ConfigError) and "memory" in err.message
    err = queue.sbatch_error("sbatch: error: Batch job submission failed: Requested partition configuration not "
                             "available now")
    assert isinstance(err, ConfigError) and "cannot take this job now" in err.message
    err = queue.sbatch_error("sh: 1: sbatch: not found")
    assert isinstance(err, ConfigError) and "no Slurm commands" in err.message
    err = queue.sbatch_error("sbatch: error: Batch job submission failed: Something new happened")
    assert isinstance(err, PluginError) and "Something new happened" in err.message


@pytest.mark.parametrize(("slurm", "seconds"), [
    ("2", 120), ("30:00", 1800), ("00:30:00", 1800), ("1:00:00", 3600), ("1-00:00:00", 86400),
    ("2-12", 216000), ("1-02:30", 95400), ("UNLIMITED", None), ("INFINITE", None), ("NONE", None), ("", None),
])
def test_parse_duration(slurm, seconds):
    assert queue.parse_duration(slurm) == seconds


def test_time_limit_rounds_minutes_up_and_reads_back():
    assert queue.time_limit(60) == "1" and queue.time_limit(61) == "2" and queue.time_limit(2700) == "45"
    assert queue.time_limit(3600) == "0-01:00:00" and queue.time_limit(90000) == "1-01:00:00"
    for seconds in (59, 3599, 3601, 86400 + 1, 7 * 86400):
        assert queue.parse_duration(queue.time_limit(seconds)) >= seconds
    with pytest.raises(ValueError):
        queue.time_limit(0)
    with pytest.raises(ValueError):
        queue.parse_duration("abc")


def test_hostlists_and_gres():
    assert formats.expand_hostlist("node[1-2,5],gpu-a[01-03],login") == (
        "node1", "node2", "node5", "gpu-a01", "gpu-a02", "gpu-a03", "login")
    assert formats.expand_hostlist("rack[1-2]-n[1-2]") == ("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2")
    assert formats.expand_hostlist("(null)") == ()
    assert formats.gpus_of(formats.parse_gres("gpu:v100:2(S:0-1),gpu:a100_80g:1,shard:8")) == {"v100": 2, "a100_80g": 1}
    assert formats.gpus_of(formats.parse_gres("gpu:v100:1(IDX:0),gpu:a100_80g:0(IDX:N/A)")) == {"v100": 1, "a100_80g": 0}
    assert formats.gpus_of(formats.parse_gres("gpu:2")) == {None: 2} and formats.parse_gres("(null)") == []
