"""Spend view (budgets, currency, billed vs estimate), the review page's cost comparison, and the
app-side guards' notifications with the job-finished "Keep running" prompt."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session
from workbench.ui.money.spend_view import COL_BILLED, SpendView, build_report
from workbench_testing import ManualClock

GPU_JOB = parse_spec("name: train-v100\nrun: python train.py\nresources:\n  gpu: V100:1\n"
                     "guards:\n  max_runtime: 2h\n")


Clock = ManualClock


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def test_report_has_billed_cost_budgets_and_converted_currency(fake_accounts):
    fake_accounts.add_fake("lab", actual_factor="1.5")
    [inst] = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="lab"))
    from workbench.core.money import budgets, currency
    from workbench.core.money.currency import CurrencySettings

    budgets.set_monthly(fake_accounts.store, 100.0)
    currency.save(fake_accounts.store, CurrencySettings("CNY", 7.0))
    now = inst.launched_at + 3600
    report = build_report(fake_accounts, now=now)
    [row] = report.rows
    assert report.currency == "CNY" and row.currency == "CNY"
    assert row.spent == pytest.approx(3.06 * 7.0, rel=0.01)
    assert row.actual is not None and row.actual_source == "Fake Cloud billing" and report.has_actual
    assert row.projected == pytest.approx(3.06 * 2 * 7.0, rel=0.01)
    assert report.monthly.budget.amount == 100.0 and report.burn_rate == pytest.approx(3.06 * 7.0)
    assert "converted at your rate of 7 CNY per USD" in report.note


def test_view_sets_budget_and_currency_and_shows_billed_columns(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("lab", actual_factor="1.1")
    execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="lab"))
    view = SpendView(fake_session)
    qtbot.addWidget(view)
    view.show()
    fake_session.refresh()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=10_000)
    assert not view.table.isColumnHidden(COL_BILLED)  # the provider reports billed cost
    assert not view.budget_bar.isVisible()
    view.set_monthly_budget(200.0)
    qtbot.waitUntil(lambda: "monthly budget $200.00" in view.totals.text(), timeout=10_000)
    assert view.budget_bar.isVisible()
    view.set_currency("CNY", 7.25)
    qtbot.waitUntil(lambda: view.report is not None and view.report.currency == "CNY", timeout=10_000)
    assert view.totals.text().startswith("Now ¥") and "CNY" in view.totals.text()
    assert view.currency_box.currentText() == "CNY" and view.rate.isEnabled()
    assert "7.25 CNY per USD" in view.note.text()
    view.set_monthly_budget(None)
    qtbot.waitUntil(lambda: "monthly budget" not in view.totals.text(), timeout=10_000)


def test_review_page_compares_ways_to_pay_for_the_job(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("lab")
    wiz = _to_review(qtbot, fake_session, "plan-job", "python3 train.py", gpus=("V100", 4))
    table = wiz.review_page.comparison.table
    rows = {(table.item(r, 0).text(), table.item(r, 3).text()): table.item(r, 5).text()
            for r in range(table.rowCount())}
    hours = wiz.spec.guards.max_runtime_minutes / 60
    # the cheapest per option and provider: 4 GPUs are one fk.v100x4 or four fk.v100x1
    assert rows[("on-demand", "fk.v100x4")] == f"${12.24 * hours:,.2f}"
    assert rows[("spot", "fk.v100x4")] == f"${3.67 * hours:,.2f}"
    assert rows[("reserved 1 year", "fk.v100x4")] == f"${7.60 * 8760:,.2f}"  # the whole year is paid
    assert table.item(0, 0).text() == "spot"  # cheapest first
    chosen = [r for r in range(table.rowCount()) if table.item(r, 0).font().bold()]
    assert [table.item(r, 0).text() for r in chosen] == ["on-demand"]
    assert "Reserved terms are paid in full" in wiz.review_page.comparison.empty.text()
    assert "workbench plan" not in wiz.review_page.comparison.empty.text()  # no terminal command in the GUI


def test_finished_job_prompts_and_keep_running_stops_the_teardown(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("done", exit_after="0")
    lp = choose_offer(fake_accounts, GPU_JOB, profile="done")
    execute(fake_accounts, lp)
    start = fake_accounts.store.get_launch(lp.launch_id).created_at
    hook = fake_session.guards
    hook.clock = Clock(start + 30)
    notes = []
    fake_session.notify.connect(lambda t, m, lvl: notes.append((t, m, lvl)))
    fake_session.refresh()
    qtbot.waitUntil(lambda: lp.launch_id in hook.prompts, timeout=10_000)
    box = hook.prompts[lp.launch_id]
    assert box.isVisible() and not box.isModal() and "unless you keep it running" in box.text()
    assert any(t == "Job finished" and "exit 0" in m for t, m, _ in notes)
    keep = box.findChild(type(box.buttons()[0]), "guard-keep-running")
    qtbot.mouseClick(keep, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(t == "Keeps running" for t, _, _ in notes), timeout=10_000)
    hook.clock.t = start + 30 + 601
    polls = []
    real_poll = hook.engine.poll
    hook.engine.poll = lambda refresh=True: polls.append(refresh) or real_poll(refresh)
    fake_session.refresh()
    qtbot.waitUntil(lambda: bool(polls) and not hook._busy, timeout=10_000)
    assert any(i.state.billable for i in fake_accounts.store.list_instances(launch_id=lp.launch_id))


def test_guards_tear_down_in_the_gui_and_say_it_was_verified(qtbot, fake_accounts, fake_session):
    fake_accounts.add_fake("done", exit_after="0")
    lp = choose_offer(fake_accounts, GPU_JOB, profile="done")
    execute(fake_accounts, lp)
    hook = fake_session.guards
    hook.finish_grace_s = 0  # no grace: the guard ends it at once
    notes = []
    fake_session.notify.connect(lambda t, m, lvl: notes.append((t, m, lvl)))
    fake_session.refresh()
    qtbot.waitUntil(lambda: any(t == "Billing stopped" for t, _, _ in notes), timeout=15_000)
    assert not any(i.state.billable for i in fake_accounts.store.list_instances(launch_id=lp.launch_id))
    assert lp.launch_id not in hook.prompts  # the prompt closed when the guard acted
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def test_review_of_a_cpu_job_on_this_computer_says_only_what_applies(qtbot, fake_accounts, fake_session):
    # Issue 29: a non-spot Local CPU job read "Recovery: off: an interrupted spot machine ends the job" and
    # "The comparison needs … a maximum runtime" although one was set
    wiz = _to_review(qtbot, fake_session, "cpu-job", "python3 prep.py")
    assert wiz.spec.guards.max_runtime_minutes
    review = wiz.review_page
    assert review.fields["recovery"].text() == "off"
    assert review.comparison.empty.text() == "The comparison is for GPU jobs: this job asks for no GPU model."


def _to_review(qtbot, session, name: str, command: str, gpus: tuple[str, int] | None = None) -> LaunchWizard:
    """A wizard filled in with a job (and its GPUs), on its review page."""
    wiz = LaunchWizard(session)
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, name)
    qtbot.keyClicks(page.command_edit, command)
    if gpus is not None:
        page.gpu_model.setCurrentIndex(page.gpu_model.findData(gpus[0]))
        page.gpu_count.setValue(gpus[1])
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page
    return wiz
