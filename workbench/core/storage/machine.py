"""What the machine needs to serve a job's storage mounts and hear an interruption notice.

The storage agent (``resources/storage/workbench_storage.py``, run by the machine's python3)
wraps the job: ``prepare`` opens ``setup`` (copy mounts in; on a resumed attempt, the sync
mounts' last contents), ``run`` wraps ``run`` (periodic and final sync, the interruption
notice).  This module builds its config (no secrets) and the credentials it needs
(``RCLONE_CONFIG_WB<N>_*`` variables: short-lived and scoped to each mount, minted by the
cloud plugin that serves the bucket), and rewrites the job's commands around it.

Used in two places: :func:`local_spec` by the launcher for providers that run jobs themselves
(Local), and ``workbench.core.remote.storage`` for cloud machines (files written over SFTP).
Both give the credentials to the agent alone, in a 0600 file in the job folder that only the
agent reads and hands to rclone: never in the job's environment, which ``setup``, ``run``
and everything they start inherit (issue 30: on Local, ``setup`` used to see them).  On Local
the agent deletes the file when ``run`` ends.  A spec with neither ``storage`` nor
``recovery`` is left exactly as it is.  A spec with ``image:`` keeps its own commands too (they run in the
container): the agent runs on the machine around ``container.sh`` through ``storage.sh``
(:func:`container_wrapper`), with the mounts' folders bind-mounted into the container at the spec's paths.

Threading: blocking (plugins mint credentials over the network); any worker thread.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import JobSpec, Profile, StorageMode
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.storage.resolve import storage_provider

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

AGENT_NAME = "workbench_storage.py"
CONFIG_NAME = "storage.json"
CREDENTIALS_NAME = "storage-credentials.json"
HOST_WRAPPER = "storage.sh"  # a job in a container image: the agent around it on the machine (container_wrapper)
NOTICE_NAME = "interrupt-notice"  # a file the agent treats as an interruption notice (rehearsals, tests)
INTERRUPTED_NAME = "interrupted"  # the agent's record of a notice (JSON)
SECRET_PREFIX = "RCLONE_CONFIG_WB"
#: clouds whose metadata service the agent asks for an interruption notice
NOTICE_CLOUDS = ("aws", "azure", "alibaba")
#: STS federation tokens last 36 h at most; SAS tokens as long as asked
MAX_CREDENTIAL_S = 36 * 3600
MIN_CREDENTIAL_S = 15 * 60


def needs_agent(spec: JobSpec) -> bool:
    """True when the job has storage mounts or a recovery policy (the agent hears the notice)."""
    return bool(spec.storage) or spec.recovery is not None


def agent_path() -> Path:
    return paths.resources_dir() / "storage" / AGENT_NAME


def agent_source() -> str:
    path = agent_path()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"the storage agent {path} is missing: {exc.strerror or exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from exc


def credential_seconds(spec: JobSpec) -> int:
    """How long the machine's credentials last: the max runtime plus an hour, within STS's limits."""
    minutes = spec.guards.max_runtime_minutes or 24 * 60
    return int(max(MIN_CREDENTIAL_S, min(MAX_CREDENTIAL_S, minutes * 60 + 3600)))


@dataclass(frozen=True)
class MachineSetup:
    """The agent's config (no secrets) and its credentials (never stored by the app)."""

    config: dict[str, Any]
    secret_env: dict[str, str]
    expires_at: float | None

    def config_text(self) -> str:
        return json.dumps(self.config, indent=1, sort_keys=True) + "\n"


def machine_setup(accounts: "Accounts", spec: JobSpec, launch_id: str, profile: Profile, *, state_dir: str,
                  work_dir: str = ".", on_this_computer: bool = False,
                  credentials_file: str | None = None, notice: Mapping[str, Any] | None = None,
                  credential_s: int | None = None) -> MachineSetup:
    """Config + credentials for ``spec``'s mounts on ``launch_id``'s machine (``credential_s``: how long they last,
    when not :func:`credential_seconds` — a batch job may wait in a queue before its runtime starts).

    ``on_this_computer``: the machine is this computer (Local), so a local-folder source is
    copied straight from its folder; on a cloud machine every source must be a bucket by now
    (the launch uploads local folders first).
    """
    mounts, env, expiries = [], {}, []
    for i, m in enumerate(spec.storage):
        try:
            uri = parse_storage_uri(m.source)
        except ValueError as exc:
            raise ConfigError(f"storage[{i}].source {exc}") from None
        entry = {"path": m.path, "mode": m.mode.value, "interval_s": m.interval_s, "source": str(uri)}
        if uri.is_local:
            if not on_this_computer:
                raise ConfigError(f"storage[{i}]: the folder {m.source} must be uploaded to a bucket before a "
                                  "cloud machine can use it", hint="launch through the app or `workbench launch`, "
                                                                   "which upload it first")
            entry["remote"] = str(Path(m.source).resolve())
        else:
            _, prov = storage_provider(accounts, uri, profile)
            try:
                remote = prov.storage_machine_remote(uri, m.mode is StorageMode.SYNC,
                                                     credential_s or credential_seconds(spec), launch_id)
            except WorkbenchError as exc:
                raise type(exc)(f"storage[{i}] ({uri}): {exc.message}", exc.hint) from None
            name = f"wb{i}"
            env.update({f"{SECRET_PREFIX}{i}_{k.upper()}": str(v) for k, v in remote.options.items()})
            entry["remote"] = f"{name}:{remote.path}"
            if remote.expires_at:
                expiries.append(remote.expires_at)
        mounts.append(entry)
    cloud = profile.provider if profile.provider in NOTICE_CLOUDS else "none"
    notice_cfg: dict[str, Any] = {"cloud": cloud, "file": str(Path(state_dir) / NOTICE_NAME), "poll_s": 5.0}
    notice_cfg.update(notice or {})
    config = {
        "launch_id": launch_id, "state_dir": state_dir, "work_dir": work_dir, "mounts": mounts,
        "notice": notice_cfg, "credentials_file": credentials_file, "install_rclone": not on_this_computer,
        # this computer keeps the job folder after the job: the credentials go when run ends
        "drop_credentials": on_this_computer,
        # a job in a container: its user may not be the agent's, so the mounts' folders and the files restored
        # into them are writable by any user (the container's own files stay readable: its umask)
        "open_mounts": spec.image is not None,
    }
    return MachineSetup(config, env, min(expiries) if expiries else None)


def wrapped_commands(spec: JobSpec, python: str, agent: str, config: str, errexit: bool) -> tuple[str, str]:
    """(setup, run) with the agent around them: ``prepare`` opens setup, ``run`` wraps run."""
    q = shlex.quote
    setup = f"{q(python)} {q(agent)} prepare --config {q(config)}\n" + (spec.setup.rstrip("\n") + "\n"
                                                                         if spec.setup else "")
    flags = "-e -c" if errexit else "-c"
    run = (f"exec {q(python)} {q(agent)} run --config {q(config)} -- "
           f"\"$(command -v bash || echo sh)\" {flags} {q(spec.run)}\n")
    return setup, run


def container_wrapper(python: str, agent: str, config: str) -> str:
    """``storage.sh`` for a job in a container image: the agent stays on the machine (rclone, the metadata service,
    the credentials file are there, not in the image) while setup and run happen in the container.

    ``storage.sh prepare`` before the container's setup; ``storage.sh run CONTAINER_SH [-e] run.sh`` runs
    ``CONTAINER_SH exec …`` under the agent, whose TERM on a notice reaches the job through ``CONTAINER_SH signal``
    (supervise.sh on a cloud machine, the Local provider's container wrapper here)."""
    q = shlex.quote
    agent_cmd = f"{q(python)} {q(agent)}"
    return ("#!/bin/sh\n# Cloud GPU Workbench: the storage agent around a job in a container (prepare | run "
            "CONTAINER_SH [-e] SCRIPT). Generated; see workbench/core/storage/machine.py.\n"
            f'case "$1" in\nprepare) exec {agent_cmd} prepare --config {q(config)} ;;\n'
            f'run) C="$2"; shift 2; exec {agent_cmd} run --config {q(config)} --container "$C" -- sh "$C" exec "$@" ;;\n'
            'esac\necho "usage: storage.sh prepare|run CONTAINER_SH [-e] SCRIPT" >&2; exit 2\n')


def local_python() -> str:
    """The Python that runs the agent on this computer (the app's own, unless it is a frozen bundle)."""
    if not getattr(sys, "frozen", False) and sys.executable:
        return sys.executable
    return shutil.which("python3") or "python3"


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in a file that is 0600 from its creation, before a byte is written."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def local_spec(accounts: "Accounts", spec: JobSpec, launch_id: str, profile: Profile,
               notice: Mapping[str, Any] | None = None) -> JobSpec:
    """The spec a self-running provider (Local) runs: commands wrapped around the agent.

    The config and the credentials file (0600) go into the launch's job folder (``paths.job_dir``,
    private to the user), where the agent also writes ``interrupted``; the job's environment is
    the spec's own.  The returned spec is handed to the provider only, never stored.
    """
    if not needs_agent(spec):
        return spec
    if spec.storage and shutil.which("rclone") is None:
        raise ConfigError("storage mounts on this computer need rclone, which is not installed",
                          hint="install it: `sudo apt-get install rclone` (Debian/Ubuntu), `brew install rclone` "
                               "(macOS), or see rclone.org/install")
    folder = paths.job_dir(launch_id)
    creds_path = folder / CREDENTIALS_NAME
    setup = machine_setup(accounts, spec, launch_id, profile, state_dir=str(folder), on_this_computer=True,
                          notice=notice, credentials_file=str(creds_path) if spec.storage else None)
    if setup.secret_env:
        write_private(creds_path, json.dumps(setup.secret_env))
    config_path = folder / CONFIG_NAME
    tmp = config_path.with_name(CONFIG_NAME + ".tmp")
    tmp.write_text(setup.config_text(), encoding="utf-8")
    os.replace(tmp, config_path)
    if spec.image is not None:  # the Local provider's container wrapper runs it (host_wrapper); commands unchanged
        host_wrapper(launch_id).write_text(container_wrapper(local_python(), str(agent_path()), str(config_path)),
                                           encoding="utf-8")
        return spec
    setup_cmd, run_cmd = wrapped_commands(spec, local_python(), str(agent_path()), str(config_path), errexit=True)
    return dataclasses.replace(spec, setup=setup_cmd, run=run_cmd)


def host_wrapper(launch_id: str) -> Path:
    """Where :func:`local_spec` puts ``storage.sh`` for a Local job in a container image (in the launch's folder)."""
    return paths.job_dir(launch_id) / HOST_WRAPPER


def machine_spec(accounts: "Accounts", spec: JobSpec, launch_id: str, profile: Profile, over_ssh: bool) -> JobSpec:
    """The spec a provider receives at launch: for a self-running one (Local) :func:`local_spec`; a cloud
    machine gets its agent from the SSH runner, so its spec is unchanged, but every mount must name a
    bucket by now (ConfigError before anything bills when a local folder was not uploaded)."""
    if not over_ssh:
        return local_spec(accounts, spec, launch_id, profile)
    for i, m in enumerate(spec.storage):
        if parse_storage_uri(m.source).is_local:
            raise ConfigError(f"storage[{i}]: the folder {m.source} must be uploaded to a bucket before a cloud "
                              "machine can use it", hint="launch through the app or `workbench launch`, which "
                                                         "upload it first (the profile's storage_uri setting)")
    return spec


def interruption(launch_id: str) -> dict[str, Any] | None:
    """The agent's record of an interruption notice for ``launch_id`` (copied here for cloud machines)."""
    try:
        data = json.loads((paths.job_dir(launch_id) / INTERRUPTED_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
