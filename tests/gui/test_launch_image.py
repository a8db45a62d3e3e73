"""The wizard's container image: a spec's image and registry login fill the job page and go back into the
launched spec; a bad reference blocks Next with its reason; the registry password is a launch secret that
never lands in the store; Instances and the run report name the image."""

from __future__ import annotations

import uuid

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.domain.models import ContainerImage, Instance, InstanceState, RegistryAuth
from workbench.core.store.database import LaunchRecord
from workbench.core.telemetry.report import build_report, image_digest
from workbench.core.telemetry.report_html import render_html
from workbench.ui.instances.instances_model import InstancesModel
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.launch_job_page import JobPage
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session, Snapshot

NEXT, FINISH = QWizard.WizardButton.NextButton, QWizard.WizardButton.FinishButton
IMAGE = "registry.example.com/team/train:1.2"
SPEC = (f"name: boxed\nrun: python3 train.py\nproviders: [fakecloud]\nresources:\n  gpu: V100:1\n"
        f"secrets: [REGISTRY_TOKEN]\nimage:\n  name: {IMAGE}\n  registry_auth: {{username: bot, password: "
        f"REGISTRY_TOKEN}}\n  shm_size: 16g\n  user: '1000:1000'\nguards:\n  max_runtime: 10m\n")


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def _page(qtbot, tmp_path, text: str = SPEC) -> JobPage:
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(text, encoding="utf-8")
    page = JobPage(Draft())
    qtbot.addWidget(page)
    assert page.load_file(str(spec_file)), page.load_error
    return page


def test_image_fields_are_filled_from_a_spec_and_written_back(qtbot, tmp_path):
    page = _page(qtbot, tmp_path)
    box = page.image_box
    assert box.image_edit.text() == IMAGE and box.login.isChecked()
    assert (box.login_user.text(), box.login_secret.text()) == ("bot", "REGISTRY_TOKEN")
    assert (box.shm_edit.text(), box.user_edit.text()) == ("16g", "1000:1000")
    spec = page.build_spec()
    assert spec.image == ContainerImage(IMAGE, RegistryAuth("bot", "REGISTRY_TOKEN"), "16g", "1000:1000")
    assert spec.secrets == ("REGISTRY_TOKEN",)
    # a login typed on a new form names its secret, which the launch then asks for
    box.image_edit.setText("docker:ghcr.io/lab/job@sha256:" + "a" * 64)
    box.login_secret.setText("GHCR_TOKEN")
    spec = page.build_spec()
    assert spec.image.name == "ghcr.io/lab/job@sha256:" + "a" * 64 and spec.image.registry == "ghcr.io"
    assert spec.image.registry_auth == RegistryAuth("bot", "GHCR_TOKEN") and spec.secrets == ("REGISTRY_TOKEN",
                                                                                              "GHCR_TOKEN")
    box.login.setChecked(False)
    box.shm_edit.clear()
    assert page.build_spec().image == ContainerImage("ghcr.io/lab/job@sha256:" + "a" * 64, None, None, "1000:1000")
    box.image_edit.clear()  # no image: the job runs on the machine itself, the other fields are off
    assert page.isComplete() and page.build_spec().image is None and not box.user_edit.isEnabled()


@pytest.mark.parametrize("field, text, reason", [
    ("image_edit", "Team/Train:1.2", "'Team/Train:1.2' is not an image reference"),
    ("image_edit", "registry.example.com/train:bad tag", "is not an image reference"),
    ("shm_edit", "16 GB", "Shared memory: must be a size like 16g or 512m, got '16 GB'"),
    ("user_edit", "root;rm", "must be a user name, a uid or uid:gid"),
    ("login_user", "", "Registry login: give the user name."),
    ("login_secret", "my-token", "'my-token' is not a variable name"),
])
def test_a_bad_image_field_blocks_next_with_its_reason(qtbot, session, tmp_path, field, text, reason):
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(SPEC.replace("providers: [fakecloud]\n", ""), encoding="utf-8")
    wiz = LaunchWizard(session, spec_path=str(spec_file))
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    assert wiz.button(NEXT).isEnabled()
    getattr(page.image_box, field).setText(text)
    assert not wiz.button(NEXT).isEnabled() and not page.isComplete()
    assert reason in page.problem() and page.error.isVisible() and reason in page.error.text()


def test_the_registry_password_is_asked_at_launch_and_never_stored(qtbot, fake_accounts, fake_session, tmp_path,
                                                                   home):
    fake_accounts.add_fake("fc", regions="fake-east")
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(SPEC, encoding="utf-8")
    wiz = LaunchWizard(fake_session, spec_path=str(spec_file))
    qtbot.addWidget(wiz)
    wiz.show()
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.next()
    review = wiz.review_page
    assert wiz.currentPage() is review
    assert review.fields["image"].text() == f"{IMAGE} · login as bot to registry.example.com"
    assert review.form.isRowVisible(review.fields["image"])
    assert not wiz.button(FINISH).isEnabled()  # the secret has no value yet
    password = f"pw-{uuid.uuid4().hex}"
    edit = review.secrets.edits["REGISTRY_TOKEN"]
    assert edit.echoMode() == edit.EchoMode.Password
    assert edit.placeholderText() == "password or token of bot at registry.example.com"
    qtbot.keyClicks(edit, password)
    assert wiz.button(FINISH).isEnabled()
    with qtbot.waitSignal(wiz.launched, timeout=20_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    rec = fake_accounts.store.get_launch(launched.args[0])
    assert rec.spec["image"] == {"name": IMAGE, "shm_size": "16g", "user": "1000:1000",
                                 "registry_auth": {"username": "bot", "password": "REGISTRY_TOKEN"}}
    assert rec.spec["secrets"] == ["REGISTRY_TOKEN"]
    files = [p for p in home.rglob("*") if p.is_file()]  # the store, its WAL, logs, settings
    assert any(p.name == "state.sqlite3" for p in files)
    leaks = [p for p in home.rglob("*") if p.is_file() and password.encode() in p.read_bytes()]
    assert leaks == []


def test_instances_show_the_image_of_a_launch(qtbot):
    spec = {"name": "boxed", "run": "true", "image": {"name": IMAGE, "shm_size": None, "user": None,
                                                      "registry_auth": {"username": "bot", "password": "TOKEN"}}}
    boxed = LaunchRecord("L-boxed", "boxed", "local", "local", "local", 1.0, "running", spec)
    plain = LaunchRecord("L-plain", "plain", "local", "local", "local", 1.0, "running", {"name": "plain"})
    rows = tuple(Instance(provider="local", profile="local", instance_id=f"i-{n}", name=n, region="local",
                          instance_type="this-computer", state=InstanceState.RUNNING, launch_id=f"L-{n}")
                 for n in ("boxed", "plain"))
    model = InstancesModel()
    model.set_snapshot(Snapshot(instances=rows, launches={"L-boxed": boxed, "L-plain": plain}))
    tips = {model.instance(r).name: model.index(r, 0).data(Qt.ItemDataRole.ToolTipRole) for r in range(2)}
    assert f"Image: {IMAGE} · login as bot to registry.example.com" in tips["boxed"]
    assert "Image:" not in tips["plain"]


def test_the_run_report_names_the_image_by_digest_or_says_it_is_unknown(home):
    from workbench.core import paths
    from workbench.core.store.database import Store

    digest = "sha256:" + "b" * 64
    assert image_digest("L-pinned", "ghcr.io/lab/job@" + digest) == digest  # the reference pins it
    store = Store.open()
    try:
        for lid in ("L-pulled", "L-nolog", "L-plain"):
            spec = {"name": lid, "run": "true", **({"image": {"name": IMAGE}} if lid != "L-plain" else {})}
            store.add_launch(LaunchRecord(lid, lid, "local", "local", "local", 1.0, "finished", spec))
        paths.job_log("L-pulled").write_text(f"[workbench] pulling {IMAGE}\n1.2: Pulling from team/train\n"
                                             f"Digest: {digest}\nStatus: Downloaded newer image\n", encoding="utf-8")
        pulled, nolog, plain = (build_report(store, lid) for lid in ("L-pulled", "L-nolog", "L-plain"))
    finally:
        store.close()
    assert (pulled.image, pulled.image_digest) == (IMAGE, digest)
    assert f"Image: {IMAGE} · by digest {digest}" in render_html(pulled)
    assert (nolog.image, nolog.image_digest) == (IMAGE, None)
    assert f"Image: {IMAGE} · digest unknown (the pull did not log it)" in render_html(nolog)
    assert plain.image is None and "Image:" not in render_html(plain)


def test_an_image_with_spot_recovery_goes_on_as_the_launcher_lets_it(qtbot, tmp_path):
    page = _page(qtbot, tmp_path)
    assert page.isComplete()
    page.storage_box.recovery_on.setChecked(True)  # the storage agent runs on the machine around the container
    assert page.isComplete() and page.problem() is None
