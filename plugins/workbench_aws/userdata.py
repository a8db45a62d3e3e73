"""The user data (cloud-init runs it as root on first boot) of a workbench machine.

It prepares the folders the remote-job runner uses, records that the machine
started and for which launch (``/var/lib/workbench/launch.json`` and
``/var/lib/workbench/started``, plus a line on the console, visible with
``get-console-output``), and installs the instance-side guard
(``workbench.core.providers.bootscript``: max runtime, idle GPU and on_finish enforced
by the machine itself while the app is closed).  It carries no secret: the
launch id and install id are tags anyway.

The launch's instances are started with InstanceInitiatedShutdownBehavior
``terminate``, so a guard that runs ``shutdown -h now`` ends the bill.
"""

from __future__ import annotations

import shlex
import time

from workbench.core.domain.models import JobSpec
from workbench.core.providers import bootscript as boot

MAX_BYTES = 16 * 1024  # EC2's limit on user data (before base64)


def render(launch_id: str, owner: str, spec: JobSpec, ssh_user: str) -> str:
    """The shell script for one launch (plain text; boto3 base64-encodes it).

    SpecError when the job's text would break the script, PluginError when it grows over 16 KiB.
    """
    meta = boot.launch_json(launch_id, owner, "aws", spec, ssh_user)
    user = shlex.quote(ssh_user)
    script = f"""#!/bin/bash
# cloud-gpu-workbench: prepare this machine for launch {launch_id}
set -eu
umask 022
install -d -m 0755 {boot.STATE_DIR} {boot.RUNNER_DIR}
install -d -m 0755 -o {user} {boot.JOBS_DIR} 2>/dev/null || install -d -m 0755 {boot.JOBS_DIR}
{boot.heredoc(boot.LAUNCH_JSON, meta, "WORKBENCH_EOF")}
{boot.STAMP_STARTED}
echo "{boot.console_line(launch_id)} $(cat {boot.STARTED_PATH})" > /dev/console 2>/dev/null || true
{boot.heredoc(f"{boot.STATE_DIR}/install-guard.sh", _guard(spec, launch_id), "WORKBENCH_GUARD_EOF", hint=None)}
sh {boot.STATE_DIR}/install-guard.sh || echo "workbench: the instance guard could not be installed" > /dev/console 2>/dev/null || true
"""
    return boot.check_size(script, MAX_BYTES, "instance's user data")


def _guard(spec: JobSpec, launch_id: str) -> str:
    """The sh fragment that installs the instance guard (a systemd timer; shutdown ends the bill)."""
    minutes = spec.guards.max_runtime_minutes
    not_after = None if minutes is None else time.time() + minutes * 60
    return boot.render_guard_shell(spec, launch_id, "aws", not_after=not_after)
