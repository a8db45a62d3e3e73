"""The state column: spot interruption and the job's outcome are shown, not hidden behind the cloud's state."""

from __future__ import annotations

from PySide6.QtCore import Qt

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.lifecycle.outcome import job_outcome
from workbench.core.store.database import LaunchRecord
from workbench.ui.instances.instances_model import InstancesModel, state_text
from workbench.ui.runtime.session import Snapshot


def _inst(state: InstanceState, **kw) -> Instance:
    return Instance("aws", "p", "i-1", "l-1", "us-east-1", "p3.2xlarge", state, **kw)


def _local(state: InstanceState, **kw) -> Instance:
    return Instance("local", "local", "local-l-1", "l-1", "local", "this-computer", state, **kw)


def _launch(status: str) -> LaunchRecord:
    return LaunchRecord(launch_id="l-1", name="job", provider="local", profile="local", region="local",
                        created_at=0.0, status=status)


def test_spot_interruption_is_its_own_state(qapp) -> None:
    assert state_text(_inst(InstanceState.TERMINATED, extra={"spot_interrupted": True})).startswith("Spot interrupted (")
    assert state_text(_inst(InstanceState.TERMINATED, extra={"evicted": True})).startswith("Spot interrupted (")
    assert "Spot interrupted" not in state_text(_inst(InstanceState.TERMINATED))


def test_finished_and_failed_read_apart(qapp) -> None:
    assert state_text(_local(InstanceState.TERMINATED, exit_code=0)) == "finished · exit 0"
    assert state_text(_local(InstanceState.TERMINATED, exit_code=2)) == "failed · exit 2"
    # the job ended, the cloud machine still bills: both are said
    assert state_text(_inst(InstanceState.RUNNING, exit_code=3)) == "failed · exit 3 · machine running"
    assert state_text(_inst(InstanceState.RUNNING)) == "running"


def test_stopped_by_you_or_by_a_guard(qapp) -> None:
    by_user = _local(InstanceState.TERMINATED, exit_code=143, extra={"reason": "terminated by user"})
    assert state_text(by_user) == "stopped by you"
    torn_down = _inst(InstanceState.TERMINATED)
    assert state_text(torn_down, _launch("terminated")) == "stopped by you"
    assert state_text(torn_down, _launch("terminated"), "max runtime of 60 min reached") == \
        "stopped by a guard: max runtime of 60 min reached"
    assert state_text(torn_down, _launch("failed")) == "terminated"  # not known to be ours: the machine's state
    assert job_outcome(_inst(InstanceState.STOPPED)) is None  # a stopped machine is not a job outcome


def test_outcomes_have_distinct_colours_and_icons(qapp) -> None:
    model = InstancesModel()
    ok = _local(InstanceState.TERMINATED, exit_code=0)
    bad = Instance("local", "local", "local-l-2", "l-2", "local", "this-computer", InstanceState.TERMINATED,
                   exit_code=2)
    model.set_snapshot(Snapshot(instances=(ok, bad), taken_at=1.0))
    looks = {}
    for row in range(2):
        idx = model.index(row, 5)
        looks[idx.data()] = (idx.data(Qt.ItemDataRole.ForegroundRole).color().name(),
                             idx.data(Qt.ItemDataRole.DecorationRole).cacheKey())
    assert set(looks) == {"finished · exit 0", "failed · exit 2"}
    (c1, i1), (c2, i2) = looks.values()
    assert c1 != c2 and i1 != i2


def test_a_preempted_attempt_that_was_relaunched_reads_interrupted_not_failed(qapp) -> None:
    # Issue 29: the SIGTERM of the cloud taking the machine back gave "failed · exit 143" in red
    from workbench.core.lifecycle.outcome import INTERRUPTED, relaunches
    from workbench.core.store.attempts import AttemptRecord

    attempts = [AttemptRecord("l-1", "l-1", 1, 0.0, "ended", 10.0, "preemption"),
                AttemptRecord("l-1-a2-beef", "l-1", 2, 11.0, "running"),
                AttemptRecord("l-9", "l-9", 1, 0.0, "ended", 10.0, "failure"),
                AttemptRecord("l-9-a2-cafe", "l-9", 2, 11.0, "launch_failed"),  # never started: no relaunch
                AttemptRecord("l-5", "l-5", 1, 0.0, "ended", 10.0, "failure"),
                AttemptRecord("l-5-a2-f00d", "l-5", 2, 11.0, "running")]
    again = relaunches(attempts)
    assert again == {"l-1": ("preemption", 2), "l-5": ("failure", 2)}
    gone = _inst(InstanceState.TERMINATED, exit_code=143, spot=True, extra={"spot_interrupted": True})
    assert job_outcome(gone, "failed", None, again["l-1"]).kind == INTERRUPTED
    assert state_text(gone, _launch("failed"), None, again["l-1"]) == "interrupted · relaunched as attempt 2"
    failed = _local(InstanceState.TERMINATED, exit_code=3)
    assert state_text(failed, _launch("failed"), None, again["l-5"]) == "failed · exit 3 · relaunched as attempt 2"
    assert state_text(failed, _launch("failed")) == "failed · exit 3"
    model = InstancesModel()
    model.set_snapshot(Snapshot(instances=(gone,), launches={"l-1": _launch("failed")}, relaunched=again))
    assert model.index(0, 5).data() == "interrupted · relaunched as attempt 2"
    assert model.index(0, 5).data(Qt.ItemDataRole.ForegroundRole) is not None
