"""The Launch view and wizard in a real QApplication: the real Local provider and the fakecloud plugin.

What a user does, end to end: pick the quick example, see the offer and the projected cost, launch,
and find the launch running; mistakes caught on the page where they are typed; provider failures
shown with their hint, followed by proof that nothing was left billing; Cancel mid-launch tears
the launch down while the event loop keeps turning.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWizard

from workbench.core.lifecycle.launcher import LAUNCH_STEPS, STEP_PROVIDER
from workbench.core.domain.models import InstanceState, Profile
from workbench.core.paths import resources_dir
from workbench.ui.launch.launch_view import LaunchView
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session

EXAMPLES = resources_dir() / "examples"

NEXT, FINISH, BACK, CANCEL = (QWizard.WizardButton.NextButton, QWizard.WizardButton.FinishButton,
                              QWizard.WizardButton.BackButton, QWizard.WizardButton.CancelButton)


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    """A Session over the fakecloud accounts, kept alive (and shut down) by the fixture, not the test body."""
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def _wizard(qtbot, session, spec_path=None) -> LaunchWizard:
    wiz = LaunchWizard(session, spec_path=spec_path)
    qtbot.addWidget(wiz)
    wiz.show()
    return wiz


def _to_offers(qtbot, wiz: LaunchWizard, timeout: int = 10_000) -> None:
    wiz.next()
    assert wiz.currentPage() is wiz.offer_page
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=timeout)


def _row(wiz: LaunchWizard, profile: str, itype: str, region: str = "fake-east") -> int:
    model = wiz.offer_page.model
    return next(n for n in range(model.rowCount()) if (model.offer(n).profile, model.offer(n).offer.instance_type,
                                                       model.offer(n).offer.region) == (profile, itype, region))


def _cell(wiz: LaunchWizard, row: int, col: int) -> str:
    m = wiz.offer_page.model
    return m.index(row, col).data()


def _fill_gpu_form(qtbot, wiz: LaunchWizard) -> None:
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "gpu-job")
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    page.gpu_count.setValue(1)


# ---------------------------------------------------------------------------------------- Local, end to end

def test_quick_example_launches_on_this_computer(qtbot, session, accounts):
    # an hour of this computer costs 0.36 here, so the projected cost is a real product: 0.36 × 10 min
    accounts.save_profile(Profile("local", "local", "local", settings={"price_per_hour": "0.36"}))
    view = LaunchView(session)
    qtbot.addWidget(view)
    view.show()
    qtbot.mouseClick(view.quick_button, Qt.MouseButton.LeftButton)
    wiz = view.wizard
    assert wiz is not None and wiz.isVisible() and wiz.objectName() == "launch-wizard"
    assert wiz.job_page.name_edit.text() == "local-smoke" and wiz.button(NEXT).isEnabled()

    _to_offers(qtbot, wiz)
    page = wiz.offer_page
    assert page.model.rowCount() >= 1
    chosen = page.selected()
    assert chosen is not None and (chosen.profile, chosen.offer.instance_type) == ("local", "this-computer")
    assert _cell(wiz, 0, 0) == "local / local" and _cell(wiz, 0, 7) == "$0.360"
    assert "profile setting" in _cell(wiz, 0, 9)

    wiz.next()  # guards: the spec's 10 min; what fits this computer (no disk; no idle rule without a GPU)
    g = wiz.guards_page
    assert g.max_runtime_on.isChecked() and g.max_runtime.value() == 10
    assert g.disk.isHidden() and g.disk_label.isHidden()
    assert g.idle_on.isHidden() == (chosen.offer.gpu_count == 0)
    assert not g.budget_on.isChecked() and "bill" not in g.subTitle()

    wiz.next()
    assert wiz.currentPage() is wiz.review_page
    assert wiz.review_page.cost.text().startswith("$0.06 if it runs the full 10 min")
    assert "local / local" in wiz.review_page.fields["where"].text()
    r = wiz.review_page
    assert r.fields["on_finish"].text().startswith("end the job") and "terminate" not in r.fields["on_finish"].text()
    assert not r.form.isRowVisible(r.fields["disk"])
    assert wiz.button(FINISH).text().replace("&", "") == "Launch"

    notes = []
    session.notify.connect(lambda *a: notes.append(a))
    with qtbot.waitSignal(view.launched, timeout=15_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id = launched.args[0]
    rec = accounts.store.get_launch(launch_id)  # checked at once: the smoke job runs a few seconds
    assert (rec.name, rec.provider, rec.status) == ("local-smoke", "local", "running")
    assert rec.projected_cost == 0.36 * 10 / 60
    assert [i.state for i in accounts.store.list_instances(launch_id=launch_id)] == [InstanceState.RUNNING]
    assert not wiz.isVisible() and wiz.result() == QWizard.DialogCode.Accepted
    assert notes and notes[0][0] == "Launch ready" and "local-smoke" in notes[0][1]
    # the wizard asked for a refresh: the recent-launches table shows it
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=10_000)
    assert view.model.index(0, 0).data() == "local-smoke"
    assert view.model.index(0, 1).data() == "local / local" and view.model.index(0, 5).data() == "$0.06"


# ---------------------------------------------------------------------------------------- input checks

def test_invalid_input_is_caught_on_its_page(qtbot, session, tmp_path):
    wiz = _wizard(qtbot, session)
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "my-job")
    assert not wiz.button(NEXT).isEnabled() and "command" in page.error.text() and page.error.isVisible()
    wiz.next()
    assert wiz.currentPage() is page  # Next is refused, not just greyed out
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    assert wiz.button(NEXT).isEnabled() and not page.error.isVisible()

    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    page.gpu_count.setValue(0)
    assert not wiz.button(NEXT).isEnabled() and "at least 1 GPU" in page.error.text()
    page.gpu_count.setValue(2)
    page.name_edit.setText("my job!")
    assert not wiz.button(NEXT).isEnabled() and "letters, digits" in page.error.text()
    page.name_edit.setText("my-job")
    assert wiz.button(NEXT).isEnabled()

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: typo\nrun: python3 train.py\nresources:\n  gpu: V1OO\n", encoding="utf-8")
    assert not page.load_file(str(bad))
    assert page.spec_error.isVisible() and f"{bad}:4:" in page.spec_error.text()
    assert "did you mean V100" in page.spec_error.text()
    assert not wiz.button(NEXT).isEnabled()
    page.clear_spec()
    assert wiz.button(NEXT).isEnabled() and not page.spec_error.isVisible()
    assert wiz.job_page.build_spec().resources.gpu.count == 2


def test_a_spec_that_fails_to_open_from_the_view_shows_its_line(qtbot, session, tmp_path):
    bad = tmp_path / "guards.yaml"
    bad.write_text("name: x\nrun: y\nguards:\n  max_runtime: off\n", encoding="utf-8")
    view = LaunchView(session)
    qtbot.addWidget(view)
    view.show()
    qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)  # "Open job spec…": a non-blocking dialog
    dlg = view.file_dialog
    assert dlg is not None and dlg.isVisible()
    dlg.fileSelected.emit(str(bad))  # what choosing the file does
    dlg.close()
    wiz = view.wizard
    assert wiz is not None and wiz.isVisible() and wiz.currentPage() is wiz.job_page
    assert f"{bad}:4: guards.max_runtime" in wiz.job_page.spec_error.text()
    assert not wiz.button(NEXT).isEnabled()


def test_unticking_a_limit_is_never_silent(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("fc")
    wiz = _wizard(qtbot, fake_session)
    _fill_gpu_form(qtbot, wiz)
    _to_offers(qtbot, wiz)
    wiz.offer_page.select_row(next(r for r in range(wiz.offer_page.model.rowCount())
                                   if wiz.offer_page.model.offer(r).offer.provider == "fakecloud"))
    wiz.next()
    g = wiz.guards_page
    assert g.idle_on.isVisible() and g.disk.isVisible()  # a cloud GPU machine: both asked
    assert "No budget" in g.warning.text()
    g.idle_on.setChecked(False)
    assert "No idle shutdown" in g.warning.text()
    g.max_runtime_on.setChecked(False)
    assert "No runtime limit" in g.warning.text() and "nothing caps the cost" in g.warning.text()
    wiz.next()
    spec = wiz.spec
    assert spec.guards.max_runtime_minutes is None and spec.guards.idle_minutes is None
    assert wiz.review_page.cost.text().startswith("Not capped")
    assert wiz.review_page.cost_warning.isVisible()
    # going back keeps the user's edits (the same spec is not prefilled again)
    wiz.back()
    wiz.back()
    wiz.next()
    assert not g.max_runtime_on.isChecked()


# ---------------------------------------------------------------------------------------- fake cloud

def test_offers_across_accounts_and_failures_leave_nothing_behind(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("fc", no_quota_types="fk.v100x1")
    for kind in ("capacity", "quota", "auth"):
        fake_accounts.add_fake(kind, fail_launch=kind)
    fake_accounts.save_profile(Profile("bad", "broken", None))
    session = fake_session
    wiz = _wizard(qtbot, session)
    _fill_gpu_form(qtbot, wiz)
    _to_offers(qtbot, wiz)
    page = wiz.offer_page
    # every fakecloud profile, both regions, the two V100 shapes; cheapest first (the catalog's offers of
    # clouds without an account are left out while an account's offer can be chosen)
    assert page.model.rowCount() == 4 * 2 * 2 and not any(r.needs_account for r in page.model.offers())
    prices = [r.price for r in page.model.offers() if r.offer.available]
    assert prices == sorted(prices)
    row = _row(wiz, "capacity", "fk.v100x1")
    assert (_cell(wiz, row, 7), _cell(wiz, row, 8)) == ("$3.060", "$0.920")
    assert "fake price list" in _cell(wiz, row, 9)
    # the broken plugin is listed with its reason; the others are shown anyway
    assert page.errors.isVisible() and "bad:" in page.errors.text() and "deliberately broken" in page.errors.text()
    # no quota: marked, and a click cannot choose it
    blocked = _row(wiz, "fc", "fk.v100x1")
    assert "no quota for fk.v100x1" in _cell(wiz, blocked, 10)
    assert page.model.flags(page.model.index(blocked, 0)) == Qt.ItemFlag.NoItemFlags
    before = page.selected()
    assert before is not None and before.offer.available  # the cheapest choosable one is preselected
    page.table.scrollTo(page.model.index(blocked, 0))
    rect = page.table.visualRect(page.model.index(blocked, 0))
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.selected() == before
    page.table.clearSelection()
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.selected() is None and not wiz.button(NEXT).isEnabled()

    expected = {
        "capacity": ("no capacity for fk.v100x1 in fake-east", "try another region or instance type"),
        "quota": ("quota for fk.v100x1 is 0 vCPUs in fake-east", "request a quota increase"),
        "auth": ("fake cloud rejected the token (expired token)", "store new credentials"),
    }
    for kind, (message, hint) in expected.items():
        page.select_row(_row(wiz, kind, "fk.v100x1"))
        assert wiz.button(NEXT).isEnabled()
        wiz.next()
        wiz.next()
        assert wiz.currentPage() is wiz.review_page and "region fake-east" in wiz.review_page.fields["where"].text()
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: wiz.error_box is not None and wiz.error_box.isVisible(), timeout=10_000)
        box = wiz.error_box
        assert message in box.informativeText() and hint in box.informativeText()
        assert message in wiz.panel.error.text() and hint in wiz.panel.error.text()
        assert wiz.panel.state[STEP_PROVIDER] == "failed"
        qtbot.waitUntil(lambda: "Nothing was left behind" in wiz.panel.rollback.text(), timeout=10_000)
        assert not wiz.panel.tear_down.isVisible()
        assert fake_accounts.store.get_launch(wiz.launch_id).status == "failed"
        box.done(QMessageBox.StandardButton.Ok)
        assert wiz.isVisible() and wiz.button(BACK).isEnabled()
        wiz.back()
        wiz.back()
        assert wiz.currentPage() is page
    assert not any(i.state.billable for i in fake_accounts.store.list_instances())


def test_a_rollback_that_left_a_disk_says_so_and_can_tear_it_down(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("leaky", fail_launch="capacity", leak_disk="true")
    session = fake_session
    wiz = _wizard(qtbot, session)
    _fill_gpu_form(qtbot, wiz)
    _to_offers(qtbot, wiz)
    wiz.offer_page.select_row(_row(wiz, "leaky", "fk.v100x1"))
    wiz.next()
    wiz.next()
    qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wiz.panel.tear_down.isVisible(), timeout=10_000)
    text = wiz.panel.rollback.text()
    assert "Still there" in text and f"disk disk-fk-{wiz.launch_id}-0 (fake-east)" in text
    assert "Nothing was left behind" not in text
    wiz.error_box.done(QMessageBox.StandardButton.Ok)
    qtbot.mouseClick(wiz.panel.tear_down, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Nothing was left behind" in wiz.panel.rollback.text(), timeout=10_000)
    prov = fake_accounts.provider(fake_accounts.profile("leaky"))
    assert prov.leftovers() == []


def test_cancel_during_a_slow_launch_tears_it_down_and_the_ui_keeps_turning(qtbot, fake_accounts, fake_session, gaps):
    slow = fake_accounts.add_fake("slow", delay="2")
    session = fake_session
    wiz = _wizard(qtbot, session)
    _fill_gpu_form(qtbot, wiz)
    gaps.start()
    _to_offers(qtbot, wiz, timeout=20_000)  # the slow cloud takes ~4 s to list its offers
    wiz.offer_page.select_row(_row(wiz, "slow", "fk.v100x1"))
    wiz.next()
    wiz.next()
    qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wiz.panel.state[STEP_PROVIDER] == "active", timeout=5_000)
    assert not wiz.button(FINISH).isEnabled() and not wiz.button(BACK).isEnabled()
    assert wiz.button(CANCEL).text() == "Cancel launch"
    qtbot.mouseClick(wiz.button(CANCEL), Qt.MouseButton.LeftButton)
    assert wiz.isVisible() and wiz.run.cancel_requested and "Cancelling" in wiz.panel.status.text()
    launch_id = wiz.launch_id
    # the in-flight call keeps its 2 s; the teardown after it need not wait on every call
    fake_accounts.save_profile(Profile(slow.name, slow.provider, slow.region, settings={}))
    qtbot.waitUntil(lambda: "Nothing was left behind" in wiz.panel.rollback.text(), timeout=20_000)
    largest = gaps.stop()
    assert largest < gaps.limit(2.0), f"the event loop stalled for {largest:.3f} s"
    assert "cancelled and torn down" in wiz.panel.status.text()
    assert [wiz.panel.state[k] for k in LAUNCH_STEPS] == ["done", "done", "skipped", "skipped"]
    prov = fake_accounts.provider(fake_accounts.profile("slow"))
    mine = [i for i in prov.instances() if i.launch_id == launch_id]
    assert mine and all(i.state == InstanceState.TERMINATED for i in mine)  # it was created, then ended
    assert fake_accounts.store.get_launch(launch_id).status == "terminated"
    assert wiz.button(CANCEL).text() == "Close" and wiz.button(CANCEL).isEnabled()
    qtbot.mouseClick(wiz.button(CANCEL), Qt.MouseButton.LeftButton)
    assert not wiz.isVisible()


# ---------------------------------------------------------------------------------------- the first minutes

def test_ctrl_n_offers_the_quick_example_and_a_fresh_form_shows_no_error(qtbot, accounts):
    from workbench.ui.shell.main_window import MainWindow

    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=5000)
    qtbot.keyClick(win, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    wiz = win.launch_view.wizard
    qtbot.waitUntil(lambda: wiz is not None and wiz.isVisible(), timeout=5000)
    page = wiz.job_page
    assert not page.error.isVisible() and page.error.text() == ""  # nothing typed yet: no red error
    assert not wiz.button(NEXT).isEnabled()
    assert page.quick_button.isVisible()
    qtbot.mouseClick(page.quick_button, Qt.MouseButton.LeftButton)
    assert page.name_edit.text() == "local-smoke" and wiz.button(NEXT).isEnabled()
    assert page.spec_path.text().endswith("local-smoke.yaml")
    page.name_edit.setText("")  # once the user types, a problem is said
    assert page.error.isVisible() and "name" in page.error.text()


def test_one_matching_offer_is_singular_and_the_disk_is_asked_for_a_cloud_machine(qtbot, fake_accounts,
                                                                                   fake_session, tmp_path):
    fake_accounts.add_fake("fc", regions="fake-east")
    spec = tmp_path / "big.yaml"
    spec.write_text("name: big\nrun: python3 train.py\nproviders: [fakecloud]\nresources:\n  gpu: A100:8\n"
                    "  disk_gb: 100\n", encoding="utf-8")
    wiz = _wizard(qtbot, fake_session, str(spec))
    _to_offers(qtbot, wiz)
    fake = [r for r in range(wiz.offer_page.model.rowCount())
            if wiz.offer_page.model.offer(r).offer.provider == "fakecloud"]
    assert len(fake) == wiz.offer_page.model.rowCount() == 1  # one A100×8 shape in the one region
    assert wiz.offer_page.status.text() == "1 matching offer, 1 can be chosen."
    wiz.offer_page.select_row(fake[0])
    wiz.next()
    g = wiz.guards_page
    assert g.disk.isVisible() and g.disk.value() == 100
    g.disk.setValue(250)
    wiz.next()
    assert wiz.spec.resources.disk_gb == 250 and wiz.draft.value.disk_gb == 250
    assert wiz.review_page.fields["disk"].text() == "250 GB"


def test_plural_helper_says_one_apart():
    from workbench.ui.common.format import plural

    assert plural(1, "1 matching offer", "{count} matching offers") == "1 matching offer"
    assert plural(3, "1 matching offer", "{count} matching offers").format(count=3) == "3 matching offers"
