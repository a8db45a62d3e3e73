"""The wizard's "Machines" for a multi-node job: per-machine and total price, the network note, the review,
and a launch of two Local nodes through the real Local provider."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.domain.models import InstanceState, Profile
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.launch.offers_model import COL_AVAILABILITY, COL_NETWORK, COL_TOTAL
from workbench.ui.runtime.session import Session

NEXT, FINISH = QWizard.WizardButton.NextButton, QWizard.WizardButton.FinishButton


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    s.shutdown()


def _spec(tmp_path, nodes: int, gpu: str = "V100:4", run: str = "torchrun train.py") -> str:
    path = tmp_path / "ddp.yaml"
    path.write_text(f"name: ddp\nrun: {run}\nnum_nodes: {nodes}\nresources:\n  gpu: {gpu}\n"
                    "guards:\n  max_runtime: 2h\n")
    return str(path)


def _offers(qtbot, wiz: LaunchWizard) -> None:
    wiz.next()
    assert wiz.currentPage() is wiz.offer_page
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)


def test_machines_show_per_machine_and_total_price_and_the_network(qtbot, fake_accounts, fake_session, tmp_path):
    fake_accounts.add_fake("fc")
    wiz = LaunchWizard(fake_session, spec_path=_spec(tmp_path, 2, gpu="any:4"))
    qtbot.addWidget(wiz)
    wiz.show()
    _offers(qtbot, wiz)
    page = wiz.offer_page
    assert page.nodes.value() == 2  # the spec's num_nodes
    assert not page.table.isColumnHidden(COL_TOTAL)
    header = page.table.horizontalHeader()
    assert header.visualIndex(COL_TOTAL) == 9 and header.visualIndex(COL_AVAILABILITY) == 10  # beside the prices
    assert header.visualIndex(COL_NETWORK) == 11
    model = page.model
    rows = {model.offer(n).offer.instance_type: n for n in range(model.rowCount())
            if model.offer(n).offer.region == "fake-east"}
    v100 = rows["fk.v100x4"]
    assert model.index(v100, COL_TOTAL).data() == "$24.480 (×2)"
    assert model.index(v100, COL_NETWORK).data() == "⚠ 10 Gbps: no fast interconnect"
    assert "2 machines talk over this network" in model.index(v100, COL_NETWORK).data(Qt.ItemDataRole.ToolTipRole)
    a100 = rows["fk.a100x8"]
    assert model.index(a100, COL_NETWORK).data() == "RDMA, 25 Gbps"  # a fast interconnect: no warning
    assert model.index(a100, COL_AVAILABILITY).data() == "available"
    page.nodes.setValue(3)
    assert model.index(v100, COL_TOTAL).data() == "$36.720 (×3)"
    assert "the total is for all 3" in page.nodes_note.text()
    page.select_row(v100)
    wiz.next()
    wiz.next()
    review = wiz.review_page
    assert wiz.currentPage() is review
    assert review.fields["machine"].text().startswith("3 machines, each fk.v100x4: 4× V100")
    assert "no fast interconnect" in review.fields["machine"].text()
    assert "$12.240 per hour per machine, $36.720 for all 3" in review.fields["pricing"].text()
    assert review.cost.text().startswith("$73.44 if it runs the full 2 h 00 min (3 machines × $12.240/h × 2 h)")
    assert wiz.draft.value.launch_spec().num_nodes == 3
    page.nodes.setValue(1)  # one machine: the total column goes away
    assert page.table.isColumnHidden(COL_TOTAL) and model.index(v100, COL_NETWORK).data() == "10 Gbps"


def test_two_local_nodes_launch_from_the_wizard(qtbot, session, accounts, tmp_path):
    accounts.save_profile(Profile("local", "local", "local", settings={"price_per_hour": "0.5"}))
    wiz = LaunchWizard(session, spec_path=_spec(tmp_path, 2, gpu="null", run="sleep 30"))
    qtbot.addWidget(wiz)
    wiz.show()
    _offers(qtbot, wiz)
    assert wiz.offer_page.nodes.value() == 2
    wiz.next()
    wiz.next()
    assert wiz.review_page.cost.text().startswith("$2.00 if it runs the full 2 h 00 min (2 machines × $0.500/h")
    with qtbot.waitSignal(wiz.launched, timeout=20_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    lid = launched.args[0]
    rec = accounts.store.get_launch(lid)
    assert rec.projected_cost == pytest.approx(0.5 * 2 * 2) and rec.spec["num_nodes"] == 2
    nodes = sorted(accounts.store.list_instances(launch_id=lid), key=lambda i: i.extra["node_rank"])
    assert [i.extra["node_rank"] for i in nodes] == [0, 1] and {i.state for i in nodes} == {InstanceState.RUNNING}
