"""The follow's look (supervisor.wait_command) run by a real /bin/sh on a job folder here: it answers when the log
grows or the phase changes, and not before (the remote follow over sshd: tests/remote/test_job.py)."""

from __future__ import annotations

import subprocess
import threading
import time

from workbench.core.remote.supervisor import wait_command


def _look(job, offset, phase, seconds):
    t0 = time.monotonic()
    out = subprocess.run(["sh", "-c", wait_command(str(job), offset, phase, seconds)], capture_output=True, text=True,
                         timeout=30)
    return out.stdout.split(), out.stderr, time.monotonic() - t0


def test_first_look_answers_at_once_and_a_missing_log_is_no_error(tmp_path):
    (tmp_path / "phase").write_text("pull\n")
    words, err, _ = _look(tmp_path, 0, None, 30)  # no phase known yet: no wait at all
    assert words == ["pull"] and err == ""
    words, err, took = _look(tmp_path, 0, "pull", 0.2)  # nothing changes: the whole wait, then the phase
    assert words == ["pull"] and err == "" and took >= 0.2


def test_the_look_ends_when_the_log_grows_or_the_phase_changes(tmp_path):
    (tmp_path / "phase").write_text("run\n")
    (tmp_path / "output.log").write_text("a\n")
    words, _, took = _look(tmp_path, 0, "run", 30)  # more than the app has: at once
    assert words == ["run"] and took < 20

    def later(name, text):
        time.sleep(0.3)
        (tmp_path / name).write_text(text)

    threading.Thread(target=later, args=("output.log", "a\nb\n")).start()
    words, _, took = _look(tmp_path, 2, "run", 30)
    assert words == ["run"] and 0.3 <= took < 20
    (tmp_path / "exit_code").write_text("3\n")
    threading.Thread(target=later, args=("phase", "finished\n")).start()
    words, _, took = _look(tmp_path, 4, "run", 30)
    assert words == ["finished", "3"] and 0.3 <= took < 20


def test_a_phase_file_that_goes_away_ends_the_wait(tmp_path):
    (tmp_path / "phase").write_text("run\n")
    (tmp_path / "output.log").write_text("")

    def gone():
        time.sleep(0.3)
        (tmp_path / "phase").unlink()

    threading.Thread(target=gone).start()
    words, err, took = _look(tmp_path, 0, "run", 30)  # the phase read as "" then: no longer "run"
    assert words == [] and err == "" and 0.3 <= took < 20
