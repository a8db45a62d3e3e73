"""The launch wizard with an AWS profile pointing at moto (server mode): offers with their price source, a launch.

The real AWS plugin (found through its entry point) talks real HTTP to moto; the wizard
runs the launch on the session's worker lane while the event loop keeps turning.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

import aws_moto
from workbench.core.providers.accounts import Accounts
from workbench.core.domain.models import InstanceState, Profile
from workbench.core.store.database import Store
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.launch.offers_model import COL_ON_DEMAND
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials

NEXT, FINISH = QWizard.WizardButton.NextButton, QWizard.WizardButton.FinishButton
SETTINGS = {"regions": "us-east-1,us-west-2", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.01",
            "terminate_wait_s": "10", "retry_backoff_cap_s": "0.02"}


@pytest.fixture
def aws_accounts(home):
    stack = aws_moto.start()
    stack.reset()
    store = Store.open()
    creds = MemoryCredentials()
    acc = Accounts(store, credentials=creds)
    acc.save_profile(Profile("aws-moto", "aws", "us-east-1", endpoint_url=stack.url, settings=SETTINGS))
    creds.set("aws", "aws-moto", {"access_key_id": "AKIAGUITEST000000001", "secret_access_key": "gui/secret"})
    acc.stack = stack  # type: ignore[attr-defined]
    yield acc
    from workbench.core.lifecycle.teardown import teardown

    try:
        teardown(acc, None, timeout=10, poll=0.05)
    finally:
        store.close()
        stack.reset()


@pytest.fixture
def aws_session(qtbot, aws_accounts):
    s = Session(aws_accounts)
    yield s
    s.shutdown()


def _cell(wiz: LaunchWizard, row: int, col: int) -> str:
    return wiz.offer_page.model.index(row, col).data()


def test_wizard_shows_aws_offers_with_their_price_source_and_launches_into_moto(qtbot, aws_accounts, aws_session):
    wiz = LaunchWizard(aws_session)
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "mnist-v100")
    qtbot.keyClicks(page.command_edit, "python3 main.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    page.gpu_count.setValue(1)
    wiz.next()
    assert wiz.currentPage() is wiz.offer_page
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=30_000)
    model = wiz.offer_page.model
    rows = {(model.offer(n).offer.instance_type, model.offer(n).offer.region): n for n in range(model.rowCount())}
    assert {("p3.2xlarge", "us-east-1"), ("p3.2xlarge", "us-west-2"), ("p3.8xlarge", "us-east-1")} <= set(rows)
    row = rows[("p3.2xlarge", "us-east-1")]
    assert _cell(wiz, row, 0) == "aws / aws-moto"
    assert _cell(wiz, row, COL_ON_DEMAND) == "$3.060"
    assert "live: AWS Price List API" in _cell(wiz, row, 9)  # the price source column, with its date
    assert not wiz.offer_page.errors.isVisible()
    chosen = wiz.offer_page.selected()
    assert chosen is not None and chosen.offer.instance_type == "p3.2xlarge"  # the cheapest V100 machine
    wiz.offer_page.select_row(row)
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page
    assert "us-east-1" in wiz.review_page.fields["where"].text()
    with qtbot.waitSignal(wiz.launched, timeout=30_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id = launched.args[0]
    rec = aws_accounts.store.get_launch(launch_id)
    assert (rec.provider, rec.profile, rec.region, rec.status) == ("aws", "aws-moto", "us-east-1", "running")
    stored = aws_accounts.store.list_instances(launch_id=launch_id)
    assert len(stored) == 1 and stored[0].state in (InstanceState.PENDING, InstanceState.RUNNING)
    assert stored[0].instance_type == "p3.2xlarge" and stored[0].price_per_hour == pytest.approx(3.06)
    run = aws_accounts.stack.faults.find("RunInstances")
    tags = {v for k, v in run[0].params.items() if k.startswith("TagSpecification.") and k.endswith(".Value")}
    assert len(run) == 1 and launch_id in tags
