#!/usr/bin/env python3
"""Screenshots of the account's controller (issue 33), called by scripts/screenshots.py for each language:
the review page's "Keep watching while this computer is off", a watched launch in Instances, and the
"while you were away" banner and its dialog.

The test cloud has no bucket and no controller machine type: ``deploy.plan`` is given AWS's controller price
(the catalog's t3a.nano, all-in) and the board is a folder of the screenshot home, written as the controller
writes it (its heartbeat, two events, the attempts with their cost).

    xvfb-run -a python scripts/screenshots_controller.py docs/screenshots [--lang en zh_CN]   (these alone)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "s3://lab-bucket/workbench"


def controller_shots(app, win, acc, shot, pump, wait) -> None:
    from workbench.core.controller import deploy, handover
    from workbench.core.controller.board import Board, FolderObjects
    from workbench.core.controller.service import HEARTBEAT
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.money.controller_cost import controller_cost
    from workbench.core.providers.contract import ControllerIdentity

    home = Path(os.environ["WORKBENCH_HOME"])
    prof = acc.profile("fake-lab")
    acc.save_profile(Profile(prof.name, prof.provider, prof.region, prof.endpoint_url,
                             {**prof.settings, "storage_uri": BUCKET}))
    acc.forget(prof.name)
    deploy.plan = lambda accounts, profile, create_identity=False: deploy.Planned(  # the test cloud has no type
        profile, None, controller_cost("aws"), ControllerIdentity("workbench-controller", ready=True),
        f"{BUCKET}/workbench-controller/1234")
    board = Board(FolderObjects(home / "board"))
    win.session.controller.boards["fake-lab"] = board

    spec = home / "llama-pretrain.yaml"
    spec.write_text("name: llama-pretrain\nrun: python train.py --resume\nresources:\n  gpu: A100:8\n  spot: true\n"
                    "providers: [fakecloud]\nrecovery: {max_restarts: 3, on: [preemption]}\n"
                    "guards:\n  max_runtime: 72h\n", encoding="utf-8")
    win.show_view("launch")
    wiz = win.launch_view.start_wizard(str(spec))
    wiz.resize(1000, 720)
    pump(0.5)
    wiz.next()
    wait(lambda: wiz.offer_page.isComplete())
    wiz.next()
    wiz.next()
    wait(lambda: wiz.review_page.watch.plan is not None)
    pump(0.8)
    shot("wizard-keep-watching", wiz)
    wiz.reject()
    pump(0.3)

    # the account's controller and a launch handed to it, as Instances shows them
    execute(acc, choose_offer(acc, deploy.spec_for(Path("."), 8), provider="fakecloud"))
    (job,) = execute(acc, choose_offer(acc, parse_spec(spec.read_text(encoding="utf-8")), provider="fakecloud"))
    watched = acc.store.get_launch(job.launch_id)
    handover.hand_over(acc.store, board, watched.launch_id)
    now = time.time()
    board.put(HEARTBEAT, {"launch_id": "ctl", "ts": now, "poll_s": 30, "watching": [watched.launch_id]})
    board.add_event({"source": "controller", "kind": "RecoveryEvent", "action": "relaunched", "attempt": 2,
                     "root_id": watched.launch_id, "launch_id": f"{watched.launch_id}-a2", "level": "warning",
                     "ts": now - 7 * 3600, "message": "llama-pretrain: attempt 1 ended (spot interruption); "
                     "attempt 2 runs on fakecloud/fake-lab fake-west fk.a100x8"})
    board.add_event({"source": "controller", "kind": "GuardEvent", "guard": "finished", "action": "pending",
                     "launch_id": f"{watched.launch_id}-a2", "level": "info", "ts": now - 1800,
                     "message": "the job finished with exit code 0"})
    board.put(f"attempts/{watched.launch_id}.json", {"root_id": watched.launch_id, "ts": now, "attempts": [
        {"root_id": watched.launch_id, "launch_id": watched.launch_id, "attempt": 1, "cost": 18.36, "currency": "USD",
         "end_reason": "preemption", "instance_type": "fk.a100x8", "region": "fake-east", "spot": True},
        {"root_id": watched.launch_id, "launch_id": f"{watched.launch_id}-a2", "attempt": 2, "cost": 25.69,
         "currency": "USD", "end_reason": "finished", "instance_type": "fk.a100x8", "region": "fake-west",
         "spot": True}]})
    win.show_view("instances")
    win.session.refresh()
    view = win.instances_view
    wait(lambda: watched.launch_id in win.session.snapshot.watched and not win.away.banner.isHidden())
    pump(1.0)
    view.table.resizeColumnsToContents()
    rows = [view.proxy.index(r, 0).data() for r in range(view.proxy.rowCount())]
    view.table.selectRow(rows.index("llama-pretrain"))
    pump(0.5)
    shot("instances-watched")
    dlg = win.away.open_dialog()
    pump(0.8)
    shot("away-dialog", dlg)
    dlg.close()


def one(lang: str, out: Path) -> int:
    """The three scenes alone (for a quick look): the screenshot home of scripts/screenshots.py, smaller."""
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "plugins"))
    sys.path.insert(0, str(ROOT / "scripts"))
    os.environ["WORKBENCH_LANG"] = lang
    import screenshots as base
    from workbench.app import make_application

    app = make_application()
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.shell.main_window import MainWindow

    store = Store.open()
    creds = base._MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(Profile("fake-lab", "fakecloud", "fake-east"))
    creds.set("fakecloud", "fake-lab", {"account": "lab-account", "token": "not-a-real-token"})
    execute(acc, choose_offer(acc, parse_spec("name: resnet-4xv100\nrun: python train.py\nresources:\n  gpu: V100:4\n"
                                              "guards:\n  max_runtime: 12h\n  budget_usd: 200\n"), provider="fakecloud"))
    win = MainWindow(acc, refresh_ms=3000)
    win._quitting = True
    win.resize(*base.SIZE)
    win.show()
    base._wait(app, lambda: win.model.rowCount() >= 1)

    def shot(name: str, widget=None) -> None:
        app.processEvents()
        path = out / f"{name}-{lang}.png"
        (widget or win).grab().save(str(path))
        print(f"  {path}")

    controller_shots(app, win, acc, shot, lambda s: base._pump(app, s), lambda c: base._wait(app, c))
    win.session.shutdown()
    from workbench.core.lifecycle.teardown import teardown

    teardown(acc, None, timeout=30, poll=0.1)
    store.close()
    return 0


def main(argv: list[str]) -> int:
    from screenshots import per_language

    return per_language(__file__, one, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
