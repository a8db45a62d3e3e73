"""The GUI over a real sshd: the session starts the remote job and the GPU stream, the monitor plots it.

pytest-qt, offscreen.  The machine is the sshcloud test provider's (the loopback sshd) with the
fake nvidia-smi replaying the A100 ×8 MIG recording.
"""

from __future__ import annotations

import json

import pytest

from workbench.core import paths
from workbench.core.remote.jobs import RemoteJobs

from .helpers import launch, make_spec, quick_options


@pytest.fixture
def gui_session(qtbot, remote):
    from workbench.ui.runtime.session import Session

    s = Session(remote.accounts)
    s.remote = RemoteJobs(remote.accounts, on_event=s.remote_event.emit, options=quick_options(), period_ms=100)
    yield s
    s.shutdown()
    s.remote.stop_all(wait=5)


def test_telemetry_and_the_job_drive_the_monitor_and_logs(qtbot, remote, gui_session, tmp_path):
    from workbench.ui.instances.logs_dialog import LogsDialog
    from workbench.ui.monitor.monitor_view import MonitorView

    remote.server.set_gpu("a100x8_mig", 100)
    spec = make_spec(tmp_path, "echo training; sleep 2; echo saved; exit 0", on_finish="terminate",
                     files={"train.py": "x" * 200_000})
    inst = launch(remote.accounts, spec)
    dlg = LogsDialog(gui_session, inst)  # opened before the upload: it shows the size, then a progress bar
    qtbot.addWidget(dlg)
    progress: list[int] = []
    dlg.progress.valueChanged.connect(progress.append)
    notes: list[tuple[str, str, str]] = []
    gui_session.notify.connect(lambda *a: notes.append(a))
    view = MonitorView(gui_session, poll_ms=200)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(gui_session.snapshot_changed, timeout=10_000):
        gui_session.refresh()  # the snapshot hands the running machine to the remote-jobs manager
    assert inst.launch_id in gui_session.remote.threads and inst.instance_id in gui_session.remote.streams
    view.show_instance(next(i for i in gui_session.snapshot.instances if i.instance_id == inst.instance_id))

    def plotted():
        sets = view.series.get(("sshcloud", "loop", inst.instance_id))
        return sets is not None and {k[0] for k in sets.series} == {"gpu", "mig"} and len(sets.series) == 17

    qtbot.waitUntil(plotted, timeout=15_000)
    qtbot.waitUntil(lambda: view.redraw_count > 0, timeout=5_000)
    assert view.pages.currentIndex() == 1  # plots, not a "waiting" message
    sets = view.series[("sshcloud", "loop", inst.instance_id)]
    ring = sets.series[("gpu", 2, "NVIDIA A100-SXM4-40GB")]
    qtbot.waitUntil(lambda: len(ring.fine()) >= 3, timeout=5_000)  # live: readings keep arriving
    assert float(ring.fine().mem.max()) > 0
    assert sets.series[("mig", 8, "3g.20gb on GPU 1")].mem_total == 19968.0

    assert progress and progress[-1] == 1000 and progress == sorted(progress)
    # the job ends: exit code shown and notified, on_finish terminate tears the machine down
    qtbot.waitUntil(lambda: any(n[0] == "Job finished" for n in notes), timeout=20_000)
    assert ("Job finished", f"{inst.launch_id} finished (exit code 0).", "info") in notes
    qtbot.waitUntil(lambda: "training\nsaved\n" in dlg.text.toPlainText(), timeout=10_000)
    qtbot.waitUntil(lambda: json.loads((paths.job_dir(inst.launch_id) / "remote.json").read_text())["phase"]
                    == "done", timeout=20_000)
    qtbot.waitUntil(lambda: "exit code 0" in dlg.status.text(), timeout=5_000)
    state = json.loads((remote.data_dir / "sshcloud" / "loop.json").read_text())
    assert state["instances"][inst.instance_id]["state"] == "terminated"
    with qtbot.waitSignal(gui_session.snapshot_changed, timeout=10_000):
        gui_session.refresh()
    assert inst.instance_id not in gui_session.remote.streams  # a gone machine is not streamed any more
