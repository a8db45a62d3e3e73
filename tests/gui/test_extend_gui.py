"""Instances → "Extend max runtime…": the dialog runs the extension on the worker and reports it (a real Local job);
a refusal stays in the dialog as an inline message; the action is off for a machine that is not running."""

from __future__ import annotations

import threading

import pytest

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


def _launch(accounts, name: str, runtime: str = "10m"):
    spec = parse_spec(f"name: {name}\nrun: sleep 60\nguards:\n  max_runtime: {runtime}\n")
    (inst,) = execute(accounts, choose_offer(accounts, spec, provider="local"))
    return inst


def _window(qtbot, accounts) -> MainWindow:
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    return win


def test_extend_from_the_instances_view_off_the_ui_thread(qtbot, accounts, monkeypatch):
    inst = _launch(accounts, "ext-gui")
    win = _window(qtbot, accounts)
    view = win.instances_view
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 1, timeout=15_000)
    view.table.selectRow(0)
    assert view.extend_action.isEnabled() and view.extend_action in view.row_actions

    import workbench.core.remote.extend as ext

    real, threads = ext.extend_launch, []

    def spy(*a, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*a, **kw)

    monkeypatch.setattr(ext, "extend_launch", spy)
    notes = []
    win.session.notify.connect(lambda title, text, level: notes.append((title, text, level)))
    dlg = view.extend_selected()
    assert dlg is not None and dlg.isVisible()
    dlg.minutes.setValue(90)
    with qtbot.waitSignal(dlg.finished, timeout=20_000):
        dlg.ok.click()
    assert threads == [False]  # ran on a worker, never on the UI thread
    assert dlg.result_value.max_runtime_minutes == 100
    rec = accounts.store.get_launch(inst.launch_id)
    assert rec.spec["guards"]["max_runtime_minutes"] == 100
    assert any(t == "Extended" and "max runtime 100 min" in text and "projected cost" in text
               for t, text, _lvl in notes), notes


def test_a_refusal_stays_in_the_dialog_and_a_stopped_machine_cannot_be_extended(qtbot, accounts):
    inst = _launch(accounts, "ext-refused")
    win = _window(qtbot, accounts)
    view = win.instances_view
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 1, timeout=15_000)
    view.table.selectRow(0)
    dlg = view.extend_selected()
    # the job ends before the user confirms: the core refuses, the dialog says why and stays open
    from workbench.core.lifecycle.teardown import teardown

    assert teardown(accounts, [inst.launch_id], timeout=20, poll=0.05).clean
    dlg.ok.click()
    qtbot.waitUntil(lambda: "not running" in dlg.message.text(), timeout=20_000)
    assert dlg.isVisible() and dlg.ok.isEnabled() and dlg.message.text().startswith("Not extended:")
    dlg.reject()
    win.session.refresh()
    qtbot.waitUntil(lambda: not view.extend_action.isEnabled(), timeout=20_000)
    assert view.extend_selected() is None
