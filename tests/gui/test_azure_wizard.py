"""The launch wizard with an Azure profile: offers from our ARM-protocol server (real HTTPS, real azure-mgmt
SDKs), a launch that ends with a running VM, and Cancel during a long VM creation that rolls everything back
while the event loop keeps turning."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.providers.accounts import Accounts
from workbench.core.lifecycle.launcher import LAUNCH_STEPS
from workbench.core.domain.models import InstanceState
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials


from azure_arm import profile_for, shared_server  # noqa: E402

NEXT, FINISH, CANCEL = QWizard.WizardButton.NextButton, QWizard.WizardButton.FinishButton, QWizard.WizardButton.CancelButton


@pytest.fixture
def azure(home, qtbot):
    """(accounts, session, server, account): one Azure profile on the ARM test server, secret in memory."""
    server = shared_server()
    account = server.new_account()
    store = Store.open()
    creds = MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(profile_for(server, account, name="az", regions="eastus,westus2"))
    creds.set("azure", "az", {"client_secret": account.secret})
    session = Session(acc)
    yield acc, session, server, account
    session.shutdown()
    server.state.config(account.subscription).hold = False
    from workbench.core.lifecycle.teardown import teardown

    try:
        teardown(acc, None, timeout=20, poll=0.1)
    finally:
        store.close()


def _to_offers(qtbot, wiz: LaunchWizard) -> None:
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "azure-job")
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("A100"))
    page.gpu_count.setValue(8)
    wiz.next()
    assert wiz.currentPage() is wiz.offer_page
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=20_000)


def _row(wiz: LaunchWizard, itype: str, region: str) -> int:
    m = wiz.offer_page.model
    return next(n for n in range(m.rowCount())
                if (m.offer(n).offer.instance_type, m.offer(n).offer.region) == (itype, region))


def test_wizard_shows_azure_offers_and_launches_a_vm(qtbot, azure):
    accounts, session, server, account = azure
    wiz = LaunchWizard(session)
    qtbot.addWidget(wiz)
    wiz.show()
    _to_offers(qtbot, wiz)
    page = wiz.offer_page
    m = page.model
    cells = lambda row: [m.index(row, c).data() for c in range(m.columnCount())]  # noqa: E731
    nd = cells(_row(wiz, "Standard_ND96asr_v4", "eastus"))
    assert nd[0] == "azure / az" and nd[3] == "8× A100" and nd[4] == "40 GB" and nd[7] == "$27.197"
    assert nd[9].startswith("live: Azure Retail Prices API") and nd[10] == "available"
    assert _row(wiz, "Standard_ND96asr_v4", "westus2") >= 0
    blocked = _row(wiz, "Standard_ND96amsr_A100_v4", "eastus")  # its family's quota is 0
    assert "request a quota increase" in cells(blocked)[10]
    assert m.flags(m.index(blocked, 0)) == Qt.ItemFlag.NoItemFlags
    page.select_row(_row(wiz, "Standard_ND96asr_v4", "eastus"))
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page and "eastus" in wiz.review_page.fields["where"].text()
    with qtbot.waitSignal(wiz.launched, timeout=30_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id = launched.args[0]
    [inst] = accounts.store.list_instances(launch_id=launch_id)
    assert inst.state == InstanceState.RUNNING and inst.provider == "azure" and inst.price_per_hour == 27.197
    assert inst.instance_type == "Standard_ND96asr_v4" and inst.host
    vm = server.vm(account.subscription, f"wb-{launch_id}")
    assert vm["properties"]["hardwareProfile"]["vmSize"] == "Standard_ND96asr_v4"
    assert accounts.store.get_launch(launch_id).status == "running"


def test_cancel_during_vm_creation_rolls_back_and_the_ui_keeps_turning(qtbot, azure, gaps):
    accounts, session, server, account = azure
    wiz = LaunchWizard(session)
    qtbot.addWidget(wiz)
    wiz.show()
    _to_offers(qtbot, wiz)
    wiz.offer_page.select_row(_row(wiz, "Standard_ND96asr_v4", "eastus"))
    wiz.next()
    wiz.next()
    server.state.config(account.subscription).hold = True  # Azure takes its time: operations do not finish
    gaps.start()
    qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(s.sub == account.subscription and s.method == "PUT" and "networkSecurityGroups" in s.path
                                for s in server.seen), timeout=10_000)
    qtbot.mouseClick(wiz.button(CANCEL), Qt.MouseButton.LeftButton)
    assert wiz.run.cancel_requested
    group = f"wb-{wiz.launch_id}"
    # the provider was interrupted mid-operation (not left to finish creating the VM): it rolls back at once
    qtbot.waitUntil(lambda: any(s.method == "DELETE" and s.path.endswith(f"/resourcegroups/{group}")
                                for s in server.seen), timeout=10_000)
    server.state.config(account.subscription).hold = False  # the rollback's deletion may finish
    qtbot.waitUntil(lambda: "Nothing was left behind" in wiz.panel.rollback.text(), timeout=30_000)
    largest = gaps.stop()
    assert largest < gaps.limit(30.0), f"the event loop stalled for {largest:.3f} s"
    assert "cancelled and torn down" in wiz.panel.status.text()
    assert wiz.panel.state[LAUNCH_STEPS[-1]] != "done"
    assert not [g for g in server.groups(account.subscription) if g["name"] == group]
    assert not any(s.sub == account.subscription and s.method == "PUT" and "virtualMachines" in s.path
                   for s in server.seen)
    assert not any(i.state.billable for i in accounts.store.list_instances(launch_id=wiz.launch_id))
