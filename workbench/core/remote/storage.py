"""Storage mounts and the interruption notice on a cloud machine, over the SSH runner's connection.

:func:`install` puts the storage agent (``resources/storage/workbench_storage.py``), its config
and the machine's credentials (short-lived, scoped to the mounts; a 0600 file in the job
folder, never in the app's store or logs) next to the job's scripts, and returns the spec whose
``setup``/``run`` the supervisor renders: ``prepare`` opens setup, ``run`` wraps run (see
:mod:`workbench.core.storage.machine`); a job in a container image keeps its commands and gets ``storage.sh``,
which ``supervise.sh`` runs on the machine around the container's setup and run.  A spec without storage or recovery is returned as is.

:func:`fetch_interruption` copies the agent's ``interrupted`` record from the machine into the
launch's local folder, where recovery finds it after the machine is gone.

Threading: blocking (SFTP, plugins minting credentials); the remote job's thread.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shlex
from typing import Any

from workbench.core import paths
from workbench.core.domain.models import Instance, JobSpec
from workbench.core.remote.connection import Connection
from workbench.core.remote.kinds import is_queued
from workbench.core.storage.machine import (AGENT_NAME, CONFIG_NAME, CREDENTIALS_NAME, HOST_WRAPPER, INTERRUPTED_NAME,
                                            MAX_CREDENTIAL_S, agent_source, container_wrapper, machine_setup,
                                            needs_agent, wrapped_commands)

log = logging.getLogger("workbench.remote.storage")


def _put(conn: Connection, path: str, text: str, mode: int) -> None:
    sftp = conn.sftp()
    with sftp.open(path, "w") as fh:
        fh.chmod(mode)  # before the content: a secret is never readable by others, not even for a moment
        fh.write(text.encode("utf-8"))


def install(conn: Connection, accounts: Any, spec: JobSpec, instance: Instance, job_dir: str) -> JobSpec:
    """Install the agent for ``spec`` in ``job_dir`` on the machine; the spec to render (see the module doc)."""
    if not needs_agent(spec):
        return spec
    profile = accounts.profile(instance.profile)
    creds = f"{job_dir}/{CREDENTIALS_NAME}"
    # a batch job may wait in the queue for hours before its runtime starts: the longest the cloud allows (its cap)
    setup = machine_setup(accounts, spec, instance.launch_id, profile, state_dir=job_dir, work_dir=".",
                          credentials_file=creds if spec.storage else None,
                          credential_s=MAX_CREDENTIAL_S if is_queued(instance) else None)
    agent, config = f"{job_dir}/{AGENT_NAME}", f"{job_dir}/{CONFIG_NAME}"
    _put(conn, agent, agent_source(), 0o755)
    _put(conn, config, setup.config_text(), 0o644)
    if setup.secret_env:
        _put(conn, creds, json.dumps(setup.secret_env), 0o600)
    if spec.image is not None:  # setup and run in the container; supervise.sh runs the agent here around them
        _put(conn, f"{job_dir}/{HOST_WRAPPER}", container_wrapper("python3", agent, config), 0o755)
        return spec
    setup_cmd, run_cmd = wrapped_commands(spec, "python3", agent, config, errexit=False)
    return dataclasses.replace(spec, setup=setup_cmd, run=run_cmd)


def renew_credentials(conn: Connection, accounts: Any, spec: JobSpec, instance: Instance) -> bool:
    """Mint the storage credentials of a running job again and replace its credentials file on the machine (the
    agent reads a replaced file before its next transfer).  For attempts whose credentials cannot outlive an hour
    (AWS role chaining on the controller).  False when the job has no storage credentials.  The values travel on
    the connection's standard input, never a command line; the file is written 0600 and renamed into place."""
    if not spec.storage:
        return False
    profile = accounts.profile(instance.profile)
    setup = machine_setup(accounts, spec, instance.launch_id, profile, state_dir=".", work_dir=".",
                          credentials_file=CREDENTIALS_NAME)
    if not setup.secret_env:
        return False
    job = f'"${{WORKBENCH_REMOTE_DIR:-$HOME/.workbench}}/jobs/{instance.launch_id}"'
    target = f"{job}/{CREDENTIALS_NAME}"
    line = (f"J={job}; [ -d \"$J\" ] || exit 3; umask 077; cat > {target}.renew && mv -f {target}.renew {target}")
    got = conn.run(line, timeout=60, stdin=json.dumps(setup.secret_env).encode("utf-8"))
    if got.rc != 0:
        log.warning("renewing the storage credentials of %s failed (exit %d): %s", instance.launch_id, got.rc,
                    got.err.strip()[-200:])
        return False
    return True


def fetch_interruption(conn: Connection, job_dir: str, launch_id: str) -> dict[str, Any] | None:
    """The machine's ``interrupted`` record, also saved locally (None when there is none yet)."""
    res = conn.run(f"cat {shlex.quote(job_dir + '/' + INTERRUPTED_NAME)} 2>/dev/null", timeout=30)
    try:
        record = json.loads(res.out)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    target = paths.job_dir(launch_id) / INTERRUPTED_NAME
    tmp = target.with_name(INTERRUPTED_NAME + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    tmp.replace(target)
    return record


def describe(record: dict[str, Any]) -> str:
    saved = record.get("saved")
    what = "its sync mounts were saved" if saved else "saving its sync mounts did not finish" if saved is False else \
        "saving its sync mounts"
    return f"interruption notice ({record.get('source', 'the cloud')}): the job was stopped and {what}"

