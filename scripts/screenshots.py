#!/usr/bin/env python3
"""Screenshots of every main screen, in English and Simplified Chinese (run by `make screenshots`).

    xvfb-run -a python scripts/screenshots.py docs/screenshots [--lang en zh_CN]

Each language runs in its own process with a throwaway WORKBENCH_HOME.  The
data is real, not staged: a Local job runs on this computer, and the "Fake
Cloud (tests)" plugin from tests/fixtures/plugins provides cloud-like offers
and machines (it is labelled as a test cloud in every screen it appears in).
Credentials stay in memory (no keyring is touched).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = (1240, 780)


def _pump(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _wait(app, cond, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        app.processEvents()
        if cond():
            return True
        time.sleep(0.02)
    print(f"  (timed out waiting: {getattr(cond, '__name__', cond)})", file=sys.stderr)
    return False


class _MemoryCredentials:
    def __init__(self) -> None:
        self.data: dict = {}

    def set(self, provider, profile, values):
        self.data[(provider, profile)] = dict(values)

    def get(self, provider, profile):
        return dict(self.data.get((provider, profile), {}))

    def has(self, provider, profile):
        return (provider, profile) in self.data

    def delete(self, provider, profile):
        return self.data.pop((provider, profile), None) is not None

    def backend_name(self):
        return "in-memory (screenshots)"

    def check_backend(self):
        return None


class _NoKeyring(_MemoryCredentials):
    """What CredentialStore does on a computer where no keyring runs (every call refused)."""

    def backend_name(self):
        return "fail Keyring (keyring.backends.fail.Keyring)"

    def check_backend(self):
        from workbench.core.domain.errors import NoKeyringError
        from workbench.core.providers.keyring_safety import NO_KEYRING_MESSAGE, fix_hint

        raise NoKeyringError(f"{NO_KEYRING_MESSAGE} (selected backend: {self.backend_name()})", hint=fix_hint())

    def set(self, provider, profile, values):
        self.check_backend()

    def get(self, provider, profile):
        self.check_backend()

    def has(self, provider, profile):
        self.check_backend()

    def delete(self, provider, profile):
        self.check_backend()


def one(lang: str, out: Path) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "plugins"))
    os.environ["WORKBENCH_LANG"] = lang
    from workbench.app import make_application

    app = make_application()

    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.shell.main_window import MainWindow
    from workbench.ui.instances.stop_all import StopAllDialog

    store = Store.open()
    creds = _MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(Profile("fake-lab", "fakecloud", "fake-east"))
    creds.set("fakecloud", "fake-lab", {"account": "lab-account", "token": "not-a-real-token"})
    busy = ("import time\nt = time.time()\nwhile time.time() - t < 900:\n    sum(range(200000))\n"
            "    time.sleep(0.02)\n")
    (Path(os.environ["WORKBENCH_HOME"]) / "train.py").write_text(busy)
    execute(acc, choose_offer(acc, parse_spec(
        f"name: bert-finetune\nrun: python3 {Path(os.environ['WORKBENCH_HOME']) / 'train.py'}\n"
        "guards:\n  max_runtime: 30m\n  budget_usd: 5\n"), provider="local"))
    # a multi-node rehearsal on this computer: three nodes (process groups) of one job
    execute(acc, choose_offer(acc, parse_spec(
        f"name: ddp-rehearsal\nnum_nodes: 3\nrun: python3 {Path(os.environ['WORKBENCH_HOME']) / 'train.py'}\n"
        "guards:\n  max_runtime: 30m\n"), provider="local"))
    execute(acc, choose_offer(acc, parse_spec("name: resnet-4xv100\nrun: python train.py\nresources:\n  gpu: V100:4\n"
                                      "guards:\n  max_runtime: 12h\n  budget_usd: 200\n"), provider="fakecloud"))
    execute(acc, choose_offer(acc, parse_spec("name: llm-eval-a100\nrun: python eval.py\nresources:\n  gpu: A100:8\n"
                                      "  spot: true\nguards:\n  max_runtime: 4h\n"), provider="fakecloud"))

    win = MainWindow(acc, refresh_ms=3000)
    win._quitting = True
    win.resize(*SIZE)
    win.show()
    _wait(app, lambda: win.model.rowCount() >= 6)
    _pump(app, 1.5)

    def shot(name: str, widget=None) -> None:
        app.processEvents()
        path = out / f"{name}-{lang}.png"
        (widget or win).grab().save(str(path))
        print(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")

    win.show_view("instances")
    win.instances_view.table.selectRow(0)
    shot("instances")
    win.show_view("launch")
    _pump(app, 0.5)
    shot("launch")

    wiz = win.launch_view.start_wizard(str(ROOT / "resources" / "examples" / "v100-single.yaml"))
    wiz.resize(1000, 660)
    _pump(app, 0.5)
    shot("wizard-1-job", wiz)
    wiz.next()
    _wait(app, lambda: wiz.offer_page.isComplete())
    _pump(app, 0.8)
    shot("wizard-2-offer", wiz)
    wiz.next()
    _pump(app, 0.5)
    shot("wizard-3-guards", wiz)
    wiz.next()
    _pump(app, 0.5)
    shot("wizard-4-review", wiz)
    wiz.reject()
    _pump(app, 0.3)

    # a SkyPilot task opened as it is: how each field was read, then the secret it asks for
    lora = ROOT / "tests" / "fixtures" / "importers" / "skypilot" / "llama-3_1-finetuning" / "lora.yaml"
    wiz = win.launch_view.start_wizard(str(lora))
    wiz.resize(1000, 780)
    _pump(app, 0.5)
    shot("wizard-import-skypilot", wiz)
    wiz.next()
    _wait(app, lambda: wiz.offer_page.isComplete())
    wiz.next()
    wiz.next()
    _pump(app, 0.5)
    shot("wizard-import-review", wiz)
    wiz.reject()
    _pump(app, 0.3)

    # Alibaba Cloud's offers in CNY: the bundled price snapshot (pricing=snapshot asks no server, so the
    # profile's endpoint is a closed local port), for a V100 job limited to that cloud
    acc.save_profile(Profile("aliyun-cn", "alibaba", "cn-shanghai", None, {
        "regions": "cn-shanghai,cn-hangzhou", "pricing": "snapshot", "endpoint": "127.0.0.1:9", "protocol": "http"}))
    creds.set("alibaba", "aliyun-cn", {"access_key_id": "LTAI5tScreenshot0000", "access_key_secret": "not-a-secret"})
    ali_spec = Path(os.environ["WORKBENCH_HOME"]) / "v100-alibaba.yaml"
    ali_spec.write_text("name: bert-v100\nrun: python train.py\nresources:\n  gpu: V100:1\nproviders: [alibaba]\n",
                        encoding="utf-8")
    wiz = win.launch_view.start_wizard(str(ali_spec))
    wiz.resize(1000, 660)
    _pump(app, 0.5)
    wiz.next()
    _wait(app, lambda: wiz.offer_page.isComplete())
    _pump(app, 0.8)
    shot("wizard-alibaba-offer", wiz)
    wiz.reject()
    _pump(app, 0.3)
    acc.delete_profile("aliyun-cn")  # the other screens show only what runs

    # a job on two machines: "Machines: 2", the price of both, the network beside the prices (the test
    # cloud's shapes: 4×V100 on a 10 Gbps network, 8×A100 with RDMA)
    two = Path(os.environ["WORKBENCH_HOME"]) / "ddp-2nodes.yaml"
    two.write_text("name: ddp-2nodes\nnum_nodes: 2\nrun: torchrun --nnodes 2 train.py\nresources:\n  gpu: any:4\n"
                   "guards:\n  max_runtime: 6h\n")
    wiz = win.launch_view.start_wizard(str(two))
    wiz.resize(1200, 660)
    _pump(app, 0.3)
    wiz.next()
    _wait(app, lambda: wiz.offer_page.isComplete())
    _pump(app, 0.8)
    shot("wizard-nodes-offer", wiz)
    wiz.next()
    wiz.next()
    _pump(app, 0.5)
    shot("wizard-nodes-review", wiz)
    wiz.reject()
    _pump(app, 0.3)
    win.show_view("instances")
    view = win.instances_view
    rows = [view.proxy.index(r, 0).data() for r in range(view.proxy.rowCount())]
    view.table.selectRow(next(n for n, text in enumerate(rows) if "└" in text))
    _pump(app, 0.3)
    shot("instances-nodes")
    rows = [view.proxy.index(r, 0).data() for r in range(view.proxy.rowCount())]
    view.table.selectRow(next(n for n, text in enumerate(rows) if text == "bert-finetune"))
    ext = view.extend_selected()
    ext.minutes.setValue(90)
    _pump(app, 0.3)
    shot("extend-dialog", ext)
    ext.reject()

    nodes = sorted((i for i in win.model.instances() if i.name == "ddp-rehearsal"),
                   key=lambda i: i.extra.get("node_rank", 0))
    win.show_monitor(nodes[1])
    _pump(app, 6)
    shot("monitor-nodes")
    win.monitor_view.node_box.setCurrentIndex(0)  # all nodes
    _pump(app, 6)
    shot("monitor-nodes-overview")

    local = next(i for i in win.model.instances() if i.provider == "local" and i.name == "bert-finetune")
    win.show_monitor(local)
    _pump(app, 7)
    shot("monitor")
    win.show_view("spend")
    _wait(app, lambda: win.spend_view.model.rowCount() >= 3)  # the report, not the empty view before it
    _pump(app, 1.0)
    shot("spend")
    win.show_view("accounts")
    _pump(app, 1.5)
    shot("accounts")
    # prices before any account (AWS and Azure have none here: priced from the catalog) and the planner
    prices = win.view("prices")
    win.show_view("prices")
    _wait(app, lambda: prices.compare.result is not None)
    model = prices.compare.model
    catalog = next((n for n in range(model.rowCount()) if model.offer(n).needs_account), None)
    if catalog is not None:
        prices.compare.table.selectRow(catalog)
    _pump(app, 0.8)
    shot("prices-compare")
    prices.planner.currency.setCurrentIndex(prices.planner.currency.findData("CNY"))
    prices.planner.rate.setValue(7.2)
    prices.show_planner()
    _wait(app, lambda: prices.planner.plan is not None and not prices.planner.busy)
    _pump(app, 1.0)
    shot("prices-planner")
    win.show_view("instances")

    box = win.quit_dialog()
    _pump(app, 0.5)
    shot("quit-dialog", box)
    box.close()

    dlg = StopAllDialog.open_for(win.session, win, timeout=30, poll=0.2)
    dlg.resize(860, 520)
    _wait(app, lambda: dlg.state == "confirm")
    _pump(app, 0.5)
    shot("stop-all-confirm", dlg)
    dlg.confirm()
    _wait(app, lambda: dlg.state == "done", 60)
    _pump(app, 0.5)
    shot("stop-all-result", dlg)
    dlg.close()
    _advice_shots(app, win, store, shot)
    _storage_and_recovery(app, win, acc, shot)
    _outcome_shots(app, win, acc, shot)
    _cpu_report_shot(app, win, store, shot)
    _no_keyring_shot(app, store, shot)
    from screenshots_controller import controller_shots  # the account's controller (issue 33)

    controller_shots(app, win, acc, shot, lambda s: _pump(app, s), lambda c: _wait(app, c))
    win.session.shutdown()
    from workbench.core.lifecycle.teardown import teardown

    # Stop all billing leaves this computer's jobs running (they cost nothing): end them before the
    # temporary home they run in is deleted (left alone, their node wrappers outlived this script)
    teardown(acc, None, timeout=30, poll=0.1)
    store.close()
    return 0


def _storage_and_recovery(app, win, acc, shot) -> None:
    """The wizard's storage box and review (the Local spot example), then a spot launch interrupted and relaunched."""
    import json

    from workbench.core import paths
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import choose_offer as plan, execute
    from workbench.core.lifecycle.reconcile import reconcile
    from workbench.core.lifecycle.recovery import RecoveryEngine

    win.show_view("launch")
    wiz = win.launch_view.start_wizard(str(ROOT / "resources" / "examples" / "spot-resume-local.yaml"))
    wiz.resize(1000, 720)
    _pump(app, 0.5)
    shot("wizard-storage-job", wiz)
    wiz.next()
    _wait(app, lambda: wiz.offer_page.isComplete())
    wiz.next()
    wiz.next()
    _pump(app, 1.0)
    shot("wizard-storage-review", wiz)
    wiz.reject()
    _pump(app, 0.3)
    spec = parse_spec("name: llama-spot\nrun: python train.py\nresources:\n  gpu: A100:8\n  spot: true\n"
                      "recovery: {max_restarts: 3, on: [preemption]}\nguards:\n  max_runtime: 8h\n")
    (first,) = execute(acc, plan(acc, spec, provider="fakecloud"))
    prov = acc.provider(acc.profile("fake-lab"))
    with prov._state() as st:  # the test cloud takes the spot machine back
        st["instances"][first.instance_id]["state"] = "terminated"
    (paths.job_dir(first.launch_id) / "interrupted").write_text(json.dumps(
        {"reason": "preemption", "source": "AWS spot instance-action (terminate)", "saved": True}))
    reconcile(acc)
    RecoveryEngine(acc, teardown_poll_s=0.1).poll()
    win.session.refresh()
    win.show_view("instances")
    _wait(app, lambda: any("-a2-" in i.launch_id for i in win.model.instances()))
    _pump(app, 1.0)
    win.instances_view.table.resizeColumnToContents(0)
    shot("instances-attempts")
    win.show_view("spend")
    _pump(app, 2.0)
    win.spend_view.table.resizeColumnToContents(0)
    shot("spend-attempts")


def _advice_shots(app, win, store, shot) -> None:
    """The Monitor's advice cards and the run report, on a synthetic finished run (see
    tests/fixtures/advisor/synthetic): 8 V100s of which 6 idled, a spec that checkpoints."""
    import time as _time

    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "advisor" / "synthetic"))
    import advisor_traces as traces

    trace = traces.idle_six_of_eight(hours=2.0, period=10.0)
    trace = traces.at(trace, _time.time() - trace.duration_s - 600)
    (inst,) = traces.to_store(store, trace, "resnet-8xv100-7f3a", name="resnet-8xv100", spec={
        "name": "resnet-8xv100", "run": "python train.py", "recovery": {"max_restarts": 3}})
    # the run finished (exit 0): recovery has nothing to relaunch (its profile "default" is not in this home)
    store.upsert_instance(dataclasses.replace(store.get_instance(inst.provider, inst.profile, inst.instance_id),
                                              exit_code=0), ts=trace.start + trace.duration_s)
    inst = store.get_instance(inst.provider, inst.profile, inst.instance_id)
    win.show_monitor(inst)
    panel = win.monitor_view.advice
    _wait(app, lambda: len(panel.cards) == 2)
    _wait(app, lambda: win.monitor_view.plots.has_data())
    panel.select("idle_gpus")
    _pump(app, 1.5)
    shot("monitor-advice")
    _report_shot(app, win, inst.launch_id, shot, "run-report")


def _report_shot(app, win, launch_id: str, shot, name: str) -> None:
    """The run report dialog of ``launch_id``, once its report is built."""
    from workbench.ui.monitor.run_report import RunReportDialog

    dlg = RunReportDialog(win.session, launch_id, win)
    dlg.resize(900, 860)
    dlg.show()
    _wait(app, lambda: dlg.report is not None)
    _pump(app, 0.8)
    shot(name, dlg)
    dlg.close()


def _outcome_shots(app, win, acc, shot) -> None:
    """A job that failed (exit 2) on this computer: its state in Instances, the Logs window with the
    outcome and where its outputs are, and the folder's path where no file manager can open it."""
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.ui.common.open_folder import PathDialog

    work = Path(os.environ["WORKBENCH_HOME"]) / "tokenizer-job"
    work.mkdir(exist_ok=True)
    (work / "train.py").write_text(
        "import os\nos.makedirs('checkpoints', exist_ok=True)\n"
        "open('checkpoints/epoch-3.pt', 'w').write('weights')\n"
        "for e in range(1, 4):\n    print(f'epoch {e} loss {1.0 / e:.3f}', flush=True)\n"
        "print('ValueError: the tokenizer vocabulary does not match the checkpoint')\nraise SystemExit(2)\n")
    [inst] = execute(acc, choose_offer(acc, parse_spec(
        f"name: tok-ablation\nrun: python3 train.py\nworkdir: {work}\noutputs: [checkpoints]\n"
        "guards:\n  max_runtime: 30m\n"), provider="local"))
    win.show_view("instances")
    _wait(app, lambda: any(i.launch_id == inst.launch_id and i.exit_code == 2 for i in win.model.instances()), 30)
    win.instances_view.table.clearSelection()  # the state's own colour, not the selection's
    _pump(app, 0.5)
    shot("instances-failed-job")
    ended = next(i for i in win.model.instances() if i.launch_id == inst.launch_id)
    logs = win.show_logs(ended)
    logs.resize(900, 560)
    _wait(app, lambda: logs.outcome.text() != "" and "epoch 3" in logs.text.toPlainText())
    _pump(app, 0.5)
    shot("logs-failed-job", logs)
    path = PathDialog(logs.outputs / "checkpoints", logs)
    path.show()
    _pump(app, 0.3)
    shot("outputs-path", path)
    path.close()
    logs.close()


def _cpu_report_shot(app, win, store, shot) -> None:
    """The run report of a job without a GPU (synthetic samples, like the advice shots): 40 minutes of a
    data-preparation job on this computer, CPU and memory plotted, exit code 0."""
    import math

    from workbench.core.domain.models import HostSample, Instance, InstanceState
    from workbench.core.store.database import LaunchRecord

    t0 = time.time() - 3 * 3600
    store.add_launch(LaunchRecord("tokenize-corpus-c0de", "tokenize-corpus", "local", "local", "local", t0,
                                  status="finished", spec={"name": "tokenize-corpus", "run": "python3 prep.py"}))
    inst = Instance("local", "local", "local-tokenize-corpus-c0de", "tokenize-corpus-c0de", "local", "this-computer",
                    InstanceState.RUNNING, name="tokenize-corpus", launched_at=t0)
    store.upsert_instance(inst, ts=t0)
    store.add_host_samples([HostSample(inst.instance_id, t0 + 30.0 * k, 70 + 22 * math.sin(k / 9.0), 8,
                                       6000.0 + 60.0 * k, 16000.0, 0.0, 0.0, 0.0) for k in range(80)])
    store.upsert_instance(dataclasses.replace(inst, state=InstanceState.TERMINATED, exit_code=0), ts=t0 + 2400.0)
    _report_shot(app, win, inst.launch_id, shot, "run-report-cpu")


def _no_keyring_shot(app, store, shot) -> None:
    """Accounts on a computer where no keyring runs: what to install, in plain words."""
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.ui.shell.main_window import MainWindow

    acc = Accounts(store, entries=discover(), credentials=_NoKeyring())
    win = MainWindow(acc, refresh_ms=60_000)
    win._quitting = True
    win.resize(*SIZE)
    win.show()
    win.show_view("accounts")
    _wait(app, lambda: win.accounts_view.banner_text.isVisible() and win.accounts_view.banner_text.text() != "")
    _pump(app, 0.8)
    shot("accounts-no-keyring", win)
    win.session.shutdown()
    win.close()


def per_language(script: str, one_lang, argv: list[str], announce: bool = False) -> int:
    """The scripts' shared ``main``: ``--one LANG OUT`` takes one language's shots (``one_lang``); otherwise each
    language runs ``script`` again in a fresh process with a throwaway WORKBENCH_HOME."""
    if argv and argv[0] == "--one":
        return one_lang(argv[1], Path(argv[2]))
    out = Path(argv[0] if argv else "docs/screenshots").resolve()
    langs = argv[argv.index("--lang") + 1:] if "--lang" in argv else ["en", "zh_CN"]
    out.mkdir(parents=True, exist_ok=True)
    rc = 0
    for lang in langs:
        if announce:
            print(f"{lang}:")
        with tempfile.TemporaryDirectory(prefix="wb-shots-") as home:
            env = dict(os.environ, WORKBENCH_HOME=home)
            rc |= subprocess.run([sys.executable, script, "--one", lang, str(out)], env=env, cwd=ROOT,
                                 timeout=300).returncode
    return rc


def main(argv: list[str]) -> int:
    return per_language(__file__, one, argv, announce=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
