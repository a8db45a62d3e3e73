"""Error and confirmation dialogs: never a traceback, always the hint and the log one click away.

Dialogs are opened window-modal with ``open()`` (not ``exec()``), so the event
loop keeps turning and tests can find and answer them.
"""

from __future__ import annotations

import logging
import traceback

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from workbench.core import applog, paths
from workbench.core.domain.errors import (AuthError, CapacityError, QuotaError, TransientError, WorkbenchError)
from workbench.ui.i18n import tr

log = logging.getLogger("workbench.ui")


def error_title(exc: BaseException) -> str:
    """A short heading naming the kind of failure."""
    if isinstance(exc, AuthError):
        return tr("The credentials were refused")
    if isinstance(exc, QuotaError):
        return tr("Quota exceeded")
    if isinstance(exc, CapacityError):
        return tr("No capacity")
    if isinstance(exc, TransientError):
        return tr("The provider is not answering right now")
    if isinstance(exc, (WorkbenchError, ModuleNotFoundError)):  # a missing module has a fix: not a bug
        return tr("Something went wrong")
    return tr("Unexpected error")


def error_parts(exc: BaseException) -> tuple[str, str, str]:
    """(message, hint, details) for any exception; secrets are scrubbed from the details."""
    if isinstance(exc, WorkbenchError):
        details = f"{type(exc).__name__} ({exc.kind})"
        cause = exc.__cause__
        if cause is not None:
            details += f"\n\ncaused by {type(cause).__name__}: {cause}"
        return exc.message, exc.hint or "", applog.scrub(details)
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, ModuleNotFoundError):  # a half-installed cloud SDK: foreseeable, and fixable
        from workbench.core.providers.registry import missing_module_error

        error = missing_module_error(exc)
        return error.message, error.hint or "", applog.scrub(tb)
    return f"{type(exc).__name__}: {exc}", tr("This is a bug; the log file has the details."), applog.scrub(tb)


def log_file_url() -> QUrl:
    return QUrl.fromLocalFile(str(paths.log_dir() / applog.LOG_FILE))


def show_error(parent: QWidget | None, exc: BaseException, title: str | None = None) -> QMessageBox:
    """Show ``exc`` as message + hint, details expandable, with an "Open log file" button."""
    message, hint, details = error_parts(exc)
    if not isinstance(exc, WorkbenchError):
        log.error("unexpected error shown to the user: %s", details)
    box = QMessageBox(QMessageBox.Icon.Warning, title or tr("Cloud GPU Workbench"), error_title(exc),
                      QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error-dialog")
    box.setInformativeText(message + (f"\n\n{tr('What to do:')} {hint}" if hint else ""))
    box.setDetailedText(details)
    open_log = box.addButton(tr("Open log file"), QMessageBox.ButtonRole.HelpRole)
    open_log.clicked.disconnect()  # keep the box open when the log is opened
    open_log.clicked.connect(lambda: QDesktopServices.openUrl(log_file_url()))
    box.open()
    return box
