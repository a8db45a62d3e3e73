"""The credentials form generated from a provider's ``credential_fields``, and its shared texts.

:class:`CredentialsForm` turns a provider class's fields into line edits (secret ones
masked, with a "Show" toggle; optional ones marked; help as tooltip and placeholder).
:class:`~workbench.ui.accounts.profile_dialog.ProfileDialog` puts it in the profile
editor; the work behind Save and Test is in :mod:`workbench.ui.accounts.profile_tasks`.

Threading: the dialog never touches the keyring or a provider on the UI thread.  Reading
the stored values, Save and Test run the module-level worker functions through
``session.run`` (Save is a change: ``session.mutate`` on the profile's lane).  Secret values travel one way
only, from the form into the worker: the worker reads what is stored, merges, and gives
the UI back non-secret values and the *names* of stored secrets, never their values.

Failure rules: validation problems are shown inline and keep Save/Test disabled; a
failed save or test shows the error's message and hint inline (scrubbed of the secrets
involved), never a traceback.  The dialog stays open after a failed save.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget
from shiboken6 import isValid

from workbench.core.domain.models import Identity
from workbench.core.providers.contract import CredentialField, Provider
from workbench.ui.accounts.plugin_texts import plugin_text
from workbench.ui.common.dialogs import error_parts
from workbench.ui.i18n import N_, tr
from workbench.ui.runtime.lanes import Lane
from workbench.ui.runtime.session import Session
from workbench.ui.runtime.tasks import Task

log = logging.getLogger("workbench.ui.accounts")

UNCHANGED = N_("unchanged (stored in the keyring)")


# texts and colours shared with the accounts view
# --------------------------------------------------------------------------

def describe_identity(identity: Identity) -> str:
    """One line saying who the credentials are."""
    if identity.display:
        return tr("Credentials work: {display} ({principal}) in account {account}").format(
            display=identity.display, principal=identity.principal, account=identity.account)
    return tr("Credentials work: {principal} in account {account}").format(
        principal=identity.principal, account=identity.account)


def describe_failure(exc: BaseException) -> str:
    """The error's message and what to do about it, for an inline label."""
    message, hint, _details = error_parts(exc)
    if hint:
        return tr("{message}\nWhat to do: {hint}").format(message=message, hint=hint)
    return message


def required(label: str) -> str:
    """A required field's label: marked with " *" (the form says what the star means)."""
    return f"{label} *"


def fit_hint(edit: QWidget, hint: str, most: int = 560) -> None:
    """Make ``edit`` wide enough to show its placeholder hint whole (up to ``most`` pixels)."""
    edit.setMinimumWidth(min(most, edit.fontMetrics().horizontalAdvance(hint) + 28))


def status_color(ok: bool) -> str:
    """Green or red that stay readable on light and dark palettes."""
    dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
    if ok:
        return "#81c784" if dark else "#2e7d32"
    return "#ff8a65" if dark else "#c62828"


def set_status(label: QLabel, text: str, ok: bool | None) -> None:
    """Show ``text`` in ``label``; coloured for success (True) / failure (False), plain for None."""
    label.setStyleSheet("" if ok is None else f"color: {QColor(status_color(ok)).name()};")
    label.setText(text)


def run_for(widget: QWidget, session: Session, fn: Callable[..., Any], *args: Any,
            ok: Callable[[Any], None] | None = None, err: Callable[[BaseException], None] | None = None,
            done: Callable[[], None] | None = None, change: Lane | None = None) -> Task:
    """``session.run(fn, *args)`` whose callbacks are skipped once ``widget`` has been deleted.

    A keyring or provider call may outlive the dialog or view that started it.  With ``change`` (a lane)
    it is a change: ``session.mutate`` in that lane (a refresh follows; an error nobody handles, also
    one that arrives after ``widget`` went, is shown).  Otherwise an error nobody handles is logged.
    """
    if change is not None:
        task = session.mutate(fn, *args, lane=change, parent=widget)
    else:
        task = session.run(fn, *args)
        task.alive = lambda: isValid(widget)
        task.unhandled = lambda exc: log.warning("background call failed: %s", exc)
    if ok is not None:
        task.then(ok)
    if err is not None:
        task.fail(err)
    if done is not None:
        task.finally_(done)
    return task


# --------------------------------------------------------------------------
# widgets
# --------------------------------------------------------------------------

class CredentialsForm(QWidget):
    """Line edits generated from ``provider_cls.credential_fields``; values() gives what was typed."""

    changed = Signal()

    def __init__(self, provider_cls: type[Provider], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields = tuple(provider_cls.credential_fields)
        self.inputs: dict[str, QLineEdit] = {}
        self.stored_secrets: frozenset[str] = frozenset()
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        if not self.fields:
            form.addRow(QLabel(tr("This provider needs no credentials.")))
        for f in self.fields:
            edit = QLineEdit()
            edit.setObjectName(f"field-{f.key}")
            hint = plugin_text(f.help)
            edit.setToolTip(hint)
            edit.setPlaceholderText(hint)
            fit_hint(edit, hint)
            edit.textChanged.connect(self.changed)
            self.inputs[f.key] = edit
            label_text = plugin_text(f.label)
            text = tr("{label} (optional)").format(label=label_text) if f.optional else required(label_text)
            label = QLabel(text + ":")
            label.setBuddy(edit)
            label.setToolTip(hint)
            if f.secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
                show = QToolButton()
                show.setObjectName(f"show-{f.key}")
                show.setText(tr("Show"))
                show.setCheckable(True)
                show.setToolTip(tr("Show or hide what was typed"))
                show.toggled.connect(lambda on, e=edit: e.setEchoMode(
                    QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password))
                row = QHBoxLayout()
                row.addWidget(edit, 1)
                row.addWidget(show)
                form.addRow(label, row)
            else:
                form.addRow(label, edit)

    def set_stored(self, plain: Mapping[str, str], secret_keys: frozenset[str]) -> None:
        """Fill plain fields with stored values; stored secrets stay empty with an "unchanged" note."""
        self.stored_secrets = secret_keys
        for f in self.fields:
            edit = self.inputs[f.key]
            if f.secret:
                if f.key in secret_keys:
                    edit.setPlaceholderText(tr(UNCHANGED))
            elif f.key in plain:
                edit.setText(plain[f.key])

    def values(self) -> dict[str, str]:
        """What was typed, stripped; empty fields included (merge_values knows what empty means)."""
        return {key: edit.text().strip() for key, edit in self.inputs.items()}

    def missing(self) -> list[CredentialField]:
        """Required fields that are empty and have no stored value to keep."""
        values = self.values()
        return [f for f in self.fields
                if not f.optional and not values[f.key] and not (f.secret and f.key in self.stored_secrets)]
