"""`make installer-test`: install the .deb on this machine and prove the installed app works.

Steps (each printed with its time; the first failure stops with exit 1, after removing the package):

1. ``dpkg -i`` the package in dist/ (as root); check the layout: /usr/bin/workbench → /opt, the
   .desktop entry (desktop-file-validate when installed), hicolor icons, no python/venv needed;
2. ``/usr/bin/workbench --version`` and ``--self-test --json`` (offscreen, then on X11 under
   Xvfb) from a folder outside the
   repository with a scrubbed environment (no PYTHONPATH/VIRTUAL_ENV): every plugin loads, the
   offscreen window opens and closes, the keyring backend is the real Secret Service (this
   script runs inside scripts/with-secret-service.sh), the store round trip works, and the app
   says it is the frozen one;
3. a Local job from the installed CLI: launch a sleeper, see it running (its process exists and
   has a clean environment: no LD_LIBRARY_PATH into the bundle), ``down`` it, verify it is gone;
4. ``dpkg -r``: /opt/cloud-gpu-workbench (including a stray file put there on purpose, for
   postrm to clean), /usr/bin/workbench, the .desktop file and the icons are gone; then
   ``dpkg --purge`` so that dpkg forgets the package (``-r`` keeps postrm until a purge);
5. timings: ``--version`` and ``--self-test`` of the installed app vs the same from source
   (the venv): the first run after install and the median of the next 3.

Usage: python installer/linux/check_installed.py [DEB]  (default: the newest dist/cloud-gpu-workbench_*.deb)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "cloud-gpu-workbench"
OPT = Path("/opt") / PACKAGE
BIN = Path("/usr/bin/workbench")
DESKTOP = Path("/usr/share/applications") / f"{PACKAGE}.desktop"
ICON = Path("/usr/share/icons/hicolor/48x48/apps") / f"{PACKAGE}.png"
SCALABLE = Path("/usr/share/icons/hicolor/scalable/apps") / f"{PACKAGE}.svg"
T0 = time.monotonic()


class Failed(Exception):
    pass


def step(msg: str) -> None:
    print(f"[installer-test {time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise Failed(msg)


def app_env(home: Path) -> dict[str, str]:
    """The user's environment minus anything that could let the installed app use the venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "QT_PLUGIN_PATH")}
    env.update(WORKBENCH_HOME=str(home), QT_QPA_PLATFORM="offscreen",
               PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
    return env


def run(argv, env, cwd, timeout=60, ok=(0,)):
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in ok:
        raise Failed(f"{' '.join(map(str, argv))} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n"
                     f"--- stderr\n{proc.stderr}")
    return proc


def timed(argv, env, cwd, n=3) -> tuple[float, float]:
    """(first run, median of the next n) wall seconds."""
    times = []
    for _ in range(n + 1):
        t = time.perf_counter()
        run(argv, env, cwd)
        times.append(time.perf_counter() - t)
    return times[0], statistics.median(times[1:])


def install(deb: Path) -> None:
    step(f"dpkg -i {deb.name} ({deb.stat().st_size / 2**20:.1f} MiB)")
    t = time.perf_counter()
    run(["dpkg", "-i", str(deb)], None, None, timeout=300)
    step(f"installed in {time.perf_counter() - t:.1f} s")
    check(BIN.is_symlink() and os.readlink(BIN) == str(OPT / "workbench"), f"{BIN} is not a link to {OPT}/workbench")
    check(os.access(BIN, os.X_OK), f"{BIN} is not executable")
    for p in (DESKTOP, ICON, SCALABLE, OPT / "_internal"):
        check(p.exists(), f"missing after install: {p}")
    text = DESKTOP.read_text(encoding="utf-8")
    check("Exec=workbench gui" in text and f"Icon={PACKAGE}" in text, "the .desktop entry does not start the app")
    if shutil.which("desktop-file-validate"):
        run(["desktop-file-validate", str(DESKTOP)], None, None)
    status = run(["dpkg-query", "-W", "-f", "${Status} ${Version} ${Depends}", PACKAGE], None, None).stdout
    check(status.startswith("install ok installed"), f"dpkg says: {status}")
    step(f"layout ok; Depends: {status.split(' ', 4)[-1]}")


def self_test(env, cwd) -> dict:
    out = run([str(BIN), "--version"], env, cwd).stdout.strip()
    check(out.startswith("workbench "), f"--version printed {out!r}")
    proc = run([str(BIN), "--self-test", "--json"], env, cwd, ok=(0, 1))
    result = json.loads(proc.stdout)
    for c in result["checks"]:
        step(f"  self-test {c['status']:4} {c['name']}: {c['detail']}")
    check(proc.returncode == 0 and result["ok"], "the installed app's self-test failed")
    check(result.get("frozen") is True, "the self-test did not run in the frozen app")
    names = {c["name"]: c for c in result["checks"]}
    for required in ("plugin local", "providers", "store", "window", "keyring", "resources", "controller"):
        check(names.get(required, {}).get("status") == "ok", f"self-test check {required!r} is not ok")
    for pid in ("local", "aws", "azure", "alibaba"):  # the bundle carries every cloud (issue 36)
        check(f"({pid})" in names["providers"]["detail"], f"the installed app does not list {pid} as usable")
    check("SecretService" in names["keyring"]["detail"],
          "the keyring backend is not the Secret Service (lost keyring entry points?)")
    plugins = sorted(n.split(" ", 1)[1] for n in names if n.startswith("plugin "))
    step(f"self-test ok: plugins {', '.join(plugins)}; {names['providers']['detail']}; {names['keyring']['detail']}")
    return result


def desktop_window(env, cwd) -> None:
    """The self-test's window on the X11 platform users get (xcb), under a virtual X server: proves
    the bundled xcb plugin and the libraries it loads survived the trimming."""
    if not shutil.which("xvfb-run"):
        raise Failed("xvfb-run is missing (Debian package xvfb, in the Makefile's DEBS_TEST)")
    xenv = dict(env, QT_QPA_PLATFORM="xcb")
    proc = run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", str(BIN), "--self-test", "--json"], xenv, cwd,
               ok=(0, 1))
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    window = checks.get("window", {})
    check(window.get("status") == "ok" and "(xcb)" in window.get("detail", ""),
          f"the main window did not open on X11: {window or proc.stderr}")
    check(checks.get("plots", {}).get("status") == "ok", f"plots on X11: {checks.get('plots')}")
    step(f"X11 (xcb under Xvfb): {window['detail']}")


def job_environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0") if "=" in kv)


def local_job(env, cwd: Path) -> None:
    spec = cwd / "installer-check.yaml"
    spec.write_text('name: installer-check\nrun: "echo started; sleep 300"\nguards:\n  max_runtime: 10m\n')
    launched = json.loads(run([str(BIN), "launch", str(spec), "--provider", "local", "--yes", "--json"],
                              env, cwd).stdout)
    lid = launched["launch"]["launch_id"]
    step(f"launched Local job {lid}")
    deadline = time.monotonic() + 20
    while True:
        st = json.loads(run([str(BIN), "status", "--json"], env, cwd).stdout)
        entry = next(x for x in st["launches"] if x["launch_id"] == lid)
        inst = entry["instances"][0]
        if inst["state"] == "running":
            break
        check(time.monotonic() < deadline, f"the job never ran: {entry}")
        time.sleep(0.2)
    pid = inst["extra"]["pid"]
    check(Path(f"/proc/{pid}").exists(), f"the job's process {pid} does not exist")
    job_env = job_environ(pid)
    check(job_env.get("WORKBENCH_LAUNCH_ID") == lid, "the process is not the job")
    check(str(OPT) not in job_env.get("LD_LIBRARY_PATH", "") and str(OPT) not in job_env.get("QT_PLUGIN_PATH", ""),
          "the job inherited the bundle's library paths")
    step(f"job running as pid {pid}, environment clean")
    down = json.loads(run([str(BIN), "down", lid, "--yes", "--json"], env, cwd, timeout=120).stdout)
    check(down["clean"] and [i["launch_id"] for i in down["terminated"]] == [lid], f"down: {down}")
    gone = not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    check(gone, f"the job's process {pid} survived `down`")
    st = json.loads(run([str(BIN), "status", "--json"], env, cwd).stdout)
    check(st["billable"] == 0, f"still billable after down: {st}")
    step("down: terminated and verified, nothing billable")


def remove() -> None:
    stray = OPT / "added-after-install.txt"
    if OPT.is_dir():
        stray.write_text("postrm must remove this\n")
    t = time.perf_counter()
    run(["dpkg", "-r", PACKAGE], None, None, timeout=120)
    step(f"dpkg -r in {time.perf_counter() - t:.1f} s")
    left = [str(p) for p in (OPT, BIN, DESKTOP, ICON, SCALABLE) if p.exists() or p.is_symlink()]
    check(not left, f"left behind after dpkg -r: {left}")
    status = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", PACKAGE], capture_output=True, text=True).stdout
    check("install ok installed" not in status, f"dpkg still lists the package as installed: {status}")
    # `dpkg -r` keeps the maintainer scripts until a purge ("rc"): purge, so dpkg forgets it entirely
    run(["dpkg", "--purge", PACKAGE], None, None, timeout=120)
    status = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", PACKAGE], capture_output=True, text=True).stdout
    check(status.strip() in ("", "unknown ok not-installed"), f"dpkg still knows the package after purge: {status}")
    step("removed: nothing left under /opt, no link, no menu entry, no icons")


# First paint of the real main window (offscreen, like benchmarks/gui.py), printed as a wall-clock
# time so the parent can measure from before the process started: interpreter, imports, window.
FIRST_PAINT = """
import os, time
from PySide6.QtCore import QEvent, QObject
from workbench.app import make_application
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store
from workbench.ui.shell.main_window import MainWindow
app = make_application()
win = MainWindow(Accounts(Store.open()), refresh_ms=60_000)
painted = []
class Spy(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and not painted:
            painted.append(time.time())
        return False
spy = Spy()
win.installEventFilter(spy)
win.show()
while not painted:
    app.processEvents()
print(painted[0], flush=True)
win.session.shutdown()
os._exit(0)
"""


def first_paint(argv, env, cwd, n=3) -> tuple[float, float]:
    times = []
    for _ in range(n + 1):
        t = time.time()
        out = run([*argv, "-c", FIRST_PAINT], env, cwd).stdout.strip().splitlines()[-1]
        times.append(float(out) - t)
    return times[0], statistics.median(times[1:])


def timings(env, cwd: Path) -> None:
    """The installed app against the same commands from source (the venv), when there is one."""
    src = dict(env, PATH=f"{ROOT / '.venv' / 'bin'}:{env['PATH']}")
    venv_wb, venv_py = ROOT / ".venv" / "bin" / "workbench", ROOT / ".venv" / "bin" / "python"
    cases = [("--version", [str(BIN), "--version"], [str(venv_wb), "--version"], timed),
             ("--self-test", [str(BIN), "--self-test"], [str(venv_wb), "--self-test"], timed),
             ("first paint of the main window", [str(BIN)], [str(venv_py)], first_paint)]
    for label, installed, source, how in cases:
        inst = how(installed, env, cwd)
        row = f"{label}: installed {inst[0]:.2f} s first / {inst[1]:.2f} s median"
        if venv_wb.exists():
            srcs = how(source, src, cwd)
            row += f"; from source {srcs[0]:.2f} / {srcs[1]:.2f} s"
        step("timing " + row)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if os.geteuid() != 0:
        print("installer-test: run as root (it installs and removes a .deb)", file=sys.stderr)
        return 2
    debs = [Path(args[0])] if args else sorted((ROOT / "dist").glob(f"{PACKAGE}_*.deb"),
                                                 key=lambda p: p.stat().st_mtime)
    if not debs or not debs[-1].is_file():
        print("installer-test: no .deb found: run `make installer` first", file=sys.stderr)
        return 2
    deb = debs[-1]
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS") is None:
        print("installer-test: no D-Bus session: run inside scripts/with-secret-service.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="workbench-installer-test-") as tmp:
        cwd = Path(tmp)
        env = app_env(cwd / "home")
        try:
            install(deb)
            t = time.perf_counter()
            self_test(env, cwd)
            step(f"first --version + --self-test after install: {time.perf_counter() - t:.2f} s")
            desktop_window(env, cwd)
            local_job(env, cwd)
            timings(env, cwd)
        except Failed as exc:
            print(f"installer-test FAILED: {exc}", file=sys.stderr)
            try:
                run([str(BIN), "down", "--all", "--yes", "--include-own"], env, cwd, timeout=120, ok=(0, 1, 3, 4))
            except Exception:
                pass
            subprocess.run(["dpkg", "--purge", PACKAGE], capture_output=True)
            return 1
        try:
            remove()
        except Failed as exc:
            print(f"installer-test FAILED: {exc}", file=sys.stderr)
            return 1
    step("all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
