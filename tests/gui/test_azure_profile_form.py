"""Add profile for Azure: a Subscription field of its own, with a picker filled after sign-in (also when the
test fails because the identity sees several subscriptions).  The real Azure SDK against our ARM server."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QMessageBox

from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store
from workbench.ui.accounts.profile_dialog import ProfileDialog, settings_text
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials


from azure_arm import profile_for, shared_server  # noqa: E402


def test_the_subscription_is_picked_from_what_the_identity_sees(qtbot, home):
    server = shared_server()
    account = server.new_account(name="Research")
    second = str(uuid.uuid4())
    server.state.add_subscription(second, account.tenant, "Teaching")
    client_id, secret = str(uuid.uuid4()), f"s3cr3t-{uuid.uuid4().hex}"
    server.state.add_client(account.tenant, client_id, secret, (account.subscription, second))
    store = Store.open()
    acc = Accounts(store, entries=discover(), credentials=MemoryCredentials())
    session = Session(acc)
    try:
        dialog = ProfileDialog(session, acc.entries, [p.name for p in acc.profiles()], provider_id="azure")
        qtbot.addWidget(dialog)
        dialog.show()
        combo = dialog.findChild(QComboBox, "setting-subscription_id")
        assert combo is not None and combo.isEditable()
        assert "Subscription (optional):" in [lbl.text() for lbl in dialog.findChildren(QLabel)]
        assert combo.minimumWidth() >= min(560, combo.fontMetrics().horizontalAdvance(combo.lineEdit().placeholderText()))
        base = profile_for(server, account).settings
        dialog.name_edit.setText("az-lab")
        dialog.form.inputs["tenant_id"].setText(account.tenant)
        dialog.form.inputs["client_id"].setText(client_id)
        dialog.form.inputs["client_secret"].setText(secret)
        dialog.advanced_toggle.click()
        dialog.settings_edit.setPlainText(settings_text({k: v for k, v in base.items()
                                                         if k not in ("subscription_id", "tenant_id", "client_id")}))
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        # two subscriptions and none chosen: the test says so, and the picker offers both
        qtbot.waitUntil(lambda: combo.count() == 2 and not dialog.testing, timeout=30_000)
        assert "2 subscriptions" in dialog.result.text()
        labels = sorted(combo.itemText(i) for i in range(combo.count()))
        assert labels == sorted([f"Research ({account.subscription})", f"Teaching ({second})"])
        combo.setCurrentIndex(next(i for i in range(combo.count()) if combo.itemData(i) == second))
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)  # the pick made, the test passes
        qtbot.waitUntil(lambda: "Credentials work" in dialog.result.text(), timeout=30_000)
        assert "Teaching" in dialog.result.text()
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
        assert dialog.findChild(QMessageBox, "save-after-failed-test") is None  # the last test passed
        saved = acc.profile("az-lab")
        assert saved.settings["subscription_id"] == second
        assert "subscription_id" not in dialog.settings_edit.toPlainText()
    finally:
        session.shutdown()
        store.close()
