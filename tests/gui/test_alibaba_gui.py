"""Alibaba Cloud in the GUI: the Accounts form for an AccessKey, and the launch wizard with offers priced in ¥
from our ECS test server (real HTTP, the real alibabacloud SDKs), ending with a running ECS instance."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.domain.models import InstanceState
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials

from test_accounts_view import make_view, open_add, profile_item, visible_texts


from alibaba_ecs import profile_for, shared_server  # noqa: E402

FINISH = QWizard.WizardButton.FinishButton


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ali_accounts(home):
    server = shared_server()
    account = server.new_account()
    store = Store.open()
    creds = MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    yield acc, server, account
    from workbench.core.lifecycle.teardown import teardown

    try:
        teardown(acc, None, timeout=20, poll=0.1)
    finally:
        store.close()


def test_accounts_form_adds_an_alibaba_access_key_and_names_the_account(qtbot, ali_accounts):
    acc, server, account = ali_accounts
    session = Session(acc)
    try:
        view = make_view(qtbot, session)
        dialog = open_add(qtbot, view, "alibaba")
        assert set(dialog.form.inputs) == {"access_key_id", "access_key_secret", "cli_profile"}
        assert dialog.form.inputs["access_key_secret"].echoMode() != dialog.form.inputs["access_key_id"].echoMode()
        dialog.name_edit.setText("ali")
        dialog.form.inputs["access_key_id"].setText(account.access_key_id)
        dialog.form.inputs["access_key_secret"].setText(account.secret)
        dialog.region_combo.setEditText("cn-hangzhou")
        dialog.advanced_toggle.click()
        dialog.settings_edit.setPlainText(f"endpoint = {server.endpoint}\nprotocol = http\nssh_cidr = 203.0.113.7/32")
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: account.account_id in dialog.result.text(), timeout=20_000)
        assert "acs:ram::" in dialog.result.text()
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
        assert acc.credentials.get("alibaba", "ali") == {"access_key_id": account.access_key_id,
                                                        "access_key_secret": account.secret}
        qtbot.waitUntil(lambda: profile_item(view, "ali") is not None, timeout=5000)
        texts = visible_texts(view, dialog, skip=[dialog.form.inputs["access_key_secret"]])
        assert not [t for t in texts if account.secret in t]
    finally:
        qtbot.waitUntil(lambda: not session.refreshing, timeout=10_000)
        session.shutdown()


def _rows(wiz: LaunchWizard) -> dict[str, list]:
    m = wiz.offer_page.model
    return {m.offer(n).offer.instance_type: [m.index(n, c).data() for c in range(m.columnCount())]
            for n in range(m.rowCount())}


def test_wizard_offers_in_yuan_and_launches_an_ecs_instance(qtbot, ali_accounts):
    acc, server, account = ali_accounts
    acc.save_profile(profile_for(server, account, name="ali"))
    acc.credentials.set("alibaba", "ali", {"access_key_id": account.access_key_id, "access_key_secret": account.secret})
    server.knobs(account).no_stock.add(("cn-hangzhou-h", "ecs.gn6v-c8g1.2xlarge", "*"))
    session = Session(acc)
    try:
        wiz = LaunchWizard(session)
        qtbot.addWidget(wiz)
        wiz.show()
        page = wiz.job_page
        qtbot.keyClicks(page.name_edit, "ali-v100")
        qtbot.keyClicks(page.command_edit, "python3 train.py")
        page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
        page.gpu_count.setValue(1)
        wiz.next()
        qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=30_000)
        rows = _rows(wiz)
        v100 = rows["ecs.gn6v-c8g1.2xlarge"]
        assert v100[0] == "alibaba / ali" and v100[3] == "1× V100" and v100[4] == "16 GB"
        assert any(str(c).startswith("¥25.") for c in v100), v100
        assert any("no stock in cn-hangzhou-h" in str(c) for c in v100), v100
        assert "ecs.gn6e-c12g1.3xlarge" in rows  # the 32 GB V100 too
        m = wiz.offer_page.model
        wiz.offer_page.select_row(next(n for n in range(m.rowCount())
                                       if m.offer(n).offer.instance_type == "ecs.gn6v-c8g1.2xlarge"))
        wiz.next()
        wiz.next()
        assert wiz.currentPage() is wiz.review_page and "cn-hangzhou" in wiz.review_page.fields["where"].text()
        with qtbot.waitSignal(wiz.launched, timeout=30_000) as launched:
            qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
        [inst] = acc.store.list_instances(launch_id=launched.args[0])
        assert inst.provider == "alibaba" and inst.currency == "CNY" and inst.state in (InstanceState.PENDING,
                                                                                           InstanceState.RUNNING)
        assert inst.instance_type == "ecs.gn6v-c8g1.2xlarge" and inst.host
        [raw] = server.instances(account)
        assert raw["InstanceId"] == inst.instance_id and raw["ZoneId"] != "cn-hangzhou-h" and raw["AutoReleaseTime"]
    finally:
        qtbot.waitUntil(lambda: not session.refreshing, timeout=10_000)
        session.shutdown()
