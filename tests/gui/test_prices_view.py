"""The Prices view: compare GPUs across clouds before any account, add one from a row, plan with a chart."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from price_lists import PriceListServer
from workbench.ui.prices.prices_view import PricesView


@pytest.fixture
def prices(qtbot, session):
    view = PricesView(session)
    qtbot.addWidget(view)
    view.resize(1300, 760)
    return view


def _row_of(view, provider: str) -> int:
    model = view.compare.model
    return next(n for n in range(model.rowCount()) if model.offer(n).offer.provider == provider)


def test_compare_without_an_account_and_add_one_from_a_row(qtbot, prices):
    view = prices
    with qtbot.waitSignal(view.compare.compared, timeout=20_000):
        view.show()
    offers = view.compare.model.offers()
    assert {"aws", "azure"} <= {r.offer.provider for r in offers} and all(r.needs_account for r in offers)
    assert all(r.offer.gpu_model == "V100" for r in offers)
    # the footer's "cheapest" is the table's first priced row, ranked across currencies (issue 29)
    first = next(r for r in offers if r.price is not None)
    assert f"{first.offer.provider} {first.offer.instance_type} in {first.offer.region}" in view.compare.status.text()
    assert any(r.offer.prices.currency == "CNY" for r in offers)  # the case that went wrong: ¥ rows beside $
    assert view.compare.stale.isVisible() and "Prices from 20" in view.compare.stale.text()
    assert not view.compare.empty.isVisible()
    row = _row_of(view, "azure")
    assert view.compare.model.index(row, 0).data() == "azure (no account)"
    assert "add an account to launch" in view.compare.model.index(row, 10).data()  # (English UI)
    assert not view.compare.add_account.isEnabled()
    view.compare.table.selectRow(row)
    assert view.compare.add_account.isEnabled()
    with qtbot.waitSignal(view.add_account_requested, timeout=2000) as sig:
        qtbot.mouseClick(view.compare.add_account, Qt.MouseButton.LeftButton)
    assert sig.args == ["azure"]
    # a query nothing meets: the real reason, not "ask for less"
    view.compare.count.setValue(16)
    with qtbot.waitSignal(view.compare.compared, timeout=20_000):
        view.compare.compare()
    assert view.compare.model.rowCount() == 0 and view.compare.empty.isVisible()
    assert "the largest has 8" in view.compare.empty.text()


def test_update_prices_reads_the_public_lists_and_the_warning_goes(qtbot, prices):
    view = prices
    with qtbot.waitSignal(view.compare.compared, timeout=20_000):
        view.show()
    view.compare.gpu.setCurrentIndex(view.compare.gpu.findData("V100"))
    with PriceListServer() as srv:
        view.compare.price_list_urls = {"aws": srv.url, "azure": srv.url}
        view.compare.price_regions = ["us-east-1", "eastus"]
        with qtbot.waitSignal(view.compare.prices_updated, timeout=60_000) as sig:
            qtbot.mouseClick(view.compare.update_button, Qt.MouseButton.LeftButton)
            assert not view.compare.update_button.isEnabled()  # one update at a time
    results = {r.provider: r for r in sig.args[0]}
    assert results["aws"].ok and results["azure"].ok
    qtbot.waitUntil(lambda: any(r.offer.prices.source == "price cache" for r in view.compare.model.offers()),
                    timeout=20_000)
    fresh = [r for r in view.compare.model.offers() if r.offer.prices.source == "price cache"]
    assert {r.offer.region for r in fresh} >= {"us-east-1", "eastus"}


def test_planner_shows_reserved_savings_plans_and_buy_with_a_chart(qtbot, prices):
    view = prices
    view.show()
    with qtbot.waitSignal(view.planner.planned, timeout=30_000):
        view.show_planner()
    planner = view.planner
    options = {planner.model.row(n).option for n in range(planner.model.rowCount())}
    assert {"on-demand", "spot", "reserved-1y", "reserved-3y", "savings-plan-1y", "savings-plan-3y", "buy"} <= options
    assert planner.plot is not None and len(planner.bars) == len(planner.chart) >= 5
    assert "reference price" in planner.note.text() and "2026-12-01" in planner.note.text()
    # as priced, with no rate of the user's: still every option, the buy row and the yuan rows too, in one
    # currency at the stated reference rate (issue 29: the buy bar and every CNY row were left out)
    rows = [planner.model.row(n) for n in range(planner.model.rowCount())]
    assert {"USD", "CNY"} <= {r.currency for r in rows}
    assert {o for o, _t, _c in planner.chart} == {r.option for r in rows}
    assert {c for _o, _t, c in planner.chart} == {"USD"} and "reference rate 7.2" in planner.chart_label
    # in one currency at the user's rate: every option is drawn, the buy row too
    planner.currency.setCurrentIndex(planner.currency.findData("CNY"))
    planner.rate.setValue(7.2)
    with qtbot.waitSignal(planner.planned, timeout=30_000):
        planner.run_plan()
    rows = [planner.model.row(n) for n in range(planner.model.rowCount())]
    assert {r.currency for r in rows} == {"CNY"}
    assert {o for o, _t, c in planner.chart} >= {"buy", "on-demand", "reserved-1y"}
    assert all(c == "CNY" for _o, _t, c in planner.chart)
    totals = [t for _o, t, _c in planner.chart]
    assert totals == sorted(totals)
    # no rate: a clear message, no crash
    planner.rate.setValue(0)
    with qtbot.waitSignal(planner.planned, timeout=30_000):
        planner.run_plan()
    assert planner.error.isVisible() and "exchange rate" in planner.error.text()
    assert "workbench" not in planner.error.text() and "--rate" not in planner.error.text()  # no terminal command
    assert "Pricing" not in planner.summary.text()  # the status line does not stay at "Pricing…"


def test_main_window_prices_entry_opens_accounts_on_the_chosen_cloud(qtbot, accounts):
    from workbench.ui.shell.main_window import MainWindow

    win = MainWindow(accounts, refresh_ms=3_600_000)
    qtbot.addWidget(win)
    win.show()
    win.show_view("prices")
    view = win.view("prices")
    qtbot.waitUntil(lambda: view.compare.result is not None, timeout=20_000)
    view.compare.table.selectRow(_row_of(view, "aws"))
    qtbot.mouseClick(view.compare.add_account, Qt.MouseButton.LeftButton)
    assert win.current_view() == "accounts"
    qtbot.waitUntil(lambda: getattr(win.accounts_view, "dialog", None) is not None
                    and win.accounts_view.dialog.isVisible(), timeout=10_000)
    dialog = win.accounts_view.dialog
    assert dialog.provider_combo.currentData() == "aws"
    dialog.reject()
    win.session.shutdown()


def test_wizard_without_an_account_shows_catalog_prices_and_says_why_none_can_be_chosen(qtbot, session):
    from workbench.ui.launch.launch_wizard import LaunchWizard

    wiz = LaunchWizard(session)
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "gpu-job")
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    page.gpu_count.setValue(1)
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=20_000)
    offers = wiz.offer_page.model.offers()
    assert offers and {"aws", "azure"} <= {r.offer.provider for r in offers}
    assert not any(r.offer.available for r in offers) and wiz.offer_page.selected() is None
    text = wiz.offer_page.empty.text()
    assert "price catalog" in text and "Add an account" in text and "ask for less" not in text
    wiz.back()
    page.gpu_count.setValue(16)  # nothing has 16 V100s in one machine: the reason, not "ask for less"
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading and wiz.offer_page.model.rowCount() == 0, timeout=20_000)
    assert "the largest has 8" in wiz.offer_page.empty.text()
    wiz.reject()
