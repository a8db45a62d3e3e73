"""The Accounts view: providers (available or not), their profiles, and the keyring they rely on.

Each discovered provider is a top-level row — an unavailable plugin shows "unavailable"
with its reason and, where the reason names a missing extra, how to install it — with
its profiles below (the built-in ``local`` profile included, but not removable).
Add / Edit open :class:`~workbench.ui.accounts.profile_dialog.ProfileDialog`; Remove asks first,
naming the profile and the machines still running under it; Test proves a saved
profile's credentials and shows who they are, or exactly why not, in a label below.

Threading: the provider list, the profiles, the keyring probe, Test and Remove all run
through ``session.run`` (keyring calls can block on D-Bus; providers on the network); the
UI thread only draws their results.  Save and Remove are changes (``session.mutate`` on the
profile's lane): the view reloads itself and the session refreshes, so the other views see it.

Failure rules: a keyring that cannot be used is a banner with its hint, not a dialog at
start-up; a failed Test is an inline red label; a failed Remove is both inline and
``show_error``.
"""

from __future__ import annotations

import logging
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QHeaderView, QLabel, QMessageBox, QProgressBar, QPushButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from workbench.core.providers.accounts import Accounts
from workbench.core.providers.credentials import CredentialStore
from workbench.core.domain.errors import AuthError, ConfigError, KeyringLockedError, NoKeyringError, WorkbenchError
from workbench.core.domain.models import Identity, Profile
from workbench.core.providers.registry import ProviderEntry
from workbench.ui.accounts.controller_panel import ControllerPanel
from workbench.ui.accounts.credentials_form import describe_failure, describe_identity, run_for, set_status
from workbench.ui.accounts.plugin_texts import plugin_text
from workbench.ui.accounts.profile_dialog import ProfileDialog
from workbench.ui.accounts.profile_tasks import check_saved
from workbench.ui.common.dialogs import show_error
from workbench.ui.common.format import money, unchecked_text
from workbench.ui.i18n import tr
from workbench.ui.common.icons import icon
from workbench.ui.runtime.lanes import profile_lane
from workbench.ui.runtime.session import Session

log = logging.getLogger("workbench.ui.accounts")

_EXTRA = re.compile(r"install the \[(\w+)\] extra")
DISTRIBUTION = "cloud-gpu-workbench"
KIND_ROLE = Qt.ItemDataRole.UserRole  # ("provider", id) or ("profile", name)


def install_hint(reason: str | None) -> str | None:
    """The pip command for a reason like "missing module 'boto3'; install the [aws] extra"."""
    match = _EXTRA.search(reason or "")
    return f'pip install "{DISTRIBUTION}[{match.group(1)}]"' if match else None


def read_accounts(accounts: Accounts) -> tuple[dict[str, ProviderEntry], list[Profile], set[str]]:
    """(providers, all profiles, names of stored profiles) — worker thread: may import plugins."""
    return dict(accounts.entries), accounts.profiles(), {p.name for p in accounts.store.list_profiles()}


def keyring_status(credentials: CredentialStore) -> tuple[str, WorkbenchError | None]:
    """(backend name, why it cannot be used or None) — worker thread: may block on D-Bus."""
    name = credentials.backend_name()
    try:
        credentials.check_backend()
    except (AuthError, ConfigError) as exc:
        return name, exc
    return name, None


def keyring_title(name: str) -> str:
    """The keyring in a user's words, from the backend's technical name (kept for the tooltip)."""
    if "SecretService" in name or "libsecret" in name:
        return tr("your desktop's keyring (GNOME Keyring, KWallet or KeePassXC)")
    if "KWallet" in name:
        return "KWallet"
    if "macOS" in name or "Keychain" in name:
        return tr("the macOS Keychain")
    if "Windows" in name:
        return tr("Windows Credential Manager")
    return tr("none that can keep secrets safely")


def keyring_advice(problem: BaseException) -> str:
    """What is wrong with the keyring and what to do, in plain words: never a class name or a shell line."""
    if isinstance(problem, NoKeyringError):
        return tr("No keyring is running on this computer, so cloud credentials can be neither saved nor read. "
                  "Install your desktop's keyring: GNOME Keyring (the package gnome-keyring), KWallet, or "
                  "KeePassXC with its Secret Service integration turned on. Then log out and back in, and open "
                  "Accounts again.")
    if isinstance(problem, KeyringLockedError):
        return tr("Your keyring is locked, so cloud credentials can be neither saved nor read. Unlock it (log in "
                  "to the desktop again, or open your keyring app and unlock the Login keyring), then open "
                  "Accounts again.")
    return tr("The system keyring did not answer, so cloud credentials can be neither saved nor read right now. "
              "Try again in a moment; if it keeps failing, restart your desktop session.")


def remove_profile(accounts: Accounts, profile: Profile) -> None:
    """Delete the keyring entry, then the profile (a keyring failure leaves both, to retry)."""
    entry = accounts.entries.get(profile.provider)
    if entry is None or entry.cls is None or entry.cls.credential_fields:
        accounts.credentials.delete(profile.provider, profile.name)
    accounts.delete_profile(profile.name)


class AccountsView(QWidget):
    """Providers and profiles; Add / Edit / Remove / Test; the keyring backend and its health."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.entries: dict[str, ProviderEntry] = {}
        self.profiles: list[Profile] = []
        self.stored: set[str] = set()
        self.loaded = False
        self.testing = False
        self.dialog: ProfileDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self._select_after_load: str | None = None
        self.setObjectName("accounts-view")

        self.banner = QFrame()
        self.banner.setObjectName("keyring-banner")
        self.banner.setStyleSheet("#keyring-banner { background: rgba(255, 170, 0, 0.18); "
                                  "border: 1px solid #e0a000; border-radius: 4px; }")
        warn = QLabel()
        warn.setPixmap(icon("warning").pixmap(24, 24))
        self.banner_text = QLabel()
        self.banner_text.setObjectName("keyring-banner-text")
        self.banner_text.setWordWrap(True)
        self.banner_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        banner_row = QHBoxLayout(self.banner)
        banner_row.addWidget(warn, 0, Qt.AlignmentFlag.AlignTop)
        banner_row.addWidget(self.banner_text, 1)
        self.banner.hide()
        self.backend_label = QLabel(tr("Keyring: checking…"))
        self.backend_label.setObjectName("keyring-backend")
        self.backend_label.setWordWrap(True)

        self.tree = QTreeWidget()
        self.tree.setObjectName("profiles-tree")
        self.tree.setHeaderLabels([tr("Provider / profile"), tr("Region"), tr("Running"), tr("Status")])
        self.tree.setRootIsDecorated(True)
        self.tree.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.tree.setColumnWidth(0, 220)
        self.details = QLabel()
        self.details.setObjectName("account-details")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.add_button = self._button("add", tr("&Add profile…"), "add-profile", self.add_profile)
        self.edit_button = self._button("settings", tr("&Edit…"), "edit-profile", self.edit_profile)
        self.remove_button = self._button("remove", tr("Re&move…"), "remove-profile", self.remove_profile)
        self.test_button = self._button("test", tr("&Test"), "test-profile", self.test_profile)
        self.busy = QProgressBar()
        self.busy.setObjectName("test-busy")
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.hide()
        self.result = QLabel()
        self.result.setObjectName("test-result")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QHBoxLayout()
        for b in (self.add_button, self.edit_button, self.remove_button, self.test_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        result_row = QHBoxLayout()
        result_row.addWidget(self.busy)
        result_row.addWidget(self.result, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.backend_label)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.details)
        self.controller = ControllerPanel(session)  # the selected cloud profile's controller (issue 33)
        layout.addWidget(self.controller)
        layout.addLayout(buttons)
        layout.addLayout(result_row)

        self.tree.currentItemChanged.connect(lambda *_: self._selection_changed())
        self.tree.itemActivated.connect(lambda *_: self._activated())
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.tree, self.remove_profile)
        session.snapshot_changed.connect(self._snapshot_changed)
        self._selection_changed()
        self.reload()
        self.check_keyring()

    def _snapshot_changed(self, _snapshot: object) -> None:
        """Update the running-machine counts in place (a rebuild would reset scrolling and focus)."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                item = top.child(j)
                prof = next((p for p in self.profiles if ("profile", p.name) == item.data(0, KIND_ROLE)), None)
                if prof is not None:
                    running = self._running(prof)
                    item.setText(2, str(len(running)) if running else "")
        self.details.setText(self._details_text())

    def _button(self, icon_name: str, text: str, name: str, slot) -> QPushButton:
        button = QPushButton(icon(icon_name), text)
        button.setObjectName(name)
        button.clicked.connect(slot)
        return button

    @property
    def accounts(self) -> Accounts:
        return self.session.accounts

    # -- loading --------------------------------------------------------------
    def reload(self, select: str | None = None) -> None:
        """Read providers and profiles in the background, then redraw (keeping or moving the selection)."""
        self._select_after_load = select or self._selected_name()
        if self.accounts is None:
            return  # offline window (self-test): nothing to list
        run_for(self, self.session, read_accounts, self.accounts, ok=self._loaded,
                err=lambda exc: set_status(self.result, describe_failure(exc), False))

    def _loaded(self, data: tuple[dict[str, ProviderEntry], list[Profile], set[str]]) -> None:
        self.entries, self.profiles, self.stored = data
        self.loaded = True
        self._fill_tree()
        pending, self._add_after_load = getattr(self, "_add_after_load", None), None
        if pending is not None:
            self.add_profile_for(pending)

    def add_profile_for(self, provider_id: str) -> None:
        """Open "Add profile" on ``provider_id`` (the Prices view's "Add an account to launch here");
        an unavailable provider is selected instead, so its reason and fix are shown."""
        if not getattr(self, "loaded", False):
            self._add_after_load = provider_id  # opened once the providers are read
            return
        if self._available(provider_id):
            self._open_dialog(None, provider_id)
            return
        for i in range(self.tree.topLevelItemCount()):
            if self.tree.topLevelItem(i).data(0, KIND_ROLE) == ("provider", provider_id):
                self.tree.setCurrentItem(self.tree.topLevelItem(i))

    def check_keyring(self) -> None:
        """Show the backend's name, and a banner with the hint when it cannot be used."""
        if self.accounts is None:
            return
        run_for(self, self.session, keyring_status, self.accounts.credentials, ok=self._keyring_checked,
                err=lambda exc: self._keyring_checked((tr("unknown"), exc)))

    def _keyring_checked(self, status: tuple[str, BaseException | None]) -> None:
        name, problem = status
        if isinstance(problem, NoKeyringError):
            self.backend_label.setText(tr("Secrets are kept in the system keyring: none was found on this computer"))
        else:
            self.backend_label.setText(tr("Secrets are kept in the system keyring: {backend}").format(
                backend=keyring_title(name)))
        self.backend_label.setToolTip(name)  # the technical name, for a bug report
        if problem is None:
            self.banner.hide()
            return
        self.banner_text.setText(keyring_advice(problem))
        self.banner_text.setToolTip(describe_failure(problem))  # the keyring's own words, for a bug report
        self.banner.show()

    # -- the tree -------------------------------------------------------------
    def _running(self, profile: Profile) -> list:
        return [i for i in self.session.snapshot.billable
                if i.provider == profile.provider and i.profile == profile.name]

    def _fill_tree(self) -> None:
        keep = self._select_after_load or self._selected_name()
        self._select_after_load = None
        self.tree.clear()
        by_provider: dict[str, list[Profile]] = {}
        for prof in self.profiles:
            by_provider.setdefault(prof.provider, []).append(prof)
        order = sorted(self.entries.values(), key=lambda e: (not e.available, e.display_name.lower()))
        selected: QTreeWidgetItem | None = None
        for entry in order:
            top = self._provider_item(entry)
            for prof in by_provider.pop(entry.id, []):
                child = self._profile_item(prof, top)
                selected = child if prof.name == keep else selected
            top.setExpanded(True)
        for pid, profs in sorted(by_provider.items()):  # profiles of providers no longer installed
            top = QTreeWidgetItem(self.tree, [pid, "", "", tr("unavailable: no plugin provides it")])
            top.setData(0, KIND_ROLE, ("provider", pid))
            top.setIcon(0, icon("warning"))
            for prof in profs:
                child = self._profile_item(prof, top)
                selected = child if prof.name == keep else selected
            top.setExpanded(True)
        if selected is not None:
            self.tree.setCurrentItem(selected)
        self._selection_changed()

    def _provider_item(self, entry: ProviderEntry) -> QTreeWidgetItem:
        if entry.available:
            status = tr("available")
        else:
            status = tr("unavailable: {reason}").format(reason=entry.reason or tr("unknown reason"))
            hint = entry.fix or install_hint(entry.reason)
            if hint:
                status += "  " + tr("Install it with: {command}").format(command=hint)
        item = QTreeWidgetItem(self.tree, [plugin_text(entry.display_name), "", "", status])
        item.setData(0, KIND_ROLE, ("provider", entry.id))
        item.setToolTip(3, status)
        if not entry.available:
            item.setIcon(0, icon("warning"))
        return item

    def _profile_item(self, prof: Profile, parent: QTreeWidgetItem) -> QTreeWidgetItem:
        running = self._running(prof)
        status = tr("built in") if prof.name not in self.stored else ""
        item = QTreeWidgetItem(parent, [prof.name, prof.region or "–", str(len(running)) if running else "", status])
        item.setData(0, KIND_ROLE, ("profile", prof.name))
        return item

    def _selected(self) -> tuple[str, str] | None:
        item = self.tree.currentItem()
        return item.data(0, KIND_ROLE) if item is not None else None

    def _selected_name(self) -> str | None:
        sel = self._selected()
        return sel[1] if sel and sel[0] == "profile" else None

    def selected_profile(self) -> Profile | None:
        name = self._selected_name()
        return next((p for p in self.profiles if p.name == name), None)

    def _selected_provider(self) -> str | None:
        sel = self._selected()
        if sel is None:
            return None
        if sel[0] == "provider":
            return sel[1]
        prof = self.selected_profile()
        return prof.provider if prof else None

    def _available(self, provider_id: str | None) -> bool:
        entry = self.entries.get(provider_id or "")
        return entry is not None and entry.available

    def _selection_changed(self) -> None:
        prof = self.selected_profile()
        usable = prof is not None and self._available(prof.provider)
        self.add_button.setEnabled(any(e.available for e in self.entries.values()))
        self.edit_button.setEnabled(usable and prof.name in self.stored)
        self.remove_button.setEnabled(prof is not None and prof.name in self.stored)
        self.test_button.setEnabled(usable and not self.testing)
        self.details.setText(self._details_text())
        self.controller.set_profile(prof if usable and prof.name in self.stored else None)

    def _details_text(self) -> str:
        prof = self.selected_profile()
        if prof is not None:
            parts = [tr("Profile {name} of {provider}").format(name=prof.name, provider=prof.provider)]
            if prof.endpoint_url:
                parts.append(tr("endpoint {url}").format(url=prof.endpoint_url))
            running = self._running(prof)
            if running:
                parts.append(tr("{count} running, {rate}/h").format(
                    count=len(running), rate=money(sum(i.price_per_hour for i in running))))
            if prof.name not in self.stored:
                parts.append(tr("built in; always available"))
            return " · ".join(parts)
        entry = self.entries.get(self._selected_provider() or "")
        if entry is None:
            return ""
        if entry.available:
            return tr("{name}: plugin {target} from {dist} {version}").format(
                name=entry.display_name, target=entry.target, dist=entry.distribution or "?",
                version=entry.version or "")
        return self.tree.currentItem().text(3)

    def _activated(self) -> None:
        sel = self._selected()
        if sel and sel[0] == "provider":
            self.add_profile()
        elif self.edit_button.isEnabled():
            self.edit_profile()

    # -- add / edit -----------------------------------------------------------
    def add_profile(self) -> None:
        provider = self._selected_provider()
        self._open_dialog(None, provider if self._available(provider) else None)

    def edit_profile(self) -> None:
        prof = self.selected_profile()
        if prof is not None and prof.name in self.stored and self._available(prof.provider):
            self._open_dialog(prof, prof.provider)

    def _open_dialog(self, profile: Profile | None, provider_id: str | None) -> None:
        self.dialog = ProfileDialog(self.session, self.entries, [p.name for p in self.profiles],
                                    profile=profile, provider_id=provider_id, parent=self)
        self.dialog.saved.connect(self._profile_saved)
        self.dialog.open()

    def _profile_saved(self, profile: Profile) -> None:
        set_status(self.result, tr("Saved profile {name}.").format(name=profile.name), True)
        self.reload(select=profile.name)  # the save's own refresh follows (Session.mutate)

    # -- remove ---------------------------------------------------------------
    def remove_profile(self) -> None:
        """Ask (naming the profile and what still runs under it), then delete profile and keyring entry."""
        prof = self.selected_profile()
        if prof is None or prof.name not in self.stored:
            return
        running = self._running(prof)
        snap = self.session.snapshot
        unchecked = next((e for n, e in snap.errors if n == prof.name), None)
        if unchecked is not None or (not snap.taken_at and not running):  # never claim what was not checked
            why = (unchecked_text(prof.name, unchecked, prof.name in snap.may_bill) if unchecked is not None
                   else tr("{name} has not been checked yet").format(name=prof.name))
            known = (tr("Something this app launched with it may still be billing: removing the profile does not "
                        "stop it, and it can no longer be managed here.") if prof.name in snap.may_bill
                     else tr("Nothing this app launched with it is known to be running."))
            text = tr("Remove profile {name} ({provider})?").format(name=prof.name, provider=prof.provider) + \
                "\n\n" + why + ".\n" + known + " " + tr("Its credentials are deleted from the keyring.")
        elif running:
            text = tr("Remove profile {name} ({provider})? {count} machine(s) launched with it are still "
                      "running at {rate}/h. Removing the profile does not stop them: they keep billing and "
                      "can no longer be managed here. Stop them first.").format(
                name=prof.name, provider=prof.provider, count=len(running),
                rate=money(sum(i.price_per_hour for i in running)))
        else:
            text = tr("Remove profile {name} ({provider})? No machines are running under it. Its "
                      "credentials are deleted from the keyring.").format(name=prof.name, provider=prof.provider)
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Remove profile"), text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("remove-confirm")
        box.button(QMessageBox.StandardButton.Yes).setText(tr("&Remove"))
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(
            lambda button: self._remove_confirmed(prof)
            if box.standardButton(button) == QMessageBox.StandardButton.Yes else None)
        self.confirm_box = box
        box.open()

    def _remove_confirmed(self, prof: Profile) -> None:
        set_status(self.result, tr("Removing profile {name}…").format(name=prof.name), None)
        run_for(self, self.session, remove_profile, self.accounts, prof, ok=lambda _: self._removed(prof),
                err=self._remove_failed, change=profile_lane(prof.name))

    def _removed(self, prof: Profile) -> None:
        set_status(self.result, tr("Removed profile {name}.").format(name=prof.name), True)
        self.reload()

    def _remove_failed(self, exc: BaseException) -> None:
        set_status(self.result, describe_failure(exc), False)
        show_error(self, exc)

    # -- test -----------------------------------------------------------------
    def test_profile(self) -> None:
        """Prove the selected profile's credentials in the background; the result goes to the label."""
        prof = self.selected_profile()
        if prof is None or self.testing or not self._available(prof.provider):
            return
        self.testing = True
        self.busy.show()
        self._selection_changed()
        set_status(self.result, tr("Testing {name}…").format(name=prof.name), None)
        run_for(self, self.session, check_saved, self.accounts, prof,
                ok=lambda identity: self._tested(prof, identity),
                err=lambda exc: set_status(self.result, tr("{name}: {reason}").format(
                    name=prof.name, reason=describe_failure(exc)), False),
                done=self._test_done)

    def _tested(self, prof: Profile, identity: Identity) -> None:
        set_status(self.result, tr("{name}: {result}").format(name=prof.name, result=describe_identity(identity)),
                   True)

    def _test_done(self) -> None:
        self.testing = False
        self.busy.hide()
        self._selection_changed()
