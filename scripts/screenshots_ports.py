#!/usr/bin/env python3
"""Screenshots of Instances ▸ Open port… (issue 34), in English and Simplified Chinese.

    xvfb-run -a python scripts/screenshots_ports.py docs/screenshots [--lang en zh_CN]

Real, not staged: "the machine" is a loopback sshd (tests/support/sshd.py, the ``sshcloud`` test provider of
tests/fixtures/remote_plugins, labelled as a test cloud) whose job runs a plain HTTP server and a real Jupyter
server (jupyter_server, the test extra); the dialog forwards Jupyter's port over SSH and the URL it would open
is fetched before the shot.  Each language runs in its own process with a throwaway WORKBENCH_HOME.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one(lang: str, out: Path) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "remote_plugins"))
    importlib.invalidate_caches()
    os.environ["WORKBENCH_LANG"] = lang
    import screenshots as base
    import sshd as sshd_support
    from workbench.app import make_application

    app = make_application()
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.remote.job import JobOptions, RemoteJob
    from workbench.core.store.database import Store
    from workbench.ui.shell.main_window import MainWindow

    home = Path(os.environ["WORKBENCH_HOME"])
    server = sshd_support.Sshd.start(home / "machine")
    store = Store.open()
    acc = Accounts(store, entries=discover())
    acc.save_profile(Profile("lab-ssh", "sshcloud", "loop-1", settings={"port": str(server.port), "user": server.user}))
    server.authorize(ensure_keypair(store.path.parent).public_openssh)
    work = home / "notebooks"
    work.mkdir()
    (work / "train.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    http_port, jupyter_port = _free_port(), _free_port()
    run = (f"python3 -u -m http.server {http_port} --bind 127.0.0.1 & exec {sys.executable} -m jupyter_server "
           f"--no-browser --allow-root --ip=127.0.0.1 --port={jupyter_port} --port-retries=0 --ServerApp.root_dir=.")
    spec = parse_spec(f"name: notebook\nrun: {json.dumps(run)}\nworkdir: {work}\non_finish: keep\n"
                      f"resources: {{gpu: 'V100:1'}}\nports: [{{port: {jupyter_port}, name: jupyter}}, "
                      f"{{port: {http_port}, name: http}}, 6006]\n", source=str(home / "notebook.yaml"))
    win = None
    try:
        (inst,) = execute(acc, choose_offer(acc, spec, provider="sshcloud"))
        RemoteJob(acc, inst, spec, JobOptions(connect_deadline_s=20, poll_s=0.1)).launch()
        log = server.remote_dir / "jobs" / inst.launch_id / "output.log"
        base._wait(app, lambda: log.exists() and "token=" in log.read_text(), 60)

        win = MainWindow(acc, refresh_ms=3000)
        win._quitting = True
        win.resize(*base.SIZE)
        win.show()
        base._wait(app, lambda: win.model.rowCount() >= 1)
        view = win.instances_view
        win.show_view("instances")
        view.table.selectRow(0)
        base._pump(app, 1.0)

        def shot(name: str, widget) -> None:
            app.processEvents()
            path = out / f"{name}-{lang}.png"
            widget.grab().save(str(path))
            print(f"  {path}")

        view._context_menu(view.table.visualRect(view.proxy.index(0, 0)).center())
        from PySide6.QtWidgets import QMenu

        base._pump(app, 0.5)
        menus = [m for m in view.findChildren(QMenu) if m.isVisible()]
        if menus:
            menus[0].setActiveAction(view.ports.open_action)
            shot("open-port-menu", menus[0])
            menus[0].close()
        view.ports.open_action.trigger()
        dlg = view.ports.dialog
        dlg.resize(620, 260)
        dlg.ports.setCurrentRow(0)
        dlg.forward.click()
        base._wait(app, lambda: dlg.url is not None or "127.0.0.1:" in dlg.message.text(), 60)
        with urllib.request.urlopen(dlg.url, timeout=20) as resp:  # the URL the app opens answers
            print(f"  {dlg.url.split('?')[0]} answered {resp.status}")
        base._pump(app, 0.5)
        shot("open-port", dlg)
        dlg.close()
        view.ports.close()
        return 0
    finally:
        if win is not None:
            win.session.shutdown()
        teardown(acc, None, timeout=30, poll=0.1)
        server.end_jobs()
        server.stop()
        store.close()


def main(argv: list[str]) -> int:
    from screenshots import per_language

    return per_language(__file__, one, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
