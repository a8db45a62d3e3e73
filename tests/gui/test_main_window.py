"""The foundation window in a real QApplication (offscreen): refresh off the UI thread, Stop all billing."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QMessageBox

from workbench.core.accounts import Accounts
from workbench.core.jobspec import parse_spec
from workbench.core.launcher import execute, plan
from workbench.core.store import Store
from workbench.ui.main_window import MainWindow
from workbench.ui.tasks import TaskRunner


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    acc = Accounts(store)
    yield acc
    from workbench.core.teardown import teardown

    teardown(acc, None, timeout=10, poll=0.1)
    store.close()


def test_task_runner_delivers_on_main_thread(qtbot):
    runner = TaskRunner()
    main = threading.get_ident()
    seen = {}

    def work():
        seen["worker"] = threading.get_ident()
        return 42

    task = runner.run(work).then(lambda v: seen.update(value=v, cb=threading.get_ident()))
    qtbot.waitUntil(lambda: "value" in seen, timeout=5000)
    assert seen["value"] == 42 and seen["cb"] == main and seen["worker"] != main
    errors = []
    runner.run(lambda: 1 / 0).fail(errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert isinstance(errors[0], ZeroDivisionError)
    del task
    runner.shutdown()


def test_window_lists_a_running_job_and_stop_all_billing_ends_it(qtbot, accounts, monkeypatch):
    spec = parse_spec("name: gui-job\nrun: sleep 60\nguards:\n  max_runtime: 5m\n")
    execute(accounts, plan(accounts, spec, provider="local"))
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    assert win.model.index(0, 5).data() == "running"
    assert "1 billable" in win.badge.text()
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Yes)
    win.stop_all_action.trigger()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1 and win.model.index(0, 5).data() == "terminated",
                    timeout=20_000)
    qtbot.waitUntil(lambda: "0 billable" in win.badge.text(), timeout=10_000)
    assert not any(i.state.billable for i in accounts.store.list_instances())


def test_stop_all_billing_cancel_changes_nothing(qtbot, accounts, monkeypatch):
    spec = parse_spec("name: keep-me\nrun: sleep 60\nguards:\n  max_runtime: 5m\n")
    execute(accounts, plan(accounts, spec, provider="local"))
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Cancel)
    win.stop_all_action.trigger()
    qtbot.wait(200)
    assert win.stop_all_action.isEnabled()
    assert all(i.state.billable for i in accounts.store.list_instances())


def test_refresh_skips_a_tick_while_running(qtbot, accounts):
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: not win._refreshing, timeout=10_000)
    gate = threading.Event()
    calls = []
    original = accounts.profiles

    def slow_profiles():
        calls.append(1)
        gate.wait(5)
        return original()

    accounts.profiles = slow_profiles  # type: ignore[method-assign]
    win.refresh()
    win.refresh()  # must be skipped: the first is still running
    win.refresh()
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: not win._refreshing, timeout=10_000)
    assert len(calls) == 1


def test_self_test_passes(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-m", "workbench", "--self-test", "--json"], capture_output=True,
                          text=True, env=env, timeout=60)
    import json

    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["ok"], proc.stdout + proc.stderr
    names = {c["name"] for c in result["checks"]}
    assert {"plugin local", "store", "window", "keyring"} <= names


def test_gui_command_opens_the_window(tmp_path):
    import os
    import subprocess
    import sys
    import time

    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "gui"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    log = tmp_path / "logs" / "workbench.log"
    try:
        deadline = time.monotonic() + 30
        while not (log.exists() and "main window shown" in log.read_text()):
            assert proc.poll() is None, "the app exited early"
            assert time.monotonic() < deadline, "the window never appeared"
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(10)
