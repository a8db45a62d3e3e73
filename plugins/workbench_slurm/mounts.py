"""Storage mounts on a Slurm cluster: rclone checked on the login node, the storage agent once per batch job.

The SSH runner installs the storage agent as on a cloud machine (:mod:`workbench.core.remote.storage`: the agent, its
config, the mounts' short-lived credentials in a 0600 file in the job folder) and wraps the spec's ``setup`` and
``run`` around it.  On a cluster that wrapping is moved (:func:`render`): the agent runs once, on the batch job's first
node (where Slurm runs the batch script), around the whole allocation —

* ``setup.sh`` (``supervise.sh`` runs it once): ``prepare``, every ``copy`` mount into its folder;
* ``run.sh``: ``run`` around ``spread.sh`` (the ``srun`` of ``node.sh`` on every node): each ``sync`` mount saved every
  ``interval`` and once more after the last node ended, or when Slurm ends the job (time limit, ``scancel``: SIGTERM,
  then Slurm's ``KillWait`` before SIGKILL);
* ``node_setup.sh`` / ``node_run.sh``: the spec's own setup and run, on every node.

The job folder and its ``work`` folder are on the file system the nodes share (the login node's home), so one copy
serves every node, and the files every node writes into a ``sync`` mount are in the one folder the agent saves.

On the cluster the agent uses the rclone found on the login node at launch (:func:`check_tools`; the compute nodes
run the login node's software: the job inherits its PATH), never installs one (no ``sudo`` on a cluster), and deletes
the credentials file when ``run`` ends (the job folder outlives the job).  The batch script deletes it too when the
job ends however it ends (:mod:`.batch`), and ``terminate`` when a queued job is cancelled before it ran.

Pure text functions, plus :func:`check_tools` and :func:`cluster_config`, which block on the network.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import shlex
from typing import Any

from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import JobSpec
from workbench.core.storage.machine import AGENT_NAME, CONFIG_NAME, CREDENTIALS_NAME, wrapped_commands

#: the profile setting naming the rclone to use (a path, ``~/…``, or a command name on the login node's PATH)
RCLONE_SETTING = "rclone"
PYTHON = "python3"  # the interpreter storage.install names for the agent
PID_FILE = "storage.pid"  # the agent's process id on the batch node (the batch script waits for its last save)
SPREAD = "spread.sh"


def _shell_path(value: str) -> str:
    """``value`` for a shell command, with a leading ``~/`` as the home folder."""
    if value == "~" or value.startswith("~/"):
        return '"$HOME"' + (shlex.quote(value[1:]) if len(value) > 1 else "")
    return shlex.quote(value)


def tools_command(rclone: str | None) -> str:
    return (f"r=$(command -v {_shell_path(rclone or 'rclone')} 2>/dev/null); echo \"rclone=$r\"; "
            f"[ -n \"$r\" ] && \"$r\" version 2>/dev/null | head -n 1; "
            f"echo \"python3=$(command -v {PYTHON} 2>/dev/null)\"")


def check_tools(login: Any, profile: str, host: str, rclone: str | None) -> str:
    """The absolute path of the rclone the batch job will use (the profile's ``rclone`` setting, else ``rclone`` on
    the login node's PATH); ConfigError naming what to install or set when there is none, or no python3."""
    res = login.run(tools_command(rclone), timeout=30)
    found = dict(line.split("=", 1) for line in res.out.splitlines() if line.startswith(("rclone=", "python3=")))
    path = found.get("rclone", "").strip()
    if not path or not path.startswith("/"):
        where = f"at {rclone}" if rclone else "on its PATH"
        raise ConfigError(
            f"storage mounts on a Slurm cluster need rclone on the cluster, and the login node {host} has none "
            f"{where}", hint=f"ask the cluster's admins to install rclone, or put the rclone binary "
                             f"(rclone.org/downloads) in your home there and name it in the profile: "
                             f"`--set {RCLONE_SETTING}=~/bin/rclone` (a `module load rclone` is not seen by the app: "
                             f"give the full path it loads); or copy the data to the cluster's file system")
    if not any(line.startswith("rclone v") for line in res.out.splitlines()):
        raise ConfigError(f"the rclone at {path} on the login node {host} does not run (`rclone version` said nothing)",
                          hint=f"check it there (`{path} version`); name another with `--set {RCLONE_SETTING}=PATH`")
    if not found.get("python3", "").strip():
        raise ConfigError(f"storage mounts on a Slurm cluster need python3 on the cluster (the storage agent), and the "
                          f"login node {host} has none on its PATH",
                          hint="ask the cluster's admins, or copy the data to the cluster's file system")
    return path


def unwrap(spec: JobSpec, job_dir: str) -> tuple[str, str]:
    """The spec's own (setup, run) from the commands :mod:`workbench.core.remote.storage` wrapped around the agent
    (checked by wrapping them again: a change of that wrapping fails loudly, not silently)."""
    agent, config = f"{job_dir}/{AGENT_NAME}", f"{job_dir}/{CONFIG_NAME}"
    prepare = wrapped_commands(dataclasses.replace(spec, setup=None, run="true"), PYTHON, agent, config, False)[0]
    head, _, words = spec.run.partition(" -c ")
    setup = (spec.setup or "")[len(prepare):] if (spec.setup or "").startswith(prepare) else None
    try:
        run = shlex.split(words)[0] if words and len(shlex.split(words)) == 1 else None
    except ValueError:
        run = None
    if setup is not None and run is not None:
        own = dataclasses.replace(spec, setup=setup or None, run=run)
        if wrapped_commands(own, PYTHON, agent, config, False) == (spec.setup, spec.run):
            return setup, run
    raise WorkbenchError("the storage agent's commands are not as the Slurm provider expects them",
                         hint="report this: workbench/core/storage/machine.py wrapped_commands changed")


def render(out: dict[str, str], job_dir: str, spec: JobSpec, spread: str) -> dict[str, str]:
    """``out`` (the Slurm job folder's files) with the agent once around the allocation (see the module doc)."""
    setup, run = unwrap(spec, job_dir)
    q = shlex.quote
    agent, config = q(f"{job_dir}/{AGENT_NAME}"), q(f"{job_dir}/{CONFIG_NAME}")
    out["node_setup.sh"] = setup
    out["node_run.sh"] = run.rstrip("\n") + "\n"
    out[SPREAD] = spread
    out["setup.sh"] = f"{PYTHON} {agent} prepare --config {config}\n"
    out["run.sh"] = (f"# the storage agent here, once, around every node's run (spread.sh)\n"
                     f"echo $$ > {q(f'{job_dir}/{PID_FILE}')}\n"
                     f"exec {PYTHON} {agent} run --config {config} -- /bin/sh {q(f'{job_dir}/{SPREAD}')}\n")
    return out


def cluster_config(conn: Any, job_dir: str, rclone: str) -> None:
    """The agent's config as a cluster needs it: the login node's rclone, never an install (no sudo there), the
    credentials file deleted when ``run`` ends (the job folder outlives the job).  Written before the job is queued."""
    path = posixpath.join(job_dir, CONFIG_NAME)
    sftp = conn.sftp()
    with sftp.open(path, "r") as fh:
        config = json.loads(fh.read().decode("utf-8"))
    config.update(rclone=rclone, install_rclone=False, drop_credentials=True)
    tmp = path + ".tmp"
    with sftp.open(tmp, "w") as fh:
        fh.write((json.dumps(config, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    sftp.posix_rename(tmp, path)


def forget_credentials(job_var: str) -> str:
    """Shell: delete the job's storage credentials file (``job_var``: the job folder, a shell word)."""
    return f"rm -f {job_var}/{CREDENTIALS_NAME}"
