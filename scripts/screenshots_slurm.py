#!/usr/bin/env python3
"""Screenshots of a Slurm cluster in the app (issue 35), in English and Simplified Chinese.

    xvfb-run -a python scripts/screenshots_slurm.py docs/screenshots [--lang en zh_CN]

The wizard's offer page with the cluster's partitions beside a cloud's machines ("your cluster", "free now: 3 of 8
nodes": ``wizard-cluster-offers``), Instances with a job waiting in the cluster's queue and why
(``instances-cluster-queued``), the Monitor of that job (``monitor-cluster-queued``) and Stop all billing with the
free cluster job listed apart, unticked (``stop-all-cluster``), and Prices ▸ Compare GPUs with the cluster's
offers (``prices-cluster``).  The cluster is the "Fake cluster (tests)" plugin of
tests/fixtures/cluster_plugins and the cloud the "Fake Cloud (tests)" of tests/fixtures/plugins, both labelled as
test providers: stored state and fake offers, no scheduler (the real Slurm is the plugin's end-to-end test, with its
own screenshots).  Each language runs in its own process with a throwaway WORKBENCH_HOME.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

SPEC = """name: resnet-train
run: torchrun --nproc_per_node=gpu train.py
resources:
  gpu: V100:1
guards:
  max_runtime: 12h
"""


def one(lang: str, out: Path) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "plugins"))
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "cluster_plugins"))
    os.environ["WORKBENCH_LANG"] = lang
    import screenshots as base
    from workbench.app import make_application

    app = make_application()
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.instances.stop_all import StopAllDialog
    from workbench.ui.launch.launch_wizard import LaunchWizard
    from workbench.ui.shell.main_window import MainWindow

    home = Path(os.environ["WORKBENCH_HOME"])
    spec_file = home / "resnet-train.yaml"
    spec_file.write_text(SPEC, encoding="utf-8")
    store = Store.open()
    creds = base._MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(Profile("fake-lab", "fakecloud", "fake-east"))
    creds.set("fakecloud", "fake-lab", {"account": "lab-account", "token": "not-a-real-token"})
    acc.save_profile(Profile("uni-hpc", "fakecluster", "login.hpc.example.edu", settings={
        "host": "login.hpc.example.edu", "user": "ada", "queue": "Resources", "queue_start_in": "5400"}))
    spec = parse_spec(SPEC, source=str(spec_file))
    win = None
    try:
        execute(acc, choose_offer(acc, spec, profile="uni-hpc"))  # waits in the queue: Resources
        execute(acc, choose_offer(acc, parse_spec(SPEC.replace("resnet-train", "eval-sweep")), profile="fake-lab"))

        def shot(name: str, widget) -> None:
            app.processEvents()
            path = out / f"{name}-{lang}.png"
            widget.grab().save(str(path))
            print(f"  {path}")

        win = MainWindow(acc, refresh_ms=3000)
        win._quitting = True
        win.resize(*base.SIZE)
        win.show()
        session = win.session

        wiz = LaunchWizard(session, spec_path=str(spec_file))
        wiz.resize(1100, 640)
        wiz.show()
        base._pump(app, 0.3)
        wiz.next()
        base._wait(app, lambda: not wiz.offer_page.loading and wiz.offer_page.isComplete())
        base._pump(app, 0.5)
        shot("wizard-cluster-offers", wiz)
        wiz.next()
        wiz.next()
        base._pump(app, 0.5)
        shot("wizard-cluster-review", wiz)
        wiz.reject()

        base._wait(app, lambda: win.model.rowCount() >= 2)
        win.show_view("instances")
        view = win.instances_view
        row = next(r for r in range(view.proxy.rowCount())
                   if view.proxy.index(r, 1).data().startswith("fakecluster"))
        view.table.selectRow(row)
        base._pump(app, 1.0)
        shot("instances-cluster-queued", win)

        queued = next(i for i in session.snapshot.instances if i.provider == "fakecluster")
        win.show_view("monitor")
        win.monitor_view.show_instance(queued)
        base._wait(app, lambda: "Readings" in win.monitor_view.message.text()
                   or "读数" in win.monitor_view.message.text())
        base._pump(app, 0.5)
        shot("monitor-cluster-queued", win)

        dlg = StopAllDialog(session, win)
        dlg.start()
        base._wait(app, lambda: dlg.state == "confirm")
        dlg.resize(820, 440)
        base._pump(app, 0.5)
        shot("stop-all-cluster", dlg)
        dlg.reject()

        win.show_view("prices")  # Prices ▸ Compare GPUs: the cluster's partitions beside the clouds' machines
        compare = win.view("prices").compare
        base._wait(app, lambda: compare.result is not None and not compare.busy)
        base._pump(app, 0.5)
        shot("prices-cluster", win)
        return 0
    finally:
        if win is not None:
            win.session.shutdown()
        teardown(acc, None, timeout=30, poll=0.1)
        store.close()


def main(argv: list[str]) -> int:
    from screenshots import per_language

    return per_language(__file__, one, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
