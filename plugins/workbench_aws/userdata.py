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

import json
import shlex
import time

from workbench.core.domain.models import JobSpec

MAX_BYTES = 16 * 1024  # EC2's limit on user data (before base64)


def render(launch_id: str, owner: str, spec: JobSpec, ssh_user: str) -> str:
    """The shell script for one launch (plain text; boto3 base64-encodes it)."""
    meta = json.dumps({
        "launch_id": launch_id,
        "owner": owner,
        "provider": "aws",
        "job": spec.name,
        "ssh_user": ssh_user,
        "max_runtime_minutes": spec.guards.max_runtime_minutes,
        "idle_minutes": spec.guards.idle_minutes,
    }, indent=1, sort_keys=True)
    if "WORKBENCH_EOF" in meta:  # cannot happen with validated ids; keep the heredoc sound anyway
        raise ValueError("metadata must not contain the heredoc marker")
    script = f"""#!/bin/bash
# cloud-gpu-workbench: prepare this machine for launch {launch_id}
set -eu
umask 022
install -d -m 0755 /var/lib/workbench /opt/workbench
install -d -m 0755 -o {shlex.quote(ssh_user)} /opt/workbench/jobs 2>/dev/null || install -d -m 0755 /opt/workbench/jobs
cat > /var/lib/workbench/launch.json <<'WORKBENCH_EOF'
{meta}
WORKBENCH_EOF
date -u +%Y-%m-%dT%H:%M:%SZ > /var/lib/workbench/started
echo "workbench: launch {launch_id} started $(cat /var/lib/workbench/started)" > /dev/console 2>/dev/null || true
cat > /var/lib/workbench/install-guard.sh <<'WORKBENCH_GUARD_EOF'
{_guard(spec, launch_id)}WORKBENCH_GUARD_EOF
sh /var/lib/workbench/install-guard.sh || echo "workbench: the instance guard could not be installed" > /dev/console 2>/dev/null || true
"""
    if len(script.encode()) > MAX_BYTES:
        raise ValueError("user data exceeds 16 KiB")
    return script


def _guard(spec: JobSpec, launch_id: str) -> str:
    """The sh fragment that installs the instance guard (a systemd timer; shutdown ends the bill)."""
    from workbench.core.providers.bootscript import render_guard_shell

    minutes = spec.guards.max_runtime_minutes
    not_after = None if minutes is None else time.time() + minutes * 60
    text = render_guard_shell(spec, launch_id, "aws", not_after=not_after)
    if "WORKBENCH_GUARD_EOF" in text:
        raise ValueError("guard text must not contain the heredoc marker")
    return text
