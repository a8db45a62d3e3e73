"""The main window in a real QApplication (offscreen): views, badge, row actions, settings, quit guard."""

from __future__ import annotations

import threading

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMessageBox, QPushButton

from workbench.core.domain.errors import AuthError, CapacityError, QuotaError, TransientError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.ui.shell.main_window import VIEWS, MainWindow
from workbench.ui.runtime.session import Session, Snapshot
from workbench.ui.runtime.tasks import TaskRunner

SLEEPER = "name: {name}\nrun: sleep 60\nguards:\n  max_runtime: 5m\n"


def _launch(accounts, name="gui-job"):
    return execute(accounts, choose_offer(accounts, parse_spec(SLEEPER.format(name=name)), provider="local"))


def _window(qtbot, accounts, **kw):
    win = MainWindow(accounts, refresh_ms=60_000, **kw)
    qtbot.addWidget(win)
    win._quitting = True  # closing at teardown must not open the quit dialog
    return win


def _button(box: QMessageBox, name: str) -> QPushButton:
    return next(b for b in box.buttons() if b.objectName() == name or b.text().replace("&", "") == name)


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


def test_task_runner_survives_thousands_of_deliveries(qtbot):
    """PySide6 6.12.0 aborted after a few thousand slot calls ("deallocating None"); we pin below it."""
    runner = TaskRunner()
    got = []
    for _ in range(3000):
        runner.run(lambda: None).then(got.append)
    qtbot.waitUntil(lambda: len(got) == 3000, timeout=20_000)
    runner.shutdown()


def test_window_lists_a_running_job_with_badge_and_guards(qtbot, accounts):
    _launch(accounts)
    win = _window(qtbot, accounts)
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    assert win.model.index(0, 5).data() == "running"
    assert win.model.index(0, 9).data().startswith("stops in")  # 5 min max runtime counts down
    # a free job on this computer is running, not billing: the badge counts money
    assert win.badge.text() == "Nothing billing · $0.00 today · 1 running here"
    assert "#2e7d32" in win.badge.styleSheet()
    assert win.model.index(0, 5).data(Qt.ItemDataRole.ForegroundRole) is None  # not the red "billing" state
    assert win.instances_view.table.isVisible() and not win.instances_view.empty.isVisible()


def _fake_machine(accounts, name="cloud-job"):
    accounts.add_fake("cloud")
    return execute(accounts, choose_offer(accounts, parse_spec(f"name: {name}\nrun: x\nresources:\n  gpu: V100:1\n"),
                                  profile="cloud"))[0]


def test_the_badge_counts_money_and_names_what_cannot_be_checked(qtbot, fake_accounts):
    from workbench.core.domain.models import Profile

    _fake_machine(fake_accounts)
    win = _window(qtbot, fake_accounts)
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    assert win.badge.text().startswith("1 billing · $3.06/h · ") and "#c62828" in win.badge.styleSheet()
    assert win.model.index(0, 5).data(Qt.ItemDataRole.ForegroundRole) is not None  # red: it costs money
    # a profile where nothing was launched, that cannot be listed: named, not "may still be billing"
    fake_accounts.save_profile(Profile("nocreds", "fakecloud", "fake-east"))
    win.refresh()
    qtbot.waitUntil(lambda: "cannot check nocreds" in win.statusBar().currentMessage(), timeout=10_000)
    assert "may still be billing" not in win.statusBar().currentMessage()
    assert "cannot check" not in win.badge.text()
    # the profile of our machine stops answering: now it may still be billing (amber once nothing else bills)
    fake_accounts.credentials.delete("fakecloud", "cloud")
    fake_accounts.forget("cloud")
    win.refresh()
    qtbot.waitUntil(lambda: "cannot check 1" in win.badge.text(), timeout=10_000)
    assert "cannot check cloud" in win.badge.toolTip() and "may still be billing" in win.badge.toolTip()


def test_every_action_has_a_shortcut_and_views_switch_by_keyboard(qtbot, accounts):
    win = _window(qtbot, accounts)
    win.show()
    v = win.instances_view
    for a in (win.new_launch_action, win.open_spec_action, win.refresh_action, win.stop_all_action,
              win.quit_action, *win.view_actions, *v.row_actions):
        assert not a.shortcut().isEmpty(), a.text()
    shortcuts = [a.shortcut().toString() for a in win.findChildren(type(win.quit_action)) if not a.shortcut().isEmpty()]
    assert len(shortcuts) == len(set(shortcuts)), "two actions share a shortcut"
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=5000)
    for n, (key, _label, _icon) in enumerate(VIEWS, start=1):
        qtbot.keyClick(win.nav, str(n), Qt.KeyboardModifier.ControlModifier)
        assert win.current_view() == key


def test_views_are_built_when_first_shown(qtbot, accounts):
    win = _window(qtbot, accounts)
    assert set(win.views) == {"instances"}
    win.show_view("monitor")
    assert set(win.views) == {"instances", "monitor"} and win.stack.currentWidget() is win.monitor_view
    assert win.views["monitor"] is win.monitor_view  # built once
    win.show_view("instances")
    assert win.stack.currentWidget() is win.instances_view
    assert win.stack.count() == len(VIEWS)


def test_layout_and_last_view_persist(qtbot, accounts):
    win = _window(qtbot, accounts)
    win.show()
    win.show_view("spend")  # built on first show: its minimum width counts from then on
    win.resize(win.minimumSizeHint().width(), 480)  # the offscreen screen is only 800 px wide
    size = win.size()
    header = win.instances_view.table.horizontalHeader()
    header.resizeSection(0, 321)
    header.moveSection(2, 0)
    win.close()
    again = _window(qtbot, accounts)
    again.show()
    assert again.current_view() == "spend"
    assert again.size() == size
    h2 = again.instances_view.table.horizontalHeader()
    assert h2.sectionSize(0) == 321 and h2.logicalIndex(0) == 2


def test_filter_and_sort(qtbot, accounts):
    _launch(accounts, "alpha-job")
    _launch(accounts, "beta-job")
    win = _window(qtbot, accounts)
    qtbot.waitUntil(lambda: win.model.rowCount() == 2, timeout=10_000)
    view = win.instances_view
    view.filter.setText("beta")
    assert view.proxy.rowCount() == 1 and view.proxy.index(0, 0).data() == "beta-job"
    view.filter.setText("")
    view.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    assert [view.proxy.index(r, 0).data() for r in range(2)] == ["beta-job", "alpha-job"]
    view.billable_only.setChecked(True)
    assert view.proxy.rowCount() == 2


def test_terminate_names_the_machine_and_its_price_then_ends_it(qtbot, accounts):
    [inst] = _launch(accounts, "doomed")
    pid = int(inst.instance_id.split("-")[0]) if inst.instance_id.split("-")[0].isdigit() else None
    win = _window(qtbot, accounts)
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    view = win.instances_view
    view.table.selectRow(0)
    assert view.terminate_action.isEnabled()
    box = view.terminate_selected()
    assert "doomed" in box.informativeText() and "$0.00/h" in box.informativeText()
    _button(box, "Terminate").click()
    qtbot.waitUntil(lambda: not any(i.state.billable for i in accounts.store.list_instances()), timeout=20_000)
    if pid is not None:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_terminate_cancel_keeps_it(qtbot, accounts):
    _launch(accounts, "keep-me")
    win = _window(qtbot, accounts)
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    view = win.instances_view
    view.table.selectRow(0)
    notes = []
    win.session.notify.connect(lambda title, *_: notes.append(title))
    box = view.terminate_selected()
    box.button(QMessageBox.StandardButton.Cancel).click()
    # a Terminate click starts the teardown at once (the "Terminating" note, the action disabled);
    # Cancel closed the box and did neither
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=5_000)
    assert "Terminating" not in notes and view.terminate_action.isEnabled()
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=10_000)
    with qtbot.waitSignal(win.session.snapshot_changed, timeout=10_000):  # a refresh after Cancel: still there
        win.refresh()
    assert win.model.rowCount() == 1 and all(i.state.billable for i in accounts.store.list_instances())


def test_logs_dialog_shows_the_jobs_output(qtbot, accounts):
    spec = parse_spec("name: talky\nrun: echo hello-from-the-job; sleep 30\nguards:\n  max_runtime: 5m\n")
    [inst] = execute(accounts, choose_offer(accounts, spec, provider="local"))
    win = _window(qtbot, accounts)
    dlg = win.show_logs(inst)
    qtbot.waitUntil(lambda: "hello-from-the-job" in dlg.text.toPlainText(), timeout=10_000)
    assert win.show_logs(inst) is dlg  # one dialog per launch


@pytest.mark.parametrize("exc", [
    AuthError("the access key id does not exist", hint="check the key in Accounts"),
    QuotaError("quota for P instances is 0 vCPUs", hint="request a quota increase"),
    CapacityError("no capacity for p3.2xlarge in us-east-1a", hint="try another region"),
    TransientError("rate exceeded", hint="the app retries by itself"),
])
def test_errors_show_message_and_hint_never_a_traceback(qtbot, exc):
    from workbench.ui.common.dialogs import show_error

    box = show_error(None, exc)
    qtbot.addWidget(box)
    assert exc.message in box.informativeText() and exc.hint in box.informativeText()
    assert "Traceback" not in box.detailedText() and "Traceback" not in box.informativeText()
    assert any(b.text().replace("&", "") == "Open log file" for b in box.buttons())
    box.close()


def test_refresh_backs_off_on_transient_errors_and_recovers(qtbot, accounts):
    s = Session(accounts)
    outcomes = [TransientError("throttled"), TransientError("throttled"), None]

    def fake(_acc):
        o = outcomes.pop(0)
        if o is not None:
            raise o
        return Snapshot(taken_at=1.0)

    s._snapshot_fn = fake
    s.interval_ms = 1000
    s.timer.start(1000)
    s.refresh()
    qtbot.waitUntil(lambda: not s.refreshing, timeout=5000)
    assert s.timer.interval() == 2000
    s.refresh()
    qtbot.waitUntil(lambda: not s.refreshing, timeout=5000)
    assert s.timer.interval() == 4000
    s.refresh()
    qtbot.waitUntil(lambda: not s.refreshing, timeout=5000)
    assert s.timer.interval() == 1000 and s.snapshot.taken_at == 1.0
    s.shutdown()


def test_refresh_skips_a_tick_while_running(qtbot, accounts):
    win = _window(qtbot, accounts)
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=10_000)
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
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=10_000)
    assert len(calls) == 1


def test_quit_with_only_free_local_jobs_does_not_ask(qtbot, accounts):
    _launch(accounts, "training-here")
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    win.close()
    assert not win.isVisible() and win.findChild(QMessageBox, "quit-dialog") is None
    assert any(i.state.billable for i in accounts.store.list_instances())  # the job goes on


def test_quit_with_billable_machines_asks_cancel_and_keep(qtbot, fake_accounts):
    accounts = fake_accounts
    _fake_machine(accounts, "still-running")
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    win.close()
    box = win.findChild(QMessageBox, "quit-dialog")
    assert box is not None and win.isVisible()
    assert "guards" in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=5_000)  # answered: the window stays
    assert win.isVisible()
    win.close()
    box = [b for b in win.findChildren(QMessageBox, "quit-dialog") if b.isVisible()][0]
    _button(box, "quit-keep").click()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=5000)
    assert any(i.state.billable for i in accounts.store.list_instances())  # kept running, as asked


def test_quit_tear_everything_down_ends_the_machines_then_closes(qtbot, fake_accounts):
    accounts = fake_accounts
    _fake_machine(accounts, "to-be-ended")
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    win.close()
    box = win.findChild(QMessageBox, "quit-dialog")
    _button(box, "quit-teardown").click()
    from workbench.ui.instances.stop_all import StopAllDialog

    qtbot.waitUntil(lambda: win.findChild(StopAllDialog) is not None, timeout=5000)
    dlg = win.findChild(StopAllDialog)
    dlg.confirm()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=30_000)
    assert not any(i.state.billable for i in accounts.store.list_instances())


def test_quit_tear_down_with_an_unusable_profile_quits_once_the_result_was_seen(qtbot, fake_accounts):
    from workbench.core.domain.models import Profile
    from workbench.ui.instances.stop_all import StopAllDialog

    accounts = fake_accounts
    _fake_machine(accounts, "to-be-ended")
    accounts.save_profile(Profile("nocreds", "fakecloud", "fake-east"))  # unusable; nothing launched there
    notes: list[tuple] = []
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win.session.notify.connect(lambda *a: notes.append(a))
    win.show()
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    win.close()
    box = win.findChild(QMessageBox, "quit-dialog")
    assert "may still be billing" not in box.informativeText()
    _button(box, "quit-teardown").click()
    qtbot.waitUntil(lambda: win.findChild(StopAllDialog) is not None, timeout=5000)
    dlg = win.findChild(StopAllDialog)
    qtbot.waitUntil(lambda: dlg.state == "confirm", timeout=10_000)
    dlg.confirm()
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=30_000)
    assert dlg.result.text() == "0 billable resources remain" and win.isVisible()  # shown, not hidden by a quit
    assert notes[-1][0] == "Billing stopped" and notes[-1][2] == "info"  # no red "Still billing"
    assert dlg.close_button.text() == "&Quit"
    qtbot.mouseClick(dlg.close_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=10_000)


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


def test_event_loop_keeps_turning_while_a_slow_provider_refreshes(qtbot, fake_accounts, gaps):
    """Every call of this provider sleeps 2 s; the 10 ms timer must keep ticking meanwhile."""
    fake_accounts.add_fake("slow", delay="2")
    win = MainWindow(fake_accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    win.show()
    gaps.start()
    qtbot.waitUntil(lambda: win.session.snapshot.taken_at > 0, timeout=20_000)
    win.refresh()
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=20_000)
    largest = gaps.stop()
    print(f"largest event-loop gap during slow refreshes: {largest * 1000:.1f} ms")
    assert largest < gaps.limit(2.0)


def test_a_finished_job_is_announced(qtbot, accounts):
    spec = parse_spec("name: quick\nrun: sleep 1; exit 3\nguards:\n  max_runtime: 5m\n")
    execute(accounts, choose_offer(accounts, spec, provider="local"))
    s = Session(accounts)
    seen = []
    s.notify.connect(lambda title, msg, level: seen.append((title, msg, level)))
    s.refresh()
    qtbot.waitUntil(lambda: s.snapshot.taken_at > 0, timeout=10_000)
    assert s.snapshot.instances[0].state.active

    def finished():
        if not s.refreshing:
            s.refresh()
        return any(t == "Job failed" for t, _, _ in seen)

    qtbot.waitUntil(finished, timeout=15_000)
    assert ("Job failed", "quick failed with exit code 3.", "warning") in seen
    assert not any(t == "Job finished" for t, _, _ in seen)  # one notification, the right one
    # the state reads what became of the job, in its own colour and icon
    from workbench.ui.instances.instances_model import InstancesModel

    model = InstancesModel()
    model.set_snapshot(s.snapshot)
    idx = model.index(0, 5)
    assert idx.data() == "failed · exit 3"
    assert idx.data(Qt.ItemDataRole.ForegroundRole).color().name() in ("#c62828", "#ff8a65")
    assert not idx.data(Qt.ItemDataRole.DecorationRole).isNull()
    s.shutdown()


def test_dark_and_light_follow_the_setting_and_recolour_icons(qtbot, accounts):
    from PySide6.QtCore import QSize

    from workbench.ui.common import theme
    def brightest(action) -> int:
        img = action.icon().pixmap(QSize(24, 24)).toImage()
        return max(img.pixelColor(x, y).lightness() for x in range(24) for y in range(24)
                   if img.pixelColor(x, y).alpha() > 200)

    win = _window(qtbot, accounts)
    try:
        theme.apply("dark")
        assert theme.is_dark()
        qtbot.waitUntil(lambda: brightest(win.refresh_action) > 180, timeout=3000)  # light strokes on dark
        theme.apply("light")
        assert not theme.is_dark()
        qtbot.waitUntil(lambda: brightest(win.refresh_action) < 100, timeout=3000)
    finally:
        theme.apply("light")


def test_a_profile_needing_an_mfa_code_asks_for_it_and_recovers(qtbot, fake_accounts):
    """kind "mfa_required" → a masked prompt (opened without a nested event loop); a wrong code asks again with the reason;
    the right code reaches the provider in memory and the next refresh succeeds."""
    fake_accounts.add_fake("mfa", mfa_code="123456")
    win = _window(qtbot, fake_accounts)
    win.show()
    qtbot.waitUntil(lambda: "mfa" in win.mfa.open, timeout=15_000)
    box = win.mfa.open["mfa"]
    assert box.textEchoMode() == QLineEdit.EchoMode.Password and box.isVisible()
    box.setTextValue("000000")
    box.accept()
    qtbot.waitUntil(lambda: "mfa" in win.mfa.open, timeout=15_000)
    again = win.mfa.open["mfa"]
    assert "not accepted" in again.labelText()
    again.setTextValue("123456")
    again.accept()
    qtbot.waitUntil(lambda: win.session.snapshot.taken_at > 0 and not win.session.snapshot.errors
                    and not win.session.refreshing, timeout=15_000)
    assert "mfa" not in win.mfa.open
    win.session.refresh()
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=15_000)
    assert not win.session.snapshot.errors and "mfa" not in win.mfa.open


def test_cancelling_the_mfa_prompt_does_not_ask_again_every_refresh(qtbot, fake_accounts):
    fake_accounts.add_fake("mfa", mfa_code="123456")
    win = _window(qtbot, fake_accounts)
    qtbot.waitUntil(lambda: "mfa" in win.mfa.open, timeout=15_000)
    win.mfa.open["mfa"].reject()
    win.session.refresh()
    qtbot.waitUntil(lambda: not win.session.refreshing and bool(win.session.snapshot.errors), timeout=15_000)
    assert "mfa" not in win.mfa.open and "mfa" in win.mfa.declined


def test_views_modules_are_preloaded_off_the_ui_thread():
    """In a fresh interpreter: the window's module does not import the lazy views; the preload does,
    on a thread that is not the main one."""
    import subprocess
    import sys

    code = """
import sys, threading
import workbench.ui.shell.main_window as mw
lazy = [m for m, _ in mw.LAZY_VIEWS.values()]
assert not any(m in sys.modules for m in lazy), [m for m in lazy if m in sys.modules]
seen = []
real = mw.importlib.import_module
mw.importlib.import_module = lambda *a: (seen.append(threading.current_thread().name), real(*a))[1]
mw.preload_views().join(timeout=60)
assert all(m in sys.modules for m in lazy)
assert seen and set(seen) == {'preload-views'}, seen
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_stop_deallocates_after_a_confirmation_and_local_jobs_cannot_be_stopped(qtbot, fake_accounts):
    from workbench.core.domain.models import InstanceState

    fake_accounts.add_fake("fk")
    spec = parse_spec("name: pausable\nrun: x\nresources:\n  gpu: V100:1\n")
    [inst] = execute(fake_accounts, choose_offer(fake_accounts, spec, profile="fk"))
    win = _window(qtbot, fake_accounts)
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    view = win.instances_view
    view.table.selectRow(0)
    assert view.stop_action.isEnabled()
    box = view.stop_selected()
    assert "pausable" in box.informativeText() and "disks are kept" in box.informativeText()
    _button(box, "Stop").click()
    qtbot.waitUntil(lambda: any(i.state == InstanceState.STOPPED for i in fake_accounts.store.list_instances()),
                    timeout=20_000)
    from workbench.ui.instances.instances_view import provider_can_stop
    assert not provider_can_stop("local") and provider_can_stop("fakecloud")
