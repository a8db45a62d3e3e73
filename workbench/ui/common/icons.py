"""SVG icons from ``resources/icons``, drawn in the palette's text colour, crisp at any DPI.

The SVGs use ``currentColor``.  The icon is the recoloured SVG file itself,
written once per colour to a cache folder and drawn by Qt's own SVG icon
engine, which renders the vector lazily at whatever size and device pixel
ratio a widget asks for (rendering every size up front cost ~70 ms at
start-up).  Where the cache cannot be written, the vector is rendered to
pixmaps at each common size times each screen's pixel ratio instead.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from workbench.core import paths
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


def _cache_dir() -> Path:
    return paths.data_dir() / "cache" / "icons"


@lru_cache(maxsize=None)
def _svg_file(name: str, hex_color: str) -> Path:
    """The SVG ``name`` in ``hex_color``, as a file (named by its content, so edits never go stale)."""
    text = _svg_text(name).replace("currentColor", hex_color)
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
    path = _cache_dir() / f"{name}-{digest}.svg"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def icon(name: str, color: str | None = None) -> QIcon:
    """Icon ``resources/icons/<name>.svg``; ``color`` fixes the colour (e.g. white on red)."""
    try:
        _svg_text(name)
    except OSError:
        return QIcon()
    hex_color = _color_for(QIcon.Mode.Normal, color).name(QColor.NameFormat.HexRgb)
    try:
        made = QIcon(str(_svg_file(name, hex_color)))
        if not made.isNull():
            return made  # the disabled look is derived by the style
    except OSError:
        pass
    return _pixmap_icon(name, color)


def _pixmap_icon(name: str, color: str | None) -> QIcon:
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
