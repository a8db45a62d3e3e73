"""The Accounts view over the fakecloud test plugin: generated form, Save to the keyring, Test, Remove.

Most tests use in-memory credentials (``fake_accounts``); one stores a secret in the real
Secret Service and checks that it landed there and in no file under the home folder.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QMessageBox, QToolButton, QTreeWidgetItem

from workbench.core.providers.accounts import Accounts
from workbench.core.providers.credentials import CredentialStore
from workbench.core.domain.errors import AuthError
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.providers.registry import ProviderEntry, discover
from workbench.core.store.database import Store
from workbench.ui.accounts.accounts_view import AccountsView
from workbench.ui.accounts.credentials_form import UNCHANGED
from workbench.ui.runtime.session import Session, Snapshot
from workbench_testing import FIXTURE_PLUGINS, MemoryCredentials, needs_secret_service

SECRET = "tok-s3cret-Value-42"


class RecordingCredentials(MemoryCredentials):
    """In-memory credentials that record the thread of each keyring call."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: dict[str, int] = {}

    def set(self, provider: str, profile: str, values) -> None:
        self.threads["set"] = threading.get_ident()
        super().set(provider, profile, values)

    def check_backend(self) -> None:
        self.threads["check_backend"] = threading.get_ident()


def _session(qtbot, accounts: Accounts):
    s = Session(accounts)
    return s


def _close(qtbot, s: Session) -> None:
    qtbot.waitUntil(lambda: not s.refreshing, timeout=10_000)
    s.shutdown()


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = _session(qtbot, fake_accounts)
    yield s
    _close(qtbot, s)


def make_view(qtbot, session: Session) -> AccountsView:
    view = AccountsView(session)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitUntil(lambda: view.loaded, timeout=5000)
    return view


def top_item(view: AccountsView, provider_id: str) -> QTreeWidgetItem:
    for i in range(view.tree.topLevelItemCount()):
        item = view.tree.topLevelItem(i)
        if item.data(0, Qt.ItemDataRole.UserRole) == ("provider", provider_id):
            return item
    raise AssertionError(f"no provider row {provider_id}")


def profile_item(view: AccountsView, name: str) -> QTreeWidgetItem | None:
    for i in range(view.tree.topLevelItemCount()):
        top = view.tree.topLevelItem(i)
        for j in range(top.childCount()):
            if top.child(j).data(0, Qt.ItemDataRole.UserRole) == ("profile", name):
                return top.child(j)
    return None


def select(qtbot, view: AccountsView, name: str) -> None:
    qtbot.waitUntil(lambda: profile_item(view, name) is not None, timeout=5000)
    view.tree.setCurrentItem(profile_item(view, name))


def open_add(qtbot, view: AccountsView, provider_id: str = "fakecloud"):
    view.tree.setCurrentItem(top_item(view, provider_id))
    qtbot.mouseClick(view.add_button, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    return dialog


def visible_texts(*roots, skip=()) -> list[str]:
    """Every QLabel / QLineEdit text and placeholder under the roots, plus the tree's cells."""
    out: list[str] = []
    for root in roots:
        for label in root.findChildren(QLabel):
            out.append(label.text())
        for edit in root.findChildren(QLineEdit):
            if edit not in skip:
                out += [edit.text(), edit.placeholderText()]
    return out


def test_providers_profiles_and_the_generated_form(qtbot, fake_session):
    view = make_view(qtbot, fake_session)
    fake = top_item(view, "fakecloud")
    assert fake.text(0) == "Fake Cloud (tests)" and fake.text(3) == "available"
    broken = top_item(view, "broken")
    assert "unavailable" in broken.text(3) and "deliberately broken" in broken.text(3)
    view.tree.setCurrentItem(broken)
    assert "deliberately broken" in view.details.text()
    select(qtbot, view, "local")
    assert profile_item(view, "local").text(3) == "built in"
    assert not view.remove_button.isEnabled() and not view.edit_button.isEnabled()
    assert view.test_button.isEnabled()

    dialog = open_add(qtbot, view)
    assert dialog.provider_combo.currentData() == "fakecloud"
    inputs = dialog.form.inputs
    assert set(inputs) == {"account", "token"}
    assert inputs["token"].echoMode() == QLineEdit.EchoMode.Password
    assert inputs["account"].echoMode() == QLineEdit.EchoMode.Normal
    labels = [lbl.text() for lbl in dialog.form.findChildren(QLabel)]
    assert "API token (optional):" in labels and "Account name *:" in labels  # required fields marked
    assert "* required" in [lbl.text() for lbl in dialog.findChildren(QLabel)]
    show = dialog.form.findChild(QToolButton, "show-token")
    show.click()
    assert inputs["token"].echoMode() == QLineEdit.EchoMode.Normal
    show.click()
    assert inputs["token"].echoMode() == QLineEdit.EchoMode.Password
    assert dialog.region_combo.currentText() == "fake-east"  # the provider's default region

    # validation: name required, safe, unique; the required account field; no red error before typing
    assert not dialog.save_button.isEnabled() and dialog.problem.text() == ""
    dialog.name_edit.setText("x")
    dialog.name_edit.setText("")
    assert "name" in dialog.problem.text()
    dialog.name_edit.setText("bad name!")
    assert "letters, digits" in dialog.problem.text() and not dialog.save_button.isEnabled()
    dialog.name_edit.setText("local")
    assert "already exists" in dialog.problem.text()
    dialog.name_edit.setText("work")
    assert dialog.problem.text() == "Enter Account name." and not dialog.test_button.isEnabled()
    inputs["account"].setText("acct-1")
    dialog.advanced_toggle.click()
    dialog.settings_edit.setPlainText("tier=gold\nnonsense")
    assert "line 2" in dialog.problem.text() and not dialog.save_button.isEnabled()
    dialog.settings_edit.setPlainText("tier=gold")
    assert dialog.problem.text() == "" and dialog.save_button.isEnabled()


def test_add_save_and_test_never_shows_the_secret(qtbot, fake_session, fake_accounts):
    view = make_view(qtbot, fake_session)
    dialog = open_add(qtbot, view)
    dialog.name_edit.setText("work")
    dialog.form.inputs["account"].setText("acct-1")
    dialog.form.inputs["token"].setText(SECRET)
    dialog.region_combo.setEditText("fake-west")
    dialog.advanced_toggle.click()
    dialog.settings_edit.setPlainText("tier = gold")

    # Test before saving: the identity, and the provider's regions offered in the combo
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "acct-1" in dialog.result.text(), timeout=5000)
    assert "user@work" in dialog.result.text()
    assert {dialog.region_combo.itemText(i) for i in range(dialog.region_combo.count())} >= {"fake-east", "fake-west"}
    assert dialog.region_combo.currentText() == "fake-west"

    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    prof = next(p for p in fake_accounts.profiles() if p.name == "work")
    assert (prof.provider, prof.region, dict(prof.settings)) == ("fakecloud", "fake-west", {"tier": "gold"})
    assert fake_accounts.credentials.get("fakecloud", "work") == {"account": "acct-1", "token": SECRET}
    qtbot.waitUntil(lambda: fake_session.snapshot.taken_at > 0, timeout=5000)  # other views hear about it

    select(qtbot, view, "work")
    assert view.edit_button.isEnabled() and view.remove_button.isEnabled()
    qtbot.mouseClick(view.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "acct-1" in view.result.text(), timeout=5000)
    assert view.busy.isHidden()
    texts = visible_texts(view, dialog, skip=[dialog.form.inputs["token"]])
    texts += [profile_item(view, "work").text(c) for c in range(4)]
    assert not [t for t in texts if SECRET in t]


def test_bad_token_shows_the_reason_inline(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("badtok")
    fake_accounts.credentials.set("fakecloud", "badtok", {"account": "acct-1", "token": "bad"})
    view = make_view(qtbot, fake_session)
    select(qtbot, view, "badtok")
    qtbot.mouseClick(view.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "invalid token" in view.result.text(), timeout=5000)
    assert "badtok" in view.result.text() and "acct-1" not in view.result.text()

    dialog = open_add(qtbot, view)
    dialog.name_edit.setText("other")
    dialog.form.inputs["account"].setText("acct-2")
    dialog.form.inputs["token"].setText("bad")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "invalid token" in dialog.result.text(), timeout=5000)
    assert dialog.isVisible()


def test_edit_keeps_the_stored_secret_without_showing_it(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("fake")  # token "tok-do-not-show"
    view = make_view(qtbot, fake_session)
    select(qtbot, view, "fake")
    qtbot.mouseClick(view.edit_button, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and not dialog.loading, timeout=5000)
    token, account = dialog.form.inputs["token"], dialog.form.inputs["account"]
    assert token.text() == "" and token.placeholderText() == UNCHANGED
    assert account.text() == "acct-1"
    assert dialog.name_edit.isReadOnly() and not dialog.provider_combo.isEnabled()
    assert not [t for t in visible_texts(dialog) if "tok-do-not-show" in t]
    dialog.region_combo.setEditText("fake-west")
    account.setText("acct-9")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert fake_accounts.credentials.get("fakecloud", "fake") == {"account": "acct-9", "token": "tok-do-not-show"}
    assert fake_accounts.profile("fake").region == "fake-west"


def test_remove_asks_naming_running_machines_then_deletes(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("gone")
    view = make_view(qtbot, fake_session)
    running = Instance("fakecloud", "gone", "fk-1", "l-1", "fake-east", "fk.v100x1", InstanceState.RUNNING,
                       price_per_hour=3.06)
    fake_session.snapshot = Snapshot(instances=(running,))
    fake_session.snapshot_changed.emit(fake_session.snapshot)
    select(qtbot, view, "gone")
    assert profile_item(view, "gone").text(2) == "1" and "$3.06/h" in view.details.text()

    qtbot.mouseClick(view.remove_button, Qt.MouseButton.LeftButton)
    box = view.confirm_box
    qtbot.waitUntil(box.isVisible, timeout=3000)
    assert "gone" in box.text() and "1 machine" in box.text() and "$3.06" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert "gone" in [p.name for p in fake_accounts.profiles()]

    fake_session.snapshot = Snapshot(taken_at=1.0)
    qtbot.mouseClick(view.remove_button, Qt.MouseButton.LeftButton)
    box = view.confirm_box
    qtbot.waitUntil(box.isVisible, timeout=3000)
    assert "No machines are running" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: profile_item(view, "gone") is None, timeout=5000)
    assert "gone" not in [p.name for p in fake_accounts.profiles()]
    assert not fake_accounts.credentials.has("fakecloud", "gone")


def test_keyring_calls_run_off_the_ui_thread_and_a_slow_test_does_not_block(qtbot, fake_accounts, gaps):
    creds = RecordingCredentials()
    acc = Accounts(fake_accounts.store, entries=fake_accounts.entries, credentials=creds)
    session = _session(qtbot, acc)
    try:
        view = make_view(qtbot, session)
        qtbot.waitUntil(lambda: "check_backend" in creds.threads, timeout=5000)
        dialog = open_add(qtbot, view)
        dialog.name_edit.setText("slow")
        dialog.form.inputs["account"].setText("acct-1")
        dialog.advanced_toggle.click()
        dialog.settings_edit.setPlainText("delay=0.8")
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "set" in creds.threads, timeout=5000)
        main = threading.get_ident()
        assert creds.threads["set"] != main and creds.threads["check_backend"] != main

        select(qtbot, view, "slow")
        gaps.start()
        qtbot.mouseClick(view.test_button, Qt.MouseButton.LeftButton)
        assert not view.busy.isHidden() and not view.test_button.isEnabled()
        qtbot.waitUntil(lambda: "acct-1" in view.result.text(), timeout=5000)
        assert gaps.stop() < gaps.limit(0.8)
        assert view.busy.isHidden() and view.test_button.isEnabled()
    finally:
        for p in acc.profiles():  # the fixture's cleanup would be slowed down by the delay
            if p.name == "slow":
                acc.delete_profile("slow")
        _close(qtbot, session)


class BrokenKeyring(RecordingCredentials):
    def backend_name(self) -> str:
        return "fail Keyring (keyring.backends.fail.Keyring)"

    def check_backend(self) -> None:
        from workbench.core.domain.errors import NoKeyringError
        from workbench.core.providers.keyring_safety import NO_KEYRING_MESSAGE, fix_hint

        # what CredentialStore raises on a computer without a keyring (its hint holds a shell line)
        raise NoKeyringError(f"{NO_KEYRING_MESSAGE} (selected backend: {self.backend_name()})", hint=fix_hint())


def test_unusable_keyring_banner_and_install_hint(qtbot, fake_accounts):
    entries = dict(fake_accounts.entries)
    entries["aws"] = ProviderEntry("aws", "workbench_aws:AwsProvider", "cloud-gpu-workbench", "0.1.0", None,
                                   "missing module 'boto3'; install the [aws] extra")
    acc = Accounts(fake_accounts.store, entries=entries, credentials=BrokenKeyring())
    session = _session(qtbot, acc)
    try:
        view = make_view(qtbot, session)
        qtbot.waitUntil(lambda: not view.banner.isHidden(), timeout=5000)
        # plain words: what to install, never a backend class name or a shell line (issue 29)
        text = view.banner_text.text() + view.backend_label.text()
        assert "No keyring is running on this computer" in view.banner_text.text()
        assert "GNOME Keyring (the package gnome-keyring), KWallet, or KeePassXC" in view.banner_text.text()
        assert "none was found on this computer" in view.backend_label.text()
        for technical in ("keyring.backends", "fail Keyring", "dbus-run-session", "gnome-keyring-daemon", "$PW"):
            assert technical not in text, technical
        assert "fail Keyring" in view.backend_label.toolTip()  # kept for a bug report
        # a profile that cannot be checked for want of a keyring says so in the same words (the status
        # line read "… (selected backend: fail Keyring (keyring.backends.fail.Keyring))")
        from workbench.core.domain.errors import NoKeyringError
        from workbench.ui.common.format import unchecked_text

        with pytest.raises(NoKeyringError) as caught:
            BrokenKeyring().check_backend()
        line = unchecked_text("lab", caught.value, True)
        assert "no keyring is running on this computer" in line and "keyring.backends" not in line
        aws = top_item(view, "aws")
        assert "unavailable" in aws.text(3) and 'pip install "cloud-gpu-workbench[aws]"' in aws.text(3)
    finally:
        _close(qtbot, session)


@needs_secret_service
def test_save_puts_the_secret_in_the_secret_service_only(qtbot, home, monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    store = Store.open()
    acc = Accounts(store, entries=discover())  # the default CredentialStore: the real keyring
    session = _session(qtbot, acc)
    name = f"ss-{uuid.uuid4().hex[:8]}"
    secret = f"{SECRET}-{uuid.uuid4().hex}"
    try:
        view = make_view(qtbot, session)
        qtbot.waitUntil(lambda: "your desktop's keyring" in view.backend_label.text(), timeout=10_000)
        assert "SecretService" in view.backend_label.toolTip()
        assert view.banner.isHidden()
        dialog = open_add(qtbot, view)
        dialog.name_edit.setText(name)
        dialog.form.inputs["account"].setText("acct-1")
        dialog.form.inputs["token"].setText(secret)
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
        assert CredentialStore().get("fakecloud", name) == {"account": "acct-1", "token": secret}
        qtbot.waitUntil(lambda: not session.refreshing, timeout=10_000)
        leaks = [p for p in home.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert leaks == []
        assert any(p.name == name for p in acc.profiles())
    finally:
        _close(qtbot, session)
        CredentialStore().delete("fakecloud", name)
        store.close()


def test_remove_never_claims_what_it_could_not_check(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("dark")
    view = make_view(qtbot, fake_session)
    select(qtbot, view, "dark")
    for may_bill, expected in ((False, "Nothing this app launched with it is known to be running."),
                               (True, "may still be billing")):
        fake_session.snapshot = Snapshot(errors=(("dark", AuthError("the token expired")),), taken_at=1.0,
                                         may_bill=frozenset({"dark"}) if may_bill else frozenset())
        qtbot.mouseClick(view.remove_button, Qt.MouseButton.LeftButton)
        box = view.confirm_box
        qtbot.waitUntil(box.isVisible, timeout=3000)
        assert "cannot check dark: the token expired" in box.text() and expected in box.text()
        assert "No machines are running" not in box.text()
        box.button(QMessageBox.StandardButton.Cancel).click()
    fake_session.snapshot = Snapshot()  # before the first refresh: not checked yet either
    qtbot.mouseClick(view.remove_button, Qt.MouseButton.LeftButton)
    box = view.confirm_box
    qtbot.waitUntil(box.isVisible, timeout=3000)
    assert "dark has not been checked yet" in box.text() and "No machines are running" not in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()


def test_fields_fit_their_hints_focus_stays_after_test_and_a_failed_test_asks_before_saving(qtbot, fake_session,
                                                                                               fake_accounts):
    from workbench.ui.accounts.profile_dialog import ProfileDialog

    view = make_view(qtbot, fake_session)
    dialog = open_add(qtbot, view)
    assert isinstance(dialog, ProfileDialog)
    for edit in dialog.form.inputs.values():  # wide enough to read the hint whole
        hint = edit.placeholderText()
        assert edit.minimumWidth() >= min(560, edit.fontMetrics().horizontalAdvance(hint))
    dialog.name_edit.setText("shaky")
    dialog.form.inputs["account"].setText("acct-1")
    dialog.form.inputs["token"].setText("bad")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=5000)
    dialog.test_button.setFocus()
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "invalid token" in dialog.result.text() and not dialog.testing, timeout=5000)
    assert dialog.test_button.hasFocus()  # focus stays where it was
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    box = dialog.confirm_box
    qtbot.waitUntil(box.isVisible, timeout=3000)
    assert "failed" in box.text() and "invalid token" in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert dialog.isVisible() and "shaky" not in [p.name for p in fake_accounts.profiles()]
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    box = dialog.confirm_box
    qtbot.waitUntil(box.isVisible, timeout=3000)
    next(b for b in box.buttons() if b.text() == "Save &anyway").click()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert "shaky" in [p.name for p in fake_accounts.profiles()]
    # an edit after the failed test: Save does not ask (the test no longer speaks for the form)
    dialog2 = open_add(qtbot, view)
    dialog2.name_edit.setText("steady")
    dialog2.form.inputs["account"].setText("acct-2")
    qtbot.mouseClick(dialog2.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog2.isVisible(), timeout=5000)
