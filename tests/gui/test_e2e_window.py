"""A researcher's whole path through the real main window, without a terminal.

Quick example → offer and projected cost → Launch → the row turns Running →
the monitor gets samples → Stop all billing ends the real process and says
"0 billable resources remain" — all in one window, driven by clicks.
"""

from __future__ import annotations

import psutil
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.domain.models import InstanceState, Profile
from workbench.ui.shell.main_window import MainWindow
from workbench.ui.instances.stop_all import StopAllDialog

FINISH = QWizard.WizardButton.FinishButton


def _job_processes(home: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["environ", "status"]):
        try:
            env = p.info["environ"] or {}
        except (psutil.Error, OSError):
            continue
        if env.get("WORKBENCH_HOME") == home and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def test_launch_watch_and_stop_a_job_from_the_window(qtbot, accounts, home):
    accounts.save_profile(Profile("local", "local", "local", settings={"price_per_hour": "0.36"}))
    win = MainWindow(accounts, refresh_ms=1000)
    qtbot.addWidget(win)
    win._quitting = True
    win.show()

    # 1. Launch view → quick example; make it train longer than the smoke default
    win.show_view("launch")
    qtbot.mouseClick(win.launch_view.quick_button, Qt.MouseButton.LeftButton)
    wiz = win.launch_view.wizard
    wiz.job_page.command_edit.setPlainText("EPOCHS=240 SLEEP_SECONDS=0.25 python3 train.py")
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    chosen = wiz.offer_page.selected()
    assert chosen is not None and chosen.offer.instance_type == "this-computer"
    wiz.next()
    wiz.next()
    assert wiz.review_page.cost.text().startswith("$0.06 if it runs the full 10 min")
    with qtbot.waitSignal(win.launch_view.launched, timeout=15_000) as launched:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id = launched.args[0]

    # 2. back on Instances, the row appears and is Running
    assert win.current_view() == "instances"
    qtbot.waitUntil(lambda: any(i.launch_id == launch_id and i.state == InstanceState.RUNNING
                                for i in win.model.instances()), timeout=10_000)
    inst = next(i for i in win.model.instances() if i.launch_id == launch_id)
    assert _job_processes(str(home)), "the job is not running on this computer"

    # 3. Monitor: select the row, Ctrl+M-equivalent action, samples arrive
    row = next(r for r in range(win.instances_view.proxy.rowCount())
               if win.instances_view.proxy.index(r, 0).data() == inst.name)
    win.instances_view.table.selectRow(row)
    win.instances_view.monitor_action.trigger()
    assert win.current_view() == "monitor"
    qtbot.waitUntil(win.monitor_view.plots.has_data, timeout=15_000)

    # 4. Stop all billing: confirm lists the job with its $/h, then verified
    win.stop_all_action.trigger()
    dlg = win.findChild(StopAllDialog)
    qtbot.waitUntil(lambda: dlg.state == "confirm", timeout=10_000)
    [item] = dlg.model.items()  # a job on this computer with a price: stopped with the money (a free one is apart)
    assert item.instance_id == inst.instance_id and dlg.local_box.boxes == []
    assert dlg.heading.text() == "Stop 1 billable thing(s), $0.36/h in total?"
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=30_000)
    assert dlg.result.text() == "0 billable resources remain"
    assert _job_processes(str(home)) == []
    qtbot.waitUntil(lambda: "Nothing billing" in win.badge.text(), timeout=10_000)
    assert not any(i.state.billable for i in accounts.store.list_instances())
