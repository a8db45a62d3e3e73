"""SVG icons from ``resources/icons``, drawn in the palette's text colour, crisp at any DPI.

The SVGs use ``currentColor``; it is replaced by the palette colour for each
icon mode, and the vector is rendered at each common size times each
screen's device pixel ratio, so icons are sharp on high-DPI screens and
readable in dark and light themes.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from ..core import paths


@lru_cache(maxsize=None)
def _svg_text(name: str) -> str:
    path = paths.resources_dir() / "icons" / f"{name}.svg"
    return path.read_text(encoding="utf-8")


SIZES = (16, 20, 22, 24, 32, 48, 64)


def _color_for(mode: QIcon.Mode, fixed: str | None) -> QColor:
    pal = QGuiApplication.palette()
    if fixed:
        color = QColor(fixed)
        if mode == QIcon.Mode.Disabled:
            color.setAlpha(110)
        return color
    if mode == QIcon.Mode.Disabled:
        return pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    return pal.color(QPalette.ColorRole.WindowText)


def _render(name: str, size: int, dpr: float, color: QColor) -> QPixmap:
    svg = _svg_text(name).replace("currentColor", color.name(QColor.NameFormat.HexRgb))
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    px = round(size * dpr)
    img = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    painter = QPainter(img)
    if color.alpha() < 255:
        painter.setOpacity(color.alphaF())
    renderer.render(painter, QRectF(0, 0, px, px))
    painter.end()
    pm = QPixmap.fromImage(img)
    pm.setDevicePixelRatio(dpr)
    return pm


def icon(name: str, color: str | None = None) -> QIcon:
    """Icon ``resources/icons/<name>.svg``; ``color`` fixes the colour (e.g. white on red)."""
    try:
        _svg_text(name)
    except OSError:
        return QIcon()
    # Pixmaps rendered from the vector at every common size and at each screen's
    # pixel ratio (a Python QIconEngine would stay vector, but overriding its
    # paint() crashes PySide6 6.12 with a refcount error, so it is not used).
    ratios = sorted({1.0, *(s.devicePixelRatio() for s in QGuiApplication.screens())}) if \
        QGuiApplication.instance() else [1.0]
    result = QIcon()
    for mode in (QIcon.Mode.Normal, QIcon.Mode.Disabled):
        c = _color_for(mode, color)
        for size in SIZES:
            for dpr in ratios:
                result.addPixmap(_render(name, size, dpr, c), mode)
    return result
