"""GUI figures for `make bench` (each run in a fresh process on the offscreen Qt platform).

    python -m benchmarks.gui start-app | start-bare | gaps | monitor-memory

start-app / start-bare: print seconds from interpreter start to the first paint of the main
window / of a bare PySide6 window with one label (same interpreter, same platform).
gaps: the largest event-loop stall (10 ms QTimer gap recorder) in the real main window while the
real AWS plugin (moto in server mode behind our fault wrapper) and the real Azure plugin (our ARM
server, real azure-identity / azure-mgmt SDKs over HTTPS), every call delayed LATENCY_S, are
refreshed, launched into through the wizard (one V100 on AWS from resources/examples, one T4 on
Azure) and torn down with Stop all billing.  The clouds run in a process of their own
(benchmarks/clouds.py); the secrets are in the real Secret Service (run it under
scripts/with-secret-service.sh, as `make bench` does).  Prints one JSON object: ``largest_ms``,
``idle_ms`` (the same recorder over an idle second first: the baseline), ``worst_phase`` and the
largest gap of each phase (``phases_ms``: refresh, launch aws, launch azure, stop all).
WB_STALL_PROFILE=1: also print to stderr where the UI thread's time went in the long gaps
(benchmarks/stallprof.py: CPU split per gap and sampled stacks).  Raises
when a step does not happen (a refresh error, no launchable offer, a launch that fails, Stop all
billing not clean or not ending machines of both clouds): a broken flow is never timed.
monitor-memory: bytes held by the monitor's sample rings for 64 instances × 8 GPUs × 24 h at 1 Hz.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]


def _first_paint(make_window) -> float:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["bench"])
    painted: list[float] = []

    class Spy(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802
            if ev.type() == QEvent.Type.Paint and not painted:
                painted.append(time.perf_counter())
            return False

    win = make_window()
    spy = Spy()
    win.installEventFilter(spy)
    win.show()
    deadline = time.monotonic() + 60
    while not painted:
        if time.monotonic() > deadline:
            raise RuntimeError("the window was never painted")
        app.processEvents()
    return painted[0] - T0


def start_bare() -> float:
    def make():
        from PySide6.QtWidgets import QLabel

        return QLabel("Cloud GPU Workbench")

    return _first_paint(make)


def start_app() -> float:
    def make():
        from workbench.app import make_application
        from workbench.core.providers.accounts import Accounts
        from workbench.core.store.database import Store
        from workbench.ui.shell.main_window import MainWindow

        make_application()
        return MainWindow(Accounts(Store.open()), refresh_ms=60_000)

    return _first_paint(make)


LATENCY_S = 0.2  # every AWS and Azure call, as a far region answers
AWS_SETTINGS = {"regions": "us-east-1,us-west-2", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.05",
                "terminate_wait_s": "60", "retry_backoff_cap_s": "0.05"}
AZURE_SPEC = """name: bench-azure
providers: [azure]
regions: [eastus]
resources:
  gpu: T4:1
run: python3 train.py
"""


def _cloud_accounts(info: dict):
    """Accounts with an AWS profile on moto and an Azure profile on the ARM server; their secrets in the
    real Secret Service (the keyring the app uses: the benchmark runs under scripts/with-secret-service.sh)."""
    from workbench.core.domain.models import Profile
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    acc = Accounts(Store.open(), entries=discover())
    acc.credentials.check_backend()  # raises with the keyring's own reason when there is no Secret Service
    acc.save_profile(Profile("aws-bench", "aws", "us-east-1", endpoint_url=info["aws_url"], settings=AWS_SETTINGS))
    acc.credentials.set("aws", "aws-bench", {"access_key_id": "moto-fake-key-id", "secret_access_key": "moto-fake-not-secret"})
    acc.save_profile(Profile("az-bench", "azure", "eastus", settings={
        "cloud": "custom", "arm_endpoint": info["arm_url"], "authority_host": info["arm_url"],
        "ca_bundle": info["ca_file"], "prices_url": info["prices_url"], "tenant_id": info["tenant"],
        "client_id": info["client_id"], "subscription_id": info["subscription"], "regions": "eastus",
        "ssh_cidr": "203.0.113.7/32", "polling_interval": "0", "retry_backoff": "0.05", "retry_total": "3",
        "read_timeout": "30"}))
    acc.credentials.set("azure", "az-bench", {"client_secret": info["secret"]})
    return acc


def gaps() -> dict:
    """The stall flow against the real AWS and Azure plugins (see the module doc); raises when a step fails."""
    from benchmarks.clouds import CloudServers

    clouds = CloudServers(LATENCY_S)
    try:
        return _gaps(_cloud_accounts(clouds.info), clouds.proc.pid)
    finally:
        clouds.stop()


def _gaps(acc, cloud_pid: int | None = None) -> dict:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from PySide6.QtWidgets import QLabel

    from benchmarks.harness import check
    from workbench.ui.instances.stop_all import StopAllDialog
    from workbench.ui.shell.main_window import MainWindow

    app = QApplication.instance() or QApplication(["bench"])
    phase = ["idle"]
    largest = {"idle": 0.0}
    last = [time.perf_counter()]

    from benchmarks import stallprof

    prof = stallprof.StallProfiler() if stallprof.enabled() else None
    if prof is not None:
        prof.cloud_pid = cloud_pid

    def tick() -> None:
        now = time.perf_counter()
        largest[phase[0]] = max(largest.get(phase[0], 0.0), now - last[0])
        last[0] = now
        if prof is not None:
            prof.tick()

    timer = QTimer(interval=10, timeout=tick)

    def pump(cond, what: str, limit: float = 120.0) -> None:
        end = time.monotonic() + limit
        while not cond():
            check(time.monotonic() <= end, f"gave up after {limit:g} s waiting for {what}")
            app.processEvents()
            time.sleep(0.001)

    def enter(name: str) -> None:
        phase[0] = name
        last[0] = time.perf_counter()  # a phase's first gap is not the previous phase's
        if prof is not None:
            prof.reset(name)

    def click_pause() -> None:
        """The event loop runs between two clicks, as it does for a user (no two clicks in one turn)."""
        end = time.monotonic() + 0.1
        pump(lambda: time.monotonic() > end, "a pause between clicks")

    # idle baseline: the same recorder in the same process over a second with a plain window open and
    # nothing running (the main window starts its first refresh and view preloading as soon as it exists)
    bare = QLabel("Cloud GPU Workbench")
    bare.show()
    for _ in range(5):
        app.processEvents()
    timer.start()
    last[0] = time.perf_counter()
    if prof is not None:
        prof.reset("idle")
        prof.start()
    end = time.monotonic() + 1.0
    pump(lambda: time.monotonic() > end, "an idle second")
    bare.close()
    win = MainWindow(acc, refresh_ms=2000)
    win._quitting = True
    win.show()
    for _ in range(5):  # its first paint (start-up: the cold-start row's)
        app.processEvents()
    enter("refresh")  # the window's own first refresh (150 ms after it opens) and its view preloading
    pump(lambda: win.session.snapshot.taken_at > 0, "the first refresh")
    errors = [(name, str(e)) for name, e in win.session.snapshot.errors]
    check(not errors, f"the first refresh failed for {errors}")
    launched: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wb-bench-spec-") as tmp:
        azure_spec = Path(tmp) / "azure-t4.yaml"
        azure_spec.write_text(AZURE_SPEC, encoding="utf-8")
        for cloud, spec in (("aws", ROOT / "resources" / "examples" / "v100-single.yaml"), ("azure", azure_spec)):
            enter(f"launch {cloud}")
            wiz = win.launch_view.start_wizard(str(spec))
            click_pause()
            wiz.next()
            pump(lambda: not wiz.offer_page.loading, f"the {cloud} offers")
            click_pause()
            chosen = wiz.offer_page.selected()
            check(chosen is not None and chosen.offer.provider == cloud and not chosen.needs_account,
                  f"the wizard chose no launchable {cloud} offer: {chosen!r}")
            wiz.next()
            click_pause()
            wiz.next()
            click_pause()
            wiz.start_launch()
            pump(lambda: wiz.launched_ok or not wiz.busy(), f"the {cloud} launch")
            check(wiz.launched_ok, f"the wizard's {cloud} launch failed: "
                  f"{wiz.panel.error.text() if hasattr(wiz.panel.error, 'text') else ''}")
            launched.append(wiz.launch_id)
    enter("stop all")
    dlg = StopAllDialog.open_for(win.session, win, timeout=60, poll=0.2)
    pump(lambda: dlg.state in ("confirm", "nothing"), "the stop-all inventory")
    check(dlg.state == "confirm", "Stop all billing found nothing to stop after the launches")
    click_pause()
    dlg.confirm()
    pump(lambda: dlg.state == "done", "Stop all billing")
    check(dlg.report is not None and dlg.report.clean, f"Stop all billing did not end clean: {dlg.report!r}")
    clouds = {i.provider for i in dlg.report.terminated}
    check(clouds == {"aws", "azure"}, f"Stop all billing terminated machines of {sorted(clouds)}, not of both clouds")
    timer.stop()
    if prof is not None:
        prof.stop()
        prof.report()
    win.session.shutdown()
    idle = largest.pop("idle")
    worst = max(largest, key=largest.get)
    return {"largest_ms": largest[worst] * 1000, "idle_ms": idle * 1000, "worst_phase": worst,
            "phases_ms": {k: round(v * 1000, 1) for k, v in largest.items()}, "launches": launched}


def main(argv: list[str]) -> int:
    what = argv[0]
    if what in ("start-app", "start-bare") and sys.dont_write_bytecode and not os.environ.get("WB_BENCH_BYTECODE"):
        # A user's install runs from bytecode (pip and the packaged app compile it; an editable install writes
        # it on the first run); where PYTHONDONTWRITEBYTECODE is set every start would compile the app's
        # ~100 modules from source (~100 ms) while PySide6 comes precompiled.  Compile once, then start afresh.
        import compileall

        for pkg in ("workbench", "plugins"):
            compileall.compile_dir(str(ROOT / pkg), quiet=2)
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.gui", what],
                  dict(os.environ, WB_BENCH_BYTECODE="1"))
    if what in ("start-app", "start-bare"):
        with tempfile.TemporaryDirectory(prefix="wb-bench-gui-", ignore_cleanup_errors=True) as home:
            os.environ["WORKBENCH_HOME"] = home
            print(f"{(start_app if what == 'start-app' else start_bare)():.6f}")
        os._exit(0)  # skip interpreter teardown: not part of the figure
    if what == "gaps":
        with tempfile.TemporaryDirectory(prefix="wb-bench-gui-", ignore_cleanup_errors=True) as home:
            os.environ["WORKBENCH_HOME"] = home
            got = gaps()
        print(json.dumps(got), flush=True)
        os._exit(0)
    if what == "monitor-memory":
        from workbench.core.telemetry.series import benchmark_memory

        print(benchmark_memory())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
