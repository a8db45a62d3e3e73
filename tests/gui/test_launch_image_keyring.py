"""The wizard's registry login with the keyring (issue 34), against the real Secret Service: "Use the password
saved for HOST" when ``workbench registry login`` saved one (the launch reads it; nothing is asked), and "Save
for next time" keeping a password typed on the review page for the image's registry."""

from __future__ import annotations

import uuid

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from secret_service import needs_secret_service
from workbench.core.domain.models import REGISTRY_KEYRING_SECRET, RegistryAuth
from workbench.core.lifecycle import launch_secrets
from workbench.core.providers.credentials import CredentialStore
from workbench.core.providers.registry_logins import KEYRING_OWNER, RegistryLogins
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.launch_job_page import JobPage
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session

pytestmark = [needs_secret_service]
FINISH = QWizard.WizardButton.FinishButton
HOST = "registry.example.com"
IMAGE = f"{HOST}/team/train:1.2"
SPEC = (f"name: boxed\nrun: python3 train.py\nproviders: [fakecloud]\nresources:\n  gpu: V100:1\n"
        "secrets: [REGISTRY_TOKEN]\nimage:\n  name: " + IMAGE + "\n  registry_auth: {username: bot, password: "
        "REGISTRY_TOKEN}\nguards:\n  max_runtime: 10m\n")


@pytest.fixture
def keyring_accounts(fake_accounts):
    """fake_accounts on the session's real Secret Service (the fake cloud's own entry copied there)."""
    memory = fake_accounts.credentials
    fake_accounts.add_fake("fc", regions="fake-east")
    real = CredentialStore()
    real.set("fakecloud", "fc", memory.get("fakecloud", "fc"))
    fake_accounts._credentials = real
    yield fake_accounts
    real.delete(KEYRING_OWNER, HOST)


@pytest.fixture
def wizard_for(qtbot, keyring_accounts, tmp_path):
    session = Session(keyring_accounts)

    def make(text: str) -> LaunchWizard:
        spec_file = tmp_path / "job.yaml"
        spec_file.write_text(text, encoding="utf-8")
        wiz = LaunchWizard(session, spec_path=str(spec_file))
        qtbot.addWidget(wiz)
        wiz.show()
        return wiz

    yield make
    session.shutdown()


def _to_review(qtbot, wiz: LaunchWizard) -> None:
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page


def test_the_password_saved_for_the_registry_is_offered_and_used_without_asking(qtbot, keyring_accounts,
                                                                              wizard_for, home):
    password = f"saved-{uuid.uuid4().hex}"
    RegistryLogins(keyring_accounts.credentials).save(HOST, "bot", password)
    wiz = wizard_for(SPEC.replace("secrets: [REGISTRY_TOKEN]\n", "").replace("password: REGISTRY_TOKEN",
                                                                               "password: keyring"))
    box = wiz.job_page.image_box
    # the spec's `password: keyring` ticks "use the saved password": the secret's field and "save" are off
    assert box.use_saved.isVisible() and box.use_saved.isChecked()
    assert box.use_saved.text() == f"Use the password saved for {HOST}"
    assert not box.login_secret.isEnabled() and not box.save_login.isEnabled()
    spec = wiz.job_page.build_spec()
    assert spec.image.registry_auth == RegistryAuth("bot", "keyring") and spec.secrets == ()
    # another user than the saved one blocks Next with the reason
    box.login_user.setText("alice")
    assert not wiz.job_page.isComplete() and "is bot's" in wiz.job_page.problem()
    box.login_user.setText("bot")
    assert wiz.job_page.isComplete()
    _to_review(qtbot, wiz)
    assert wiz.review_page.secrets.edits == {} and wiz.button(FINISH).isEnabled()  # nothing to ask
    with qtbot.waitSignal(wiz.launched, timeout=20_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id = launched.args[0]
    rec = keyring_accounts.store.get_launch(launch_id)
    assert rec.spec["image"]["registry_auth"] == {"username": "bot", "password": "keyring"}
    # read from the keyring by the launch, handed on as the launch secret; on no disk
    assert launch_secrets.values(launch_id) == {REGISTRY_KEYRING_SECRET: password}
    assert [p for p in home.rglob("*") if p.is_file() and password.encode() in p.read_bytes()] == []
    launch_secrets.forget(launch_id)


def test_the_saved_password_is_not_offered_for_another_registry_and_a_typed_one_can_be_saved(
        qtbot, keyring_accounts, wizard_for, home):
    RegistryLogins(keyring_accounts.credentials).save("ghcr.io", "bot", "ghcr-token")
    wiz = wizard_for(SPEC)
    box = wiz.job_page.image_box
    assert not box.use_saved.isVisible()  # nothing saved for registry.example.com
    box.image_edit.setText("ghcr.io/lab/job:1")
    assert box.use_saved.isVisible() and not box.use_saved.isChecked()
    assert box.use_saved.text() == "Use the password saved for ghcr.io"
    box.image_edit.setText(IMAGE)
    assert not box.use_saved.isVisible() and box.save_login.isEnabled()
    box.save_login.setChecked(True)
    _to_review(qtbot, wiz)
    assert wiz.draft.value.save_registry_login
    password = f"typed-{uuid.uuid4().hex}"
    qtbot.keyClicks(wiz.review_page.secrets.edits["REGISTRY_TOKEN"], password)
    with qtbot.waitSignal(wiz.launched, timeout=20_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_secrets.forget(launched.args[0])
    # saved in the keyring for the image's registry, listed (without it), on no disk
    assert CredentialStore().get(KEYRING_OWNER, HOST) == {"username": "bot", "password": password}
    assert [(x.registry, x.username) for x in RegistryLogins(None).list()] == [("ghcr.io", "bot"), (HOST, "bot")]
    assert [p for p in home.rglob("*") if p.is_file() and password.encode() in p.read_bytes()] == []
    keyring_accounts.credentials.delete(KEYRING_OWNER, "ghcr.io")


def test_a_spec_asking_for_a_saved_password_that_is_not_there_blocks_next(qtbot, tmp_path, home):
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(SPEC.replace("secrets: [REGISTRY_TOKEN]\n", "").replace("password: REGISTRY_TOKEN",
                                                                                   "password: keyring"))
    page = JobPage(Draft())
    qtbot.addWidget(page)
    assert page.load_file(str(spec_file)), page.load_error
    box = page.image_box
    assert box.use_saved.isChecked() and not box.use_saved.isHidden()  # shown, so it can be unticked
    assert not page.isComplete()
    assert f"no password is saved for {HOST}" in page.problem()
    box.use_saved.setChecked(False)  # type one at launch instead
    assert page.isComplete()
    assert page.build_spec().image.registry_auth == RegistryAuth("bot", "REGISTRY_PASSWORD")
