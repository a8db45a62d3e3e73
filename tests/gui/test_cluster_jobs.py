"""Jobs on the user's own cluster in the app: Stop all keeps a free one apart, Instances and the Monitor say why it
waits, the wizard shows the cluster's offers beside the clouds', a cluster profile shows the app's login key.

The cluster is ``fakecluster`` (tests/fixtures/cluster_plugins): the fake cloud's JSON file with a cluster's face
(``own_hardware``, offers per partition with "free now", jobs that wait in a queue with the scheduler's words in
``extra``), found through its own entry point like any plugin.  The real Slurm is the plugin's own e2e.
"""

from __future__ import annotations

import importlib
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Instance, InstanceState, Profile
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.lifecycle.teardown import teardown
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import ProviderEntry, discover
from workbench.core.store.database import Store
from workbench.ui.common.job_state import start_text
from workbench.ui.instances.instances_model import COL_STATE, InstancesModel
from workbench.ui.instances.stop_all import StopAllDialog
from workbench.ui.runtime.session import Session, Snapshot
from workbench_testing import FIXTURE_PLUGINS, ROOT, MemoryCredentials

CLUSTER_PLUGINS = ROOT / "tests" / "fixtures" / "cluster_plugins"
GPU_JOB = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")
BUSY = "waiting for GPUs or nodes to become free (Resources)"


@pytest.fixture
def acc(home, monkeypatch):
    """Accounts that see the fake cloud and the fake cluster; a "cloud" profile and a free "hpc" cluster."""
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    monkeypatch.syspath_prepend(str(CLUSTER_PLUGINS))
    importlib.invalidate_caches()
    creds = MemoryCredentials()
    store = Store.open()
    a = Accounts(store, entries=discover(), credentials=creds)
    a.save_profile(Profile("cloud", "fakecloud", "fake-east"))
    creds.set("fakecloud", "cloud", {"account": "a"})
    yield a
    teardown(a, None, timeout=10, poll=0.1)
    store.close()


@pytest.fixture
def session(qtbot, acc):
    s = Session(acc)
    yield s
    qtbot.waitUntil(lambda: not s.refreshing, timeout=10_000)
    s.shutdown()


def _cluster(acc: Accounts, **settings: str) -> None:
    acc.save_profile(Profile("hpc", "fakecluster", "login.hpc.example", settings={"host": "login.hpc.example",
                                                                                  **settings}))


def _open(qtbot, session) -> StopAllDialog:
    dlg = StopAllDialog(session, timeout=5, poll=0.1)
    qtbot.addWidget(dlg)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.state in ("confirm", "nothing"), timeout=10_000)
    return dlg


def _rows(dlg: StopAllDialog) -> list[str]:
    return [dlg.model.index(r, 0).data() for r in range(dlg.model.rowCount())]


# ------------------------------------------------------------------------------------------------ Stop all billing

def test_stop_all_keeps_a_free_queued_cluster_job_apart_and_unticked(qtbot, acc, session):
    _cluster(acc, queue="Resources", queue_start_in="3600")
    job = execute(acc, choose_offer(acc, GPU_JOB, profile="hpc"))[0]
    machine = execute(acc, choose_offer(acc, GPU_JOB, profile="cloud"))[0]
    assert job.price_per_hour == 0.0 and job.state == InstanceState.PENDING
    dlg = _open(qtbot, session)
    assert _rows(dlg) == [f"t ({machine.instance_id})"]  # the money only
    [(box, item)] = dlg.local_box.boxes
    start = start_text(job.launched_at + 3600)
    assert box.text() == (f"t ({job.instance_id}) on login.hpc.example — queued: {BUSY} · estimated start {start} · "
                          "no charge")
    assert not box.isChecked() and dlg.local_box.title() == "Jobs on your cluster"
    assert "loses its place in the queue" in dlg.local_box.note.text()
    assert dlg.heading.text() == "Stop 1 billable thing(s), $3.06/h in total?"
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=15_000)
    assert dlg.result.text() == "0 billable resources remain"
    alive = {i.instance_id: i.state.billable for i in acc.store.list_instances()}
    assert alive == {machine.instance_id: False, job.instance_id: True}  # the queued job keeps its place
    assert [i.state for i in acc.provider(acc.profile("hpc")).instances()] == [InstanceState.PENDING]


def test_a_cluster_job_with_a_rate_is_ticked_like_a_cloud_machine(qtbot, acc, session):
    _cluster(acc, gpu_hour_rate="0.5")
    job = execute(acc, choose_offer(acc, GPU_JOB, profile="hpc"))[0]
    dlg = _open(qtbot, session)
    assert _rows(dlg) == [f"t ({job.instance_id})"] and dlg.local_box.boxes == []
    assert not dlg.local_box.isVisible() and dlg.stop_button.isEnabled()
    assert dlg.heading.text() == "Stop 1 billable thing(s), $0.50/h in total?"
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=15_000)
    assert dlg.model.status_of(job) == "verified"
    assert [i.state for i in acc.provider(acc.profile("hpc")).instances()] == [InstanceState.TERMINATED]


def test_a_free_job_here_and_one_on_the_cluster_share_the_box(qtbot, acc, session):
    _cluster(acc)
    job = execute(acc, choose_offer(acc, GPU_JOB, profile="hpc"))[0]
    here = execute(acc, choose_offer(acc, parse_spec("name: x\nrun: sleep 60\n"), provider="local"))[0]
    dlg = _open(qtbot, session)
    texts = sorted(box.text() for box, _ in dlg.local_box.boxes)
    assert texts == [f"t ({job.instance_id}) on login.hpc.example — running · no charge",
                     f"x ({here.instance_id}), free"]
    assert dlg.local_box.title() == "Jobs on this computer and your cluster"
    assert dlg.heading.text() == "Nothing is billing right now" and not dlg.stop_button.isEnabled()


# --------------------------------------------------------------------------------------------- Instances, Monitor

def _queued(**extra) -> Instance:
    return Instance("fakecluster", "hpc", "wb-1a2b", "1a2b", "login.hpc.example", "gpu · 2×V100",
                    InstanceState.PENDING, name="train", gpu_model="V100", gpu_count=2, launched_at=time.time(),
                    host="login.hpc.example",
                    extra={"slurm_job_id": "4242", "slurm_state": "PENDING", "partition": "gpu", "nodes": 1, **extra})


def test_instances_say_why_a_job_waits_and_when_it_may_start(qtbot):
    model = InstancesModel()
    start = time.time() + 1800
    pending = _queued(queue_reason="Resources", queue_start=start)
    other = _queued(queue_reason="QOSMaxGRESPerUser")
    unknown = _queued(queue_reason="SomethingNew")
    timed_out = Instance("fakecluster", "hpc", "wb-9z", "9z", "login.hpc.example", "gpu · 1×V100",
                         InstanceState.TERMINATED, name="late", extra={"slurm_state": "TIMEOUT"})
    model.set_snapshot(Snapshot(instances=(pending, other, unknown, timed_out)))
    cells = {model.instance(r).instance_id + str(model.instance(r).extra.get("queue_reason")):
             model.index(r, COL_STATE).data() for r in range(model.rowCount())}
    # the cell is short (Slurm's word); the tooltip says it in plain words
    assert cells["wb-1a2bResources"] == f"queued (Resources) · estimated start {start_text(start)}"
    assert cells["wb-1a2bQOSMaxGRESPerUser"] == "queued (QOSMaxGRESPerUser)"
    assert cells["wb-1a2bSomethingNew"] == "queued (SomethingNew)"
    assert cells["wb-9zNone"] == "terminated · the time limit was reached (TIMEOUT)"
    row = next(r for r in range(model.rowCount()) if model.instance(r).extra.get("queue_reason") == "Resources")
    tip = model.index(row, COL_STATE).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(f"queued (Resources) · estimated start {start_text(start)}\n")
    assert f"Why it waits: {BUSY}" in tip
    assert "Slurm job 4242 in partition gpu" in tip
    # a running job no longer waits: its reason (if a provider left one) is not shown
    running = pending.with_state(InstanceState.RUNNING)
    model.set_snapshot(Snapshot(instances=(running,)))
    assert model.index(0, COL_STATE).data() == "running"


def test_the_monitor_says_a_queued_job_has_no_readings_yet(qtbot, acc, session):
    from workbench.ui.monitor.monitor_view import MonitorView

    _cluster(acc, queue="Priority")
    job = execute(acc, choose_offer(acc, GPU_JOB, profile="hpc"))[0]
    view = MonitorView(session)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(session.snapshot_changed, timeout=10_000):
        session.refresh()
    inst = next(i for i in session.snapshot.instances if i.instance_id == job.instance_id)
    view.show_instance(inst)
    qtbot.waitUntil(lambda: "queued:" in view.message.text(), timeout=5_000)
    assert view.message.text() == ("t is queued: other jobs are ahead in the queue (Priority). "
                                   "Readings start when it runs.")
    picker = [view.instance_box.itemText(n) for n in range(view.instance_box.count())]
    assert any("queued (Priority)" in t for t in picker), picker


# ------------------------------------------------------------------------------------------------ wizard, profiles

def test_the_wizard_shows_cluster_offers_beside_the_clouds(qtbot, acc, session):
    from workbench.ui.launch.launch_wizard import LaunchWizard
    from workbench.ui.launch.offers_model import COL_AVAILABILITY, COL_ON_DEMAND, COL_SPOT

    _cluster(acc)
    wiz = LaunchWizard(session)
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "gpu-job")
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    page.gpu_count.setValue(1)
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    m = wiz.offer_page.model
    rows = {(m.offer(n).profile, m.offer(n).offer.instance_type): n for n in range(m.rowCount())}
    cluster = rows[("hpc", "gpu · 1×V100")]
    assert m.index(cluster, COL_ON_DEMAND).data() == "your cluster"
    assert m.index(cluster, COL_AVAILABILITY).data() == "free now: 3 of 8 nodes"
    assert ("cloud", "fk.v100x1") in rows  # beside the cloud's
    cloud = rows[("cloud", "fk.v100x1")]
    assert m.index(cloud, COL_ON_DEMAND).data() == "$3.060" and m.index(cloud, COL_AVAILABILITY).data() == "available"
    assert m.offer(cluster).offer.region == "login.hpc.example"
    header = wiz.offer_page.table.horizontalHeader()  # beside the prices (then the total, hidden for one machine)
    assert header.visualIndex(COL_AVAILABILITY) == header.visualIndex(COL_SPOT) + 2
    wiz.offer_page.select_row(cluster)
    wiz.next()
    wiz.next()
    review = wiz.review_page
    assert review.fields["where"].text() == "fakecluster / hpc, cluster login.hpc.example"
    assert review.fields["pricing"].text() == "your cluster: its profile sets no hourly rate"
    assert review.fields["on_finish"].text() == "end the batch job (its nodes go back to the cluster)"
    assert review.cost.text() == "No charge: your cluster" and not review.fields["disk"].isVisible()


def test_a_cluster_with_a_rate_shows_its_price(qtbot, acc):
    from workbench.core.offers.query import RankedOffer
    from workbench.ui.launch.offers_model import COL_ON_DEMAND, OffersModel

    _cluster(acc, gpu_hour_rate="0.75")
    offers = acc.provider(acc.profile("hpc")).offers()
    two = next(o for o in offers if o.instance_type == "gpu · 2×V100")
    model = OffersModel()
    model.set_offers([RankedOffer("hpc", two, two.prices.on_demand)], spot=False)
    assert model.index(0, COL_ON_DEMAND).data() == "$1.500"


def test_a_cluster_profile_shows_the_apps_login_key_to_add(qtbot, acc, session):
    from workbench.ui.accounts.profile_dialog import ProfileDialog
    from workbench_fakecluster.provider import FakeClusterProvider

    class OverSsh(FakeClusterProvider):  # the real plugin's shape: its login node is reached over SSH
        runs_jobs_over_ssh = True

    entries = {"fakecluster": ProviderEntry("fakecluster", "x:OverSsh", None, None, OverSsh),
               "fakecloud": acc.entries["fakecloud"]}
    dialog = ProfileDialog(session, entries, [], provider_id="fakecluster")
    qtbot.addWidget(dialog)
    dialog.show()
    row = dialog.login_key
    assert row is not None and row.isVisible()
    line = row.key.text()
    assert line.startswith("ssh-ed25519 ") and row.key.isReadOnly()
    assert line == (acc.store.path.parent / "ssh" / "id_ed25519.pub").read_text().strip()
    assert "~/.ssh/authorized_keys on the login node" in row.note.text()
    assert not dialog.form.isVisible()  # not "This provider needs no credentials": the key is its credential
    assert not dialog.creds_note.isVisible()  # nor "Secret fields are saved only in the system keyring"
    assert dialog.setting_edits.keys() >= {"host", "user", "gpu_hour_rate"}
    qtbot.mouseClick(row.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == line
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("fakecloud"))
    assert dialog.login_key is None and not dialog.findChildren(type(row), "profile-login-key")
    assert dialog.form.isVisible() and dialog.creds_note.isVisible()


def test_prices_compare_shows_the_cluster_and_rents_from_the_clouds(qtbot, acc, session):
    from workbench.ui.launch.offers_model import COL_AVAILABILITY, COL_ON_DEMAND, COL_SPOT
    from workbench.ui.prices.prices_view import PricesView

    _cluster(acc)
    view = PricesView(session)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.compare.compared, timeout=20_000):
        view.show()
    m = view.compare.model
    row = next(n for n in range(m.rowCount()) if m.offer(n).offer.instance_type == "gpu · 1×V100")
    assert m.index(row, COL_ON_DEMAND).data() == "your cluster"
    assert m.index(row, COL_AVAILABILITY).data() == "free now: 3 of 8 nodes"
    header = view.compare.table.horizontalHeader()
    assert header.visualIndex(COL_AVAILABILITY) == header.visualIndex(COL_SPOT) + 1
    # "cheapest" is what renting costs: the first priced cloud offer, not the cluster's "$0.00/h"
    assert "cheapest $3.06/h: fakecloud fk.v100x1" in view.compare.status.text()
