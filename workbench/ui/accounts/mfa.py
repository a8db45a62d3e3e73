"""Ask for an MFA code when a profile's provider says it needs one (AuthError kind "mfa_required").

The code goes to the provider object in memory (``SupportsMfa.provide_mfa_code``, a change on the
profile's lane) and is never stored; then the session refreshes.  One question per
profile at a time; "Cancel" leaves the profile failing until the next refresh asks again.

A job whose SSH connection to a login node needs a new code meanwhile waits for the one typed here
(:func:`workbench.core.remote.logins.set_codes_come_later`).

Threading: main thread only; provider calls go through the session's TaskRunner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget

from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.contract import SupportsMfa
from workbench.core.remote import logins
from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import profile_lane

if TYPE_CHECKING:
    from workbench.ui.runtime.session import Session, Snapshot

MFA_KIND = "mfa_required"


class MfaPrompter:
    """Watches snapshots for profiles that need an MFA code and asks for it (``open()``, no nested loop)."""

    def __init__(self, session: "Session", parent: QWidget) -> None:
        self.session = session
        self.parent = parent
        self.open: dict[str, QInputDialog] = {}
        self.declined: set[str] = set()  # asked and cancelled: not asked again in this run
        self.skip: dict[str, int] = {}  # snapshots still to ignore for a profile just given a code
        session.snapshot_changed.connect(self.check)
        logins.set_codes_come_later(True)  # a job's reconnect that needs a code waits for the one typed here

    def check(self, snap: "Snapshot") -> None:
        for name, exc in snap.errors:
            if self.skip.get(name):
                self.skip[name] -= 1  # this refresh was already running when the code arrived
                continue
            if getattr(exc, "kind", "") == MFA_KIND and name not in self.open and name not in self.declined:
                self.ask(name, exc.message)

    def ask(self, profile: str, reason: str = "", error: str = "") -> QInputDialog:
        box = QInputDialog(self.parent)
        box.setObjectName("mfa-dialog")
        box.setWindowTitle(tr("MFA code for {profile}").format(profile=profile))
        text = tr("{profile} needs the six-digit code your MFA device shows now.").format(profile=profile)
        if error:
            text += "\n" + error
        box.setLabelText(text)
        box.setTextEchoMode(QLineEdit.EchoMode.Password)
        box.setInputMode(QInputDialog.InputMode.TextInput)
        box.textValueSelected.connect(lambda code, p=profile: self._given(p, code.strip()))
        box.rejected.connect(lambda p=profile: self._cancelled(p))
        self.open[profile] = box
        box.open()
        return box

    def _cancelled(self, profile: str) -> None:
        self.open.pop(profile, None)
        self.declined.add(profile)

    def _given(self, profile: str, code: str) -> None:
        self.open.pop(profile, None)
        accounts = self.session.accounts
        if accounts is None:
            return

        def hand_over() -> None:
            prov = accounts.provider(accounts.profile(profile))
            if not isinstance(prov, SupportsMfa):
                raise WorkbenchError(f"provider of {profile} does not take MFA codes")
            prov.provide_mfa_code(code)

        def accepted(_ok: object) -> None:
            # a refresh still running began before the code: its snapshot still says "MFA needed" (the change's
            # own refresh follows it)
            self.skip[profile] = 1 if self.session.refreshing else 0

        (self.session.mutate(hand_over, lane=profile_lane(profile), parent=self.parent)
         .then(accepted)
         .fail(lambda exc, p=profile: self.ask(p, error=getattr(exc, "message", str(exc)))))
