"""Icons: the recoloured SVG drawn by Qt's SVG engine, sharp at any size, pixmaps when the cache is read-only."""

from __future__ import annotations

import os

import pytest
from PySide6.QtGui import QColor

from workbench.ui.common import icons
def _ink(pm) -> set[str]:
    img = pm.toImage()
    return {QColor(img.pixel(x, y)).name() for x in range(img.width()) for y in range(img.height())
            if QColor.fromRgba(img.pixel(x, y)).alpha() == 255}


@pytest.fixture
def fresh_cache(qapp, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    icons._svg_file.cache_clear()
    yield tmp_path / "home"
    icons._svg_file.cache_clear()


def test_icon_is_drawn_in_the_asked_colour_at_any_size(fresh_cache) -> None:
    made = icons.icon("stop-billing", "#ffffff")
    for size in (16, 37, 128):
        pm = made.pixmap(size, size)
        assert pm.width() == size and _ink(pm) == {"#ffffff"}
    cached = list((fresh_cache / "data" / "cache" / "icons").glob("stop-billing-*.svg"))
    assert len(cached) == 1 and "#ffffff" in cached[0].read_text()


def test_unwritable_cache_falls_back_to_pixmaps(fresh_cache) -> None:
    if os.geteuid() == 0:
        # root ignores permissions: make the cache path a file so mkdir fails the same way
        (fresh_cache / "data" / "cache").mkdir(parents=True)
        (fresh_cache / "data" / "cache" / "icons").write_text("not a folder")
    else:
        (fresh_cache / "data").mkdir(parents=True)
        (fresh_cache / "data").chmod(0o500)
    made = icons.icon("terminate", "#ff0000")
    assert not made.isNull() and _ink(made.pixmap(24, 24)) == {"#ff0000"}


def test_unknown_icon_is_empty(fresh_cache) -> None:
    assert icons.icon("no-such-icon").isNull()
