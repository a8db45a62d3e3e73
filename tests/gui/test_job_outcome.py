"""What became of a job and where its outputs are: the Logs window, Instances ▸ Open outputs, Open folder
without a file manager (the path and a Copy button).  Real Local jobs in a real QApplication (offscreen)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices, QGuiApplication

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.lifecycle.teardown import teardown
from workbench.ui.common.open_folder import PathDialog
from workbench.ui.instances.logs_dialog import LogsDialog


def _run(accounts, run: str, name: str = "job"):
    spec = parse_spec(f"name: {name}\nrun: {run!r}\nguards:\n  max_runtime: 5m\n")
    return execute(accounts, choose_offer(accounts, spec, provider="local"))[0]


def _ended(session, inst):
    def done():
        if not session.refreshing:
            session.refresh()
        got = [i for i in session.snapshot.instances if i.instance_id == inst.instance_id]
        return bool(got) and not got[0].state.active
    return done


def test_the_logs_window_says_failed_with_its_exit_code_and_where_the_outputs_are(qtbot, session, monkeypatch):
    inst = _run(session.accounts, "mkdir -p out; echo weights > out/model.txt; echo training; exit 2")
    qtbot.waitUntil(_ended(session, inst), timeout=20_000)
    dlg = LogsDialog(session, inst)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitUntil(lambda: dlg.outcome.text() == "failed · exit 2", timeout=10_000)
    assert "#c62828" in dlg.outcome.styleSheet()
    qtbot.waitUntil(lambda: "training" in dlg.text.toPlainText(), timeout=10_000)
    assert (dlg.outputs / "out" / "model.txt").read_text() == "weights\n"  # the job's files are where it says
    assert str(dlg.outputs) in dlg.outputs_label.text()
    copy = dlg.findChild(type(dlg.download_btn), "log-copy-outputs")
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == str(dlg.outputs)
    # no file manager on this desktop: Open outputs shows the path, with a Copy button
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    qtbot.mouseClick(dlg.findChild(type(copy), "log-open-outputs"), Qt.MouseButton.LeftButton)
    shown = dlg.findChild(PathDialog)
    assert shown is not None and shown.isVisible() and shown.path.text() == str(dlg.outputs)
    QGuiApplication.clipboard().setText("")
    qtbot.mouseClick(shown.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == str(dlg.outputs)


def test_finished_and_stopped_by_you_read_so(qtbot, session):
    ok = _run(session.accounts, "echo done", "good")
    qtbot.waitUntil(_ended(session, ok), timeout=20_000)
    dlg = LogsDialog(session, ok)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.outcome.text() == "finished · exit 0", timeout=10_000)
    assert "#2e7d32" in dlg.outcome.styleSheet()

    long = _run(session.accounts, "sleep 120", "long")
    running = LogsDialog(session, long)
    qtbot.addWidget(running)
    qtbot.waitUntil(lambda: running.outcome.text() == "The job is running.", timeout=10_000)
    assert teardown(session.accounts, [long.launch_id], timeout=20, poll=0.1).clean
    qtbot.waitUntil(lambda: running.outcome.text() == "stopped by you", timeout=10_000)


def test_instances_open_outputs_opens_the_jobs_folder(qtbot, session, monkeypatch):
    from workbench.ui.instances.instances_view import InstancesView

    inst = _run(session.accounts, "echo hi > result.txt")
    qtbot.waitUntil(_ended(session, inst), timeout=20_000)
    view = InstancesView(session)
    qtbot.addWidget(view)
    view.set_snapshot(session.snapshot)
    view.table.selectRow(0)
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    assert view.outputs_action.isEnabled()
    view.outputs_action.trigger()
    assert len(opened) == 1 and opened[0].endswith(f"local/{inst.launch_id}/work")
    from pathlib import Path

    assert (Path(opened[0]) / "result.txt").read_text() == "hi\n"
