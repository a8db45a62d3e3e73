"""The wizard opens SkyPilot and dstack files: how each field was read, choices, refusals, secrets.

Real files from tests/fixtures/importers (see SOURCES.md; synthetic/ says how the others were made),
the real Local provider for the launches, the fakecloud plugin for offers with GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core import paths
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
SKY, DST, SYN = FIX / "skypilot", FIX / "dstack", FIX / "synthetic"
FINISH = QWizard.WizardButton.FinishButton
SECRET = "tok-gui-93ae51"


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def _wizard(qtbot, session, path: Path) -> LaunchWizard:
    wiz = LaunchWizard(session, spec_path=str(path))
    qtbot.addWidget(wiz)
    wiz.show()
    return wiz


def _to_review(qtbot, wiz: LaunchWizard) -> None:
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page


def _launch(qtbot, wiz: LaunchWizard) -> str:
    with qtbot.waitSignal(wiz.launched, timeout=15_000) as sig:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    return sig.args[0]


def test_a_skypilot_file_shows_each_field_and_runs_on_this_computer(qtbot, session, accounts):
    wiz = _wizard(qtbot, session, SKY / "minimal.yaml")
    page = wiz.job_page
    assert page.import_panel.isVisible() and page.load_error is None
    # 4 fields, and the disk SkyPilot gives a file without disk_size (its default 256 GB)
    assert "Read as a SkyPilot task: 5 fields mapped, 0 ignored" in page.import_panel.summary.text()
    assert any(r[1] == "resources.disk_size" and "SkyPilot's default 256 GB" in r[3] for r in page.import_panel.rows())
    assert page.import_panel.rows()[0] == ("10", "name", "mapped", "name: minimal")
    assert ("13", "resources.infra", "mapped", "runs on aws") in page.import_panel.rows()
    assert page.name_edit.text() == "minimal" and "hello, SkyPilot!" in page.command_edit.toPlainText()
    _to_review(qtbot, wiz)  # the file pins aws, which is not configured: this computer is offered
    assert wiz.draft.value.choice.profile == "local"
    launch_id = _launch(qtbot, wiz)
    log = paths.job_log(launch_id)
    qtbot.waitUntil(lambda: log.exists() and "hello, SkyPilot!" in log.read_text(), timeout=20_000)
    assert accounts.store.get_launch(launch_id).spec["providers"] == ["aws"]


def test_a_file_with_a_field_that_cannot_run_lists_it_and_blocks_next(qtbot, session):
    wiz = _wizard(qtbot, session, DST / "misc" / "docker-compose" / "task.dstack.yml")
    page = wiz.job_page
    assert not page.isComplete()
    assert page.spec_error.isVisible() and ":4: docker:" in page.spec_error.text()
    refused = [r for r in page.import_panel.rows() if r[2] == "refused"]
    assert [(r[0], r[1]) for r in refused] == [("4", "docker"), ("21", "volumes")]  # ports map (issue 34)
    page.clear_spec()
    assert not page.import_panel.isVisible() and page.load_error is None


def test_gpu_choices_stay_as_the_file_says_and_the_review_says_which_was_chosen(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("fc")
    wiz = _wizard(qtbot, fake_session, SKY / "multi_accelerators.yaml")
    page = wiz.job_page
    assert page.gpu_locked and not page.gpu_model.isEnabled()
    assert "the first with an offer of 1× A100 40 GB; 1× V100; 1× K80; 1× T4" in page.gpu_from_file.text()
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    offers = wiz.offer_page.model.offers()
    # SkyPilot's counts are exact: the fake cloud's only A100 machine has 8 (not 1) and its 4× V100 is no 1× V100,
    # so the first alternative with an offer is the V100 one, on its 1-GPU machine; no CPU-only machine
    assert {r.offer.instance_type for r in offers} == {"fk.v100x1"}
    assert wiz.offer_page.selected().offer.instance_type == "fk.v100x1"
    wiz.next()
    wiz.next()
    assert wiz.draft.value.spec.alternatives and wiz.draft.value.spec.resources.gpu is None
    chosen = wiz.review_page.fields["choice"]
    assert chosen.text() == "alternative 2 of 4 (1× V100)"


def test_a_secret_is_typed_on_the_review_page_and_reaches_only_the_job(qtbot, session, accounts, home):
    wiz = _wizard(qtbot, session, SYN / "secret_echo.yaml")
    _to_review(qtbot, wiz)
    review = wiz.review_page
    assert review.secrets.isVisible() and list(review.secrets.edits) == ["HF_TOKEN"]
    assert not review.launch_action.isEnabled() and "HF_TOKEN" in review.secrets_missing.text()
    assert not wiz.button(FINISH).isEnabled()
    edit = review.secrets.edits["HF_TOKEN"]
    assert edit.echoMode() == edit.EchoMode.Password
    qtbot.keyClicks(edit, SECRET)
    assert review.launch_action.isEnabled() and not review.secrets_missing.isVisible()
    assert wiz.button(FINISH).isEnabled()
    assert SECRET not in repr(wiz.draft.value)
    launch_id = _launch(qtbot, wiz)
    log = paths.job_log(launch_id)
    qtbot.waitUntil(lambda: log.exists() and "token prefix ok" in log.read_text(), timeout=20_000)
    assert f"token of {len(SECRET)} characters" in log.read_text()
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
