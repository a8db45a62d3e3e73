"""Reaching a machine: the SSH command line and a terminal window (no blocking, no shell strings).

Both use the app's own key and known_hosts (:func:`workbench.core.remote.sshconfig.ssh_argv`):
``-i <data>/ssh/id_ed25519``, ``UserKnownHostsFile=<data>/ssh/known_hosts`` and the
instance's ``HostKeyAlias``, so the user's ssh trusts exactly the host key the app
pinned or recorded, and a changed key is refused there too.  A Local job has no
SSH: "Open terminal" opens a terminal in its working folder instead.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from PySide6.QtCore import QProcess

from workbench.core import paths
from workbench.core.domain.errors import NotFoundError
from workbench.core.domain.models import Instance
from workbench.ui.i18n import tr


def ssh_argv(inst: Instance) -> list[str] | None:
    """``ssh`` arguments for ``inst``, or None when it has no address (or runs on this computer)."""
    if inst.provider == "local" or not inst.host:
        return None
    from workbench.core.remote.sshconfig import ssh_argv as app_ssh_argv

    return app_ssh_argv(inst, paths.data_dir())


def ssh_command(inst: Instance) -> str | None:
    argv = ssh_argv(inst)
    return shlex.join(argv) if argv else None


def local_workdir(inst: Instance) -> Path:
    """Where a Local job runs (its working folder, as the provider reports it), else its job folder."""
    from workbench.core.remote.outputs_folder import outputs_folder

    folder = outputs_folder(inst)
    return folder if folder.is_dir() else paths.job_dir(inst.launch_id)


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
