"""Storage and recovery in the GUI: the wizard's "Data and recovery" box (a spec's mounts shown, a bucket picked
from the accounts' listing against moto, a folder to upload), the review page's bucket check, a launch that
uploads first; and recovery after a refresh: the interrupted launch relaunched, "attempt 2" in Instances and
Spend, the notification."""

from __future__ import annotations

import json
import textwrap

import boto3
import pytest
from PySide6.QtWidgets import QWizard

import aws_moto
from workbench.core import paths
from workbench.core.domain.models import Profile, StorageMode, StorageMount
from workbench.ui.launch.launch_storage import BucketDialog
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session


@pytest.fixture
def moto():
    stack = aws_moto.start()
    stack.reset()
    yield stack
    stack.reset()


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def _wizard(qtbot, session, spec_path=None) -> LaunchWizard:
    wiz = LaunchWizard(session, spec_path=spec_path)
    qtbot.addWidget(wiz)
    wiz.show()
    return wiz


def _aws(fake_accounts, moto) -> None:
    fake_accounts.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=moto.url,
                                       settings={"retry_backoff_cap_s": "0.02", "pricing": "snapshot"}))
    fake_accounts.credentials.set("aws", "moto", {"access_key_id": "AKIAGUITEST000000001",
                                                  "secret_access_key": "gui-test-not-secret"})


def test_a_spec_s_mounts_and_recovery_show_in_the_box_and_on_the_review_page(qtbot, fake_session, fake_accounts,
                                                                             tmp_path, moto):
    _aws(fake_accounts, moto)
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="AKIAX",
                      aws_secret_access_key="x")
    s3.create_bucket(Bucket="lab-west", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="lab-west", Key="mnist/a.bin", Body=b"\0" * 2_000_000)
    fake_accounts.add_fake()
    spec = tmp_path / "job.yaml"
    spec.write_text(textwrap.dedent("""\
        name: resume
        run: python3 train.py
        providers: [fakecloud]
        resources: {gpu: V100:1, spot: true}
        storage:
          - {path: data, source: s3://lab-west/mnist, mode: copy}
          - {path: checkpoints, source: s3://lab-west/runs/r1, mode: sync, interval: 2m}
        recovery: {max_restarts: 2, on: [preemption]}
        """))
    wiz = _wizard(qtbot, fake_session, str(spec))
    box = wiz.job_page.storage_box
    assert [(m.path, m.mode) for m in box.mounts()] == [("data", StorageMode.COPY), ("checkpoints", StorageMode.SYNC)]
    assert box.recovery_on.isChecked() and box.restarts.value() == 2
    assert box.note.isVisible() and "account's controller" in box.note.text()
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.next()
    review = wiz.review_page
    assert "relaunch after a spot interruption, up to 2 times" in review.fields["recovery"].text()
    qtbot.waitUntil(lambda: "2.0 MB in 1 files" in review.fields["storage"].text(), timeout=20_000)
    text = review.fields["storage"].text()
    assert "copy s3://lab-west/mnist → data before setup" in text and "us-west-2" in text
    assert "sync checkpoints → s3://lab-west/runs/r1 every 2 min" in text
    assert review.storage_warning.isVisible() and "bills data leaving it" in review.storage_warning.text()


def test_pick_a_bucket_from_the_accounts_and_add_a_folder(qtbot, fake_session, fake_accounts, tmp_path, moto):
    _aws(fake_accounts, moto)
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="AKIAX",
                      aws_secret_access_key="x")
    for name in ("alpha-data", "beta-runs"):
        s3.create_bucket(Bucket=name)
    wiz = _wizard(qtbot, fake_session)
    box = wiz.job_page.storage_box
    box.ask_bucket()
    dlg = box.dialog
    assert isinstance(dlg, BucketDialog)
    qtbot.waitUntil(lambda: dlg.list.count() == 2, timeout=15_000)
    assert "2 buckets" in dlg.status.text()
    dlg.list.setCurrentRow(1)
    assert dlg.address.text() == "s3://beta-runs"
    dlg.prefix.setText("runs/r7")
    dlg.path.setText("checkpoints")
    dlg.mode.setCurrentIndex(1)
    dlg._accept()
    folder = tmp_path / "my-dataset"
    folder.mkdir()
    box.add_folder_path(str(folder))
    assert box.mounts() == (StorageMount("checkpoints", "s3://beta-runs/runs/r7", StorageMode.SYNC, 300),
                            StorageMount("my-dataset", str(folder), StorageMode.COPY, 300))
    box.recovery_on.setChecked(True)
    wiz.job_page.name_edit.setText("picked")
    wiz.job_page.command_edit.setPlainText("python3 train.py")
    wiz.next()
    spec = wiz.draft.value.launch_spec()
    assert spec.storage == box.mounts() and spec.recovery is not None and spec.recovery.on == ("preemption",)


def test_after_a_refresh_an_interrupted_launch_is_relaunched_and_labelled(qtbot, fake_session, fake_accounts):
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import choose_offer as plan, execute
    from workbench.ui.instances.instances_model import InstancesModel
    from workbench.ui.money.spend_view import build_report

    fake_accounts.add_fake()
    spec = parse_spec("name: train\nrun: python3 train.py\nresources: {gpu: V100:1, spot: true}\n"
                      "providers: [fakecloud]\nrecovery: {max_restarts: 1, on: [preemption]}\n", source="t.yaml")
    (first,) = execute(fake_accounts, plan(fake_accounts, spec, provider="fakecloud"))
    prov = fake_accounts.provider(fake_accounts.profile("fake"))
    with prov._state() as st:
        st["instances"][first.instance_id]["state"] = "terminated"
    (paths.job_dir(first.launch_id) / "interrupted").write_text(json.dumps(
        {"reason": "preemption", "source": "AWS spot instance-action (terminate)", "saved": True}))
    notes = []
    fake_session.notify.connect(lambda title, message, level: notes.append((title, message)))
    fake_session.refresh()
    qtbot.waitUntil(lambda: any(t == "Job relaunched" for t, _ in notes), timeout=20_000)
    qtbot.waitUntil(lambda: len([i for i in fake_session.snapshot.instances if i.state.active]) == 1, timeout=20_000)
    model = InstancesModel()
    model.set_snapshot(fake_session.snapshot)
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert "train · attempt 2" in names
    report = build_report(fake_accounts, fetch_actual=False)
    assert any(r.name == f"train · attempt 2 of {first.launch_id}" for r in report.rows)
