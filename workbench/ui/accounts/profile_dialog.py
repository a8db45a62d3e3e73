"""The profile editor: name, provider, region, credentials, endpoint and settings, with Test and Save.

:class:`ProfileDialog` wraps the provider's
:class:`~workbench.ui.accounts.credentials_form.CredentialsForm` with the profile's
name, provider, region and the advanced endpoint URL and free-form settings,
validates it all inline, and has Test and Save.
Threading: the dialog never touches the keyring or a provider on the UI thread.  Reading
the stored values, Save and Test run the worker functions of ``profile_tasks`` through
``session.run`` (Save is a change: ``session.mutate`` on the profile's lane).  Secret values travel one way
only, from the form into the worker: the worker reads what is stored, merges, and gives
the UI back non-secret values and the *names* of stored secrets, never their values.

Failure rules: validation problems keep Save/Test disabled and are shown inline once the
user has typed (a fresh form shows no error); a failed save or test shows the error's
message and hint inline (scrubbed of the secrets involved), never a traceback.  The dialog
stays open after a failed save; saving after a failed test asks first.  Required fields
are marked " *"; a provider's own settings (Azure: the subscription) get fields of their
own, with the values the provider offers once signed in (after Test, even a failed one).
Focus stays where it was when Test finishes.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QApplication, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QGroupBox, QHBoxLayout,
                               QLabel, QLineEdit, QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QToolButton,
                               QVBoxLayout, QWidget)

from workbench.core.domain.models import Identity, Profile, Region
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import ProviderEntry
from workbench.ui.accounts.credentials_form import (CredentialsForm, describe_failure, describe_identity, fit_hint,
                                                    required, run_for, set_status)
from workbench.ui.accounts.login_key import LoginKeyRow, needs_login_key
from workbench.ui.accounts.plugin_texts import plugin_text
from workbench.ui.accounts.profile_tasks import check_form, load_stored, save_profile, setting_choices
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import profile_lane
from workbench.ui.runtime.session import Session

#: letters, digits, ".", "_" and "-", starting with a letter or digit: safe as a keyring
#: key part, a file name and a cloud tag value
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def parse_settings(text: str) -> tuple[dict[str, str], int | None]:
    """``key=value`` lines (blank lines and ``#`` comments skipped) → (settings, first bad line or None)."""
    settings: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            return settings, number
        settings[key.strip()] = value.strip()
    return settings, None


def combo_value(combo: QComboBox) -> str:
    """A picked entry's value (a subscription's id behind its "name (id)" label), else what was typed."""
    i = combo.currentIndex()
    if i >= 0 and combo.currentText() == combo.itemText(i) and combo.itemData(i):
        return str(combo.itemData(i))
    return combo.currentText().strip()


def settings_text(settings: Mapping[str, str]) -> str:
    return "\n".join(f"{k}={v}" for k, v in sorted(settings.items()))


class ProfileDialog(QDialog):
    """Add (``profile`` None) or edit one profile; ``saved(Profile)`` fires once keyring and store have it.

    Opened with ``open()`` by the accounts view.  When editing, the name and provider are
    fixed (launches and cloud tags refer to the name), stored plain values are shown and
    stored secrets are not: their fields stay empty, meaning "keep what is stored".
    """

    saved = Signal(object)  # Profile

    def __init__(self, session: Session, entries: Mapping[str, ProviderEntry], existing_names: Sequence[str],
                 profile: Profile | None = None, provider_id: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.accounts: Accounts = session.accounts
        self.entries = {pid: e for pid, e in entries.items() if e.available}
        self.original = profile
        self.editing = profile is not None
        self.existing = set(existing_names)
        self.loading = self.saving = self.testing = False
        self.setObjectName("profile-dialog")
        self.setWindowTitle(tr("Edit profile {name}").format(name=profile.name) if profile else tr("Add profile"))
        self.setMinimumWidth(600)
        self.touched = False  # problems are shown once the user has typed
        self.test_failed: str | None = None  # why the last test failed (Save asks first); None after an edit
        self.setting_edits: dict[str, QComboBox] = {}

        self.provider_combo = QComboBox()
        self.provider_combo.setObjectName("profile-provider")
        for pid, entry in sorted(self.entries.items(), key=lambda kv: kv[1].display_name.lower()):
            self.provider_combo.addItem(plugin_text(entry.display_name), pid)
        wanted = profile.provider if profile else provider_id
        if wanted is not None and self.provider_combo.findData(wanted) >= 0:
            self.provider_combo.setCurrentIndex(self.provider_combo.findData(wanted))
        self.provider_combo.setEnabled(not self.editing)
        self.name_edit = QLineEdit(profile.name if profile else "")
        self.name_edit.setObjectName("profile-name")
        self.name_edit.setReadOnly(self.editing)
        self.name_edit.setToolTip(tr("Letters, digits, '.', '_' and '-'; machines launched with this profile "
                                     "are tracked under this name, so it cannot be changed later."))
        self.region_combo = QComboBox()
        self.region_combo.setObjectName("profile-region")
        self.region_combo.setEditable(True)
        self.region_combo.setToolTip(tr("Type a region, or run Test to list the provider's regions."))

        top = self.top = QFormLayout()
        for text, widget in ((required(tr("&Provider")) + ":", self.provider_combo),
                             (required(tr("&Name")) + ":", self.name_edit), (tr("&Region:"), self.region_combo)):
            label = QLabel(text)
            label.setBuddy(widget)
            top.addRow(label, widget)
        self.required_note = QLabel(tr("* required"))
        self.required_note.setObjectName("profile-required-note")

        self.creds_box = QGroupBox(tr("Credentials"))
        self.creds_layout = QVBoxLayout(self.creds_box)
        self.creds_note = note = QLabel(tr("Secret fields are saved only in the system keyring, never in a file."))
        note.setWordWrap(True)
        self.creds_layout.addWidget(note)
        self.form: CredentialsForm | None = None
        self.login_key: LoginKeyRow | None = None

        self.advanced_toggle = QToolButton()
        self.advanced_toggle.setObjectName("profile-advanced")
        self.advanced_toggle.setText(tr("&Advanced"))
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced = QWidget()
        adv = QFormLayout(self.advanced)
        adv.setContentsMargins(0, 0, 0, 0)
        self.endpoint_edit = QLineEdit((profile.endpoint_url or "") if profile else "")
        self.endpoint_edit.setObjectName("profile-endpoint")
        self.endpoint_edit.setPlaceholderText(tr("default endpoint of the provider"))
        self.endpoint_edit.setToolTip(tr("Only for private or test endpoints (https://…)."))
        self.settings_edit = QPlainTextEdit(settings_text(profile.settings) if profile else "")
        self.settings_edit.setObjectName("profile-settings")
        self.settings_edit.setPlaceholderText(tr("one key=value per line, provider-specific"))
        self.settings_edit.setTabChangesFocus(True)
        self.settings_edit.setFixedHeight(80)
        adv.addRow(tr("Endpoint URL:"), self.endpoint_edit)
        adv.addRow(tr("Settings:"), self.settings_edit)
        self.advanced_toggle.toggled.connect(self._show_advanced)
        self._show_advanced(bool(profile and (profile.endpoint_url or profile.settings)))

        self.test_button = QPushButton(icon("test"), tr("&Test credentials"))
        self.test_button.setObjectName("profile-test")
        self.test_button.setAutoDefault(False)
        self.busy = QProgressBar()
        self.busy.setObjectName("profile-busy")
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setMaximumWidth(120)
        self.busy.hide()
        self.result = QLabel()
        self.result.setObjectName("profile-result")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.busy)
        test_row.addWidget(self.result, 1)
        self.problem = QLabel()
        self.problem.setObjectName("profile-problem")
        self.problem.setWordWrap(True)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("profile-save")
        self.save_button.setText(tr("&Save"))
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.creds_box)
        layout.addWidget(self.required_note)
        layout.addWidget(self.advanced_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.advanced)
        layout.addLayout(test_row)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)

        self.test_button.clicked.connect(self.test)
        self.provider_combo.currentIndexChanged.connect(self._provider_changed)
        for changed in (self.name_edit.textChanged, self.region_combo.editTextChanged, self.endpoint_edit.textChanged,
                        self.settings_edit.textChanged):
            changed.connect(self._edited)
        self._provider_changed()
        if profile is not None and self.form is not None and self.form.fields:
            self._load_stored(profile)
        (self.test_button if self.editing else self.name_edit).setFocus()

    # -- building -----------------------------------------------------------
    def provider_id(self) -> str | None:
        return self.provider_combo.currentData()

    def _show_advanced(self, on: bool) -> None:
        self.advanced_toggle.setChecked(on)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.advanced.setVisible(on)

    def _provider_changed(self) -> None:
        self._filling = True
        try:
            self._fill_for_provider()
        finally:
            self._filling = False
        self.validate()

    def _fill_for_provider(self) -> None:
        pid = self.provider_id()
        if self.form is not None:
            self.creds_layout.removeWidget(self.form)
            self.form.deleteLater()
            self.form = None
        cls = self.entries[pid].cls if pid in self.entries else None
        self._setting_rows(cls)
        if self.login_key is not None:
            self.login_key.setParent(None)
            self.login_key.deleteLater()
        self.login_key = LoginKeyRow(self.accounts.context.data_dir) if needs_login_key(cls) else None
        if self.login_key is not None:  # a cluster's login node: the app's key goes in its authorized_keys
            self.creds_layout.addWidget(self.login_key)
        if cls is not None:
            self.form = CredentialsForm(cls)
            self.form.changed.connect(self._edited)
            self.creds_layout.insertWidget(0, self.form)
            self.form.setVisible(bool(cls.credential_fields) or self.login_key is None)  # the key is its credential
            self.creds_note.setVisible(self.form.isVisibleTo(self))
            self.creds_box.setVisible(True)
        self.region_combo.clear()
        default = cls.default_region() if cls is not None else None
        for name in dict.fromkeys(r for r in ((self.original.region if self.original else None), default) if r):
            self.region_combo.addItem(name)
        self.region_combo.setEditText((self.original.region if self.original else default) or "")
        self.set_result("", None)
        self.validate()

    def _setting_rows(self, cls) -> None:
        """One editable combo per setting the provider asks for by name (Azure: the subscription)."""
        for key in list(self.setting_edits):
            self.top.removeRow(self.setting_edits.pop(key))
        settings = dict(self.original.settings) if self.original else {}
        for f in (cls.setting_fields if cls is not None else ()):
            combo = QComboBox(objectName=f"setting-{f.key}")
            combo.setEditable(True)
            hint = plugin_text(f.help)
            combo.lineEdit().setPlaceholderText(hint)
            combo.setToolTip(hint)
            fit_hint(combo, hint)
            combo.setEditText(settings.get(f.key, ""))
            combo.editTextChanged.connect(self._edited)
            label = plugin_text(f.label)
            self.top.addRow(QLabel((tr("{label} (optional)").format(label=label) if f.optional
                                    else required(label)) + ":"), combo)
            self.setting_edits[f.key] = combo
        if self.original is not None and self.setting_edits:  # shown in their own fields, not twice
            self.settings_edit.setPlainText(settings_text({k: v for k, v in settings.items()
                                                          if k not in self.setting_edits}))

    def _load_stored(self, profile: Profile) -> None:
        self.loading = True
        self.busy.show()
        self.set_result(tr("Reading the stored values from the keyring…"), None)
        run_for(self, self.session, load_stored, self.accounts, profile, ok=self._stored_loaded,
                err=lambda exc: self.set_result(describe_failure(exc), False), done=self._loaded)

    def _stored_loaded(self, stored: tuple[dict[str, str], frozenset[str]]) -> None:
        if self.form is not None:
            self.form.set_stored(*stored)
        self.set_result("", None)

    def _loaded(self) -> None:
        self.loading = False
        self._idle()

    # -- validation -----------------------------------------------------------
    def problems(self) -> list[str]:
        """What keeps the form from being saved, first problem first (empty when it is fine)."""
        out: list[str] = []
        name = self.name_edit.text().strip()
        if self.provider_id() is None:
            out.append(tr("No provider is available; install a provider plugin first."))
        if not name:
            out.append(tr("Enter a name for the profile."))
        elif not SAFE_NAME.fullmatch(name):
            out.append(tr("A profile name uses only letters, digits, '.', '_' and '-', starts with a letter "
                          "or digit, and has at most 63 characters."))
        elif not self.editing and name in self.existing:
            out.append(tr("A profile named {name} already exists.").format(name=name))
        for f in (self.form.missing() if self.form else []):
            out.append(tr("Enter {field}.").format(field=plugin_text(f.label)))
        endpoint = self.endpoint_edit.text().strip()
        if endpoint and not endpoint.startswith(("https://", "http://")):
            out.append(tr("The endpoint URL must start with https:// or http://."))
        _settings, bad_line = parse_settings(self.settings_edit.toPlainText())
        if bad_line is not None:
            out.append(tr("Settings line {line} is not key=value.").format(line=bad_line))
        return out

    def _edited(self, *_args) -> None:
        if getattr(self, "_filling", False):  # the dialog filling its own fields is not the user typing
            self.validate()
            return
        self.touched = True
        self.test_failed = None  # the form changed: the last test no longer speaks for it
        self.validate()

    def validate(self) -> bool:
        problems = self.problems()
        shown = problems[0] if problems and self.touched else ""  # no red error on a fresh form
        set_status(self.problem, shown, False if shown else None)
        idle = not (self.loading or self.saving or self.testing)
        self.save_button.setEnabled(idle and not problems)
        self.test_button.setEnabled(idle and not problems)
        return not problems

    def profile_from_form(self) -> Profile:
        settings, _bad = parse_settings(self.settings_edit.toPlainText())
        for key, combo in self.setting_edits.items():
            value = combo_value(combo)
            if value:
                settings[key] = value
            else:
                settings.pop(key, None)
        return Profile(name=self.name_edit.text().strip(), provider=self.provider_id() or "",
                       region=self.region_combo.currentText().strip() or None,
                       endpoint_url=self.endpoint_edit.text().strip() or None, settings=settings)

    def set_result(self, text: str, ok: bool | None) -> None:
        set_status(self.result, text, ok)

    def _idle(self) -> None:
        self.busy.setVisible(self.loading or self.saving or self.testing)
        self.validate()

    # -- actions --------------------------------------------------------------
    def test(self) -> None:
        """Check the credentials as typed (merged with stored secrets) in the background."""
        if not self.validate():
            return
        self._focus = QApplication.focusWidget()  # given back when the test is done
        self.testing = True
        self._idle()
        self.set_result(tr("Testing the credentials…"), None)
        run_for(self, self.session, check_form, self.accounts, self.profile_from_form(), self._entered(),
                self.editing, ok=self._tested, err=self._test_failed, done=self._test_done)
        if self.setting_edits:  # the provider's choices (Azure: subscriptions), also when the test fails
            run_for(self, self.session, setting_choices, self.accounts, self.profile_from_form(), self._entered(),
                    self.editing, ok=self._choices)

    def _test_failed(self, exc: BaseException) -> None:
        self.test_failed = describe_failure(exc)
        self.set_result(self.test_failed, False)

    def _choices(self, choices: Mapping[str, list[tuple[str, str]]]) -> None:
        for key, values in choices.items():
            combo = self.setting_edits.get(key)
            if combo is None or not values:
                continue
            typed = combo_value(combo)
            combo.blockSignals(True)
            combo.clear()
            for value, label in values:
                combo.addItem(label, value)
            match = next((i for i, (value, label) in enumerate(values) if typed in (value, label)), -1)
            if match >= 0:
                combo.setCurrentIndex(match)
            else:
                combo.setCurrentIndex(-1)
                combo.setEditText(typed)
            combo.blockSignals(False)

    def _entered(self) -> dict[str, str]:
        return self.form.values() if self.form else {}

    def _tested(self, outcome: tuple[Identity, list[Region]]) -> None:
        identity, regions = outcome
        self.test_failed = None
        self.set_result(describe_identity(identity), True)
        current = self.region_combo.currentText()
        known = {self.region_combo.itemText(i) for i in range(self.region_combo.count())}
        for region in regions:
            if region.name not in known:
                self.region_combo.addItem(region.name)
        self.region_combo.setEditText(current)

    def _test_done(self) -> None:
        self.testing = False
        self._idle()
        focus = getattr(self, "_focus", None)
        if focus is not None and focus.isEnabled() and focus.isVisible():
            focus.setFocus()  # not lost to whatever Qt picked while Test was disabled

    def save(self) -> None:
        """Keyring first, then the store, on the profile's mutation lane; closes on success.

        After a failed test (and no edit since), asks first.
        """
        if not self.validate():
            return
        if self.test_failed:
            box = QMessageBox(QMessageBox.Icon.Warning, tr("Save profile"),
                              tr("The last test of these credentials failed. Save the profile anyway?"),
                              QMessageBox.StandardButton.Cancel, self)
            box.setObjectName("save-after-failed-test")
            box.setInformativeText(self.test_failed)
            yes = box.addButton(tr("Save &anyway"), QMessageBox.ButtonRole.AcceptRole)
            yes.clicked.connect(self._save_now)
            box.setDefaultButton(QMessageBox.StandardButton.Cancel)
            self.confirm_box = box
            box.open()
            return
        self._save_now()

    def _save_now(self) -> None:
        if not self.validate():
            return
        self.saving = True
        self._idle()
        self.set_result(tr("Saving…"), None)
        profile = self.profile_from_form()
        run_for(self, self.session, save_profile, self.accounts, profile, self._entered(), self.editing,
                ok=self._saved, err=lambda exc: self.set_result(describe_failure(exc), False),
                done=self._save_done, change=profile_lane(profile.name))

    def _saved(self, profile: Profile) -> None:
        if self.form is not None:
            for edit in self.form.inputs.values():
                edit.clear()  # the keyring has them now; do not keep secrets in widgets
        self.set_result(tr("Saved."), True)
        self.saved.emit(profile)
        self.accept()

    def _save_done(self) -> None:
        self.saving = False
        self._idle()
