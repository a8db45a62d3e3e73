"""Advice cards in the Monitor (a card shades its evidence in the plots) and the run report from Instances
and Spend (preview, HTML, one-page PDF whose numbers are the store's)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from workbench.core.domain.models import InstanceState
from workbench.core.money.spend import SpendBook
from workbench.ui.monitor.monitor_view import MonitorView, WINDOWS
from workbench.ui.runtime.session import Snapshot

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "advisor" / "synthetic"))
import advisor_traces as T  # noqa: E402  (synthetic traces, see that folder's README)


def finished_launch(store, trace, launch_id: str, **kw):
    """A run that ended ten minutes ago, written as the app stores one."""
    moved = T.at(trace, time.time() - trace.duration_s - 600)
    (inst, *_) = T.to_store(store, moved, launch_id, **kw)
    return store.get_instance(inst.provider, inst.profile, inst.instance_id)


def test_monitor_shows_advice_cards_and_a_card_shades_its_evidence(qtbot, session, accounts):
    inst = finished_launch(accounts.store, T.idle_six_of_eight(hours=2.0, period=30.0), "L-idle", name="resnet")
    assert inst.state == InstanceState.TERMINATED
    view = MonitorView(session)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    view.window_box.setCurrentIndex(0)  # 5 min: the evidence (two hours) starts before it
    view.show_instance(inst)
    panel = view.advice
    qtbot.waitUntil(lambda: len(panel.cards) == 1, timeout=10_000)
    qtbot.waitUntil(view.plots.has_data, timeout=10_000)
    card = panel.cards[0]
    assert card.advice.id == "idle_gpus" and card.objectName() == "advice-card-idle_gpus"
    texts = " ".join(w.text() for w in card.findChildren(type(panel.status)))
    assert "Idle GPUs" in texts and "p3.8xlarge" in texts and "Saves about $24.48 on this run" in texts
    assert "click a card to see its evidence" in panel.status.text()

    qtbot.mouseClick(card, qtbot_left())
    start, end = card.advice.window
    ev = view._evidence
    assert ev is not None and ev.visible and ev.window == (start, end)
    lo, hi = ev.regions[0].getRegion()
    assert (lo, hi) == pytest.approx((start, end))
    assert view.window_box.currentIndex() == len(WINDOWS) - 1  # widened to "All" to show the evidence
    qtbot.waitUntil(lambda: view.plots.util_plot.viewRange()[0][0] <= start + 60, timeout=5_000)
    qtbot.mouseClick(card, qtbot_left())  # again: the shading goes
    assert not ev.visible and panel.selected is None

    view.show_instance(finished_launch(accounts.store, T.healthy(hours=1.0, period=30.0), "L-ok"))
    qtbot.waitUntil(lambda: "No advice" in panel.status.text(), timeout=10_000)
    assert panel.cards == [] and not ev.visible


def qtbot_left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def _wait_built(qtbot, dlg):
    qtbot.waitUntil(lambda: dlg.report is not None, timeout=10_000)
    assert dlg.html_btn.isEnabled() and dlg.pdf_btn.isEnabled()


def test_run_report_from_instances_preview_html_and_pdf(qtbot, session, accounts, tmp_path):
    from workbench.ui.instances.instances_view import InstancesView

    inst = finished_launch(accounts.store, T.two_nodes(hours=1.0, period=30.0), "L-ddp", name="ddp",
                           spec={"name": "ddp", "run": "x", "recovery": {"max_restarts": 2}})
    view = InstancesView(session)
    qtbot.addWidget(view)
    view.set_snapshot(Snapshot(instances=tuple(accounts.store.list_instances()), taken_at=time.time()))
    view.table.selectRow(0)
    assert view.report_action.isEnabled()
    dlg = view.open_report()
    qtbot.addWidget(dlg)
    _wait_built(qtbot, dlg)
    text = dlg.view.document().toPlainText()
    cost = SpendBook.load(accounts.store).launch_total("L-ddp", time.time())
    assert f"${cost:,.2f}" in text and "i-node1 · GPU 7" in text and "The network limits training" in text
    assert dlg.report.advisory.ids() == ["spot", "network"]
    pdf, page = tmp_path / "r.pdf", tmp_path / "r.html"
    dlg.save_pdf(str(pdf))
    dlg.save_html(str(page))
    qtbot.waitUntil(lambda: len(dlg.saved) == 2, timeout=10_000)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 1 and len(data) > 20_000
    assert f"${cost:,.2f}" in page.read_text() and "data:image/svg+xml;base64," in page.read_text()
    assert inst.launch_id == "L-ddp"


def test_run_report_from_spend(qtbot, fake_accounts, tmp_path):
    from workbench.ui.money.spend_view import SpendView
    from workbench.ui.runtime.session import Session

    finished_launch(fake_accounts.store, T.fp32_busy(hours=1.5, period=30.0), "L-fp32", name="bert")
    session = Session(fake_accounts)
    try:
        view = SpendView(session)
        qtbot.addWidget(view)
        view.show()
        view.recompute()
        qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=10_000)
        assert not view.report_btn.isEnabled()
        view.table.selectRow(0)
        assert view.report_btn.isEnabled() and view.selected_launch() == "L-fp32"
        dlg = view.open_report()
        qtbot.addWidget(dlg)
        _wait_built(qtbot, dlg)
        assert dlg.report.advisory.ids() == ["mixed_precision"]
        assert "Train in mixed precision" in dlg.view.document().toPlainText()
        out = tmp_path / "bert.pdf"
        dlg.save_pdf(str(out))
        assert out.read_bytes()[:4] == b"%PDF" and dlg.saved == [str(out)]
    finally:
        session.shutdown()


def test_switching_runs_while_advice_is_on_its_way_asks_again(qtbot, session, accounts):
    first = finished_launch(accounts.store, T.fp32_busy(hours=1.0, period=30.0), "L-first")
    second = finished_launch(accounts.store, T.idle_six_of_eight(hours=1.0, period=30.0), "L-second")
    from workbench.ui.monitor.advice_panel import AdvicePanel

    panel = AdvicePanel(session)
    qtbot.addWidget(panel)
    panel.set_instance(first)
    assert panel.busy  # the first answer is on its way...
    panel.set_instance(second)  # ...when the user picks another run
    qtbot.waitUntil(lambda: [c.advice.id for c in panel.cards] == ["idle_gpus"], timeout=10_000)
    assert panel.advisory is not None and not panel.busy
