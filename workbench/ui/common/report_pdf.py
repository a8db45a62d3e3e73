"""The run report rendered by Qt: a QTextDocument of the report's HTML, printed to a one-page PDF.

The HTML is :func:`workbench.core.telemetry.report_html.render_html`; its SVG plots are drawn
into QImages (QtSvg) and handed to the document as resources, because Qt's rich text does not
read SVG ``data:`` URIs.  :func:`write_pdf` lays the page out at screen width and scales it to
fit one A4 page (text stays vector in the PDF).  Everything here is PySide6-Essentials.

Threading: main thread (QTextDocument and QPainter on a QPdfWriter); it takes ~0.1 s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QByteArray, QMarginsF, QRectF, QUrl
from PySide6.QtGui import QGuiApplication, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument
from PySide6.QtSvg import QSvgRenderer

from workbench.core.telemetry.report import RunReport
from workbench.core.telemetry.report_html import PLOT_H, PLOT_W, render_html

LAYOUT_WIDTH = 760.0  # px the page is laid out at before it is scaled onto the paper
IMAGE_SCALE = 2  # plots are drawn at twice their laid-out size, so they stay sharp when scaled


def ensure_app() -> QGuiApplication:
    """A Qt application for rendering (the CLI has none; offscreen without a display)."""
    app = QGuiApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QGuiApplication([])
    return app


def svg_image(svg: str, width: int = PLOT_W * IMAGE_SCALE, height: int = PLOT_H * IMAGE_SCALE) -> QImage:
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    QSvgRenderer(QByteArray(svg.encode("utf-8"))).render(painter)
    painter.end()
    return image


def report_document(report: RunReport, t: Callable[[str], str] = lambda s: s) -> QTextDocument:
    """The report as a QTextDocument (for the preview and the PDF), plots as image resources."""
    doc = QTextDocument()
    images: dict[str, str] = {}

    def src(name: str, svg: str) -> str:
        images[name] = svg
        return name

    text = render_html(report, t, src)
    for name, svg in images.items():
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), svg_image(svg))
    doc.setHtml(text)
    doc.setDocumentMargin(0)
    return doc


def write_pdf(report: RunReport, path: Path | str, t: Callable[[str], str] = lambda s: s) -> int:
    """Write the report as a one-page A4 PDF; returns the number of pages (1)."""
    writer = QPdfWriter(str(path))
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(12, 12, 12, 12), QPageLayout.Unit.Millimeter))
    writer.setResolution(300)
    writer.setTitle(f"Run report {report.launch_id}")
    writer.setCreator("Cloud GPU Workbench")
    doc = report_document(report, t)
    doc.setTextWidth(LAYOUT_WIDTH)
    height = doc.size().height()
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write {path}")
    try:
        page = writer.pageLayout().paintRectPixels(writer.resolution())
        scale = min(page.width() / LAYOUT_WIDTH, page.height() / max(height, 1.0))
        painter.scale(scale, scale)
        doc.drawContents(painter, QRectF(0, 0, LAYOUT_WIDTH, height))
    finally:
        painter.end()
    return 1


