""""Extend max runtime…": give a running launch more time (core: workbench.core.remote.extend).

A small dialog with a spin box (minutes).  The extension runs on the session's worker, on the guards'
lane (it talks to the cloud and, over SSH, to every machine's guard); while it runs the dialog says
so; the answer closes it with a notification naming the new end and projected cost, or stays in it as an
inline message (nothing changed in the app then, and trying again is safe).
"""

from __future__ import annotations

import time

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from workbench.core.domain.models import Instance
from workbench.ui.common.dialogs import error_parts
from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.ui.runtime.lanes import GUARDS
from workbench.ui.runtime.session import Session

#: the spin box's range: a minute to a week (longer runs are a new launch's max runtime)
MAX_EXTENSION_MIN = 7 * 24 * 60


class ExtendDialog(QDialog):
    """Asks how much longer; runs the extension off the UI thread; reports the result."""

    def __init__(self, session: Session, inst: Instance, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("extend-dialog")
        self.setWindowTitle(tr("Extend max runtime"))
        self.setMinimumWidth(420)
        self.session = session
        self.inst = inst
        self.result_value = None
        intro = QLabel(tr("Give {name} more time. Its guards (in the app, on the machine and at the cloud) "
                          "move their deadline; the projected cost rises.").format(name=inst.name or inst.launch_id))
        intro.setWordWrap(True)
        self.minutes = QSpinBox()
        self.minutes.setObjectName("extend-minutes")
        self.minutes.setRange(1, MAX_EXTENSION_MIN)
        self.minutes.setSingleStep(30)
        self.minutes.setValue(60)
        self.minutes.setSuffix(tr(" min"))
        self.minutes.setAccessibleName(tr("Extend by (minutes)"))
        form = QFormLayout()
        form.addRow(tr("Extend &by:"), self.minutes)
        self.message = QLabel()
        self.message.setObjectName("extend-message")
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok = self.buttons.addButton(tr("&Extend"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setObjectName("extend-ok")
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        lay.addWidget(self.message)
        lay.addWidget(self.buttons)

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(True)

    def start(self):
        """Run the extension on the worker (the provider's lane); the dialog waits, the UI does not."""
        accounts = self.session.accounts
        if accounts is None:
            return None
        from workbench.core.remote.extend import extend_launch

        minutes = self.minutes.value()
        self.ok.setEnabled(False)
        self.minutes.setEnabled(False)
        self._say(tr("Extending by {minutes} min…").format(minutes=minutes))
        # the guards' lane: an extension never races a guard poll deciding on the old deadline
        return (self.session.mutate(extend_launch, accounts, self.inst.launch_id, minutes, lane=GUARDS, parent=self)
                .then(self._done).fail(self._failed))

    def _done(self, result) -> None:
        self.result_value = result
        end = time.strftime("%Y-%m-%d %H:%M", time.localtime(result.ends_at))
        cost = (tr("unknown") if result.projected_cost is None
                else money(result.projected_cost, result.currency))
        self.session.notify.emit(tr("Extended"), tr("{name} now runs until {end} (max runtime {minutes} min); "
                                                    "projected cost {cost}.").format(
            name=self.inst.name or self.inst.launch_id, end=end, minutes=result.max_runtime_minutes, cost=cost),
            "info")
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        message, hint, _details = error_parts(exc)
        self._say(tr("Not extended: {message}").format(message=message)
                  + (f"\n{tr('What to do:')} {hint}" if hint else ""))
        self.ok.setEnabled(True)
        self.minutes.setEnabled(True)
