"""A cloud whose SDK is missing, in the GUI: Accounts and the wizard say "unavailable" with the exact fix.

(The same detection is run for real, in a venv without boto3, by tests/installer/test_missing_sdk.py.)
"""

from __future__ import annotations

import pytest

from workbench.core.domain.models import Profile
from workbench.core.providers import registry
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials

FIX = "pip install 'cloud-gpu-workbench[aws]'"


@pytest.fixture
def no_boto(home, monkeypatch, qtbot):
    real = registry._importable
    monkeypatch.setattr(registry, "_importable", lambda m: m not in ("boto3", "botocore") and real(m))
    store = Store.open()
    acc = Accounts(store, entries=registry.discover(), credentials=MemoryCredentials())
    acc.save_profile(Profile("work", "aws", "us-east-1"))
    session = Session(acc)
    yield session
    session.shutdown()
    store.close()


def test_accounts_and_wizard_show_the_fix(qtbot, no_boto):
    from workbench.ui.accounts.accounts_view import AccountsView
    from workbench.ui.launch.launch_wizard import LaunchWizard

    view = AccountsView(no_boto)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.loaded, timeout=10_000)
    aws = next(view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
               if view.tree.topLevelItem(i).data(0, 0x0100) == ("provider", "aws"))
    assert "unavailable" in aws.text(3) and FIX in aws.text(3) and "boto3" in aws.text(3)
    assert "bug" not in aws.text(3).lower()
    view.tree.setCurrentItem(aws.child(0))  # the profile "work": it cannot be tested or edited
    assert not view.test_button.isEnabled()

    wiz = LaunchWizard(no_boto)
    qtbot.addWidget(wiz)
    wiz.show()
    page = wiz.job_page
    qtbot.keyClicks(page.name_edit, "gpu-job")
    qtbot.keyClicks(page.command_edit, "python3 train.py")
    page.gpu_model.setCurrentIndex(page.gpu_model.findData("V100"))
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=20_000)
    errors = wiz.offer_page.errors.text()
    assert "work:" in errors and "unavailable" in errors and FIX in errors
    aws_rows = [r for r in wiz.offer_page.model.offers() if r.offer.provider == "aws"]
    assert aws_rows and all(FIX in r.offer.availability_note for r in aws_rows)
    wiz.reject()
