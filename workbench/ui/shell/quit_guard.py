"""Quitting while something may bill.

* :func:`quit_dialog`: Keep running / Tear everything down / Cancel, naming what bills.
* :func:`quit_after_teardown`: Stop all billing in quit mode; the app quits once the result was
  seen (at once when everything is verified gone, else when the user closes the result).

Main thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from workbench.core.money.spend import burn_rate
from workbench.ui.common.format import money, unchecked_text
from workbench.ui.i18n import tr


def quit_dialog(win: Any) -> QMessageBox:
    """(``win``: the main window.) Keep running / Tear everything down / Cancel, naming what bills and the guards that hold."""
    snap = win.session.snapshot
    paying = snap.paying
    text = tr("{count} machine(s) are still billing {rate}/h.").format(count=len(paying),
                                                                     rate=money(burn_rate(paying)))
    if not paying:
        text = tr("Something this app launched may still be billing.")
    box = QMessageBox(QMessageBox.Icon.Warning, tr("Machines are still billing"), text, parent=win)
    box.setObjectName("quit-dialog")
    unchecked = [unchecked_text(n, e, True) for n, e in snap.errors if n in snap.may_bill]
    box.setInformativeText("\n".join([*unchecked, tr(
        "If you keep them running, the guards installed on each machine still stop it "
        "at its max runtime or when its GPUs sit idle. Local jobs on this computer "
        "keep running too.")]))
    keep = box.addButton(tr("&Keep running and quit"), QMessageBox.ButtonRole.AcceptRole)
    down = box.addButton(tr("&Tear everything down"), QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    keep.setObjectName("quit-keep")
    down.setObjectName("quit-teardown")
    keep.clicked.connect(win._quit_now)
    down.clicked.connect(win._quit_after_teardown)
    box.open()
    return box


def quit_after_teardown(win: Any) -> None:
    """Stop all billing, then quit: at once when clean, else when the user closes the result."""
    dlg = win.stop_all()
    if dlg is None:
        return
    dlg.quitting = True

    def done(report) -> None:
        if report.clean:  # verified: nothing bills; quit after a moment to read it
            QTimer.singleShot(1500, win._quit_now)
        # else the result stays up (what remains, what could not be checked); its Quit button quits

    def closed(_result: int) -> None:
        if dlg.report is not None and not dlg.running:
            win._quit_now()

    dlg.teardown_finished.connect(done)
    dlg.finished.connect(closed)
