"""The app icon in every platform's format, rendered from ``resources/icons/app.svg`` with Qt.

* PNGs for the freedesktop hicolor theme (Linux .deb) and the macOS iconset;
* ``app.ico`` (Windows: the .exe, the installer, Start menu): PNG-compressed entries,
  which Windows Vista and later read at every size;
* ``app.icns`` (macOS .app): PNG entries of the types macOS 10.7+ reads
  (``icp4`` 16 px … ``ic10`` 1024 px).

The ICO and ICNS containers are written here (both are a small header and
a table in front of PNG data), so every platform's icon is built and checked
on any machine: the macOS build does not need ``iconutil``.

Usage: ``python installer/icons.py OUT_DIR`` (needs PySide6; uses the
offscreen Qt platform, so no display is needed).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "app.svg"

HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
#: ICNS element types holding PNG data, by pixel size (several types share a size: @2x variants).
ICNS_TYPES = (("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512),
              ("ic10", 1024), ("ic11", 32), ("ic12", 64), ("ic13", 256), ("ic14", 512))


def render_pngs(svg: Path, sizes) -> dict[int, bytes]:
    """PNG bytes of ``svg`` at each size (square, transparent background)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(["icons"])  # noqa: F841 (QPainter needs one)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"not a valid SVG: {svg}")
    out = {}
    for size in sorted(set(sizes)):
        img = QImage(size, size, QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.transparent)
        painter = QPainter(img)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not img.save(buf, "PNG"):
            raise RuntimeError(f"Qt could not encode a {size}px PNG")
        buf.close()
        out[size] = bytes(data.data())
    return out


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding each PNG (ICONDIR, one ICONDIRENTRY per image, then the data)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))  # reserved, type 1 = icon, count
    offset = 6 + 16 * len(sizes)
    entries, blobs = [], []
    for s in sizes:
        data = pngs[s]
        dim = 0 if s >= 256 else s  # 0 means 256
        entries.append(struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset))
        blobs.append(data)
        offset += len(data)
    return header + b"".join(entries) + b"".join(blobs)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns: ``icns`` + total length, then (type, length, PNG) elements, big-endian."""
    body = b""
    for kind, size in ICNS_TYPES:
        px = size * 2 if kind in ("ic11", "ic12", "ic13", "ic14") else size
        if px in pngs:
            data = pngs[px]
            body += kind.encode("ascii") + struct.pack(">I", 8 + len(data)) + data
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def build(out: Path, svg: Path = SVG) -> dict[str, Path]:
    """Write ``hicolor/<n>x<n>/apps/cloud-gpu-workbench.png``, the scalable SVG, app.ico, app.icns."""
    needed = set(HICOLOR_SIZES) | set(ICO_SIZES) | {s * (2 if k in ("ic11", "ic12", "ic13", "ic14") else 1)
                                                    for k, s in ICNS_TYPES}
    pngs = render_pngs(svg, needed)
    out.mkdir(parents=True, exist_ok=True)
    for s in HICOLOR_SIZES:
        target = out / "hicolor" / f"{s}x{s}" / "apps" / "cloud-gpu-workbench.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pngs[s])
    scalable = out / "hicolor" / "scalable" / "apps" / "cloud-gpu-workbench.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(svg.read_bytes())
    (out / "app.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (out / "app.icns").write_bytes(icns_bytes(pngs))
    (out / "app-256.png").write_bytes(pngs[256])
    return {"ico": out / "app.ico", "icns": out / "app.icns", "hicolor": out / "hicolor",
            "png256": out / "app-256.png"}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python installer/icons.py OUT_DIR")
    for kind, path in build(Path(sys.argv[1])).items():
        print(f"{kind}: {path}")
