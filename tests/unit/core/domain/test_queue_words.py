"""A scheduler's words in plain language, and which free jobs on the user's own hardware are kept apart."""

from __future__ import annotations

import importlib

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.domain.queue_words import end_words, queue_reason, queue_start, reason_words
from workbench.core.money.billing_status import costs_money, kept_apart
from workbench_testing import FIXTURE_PLUGINS, ROOT


def test_reasons_in_plain_words_with_slurms_own_word():
    assert reason_words("Resources") == "waiting for GPUs or nodes to become free (Resources)"
    # Slurm appends details after a comma: the reason is still known
    assert reason_words("ReqNodeNotAvail, UnavailableNodes:node2") == \
        "a node it needs is down, drained or reserved (ReqNodeNotAvail)"
    assert reason_words("SomethingNew") == "SomethingNew"  # an unknown reason: Slurm's own text
    assert queue_reason({"queue_reason": "(Priority)"}) == "Priority" and queue_reason({}) is None
    assert queue_reason({"queue_reason": "  "}) is None


def test_estimated_start_and_how_a_job_ended():
    assert queue_start({"queue_start": 1_800_000_000}) == 1_800_000_000.0
    assert queue_start({"queue_start": "N/A"}) is None and queue_start({}) is None
    assert end_words({"slurm_state": "TIMEOUT"}) == "the time limit was reached (TIMEOUT)"
    assert end_words({"slurm_state": "NODE_FAIL+REQUEUED"}) == "a node of the job failed (NODE_FAIL)"
    # what the job's outcome already says is not said twice
    assert end_words({"slurm_state": "CANCELLED by 1000"}) is None and end_words({"slurm_state": "FAILED"}) is None
    assert end_words({"slurm_state": "RUNNING"}) is None and end_words({}) is None


def _job(provider: str, state=InstanceState.PENDING, price=0.0) -> Instance:
    return Instance(provider, "p", "i-1", "l-1", "r", "t", state, price_per_hour=price)


def test_free_jobs_on_own_hardware_are_kept_apart_and_cost_nothing(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "fixtures" / "cluster_plugins"))
    importlib.invalidate_caches()
    free = _job("fakecluster")
    assert kept_apart(free) and not costs_money(free)
    assert not kept_apart(_job("fakecluster", price=0.5)) and costs_money(_job("fakecluster", price=0.5))
    assert not kept_apart(_job("fakecluster", state=InstanceState.TERMINATED))
    assert kept_apart(_job("local", state=InstanceState.RUNNING))
    cloud = _job("fakecloud", state=InstanceState.RUNNING)  # a cloud machine bills even at $0 (it may not say)
    assert not kept_apart(cloud) and costs_money(cloud)
