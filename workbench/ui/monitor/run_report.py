"""The run report dialog (from Instances and Spend): a preview, Save HTML… and Save PDF….

The report is built on the session's read pool (it reads the store and the bundled price
snapshots); the preview and the PDF are rendered on the main thread by
:mod:`workbench.ui.common.report_pdf` (~0.1 s).  HTML is written on a worker.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QLabel, QPushButton, QTextBrowser,
                               QVBoxLayout, QWidget)
from shiboken6 import isValid

from workbench.core.telemetry.report import RunReport, build_report
from workbench.ui.common.dialogs import show_error
from workbench.ui.common.icons import icon
from workbench.ui.common.format import plural
from workbench.ui.i18n import N_, tr
from workbench.ui.runtime.session import Session

log = logging.getLogger("workbench.ui.run_report")


def load_report(store, launch_id: str) -> RunReport:
    """Worker: the launch's report, advice priced from the bundled catalogue snapshots."""
    from workbench.core.money.planner import snapshot_offers

    return build_report(store, launch_id, snapshot_offers())


def write_report_html(report: RunReport, path: str) -> str:
    """Worker: the self-contained page, labels in the UI language."""
    from workbench.core.telemetry.report_html import render_html

    Path(path).write_text(render_html(report, tr), encoding="utf-8")
    return path


class RunReportDialog(QDialog):
    """One launch's report; ``report`` is set once it is built (``built`` tells tests it is)."""

    def __init__(self, session: Session, launch_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("run-report-dialog")
        self.setWindowTitle(tr("Run report — {launch}").format(launch=launch_id))
        self.resize(860, 760)
        self.session = session
        self.launch_id = launch_id
        self.report: RunReport | None = None
        self.saved: list[str] = []
        self.view = QTextBrowser(objectName="run-report-view")
        self.view.setOpenLinks(False)
        self.status = QLabel(tr("Building the report…"), objectName="run-report-status")
        self.status.setWordWrap(True)
        self.html_btn = QPushButton(icon("export"), tr("Save &HTML…"), objectName="run-report-html")
        self.pdf_btn = QPushButton(icon("export"), tr("Save &PDF…"), objectName="run-report-pdf")
        for b in (self.html_btn, self.pdf_btn):
            b.setEnabled(False)
        self.html_btn.clicked.connect(lambda: self.save_html())
        self.pdf_btn.clicked.connect(lambda: self.save_pdf())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.html_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.pdf_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.status)
        lay.addWidget(buttons)
        store = session.accounts.store if session.accounts is not None else None
        if store is None:
            self.status.setText(tr("No state store: nothing to report."))
            return
        session.run(load_report, store, launch_id).then(self._built).fail(self._failed)

    def _built(self, report: RunReport) -> None:
        if not isValid(self):
            return
        from workbench.ui.common.report_pdf import report_document

        self.report = report
        doc = report_document(report, tr)
        doc.setParent(self.view)
        self.view.setDocument(doc)
        n = len(report.advisory.advice)
        advice = (tr("No advice") if n == 0 else
                  plural(n, N_("1 piece of advice"), N_("{count} pieces of advice")).format(count=n))
        self.status.setText(tr("{advice} · prices from the bundled catalogue snapshots").format(advice=advice))
        self.html_btn.setEnabled(True)
        self.pdf_btn.setEnabled(True)

    def _failed(self, exc: BaseException) -> None:
        if isValid(self):
            self.status.setText(tr("The report could not be built: {error}").format(error=exc))
            show_error(self, exc)

    def _ask(self, title: str, suffix: str, kinds: str) -> str:
        name = f"workbench-report-{self.launch_id}.{suffix}"
        path, _ = QFileDialog.getSaveFileName(self, title, name, kinds)
        return path

    def save_html(self, path: str | None = None) -> None:
        """Write the HTML page (asks where when ``path`` is None)."""
        if self.report is None:
            return
        path = path or self._ask(tr("Save the run report"), "html", tr("Web pages (*.html)"))
        if not path:
            return
        self.session.run(write_report_html, self.report, path).then(self._saved).fail(self._failed_save)

    def save_pdf(self, path: str | None = None) -> None:
        """Render and write the one-page PDF (asks where when ``path`` is None)."""
        if self.report is None:
            return
        path = path or self._ask(tr("Save the run report"), "pdf", tr("PDF files (*.pdf)"))
        if not path:
            return
        from workbench.ui.common.report_pdf import write_pdf

        try:
            write_pdf(self.report, path, tr)
        except OSError as exc:
            self._failed_save(exc)
        else:
            self._saved(path)

    def _saved(self, path: str) -> None:
        if isValid(self):
            self.saved.append(path)
            self.status.setText(tr("Saved {path}").format(path=path))
            self.session.notify.emit(tr("Run report saved"), path, "info")

    def _failed_save(self, exc: BaseException) -> None:
        if isValid(self):
            show_error(self, exc)
