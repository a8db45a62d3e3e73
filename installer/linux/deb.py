"""The Linux packages: a .deb (dpkg-deb) and a .tar.gz of the one-folder bundle.

.deb layout::

    /opt/cloud-gpu-workbench/                     the PyInstaller onedir (workbench + _internal/)
    /usr/bin/workbench -> /opt/cloud-gpu-workbench/workbench
    /usr/share/applications/cloud-gpu-workbench.desktop
    /usr/share/icons/hicolor/{16x16…512x512,scalable}/apps/cloud-gpu-workbench.{png,svg}
    /usr/share/doc/cloud-gpu-workbench/copyright
    DEBIAN/control, DEBIAN/postrm

``Depends`` is worked out from the bundle itself: every shared library that a
bundled ELF file links (NEEDED) and the bundle does not carry is looked up in
the system's linker cache and mapped to its Debian package with ``dpkg -S``;
``libc6`` gets the highest ``GLIBC_x.y`` symbol version the bundle uses, and ``EXTRA_DEPENDS``
what no ELF file links (fontconfig's configuration and fonts).  A
library that neither the bundle nor this system has is an error: the bundle
would not run here either.

Needs dpkg-deb and objdump (binutils).  Linux only; runs as any user
(``--root-owner-group`` makes every file root-owned inside the package).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import elf  # noqa: E402

PACKAGE = "cloud-gpu-workbench"
INSTALL_DIR = f"/opt/{PACKAGE}"
MAINTAINER = "Cloud GPU Workbench maintainers <noreply@cloud-gpu-workbench.invalid>"
#: Depends the linker cannot see: the bundle carries libfontconfig, but fontconfig needs the
#: system's configuration (/etc/fonts) and at least one font, which libfontconfig1 brings.
EXTRA_DEPENDS = ("libfontconfig1",)
#: A Secret Service for credentials, and a CJK font for the Chinese interface.
RECOMMENDS = "gnome-keyring | kwalletmanager | keepassxc, fonts-noto-cjk | fonts-wqy-microhei"
DESCRIPTION = """\
Rent GPU machines on clouds, watch them train, stop the bill
 A desktop app (and the `workbench` command) for researchers who rent GPU
 machines: pick an offer on AWS, Azure or this computer, launch a training
 job, watch GPU use and spend live, and stop everything that bills with one
 click.  Self-contained: brings its own Python and Qt."""


def deb_arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def bundle_elves(bundle: Path) -> list[Path]:
    return [p for p in sorted(bundle.rglob("*")) if p.is_file() and not p.is_symlink() and elf.is_elf(p)]


def _linker_cache() -> dict[str, str]:
    """soname → path for this machine's architecture, from ``ldconfig -p``."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    machine = os.uname().machine
    want = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(machine)
    cache: dict[str, str] = {}
    for line in out.splitlines()[1:]:
        m = re.match(r"\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)", line)
        if not m:
            continue
        soname, flags, path = m.groups()
        if want and want not in flags and machine != "i686":
            continue
        cache.setdefault(soname, path)
    return cache


def _dpkg_owners(paths: list[str]) -> dict[str, str]:
    """path → package for files dpkg knows (tries the /usr-merged twin of /lib paths too)."""
    candidates: dict[str, str] = {}
    for p in paths:
        for alt in {p, os.path.realpath(p), re.sub(r"^/lib", "/usr/lib", p), re.sub(r"^/usr/lib", "/lib", p),
                    re.sub(r"^/lib", "/usr/lib", os.path.realpath(p)),
                    re.sub(r"^/usr/lib", "/lib", os.path.realpath(p))}:
            candidates[alt] = p
    proc = subprocess.run(["dpkg", "-S", *candidates], capture_output=True, text=True, check=False)
    owners: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        if path in candidates and "diversion" not in pkg:
            owners.setdefault(candidates[path], pkg.split(":")[0].split(",")[0].strip())
    return owners


@dataclass
class Dependencies:
    packages: dict[str, list[str]]  # Debian package → the sonames it provides to the bundle
    glibc: str | None
    unresolved: list[str]  # sonames neither bundled nor on this system

    def depends_line(self) -> str:
        parts = []
        for pkg in sorted(set(self.packages) | set(EXTRA_DEPENDS)):
            if pkg == "libc6" and self.glibc:
                parts.append(f"libc6 (>= {self.glibc})")
            else:
                parts.append(pkg)
        return ", ".join(parts)


def system_dependencies(bundle: Path) -> Dependencies:
    """What the bundle needs from the system (see the module docstring)."""
    files = bundle_elves(bundle)
    bundled = {p.name for p in bundle.rglob("*")}
    external: dict[str, set[str]] = {}
    for f in files:
        for lib in elf.needed(f):
            if lib not in bundled and not lib.startswith("ld-linux"):
                external.setdefault(lib, set()).add(str(f.relative_to(bundle)))
    cache = _linker_cache()
    located = {lib: cache[lib] for lib in external if lib in cache}
    owners = _dpkg_owners(sorted(set(located.values())))
    packages: dict[str, list[str]] = {}
    unresolved = []
    for lib in sorted(external):
        pkg = owners.get(located.get(lib, ""))
        if pkg is None:
            unresolved.append(f"{lib} (needed by {', '.join(sorted(external[lib])[:3])})")
        else:
            packages.setdefault(pkg, []).append(lib)
    return Dependencies(packages, elf.glibc_floor(files), unresolved)


def _copytree(src: Path, dst: Path) -> None:
    """Hard links where possible (the bundle is ~200 MB; dpkg-deb only reads it)."""
    def link_or_copy(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, symlinks=True, copy_function=link_or_copy)


def installed_size_kib(root: Path) -> int:
    total = 0
    for p in root.rglob("*"):
        if p.is_symlink():
            total += 1
        elif p.is_file():
            total += (p.stat().st_size + 1023) // 1024
    return total


def control_text(version: str, arch: str, depends: str, installed_kib: int) -> str:
    return (f"Package: {PACKAGE}\nVersion: {version}\nArchitecture: {arch}\nMaintainer: {MAINTAINER}\n"
            f"Installed-Size: {installed_kib}\nDepends: {depends}\nRecommends: {RECOMMENDS}\n"
            f"Section: science\nPriority: optional\nDescription: {DESCRIPTION}\n")


def build_deb(bundle: Path, icons: Path, out_dir: Path, version: str, work: Path,
              compression: str = "zstd") -> tuple[Path, Dependencies]:
    """Assemble the package tree under ``work`` and build ``<out_dir>/<pkg>_<ver>_<arch>.deb``."""
    deps = system_dependencies(bundle)
    if deps.unresolved:
        raise SystemExit("the bundle links libraries this system does not have:\n  " + "\n  ".join(deps.unresolved))
    arch = deb_arch()
    root = work / "deb"
    if root.exists():
        shutil.rmtree(root)
    _copytree(bundle, root / INSTALL_DIR.lstrip("/"))
    (root / "usr/bin").mkdir(parents=True)
    os.symlink(f"{INSTALL_DIR}/workbench", root / "usr/bin/workbench")
    apps = root / "usr/share/applications"
    apps.mkdir(parents=True)
    shutil.copy2(HERE / f"{PACKAGE}.desktop", apps / f"{PACKAGE}.desktop")
    _copytree(icons / "hicolor", root / "usr/share/icons/hicolor")
    doc = root / f"usr/share/doc/{PACKAGE}"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {PACKAGE}\n\nFiles: *\nCopyright: Cloud GPU Workbench contributors\nLicense: MIT\n"
        "\nFiles: opt/cloud-gpu-workbench/_internal/*\nComment: bundled third-party libraries (Python, Qt "
        "(LGPL-3), PySide6, numpy, boto3, azure SDKs, ...) under their own licenses; their metadata "
        "(*.dist-info) is included beside them.\n", encoding="utf-8")
    debian = root / "DEBIAN"
    debian.mkdir()
    (debian / "control").write_text(control_text(version, arch, deps.depends_line(), installed_size_kib(root)),
                                    encoding="utf-8")
    shutil.copy2(HERE / "postrm", debian / "postrm")
    for p in [root, *root.rglob("*")]:  # dpkg-deb insists on sane modes; the build tree may have odd umasks
        if p.is_symlink():
            continue
        if p.is_dir() or os.access(p, os.X_OK) or p.name == "postrm":
            p.chmod(0o755)
        else:
            p.chmod(0o644)
    out_dir.mkdir(parents=True, exist_ok=True)
    deb = out_dir / f"{PACKAGE}_{version}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(root), str(deb)],
                   check=True, stdout=subprocess.DEVNULL)
    return deb, deps


def build_tarball(bundle: Path, icons: Path, out_dir: Path, version: str) -> Path:
    """``cloud-gpu-workbench-<ver>-linux-<machine>.tar.gz``: the onedir plus a menu-entry script."""
    top = f"{PACKAGE}-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{top}-linux-{os.uname().machine}.tar.gz"

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=top, filter=owner)
        tar.add(HERE / f"{PACKAGE}.desktop", arcname=f"{top}/share/{PACKAGE}.desktop", filter=owner)
        tar.add(icons / "hicolor", arcname=f"{top}/share/icons/hicolor", filter=owner)
        tar.add(HERE / "install-menu-entry.sh", arcname=f"{top}/install-menu-entry.sh", filter=owner)
    return out
