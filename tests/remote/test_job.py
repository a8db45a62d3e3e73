"""A remote job end to end over the real sshd: upload, supervised run, logs, exit code, on_finish."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from .helpers import Events, job, launch, make_spec, wait_until

from workbench.core import paths
from workbench.core.domain.models import InstanceState
from workbench.core.remote.job import read_state, recorded_exit_code


def _provider_state(remote) -> dict:
    return json.loads((remote.data_dir / "sshcloud" / "loop.json").read_text())


def _wait_past_the_grace(remote, launch_id: str, grace_s: int) -> None:
    """Until the machine's own on_finish.sh says it checked after its grace and went on waiting."""
    waited = _remote_job_dir(remote, launch_id) / "on_finish.waited"

    def past() -> bool:
        try:
            return int(waited.read_text().strip() or -1) >= grace_s
        except (FileNotFoundError, ValueError):
            return False

    try:
        wait_until(past, 45, f"on_finish.sh to wait past its {grace_s} s grace")
    except AssertionError:
        jdir = _remote_job_dir(remote, launch_id)
        seen = {n: (jdir / n).read_text()[-300:] if (jdir / n).exists() else None
                for n in ("on_finish.waited", "on_finish.log", "phase", "exit_code", "hold", "handled")}
        raise AssertionError(f"on_finish.sh never said it waited past its {grace_s} s grace: {seen}") from None


def test_job_prints_and_exits_3_then_terminate_tears_down(remote, tmp_path):
    spec = make_spec(tmp_path, "python3 train.py", setup="echo setting-up > setup-ran.txt",
                     files={"train.py": "import os\nprint('epoch', 1)\nprint('epoch', 2)\n"
                                        "print('lr', os.environ['LR'], 'gpus', os.environ['NPROC_PER_NODE'])\n"
                                        "print(open('setup-ran.txt').read().strip())\n"
                                        "raise SystemExit(3)\n"},
                     env={"LR": "0.001"}, outputs=["setup-ran.txt"])
    inst = launch(remote.accounts, spec)
    events = Events()
    code = job(remote.accounts, inst, spec, events).run()

    assert code == 3
    text = paths.job_log(inst.launch_id).read_text()
    assert text == "epoch 1\nepoch 2\nlr 0.001 gpus 1\nsetting-up\n"
    assert recorded_exit_code(inst.launch_id) == 3
    assert [e.data["exit_code"] for e in events.of("exit")] == [3]
    phases = events.phases()
    for p in ("connecting", "uploading", "starting", "running", "finished", "downloading", "terminating", "done"):
        assert p in phases, (p, phases)
    assert phases.index("uploading") < phases.index("running") < phases.index("terminating")
    # on_finish terminate went through core teardown to the provider, and was verified
    rec = _provider_state(remote)["instances"][inst.instance_id]
    assert rec["state"] == "terminated" and rec["history"] == ["terminated"]
    assert remote.accounts.store.find_launch(inst.launch_id).status in ("terminated", "failed")
    assert all(i.state == InstanceState.TERMINATED for i in remote.accounts.store.list_instances(inst.launch_id))
    # the outputs were downloaded before the teardown
    assert (paths.job_dir(inst.launch_id) / "outputs" / "setup-ran.txt").read_text() == "setting-up\n"
    assert read_state(inst.launch_id)["phase"] == "done"
    assert read_state(inst.launch_id)["exit_code"] == 3


def _remote_job_dir(remote, launch_id: str) -> Path:
    return remote.server.remote_dir / "jobs" / launch_id


def test_disconnect_mid_run_resumes_the_log_without_duplicates(remote, tmp_path):
    # the job prints a numbered line every 20 ms for ~2 s, then exits 0
    spec = make_spec(tmp_path, "for i in $(seq 1 100); do echo line-$i; sleep 0.02; done", on_finish="keep")
    inst = launch(remote.accounts, spec)
    events = Events()
    j = job(remote.accounts, inst, spec, events)
    assert j.launch()
    result: dict = {}
    t = threading.Thread(target=lambda: result.setdefault("code", j.follow()))
    t.start()
    log_file = paths.job_log(inst.launch_id)
    wait_until(lambda: log_file.exists() and log_file.stat().st_size > 50, 15, "the first lines")
    killed = remote.server.kill_sessions()  # the network drops under the app
    assert killed >= 1
    t.join(30)
    assert result["code"] == 0
    assert "reconnecting" in events.phases()
    lines = log_file.read_text().splitlines()
    assert lines == [f"line-{i}" for i in range(1, 101)]  # complete, in order, nothing twice


def test_reattach_does_not_upload_or_start_twice(remote, tmp_path):
    spec = make_spec(tmp_path, "echo once >> ../runs.txt; sleep 0.3; echo done", on_finish="keep",
                     files={"a.txt": "a"})
    inst = launch(remote.accounts, spec)
    assert job(remote.accounts, inst, spec).launch()
    again = Events()  # a second app (or a restarted one) attaches to the same launch
    assert job(remote.accounts, inst, spec, again).run() == 0
    assert "uploading" not in again.phases() and "starting" not in again.phases()
    assert (_remote_job_dir(remote, inst.launch_id) / "runs.txt").read_text() == "once\n"
    assert paths.job_log(inst.launch_id).read_text() == "done\n"


def test_setup_failure_is_the_exit_code_and_run_never_starts(remote, tmp_path):
    spec = make_spec(tmp_path, "echo should-not-run", setup="echo preparing\nfalse\necho not-reached",
                     on_finish="keep")
    inst = launch(remote.accounts, spec)
    assert job(remote.accounts, inst, spec).run() == 1
    text = paths.job_log(inst.launch_id).read_text()
    assert text.startswith("preparing\n") and "setup failed with exit code 1" in text
    assert "should-not-run" not in text and "not-reached" not in text


def test_on_finish_stop_uses_the_provider_stop(remote, tmp_path):
    spec = make_spec(tmp_path, "exit 0", on_finish="stop")
    inst = launch(remote.accounts, spec)
    events = Events()
    assert job(remote.accounts, inst, spec, events).run() == 0
    rec = _provider_state(remote)["instances"][inst.instance_id]
    assert rec["state"] == "stopped" and rec["history"] == ["stopped"]
    assert events.phases()[-2:] == ["stopping", "done"]


def test_on_finish_keep_warns_about_the_bill(remote, tmp_path):
    spec = make_spec(tmp_path, "exit 0", on_finish="keep")
    inst = launch(remote.accounts, spec)
    events = Events()
    assert job(remote.accounts, inst, spec, events).run() == 0
    assert _provider_state(remote)["instances"][inst.instance_id]["state"] == "running"
    (warning,) = [e for e in events.of("warning") if e.phase == "kept"]
    assert "keeps running and billing 3.06 USD/h" in warning.message
    # the machine itself does nothing for keep
    assert not (_remote_job_dir(remote, inst.launch_id) / "self_stopped").exists()


def test_with_the_app_closed_the_machine_applies_on_finish_itself(remote, tmp_path):
    spec = make_spec(tmp_path, "echo bye; exit 5")
    inst = launch(remote.accounts, spec)
    # the app starts the job, then is closed: nobody follows it, nobody tears it down
    assert job(remote.accounts, inst, spec, grace_s=1).launch()
    jdir = _remote_job_dir(remote, inst.launch_id)
    wait_until(lambda: (jdir / "self_stopped").exists(), 20, "the machine's own on_finish")
    assert (jdir / "self_stopped").read_text().strip() == "terminate"
    assert (jdir / "exit_code").read_text().strip() == "5"


@pytest.mark.timeout(120)
def test_the_app_holds_the_machine_while_it_downloads(remote, tmp_path):
    spec = make_spec(tmp_path, "mkdir -p out && echo result > out/r.txt", outputs=["out"])
    inst = launch(remote.accounts, spec)
    j = job(remote.accounts, inst, spec, grace_s=2, apply_on_finish=False)  # the app holds it as it sees the exit
    assert j.run() == 0
    with j._connect(5, "downloading") as conn:
        got = j.download_outputs(conn)
    assert got[0].files == ["out/r.txt"]
    assert (paths.job_dir(inst.launch_id) / "outputs" / "out" / "r.txt").read_text() == "result\n"
    hold = int((_remote_job_dir(remote, inst.launch_id) / "hold").read_text())
    assert hold > time.time() + 600  # the machine's own on_finish waits past this
    _wait_past_the_grace(remote, inst.launch_id, 2)  # only the hold keeps the machine from ending itself
    assert not (_remote_job_dir(remote, inst.launch_id) / "self_stopped").exists()


@pytest.mark.timeout(120)
def test_in_the_app_the_finish_guard_decides_and_keep_running_reaches_the_machine(remote, tmp_path):
    """The GUI leaves terminate/stop to the finish guard (grace + "keep running"); keeping the
    machine also tells the machine's own on_finish to stand down."""
    spec = make_spec(tmp_path, "mkdir -p out && echo result > out/r.txt", outputs=["out"])
    inst = launch(remote.accounts, spec)
    events = Events()
    j = job(remote.accounts, inst, spec, events, grace_s=2, teardown_by_guards=True)
    assert j.run() == 0
    # outputs came home, but the machine was not torn down by the job itself
    assert (paths.job_dir(inst.launch_id) / "outputs" / "out" / "r.txt").read_text() == "result\n"
    assert "terminating" not in events.phases()
    assert _provider_state(remote)["instances"][inst.instance_id]["state"] != "terminated"
    j.keep_machine()
    assert "kept" in events.phases()
    hold = int((_remote_job_dir(remote, inst.launch_id) / "hold").read_text())
    assert hold > time.time() + 365 * 86400
    _wait_past_the_grace(remote, inst.launch_id, 2)  # the hold keeps it from ending itself
    assert not (_remote_job_dir(remote, inst.launch_id) / "self_stopped").exists()


@contextmanager
def _following(remote, spec, poll_s: float):
    """The job launched, then followed on a thread with ``poll_s``: (job, events, result, the app's copy of its log
    as text); the follow stopped at the end."""
    inst = launch(remote.accounts, spec)
    events = Events()
    j = job(remote.accounts, inst, spec, events, poll_s=poll_s)
    assert j.launch()
    result: dict = {}
    t = threading.Thread(target=lambda: result.setdefault("code", j.follow()))
    t.start()
    log_file = paths.job_log(inst.launch_id)
    try:
        yield j, events, result, t, lambda: log_file.read_text() if log_file.exists() else ""
    finally:
        j.stop()
        t.join(10)
        remote.server.end_jobs(inst.launch_id)


def test_a_new_line_shows_while_the_follow_waits_not_a_poll_later(remote, tmp_path):
    # a poll of 60 s: a follow that slept between looks would show "second" a minute after it was written; the look
    # waits on the machine for the log to grow, so it shows within the 20 s this test allows (far less in practice)
    spec = make_spec(tmp_path, "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second; "
                               "while [ ! -f go2 ]; do sleep 0.05; done; echo third", on_finish="keep")
    with _following(remote, spec, poll_s=60) as (j, events, result, t, shown):
        work = _remote_job_dir(remote, j.launch_id) / "work"
        wait_until(lambda: "first" in shown(), 20, "the first line")
        (work / "go").touch()
        wait_until(lambda: "second" in shown(), 20, "the line written after the follow began to wait")
        assert "running" in events.phases()
        (work / "go2").touch()  # and the end (a phase, then the exit code) is seen as soon, too
        t.join(20)
        assert not t.is_alive() and result["code"] == 0
        assert shown() == "first\nsecond\nthird\n"


def test_stop_during_the_follows_wait_ends_it_at_once_and_is_no_drop(remote, tmp_path):
    spec = make_spec(tmp_path, "echo started; sleep 30", on_finish="keep")
    with _following(remote, spec, poll_s=60) as (j, events, result, t, shown):
        wait_until(lambda: "started" in shown(), 20, "the job's line")
        j.stop()  # the follow is inside its look on the machine (up to 60 s)
        t.join(10)
        assert not t.is_alive() and result["code"] is None
        assert "reconnecting" not in events.phases()
        assert read_state(j.launch_id)["phase"] != "reconnecting"
