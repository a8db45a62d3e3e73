"""The shipped examples: the cloud one is a valid spec with storage and recovery; the Local one runs here,
is interrupted (a rehearsal notice), is relaunched by the recovery engine and resumes from its checkpoint."""

from __future__ import annotations

import dataclasses
import json
import time

from agent_run import wait_until
from workbench_testing import ROOT

from workbench.core import paths
from workbench.core.domain.jobspec import load_spec
from workbench.core.domain.models import StorageMode
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine, history
from workbench.core.lifecycle.teardown import teardown

EXAMPLES = ROOT / "resources" / "examples"


def test_the_cloud_example_asks_for_spot_storage_and_recovery():
    spec = load_spec(EXAMPLES / "spot-resume.yaml")
    assert spec.resources.spot and spec.recovery.max_restarts == 3 and spec.recovery.on == ("preemption",)
    assert [(m.path, m.mode) for m in spec.storage] == [("data", StorageMode.COPY), ("checkpoints", StorageMode.SYNC)]
    assert spec.storage[1].interval_s == 300 and spec.guards.budget_usd == 8


def test_the_local_example_resumes_after_an_interruption(cloud, tmp_path):
    acc = cloud.accounts
    store = tmp_path / "store"
    store.mkdir()
    example = load_spec(EXAMPLES / "spot-resume-local.yaml")
    mount = dataclasses.replace(example.storage[0], source=str(store), interval_s=1)  # not the repo's folder
    spec = dataclasses.replace(example, storage=(mount,), env={"STEPS": "400", "STEP_SECONDS": "0.2"})
    lp = plan(acc, spec)
    (first,) = execute(acc, lp)
    try:
        wait_until(lambda: len(list(store.glob("step-*.txt"))) >= 3, 60, "three checkpoints in the store")
        notice = {"source": "the example's rehearsal", "not_after": time.time() + 1}
        (paths.job_dir(first.launch_id) / "interrupt-notice").write_text(json.dumps(notice))
        wait_until(lambda: "the machine was not taken" in paths.job_log(first.launch_id).read_text(), 60,
                   "the pretend reclaim")
        last = max(int(p.stem.split("-")[1]) for p in store.glob("step-*.txt"))
        wait_until(lambda: not [i for i in reconcile(acc).instances if i.launch_id == first.launch_id
                                and i.state.active], 30, "the first attempt to end")
        (ev,) = RecoveryEngine(acc, teardown_poll_s=0.05).poll()
        assert ev.action == "relaunched" and "interruption notice: the example's rehearsal" in ev.message
        wait_until(lambda: f"checkpoint step {last + 1}\n" in paths.job_log(ev.launch_id).read_text(), 60,
                   "attempt 2's first step")
        assert f"attempt 2: resumed from checkpoint step {last}\n" in paths.job_log(ev.launch_id).read_text()
        assert [h["end_reason"] for h in history(acc.store, first.launch_id)] == ["preemption", None]
    finally:
        report = teardown(acc, None, timeout=30, poll=0.05)
    assert report.clean
