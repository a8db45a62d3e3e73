"""``workbench launch --detach``: the job's start on a cloud machine goes on in a background process.

Without ``--detach``, ``launch`` on a cloud waits for SSH (up to 30 minutes while the machine
boots), uploads the workdir and starts the job before it returns.  With it, ``launch`` returns
once the machines are up and hands those steps to ``workbench start LAUNCH_ID`` started in its
own session (it outlives the terminal), whose output goes to ``<job dir>/start.log`` and whose
pid is in ``<job dir>/start.pid``.  The values of the spec's secrets reach it through a pipe on
its standard input, never a file or its command line.  ``workbench logs ID --follow`` waits for
a starter still at work, then attaches.

Threading: plain blocking calls on the CLI's main thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

from workbench.core import paths

START_LOG = "start.log"
START_PID = "start.pid"


def starter_argv(launch_id: str) -> list[str]:
    """The command that starts ``launch_id``'s job: this same program (a frozen app runs itself)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "start", launch_id, "--secrets-stdin"]
    return [sys.executable, "-m", "workbench", "start", launch_id, "--secrets-stdin"]


def spawn_starter(launch_id: str, secret_env: Mapping[str, str]) -> int:
    """Start ``workbench start LAUNCH_ID`` detached from this process; returns its pid."""
    job = paths.job_dir(launch_id)
    kwargs: dict = {}
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        kwargs["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True  # not ended by the terminal's hang-up or Ctrl-C
    with open(job / START_LOG, "ab") as log:
        proc = subprocess.Popen(starter_argv(launch_id), stdin=subprocess.PIPE, stdout=log,
                                stderr=subprocess.STDOUT, close_fds=True, **kwargs)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(dict(secret_env)).encode())
    proc.stdin.close()
    (job / START_PID).write_text(f"{proc.pid}\n", encoding="utf-8")
    proc.returncode = 0  # not ours to wait for: it goes on after this process has ended
    return proc.pid


def read_secrets(stream) -> dict[str, str]:
    """The secrets a detaching ``launch`` piped in (a JSON object; empty input: none)."""
    text = stream.read()
    if not text.strip():
        return {}
    data = json.loads(text)
    return {str(k): str(v) for k, v in data.items()}


def starter_pid(launch_id: str) -> int | None:
    """The pid of ``launch_id``'s starter while it runs, else None."""
    import psutil

    try:
        pid = int((paths.job_dir(launch_id) / START_PID).read_text(encoding="utf-8").strip())
        proc = psutil.Process(pid)
        alive = proc.status() != psutil.STATUS_ZOMBIE and launch_id in proc.cmdline()
    except (OSError, ValueError, psutil.Error):
        return None
    return pid if alive else None


def wait_for_starter(launch_id: str, say: Callable[[str], None], poll_s: float = 0.5) -> None:
    """Until a background starter of ``launch_id`` has ended, saying each phase it reports once."""
    from workbench.core.remote.job import read_state

    shown = ""
    while starter_pid(launch_id) is not None:
        phase = str(read_state(launch_id).get("phase", ""))
        if phase and phase != shown:
            shown = phase
            say(f"[{phase}] the job is being started in the background (log: {start_log(launch_id)})")
        time.sleep(poll_s)


def start_log(launch_id: str) -> Path:
    return paths.job_dir(launch_id) / START_LOG
