"""Build the packaged app for this platform: ``python installer/build.py [options]``.

Steps (each timed and printed):

1. icons: ``build/icons`` (hicolor PNGs + SVG, app.ico, app.icns) from resources/icons/app.svg;
2. bundle: PyInstaller with installer/workbench.spec → ``build/bundle/cloud-gpu-workbench/``
   (macOS: ``build/bundle/Cloud GPU Workbench.app``);
3. packages, into ``dist/``:
   * Linux: ``cloud-gpu-workbench_<ver>_<arch>.deb`` and ``cloud-gpu-workbench-<ver>-linux-<machine>.tar.gz``;
   * Windows: ``cloud-gpu-workbench-<ver>-windows-x64-setup.exe`` with Inno Setup's ``iscc``
     (installer/windows/workbench.iss; skipped with a note when iscc is not on PATH);
   * macOS: ``cloud-gpu-workbench-<ver>-macos-<arch>.dmg`` with ``hdiutil`` (the .app and a link to
     /Applications, so people drag it across).

Options: ``--skip-bundle`` reuses the last bundle (packaging only); ``--untrimmed`` builds an
untrimmed bundle into ``build/bundle-untrimmed`` and stops (to measure what trimming saves);
``--deb-compression xz`` for dpkg older than 1.21.18 (Debian 11, Ubuntu 20.04), which cannot
read the default zstd; ``--allow-missing-sdks`` builds a slim developer bundle although a cloud
plugin's SDK is not installed (otherwise the build stops before PyInstaller, naming it).  Needs the
``installer`` extra (pyinstaller) and every cloud's SDK (the ``clouds`` extra) in the running Python.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = ROOT / "build"
DIST = ROOT / "dist"
sys.path.insert(0, str(HERE))
import bundle_plan  # noqa: E402
import icons  # noqa: E402

APP = "cloud-gpu-workbench"


def _mib(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


class Steps:
    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def done(self, what: str, path: Path | None = None, t: float | None = None) -> None:
        took = time.monotonic() - (t if t is not None else self.t0)
        size = f", {_mib(path):.1f} MiB" if path is not None and path.exists() else ""
        print(f"[build] {what}: {took:.1f} s{size}" + (f" -> {path}" if path else ""), flush=True)


def run_pyinstaller(untrimmed: bool, allow_missing_sdks: bool = False) -> Path:
    name = "bundle-untrimmed" if untrimmed else "bundle"
    env = dict(os.environ, WORKBENCH_ICON_DIR=str(BUILD / "icons"), WORKBENCH_BUNDLE_TRIM="0" if untrimmed else "1")
    if allow_missing_sdks:
        env[bundle_plan.ALLOW_MISSING_ENV] = "1"
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", os.environ.get("PYI_LOG", "WARN"),
           "--workpath", str(BUILD / f"pyinstaller-{name}"), "--distpath", str(BUILD / name),
           str(HERE / "workbench.spec")]
    # Run outside the repository root, so a stale ./*.egg-info there cannot stand in for the
    # installed distribution's metadata.
    BUILD.mkdir(exist_ok=True)
    subprocess.run(cmd, check=True, cwd=BUILD, env=env)
    if sys.platform == "darwin":
        return BUILD / name / "Cloud GPU Workbench.app"
    return BUILD / name / APP


def package_linux(bundle: Path, version: str, compression: str, steps: Steps) -> list[Path]:
    sys.path.insert(0, str(HERE / "linux"))
    import deb

    t = time.monotonic()
    out, deps = deb.build_deb(bundle, BUILD / "icons", DIST, version, BUILD, compression)
    print(f"[build] Depends: {deps.depends_line()}")
    steps.done(".deb", out, t)
    t = time.monotonic()
    tgz = deb.build_tarball(bundle, BUILD / "icons", DIST, version)
    steps.done(".tar.gz", tgz, t)
    return [out, tgz]


def package_windows(bundle: Path, version: str, steps: Steps) -> list[Path]:
    iscc = shutil.which("iscc") or shutil.which("ISCC") or next(
        (str(p) for p in (Path(os.environ.get("ProgramFiles(x86)", "")) / "Inno Setup 6" / "ISCC.exe",
                          Path(os.environ.get("ProgramFiles", "")) / "Inno Setup 6" / "ISCC.exe") if p.is_file()),
        None)
    if iscc is None:
        print("[build] Inno Setup (iscc) not found: skipping the setup .exe (choco install innosetup)")
        return []
    t = time.monotonic()
    subprocess.run([iscc, "/Qp", f"/DAppVersion={version}", f"/DSourceDir={bundle}", f"/DOutputDir={DIST}",
                    f"/DIconFile={BUILD / 'icons' / 'app.ico'}", str(HERE / "windows" / "workbench.iss")], check=True)
    out = DIST / f"{APP}-{version}-windows-x64-setup.exe"
    steps.done("setup .exe", out, t)
    return [out]


def package_macos(app: Path, version: str, steps: Steps) -> list[Path]:
    t = time.monotonic()
    arch = os.uname().machine  # arm64 or x86_64: PyInstaller builds for the running Python's arch
    out = DIST / f"{APP}-{version}-macos-{arch}.dmg"
    subprocess.run(["sh", str(HERE / "macos" / "make-dmg.sh"), str(app), str(out)], check=True)
    steps.done(".dmg", out, t)
    return [out]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-bundle", action="store_true", help="package the existing build/bundle")
    ap.add_argument("--untrimmed", action="store_true", help="only build an untrimmed bundle (measurement)")
    ap.add_argument("--deb-compression", default="zstd", choices=["zstd", "xz", "gzip"])
    ap.add_argument("--allow-missing-sdks", action="store_true",
                    help="slim developer bundle: build although a cloud plugin's SDK is not installed")
    args = ap.parse_args(argv)
    version = metadata.version(APP)
    steps = Steps()
    if not args.skip_bundle:
        try:  # before anything is built: a release without a cloud's SDK must not come out of here
            bundle_plan.require_every_sdk(bundle_plan.plan(), args.allow_missing_sdks)
        except bundle_plan.MissingSdks as exc:
            print(f"[build] {exc}", file=sys.stderr)
            return 2

    t = time.monotonic()
    icons.build(BUILD / "icons")
    steps.done("icons", BUILD / "icons", t)

    if args.skip_bundle:
        bundle = BUILD / "bundle" / ("Cloud GPU Workbench.app" if sys.platform == "darwin" else APP)
        if not bundle.exists():
            raise SystemExit(f"no bundle at {bundle}: build it first (without --skip-bundle)")
    else:
        t = time.monotonic()
        bundle = run_pyinstaller(args.untrimmed, args.allow_missing_sdks)
        steps.done("PyInstaller bundle" + (" (untrimmed)" if args.untrimmed else ""), bundle, t)
        if args.untrimmed:
            return 0

    if sys.platform.startswith("linux"):
        outputs = package_linux(bundle, version, args.deb_compression, steps)
    elif sys.platform == "win32":
        outputs = package_windows(bundle, version, steps)
    elif sys.platform == "darwin":
        outputs = package_macos(bundle, version, steps)
    else:
        outputs = []
    steps.done("total")
    for o in outputs:
        print(f"[build] {o} ({_mib(o):.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
