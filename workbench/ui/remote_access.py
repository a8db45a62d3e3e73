"""Reaching a machine: the SSH command line and a terminal window (no blocking, no shell strings).

The SSH key and known_hosts handling arrive with remote jobs; until then the
command uses the instance's address and its ``extra`` hints (``ssh_user``,
``ssh_port``, ``ssh_key``).  A Local job has no SSH: "Open terminal" opens a
terminal in its working folder instead.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from PySide6.QtCore import QProcess

from ..core import paths
from ..core.errors import NotFoundError
from ..core.models import Instance
from .i18n import tr


def ssh_argv(inst: Instance) -> list[str] | None:
    """``ssh`` arguments for ``inst``, or None when it has no address (or runs on this computer)."""
    if inst.provider == "local" or not inst.host:
        return None
    user = str(inst.extra.get("ssh_user") or "ubuntu")
    argv = ["ssh"]
    if inst.extra.get("ssh_port"):
        argv += ["-p", str(inst.extra["ssh_port"])]
    if inst.extra.get("ssh_key"):
        argv += ["-i", str(inst.extra["ssh_key"])]
    return argv + [f"{user}@{inst.host}"]


def ssh_command(inst: Instance) -> str | None:
    argv = ssh_argv(inst)
    return shlex.join(argv) if argv else None


def local_workdir(inst: Instance) -> Path:
    """Where a Local job runs (its copied workdir), else its job folder."""
    job = paths.job_dir(inst.launch_id)
    return job / "work" if (job / "work").is_dir() else job


def _terminal_argv(command: list[str] | None, cwd: Path) -> list[str]:
    if sys.platform == "darwin":
        if command:
            script = f'tell application "Terminal" to do script "{shlex.join(command)}"'
            return ["osascript", "-e", script]
        return ["open", "-a", "Terminal", str(cwd)]
    if sys.platform == "win32":
        return ["cmd.exe", "/c", "start", "cmd.exe", "/k", *(command or [])]
    for name in filter(None, (os.environ.get("TERMINAL"), "x-terminal-emulator", "gnome-terminal", "konsole",
                              "xfce4-terminal", "xterm")):
        exe = shutil.which(name)
        if exe:
            if not command:
                return [exe]
            return [exe, "--", *command] if name == "gnome-terminal" else [exe, "-e", shlex.join(command)]
    raise NotFoundError(tr("no terminal program found"),
                        hint=tr("install one (for example xterm) or set the TERMINAL environment variable"))


def open_terminal(inst: Instance) -> None:
    """Open a terminal window on ``inst`` (detached; the app does not wait for it)."""
    command = ssh_argv(inst)
    cwd = local_workdir(inst) if inst.provider == "local" else Path.home()
    if command is None and inst.provider != "local":
        raise NotFoundError(tr("{name} has no address yet").format(name=inst.name or inst.instance_id),
                            hint=tr("wait until it is running, then try again"))
    argv = _terminal_argv(command, cwd)
    ok, _pid = QProcess.startDetached(argv[0], argv[1:], str(cwd))
    if not ok:
        raise NotFoundError(tr("could not start {program}").format(program=argv[0]))
