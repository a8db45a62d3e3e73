"""The app over a real Slurm (issue 35): a job waiting for busy GPUs is shown with Slurm's reason in Instances, kept
apart and unticked in Stop all billing (it is free and may have waited long for its place), and Stop all leaves it
queued; a queued job the user ticks is cancelled with nothing of ours left.

The cluster, the login sshd and the CLI home come from test_slurm_jobs.py's fixtures; the window side is the real
Session (refresh = the provider's squeue over SSH) and the real dialogs.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from test_slurm_jobs import _instance, _ours, hpc, queue_behind_other_user, slurm_login_for  # noqa: F401

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def queued(hpc):
    """A free cluster job PENDING on Resources: another user holds every V100 of the gpu partition."""
    lid, _, other = queue_behind_other_user(hpc)
    return hpc, lid, other


@pytest.fixture
def session(qtbot, queued, monkeypatch):
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.runtime.session import Session

    hpc, _, _ = queued
    monkeypatch.setenv("WORKBENCH_HOME", str(hpc.home))
    store = Store.open()
    s = Session(Accounts(store, entries=discover()))
    yield s
    qtbot.waitUntil(lambda: not s.refreshing, timeout=20_000)
    s.shutdown()
    store.close()


def test_instances_show_why_the_job_waits_and_stop_all_keeps_it_apart(qtbot, queued, session):
    from workbench.ui.instances.instances_model import COL_STATE, InstancesModel
    from workbench.ui.instances.stop_all import StopAllDialog

    hpc, lid, other = queued
    model = InstancesModel()
    session.snapshot_changed.connect(model.set_snapshot)
    session.refresh()
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=20_000)
    state = model.index(0, COL_STATE).data()
    assert state.startswith("queued") and "(Resources)" in state, state
    assert "Slurm job" in model.index(0, COL_STATE).data(Qt.ItemDataRole.ToolTipRole)

    dlg = StopAllDialog(session, timeout=30, poll=0.5)
    qtbot.addWidget(dlg)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.state in ("confirm", "nothing"), timeout=20_000)
    [(box, _)] = dlg.local_box.boxes
    assert not box.isChecked() and dlg.local_box.title() == "Jobs on your cluster"
    assert "(Resources)" in box.text() and "no charge" in box.text()
    # nothing bills: Stop all has nothing to stop unless the job is ticked
    assert dlg.heading.text() == "Nothing is billing right now" and not dlg.stop_button.isEnabled()
    box.setChecked(True)  # the user chooses to give its place up
    qtbot.waitUntil(lambda: dlg.stop_button.isEnabled(), timeout=5_000)
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=90_000)
    assert not _ours(hpc.cluster)
    assert hpc.cluster.job(other)["JobState"] == "RUNNING"  # the other user's job is never touched
    assert _instance(hpc, lid)["state"] == "terminated"
