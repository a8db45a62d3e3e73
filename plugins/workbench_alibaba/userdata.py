"""The UserData of a workbench ECS instance (cloud-init runs it as root on first boot).

It records the launch on the machine (``/var/lib/workbench/launch.json``: launch id, owner, job,
SSH user, limits; no secret: those are tags anyway), prepares the remote-job runner's folders,
installs the NVIDIA driver when the image has none (profile ``gpu_driver=install``, Ubuntu's
``ubuntu-drivers``), and installs the instance-side guard
(:mod:`workbench.core.providers.bootscript`: max runtime, idle GPU, job finished → shutdown; the
instance's AutoReleaseTime releases it).  ECS takes UserData base64-encoded, at most 32 KB before
encoding (RunInstances reference, ``UserData``).
"""

from __future__ import annotations

import base64
import json
import shlex

from workbench.core.domain.errors import PluginError
from workbench.core.domain.models import JobSpec

MAX_BYTES = 32 * 1024
DRIVER = """if command -v lspci >/dev/null 2>&1 && lspci | grep -qi nvidia && ! command -v nvidia-smi >/dev/null 2>&1 \\
   && command -v apt-get >/dev/null 2>&1; then
  echo "workbench: installing the NVIDIA driver" > /dev/console 2>/dev/null || true
  ( export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q ubuntu-drivers-common \\
    && ubuntu-drivers install --gpgpu && modprobe nvidia ) > /var/log/workbench-gpu-driver.log 2>&1 \\
    || echo "workbench: the NVIDIA driver could not be installed (see /var/log/workbench-gpu-driver.log)" \\
       > /dev/console 2>/dev/null || true
fi
"""


def render(launch_id: str, owner: str, spec: JobSpec, ssh_user: str, *, not_after: float | None,
           install_driver: bool = True) -> str:
    """The shell script for one launch (plain text; :func:`encode` before sending)."""
    from workbench.core.providers.bootscript import render_guard_shell

    meta = json.dumps({"launch_id": launch_id, "owner": owner, "provider": "alibaba", "job": spec.name,
                       "ssh_user": ssh_user, "max_runtime_minutes": spec.guards.max_runtime_minutes,
                       "idle_minutes": spec.guards.idle_minutes, "not_after": not_after}, indent=1, sort_keys=True)
    guard = render_guard_shell(spec, launch_id, "alibaba", not_after=not_after)
    for marker in ("WORKBENCH_EOF", "WORKBENCH_GUARD_EOF"):
        if marker in meta or marker in guard:
            raise PluginError("the boot script's data contains its own end marker")
    user = shlex.quote(ssh_user)
    script = f"""#!/bin/bash
# cloud-gpu-workbench: prepare this machine for launch {launch_id}
set -u
umask 022
install -d -m 0755 /var/lib/workbench /opt/workbench
install -d -m 0755 -o {user} /opt/workbench/jobs 2>/dev/null || install -d -m 0755 /opt/workbench/jobs
cat > /var/lib/workbench/launch.json <<'WORKBENCH_EOF'
{meta}
WORKBENCH_EOF
date -u +%Y-%m-%dT%H:%M:%SZ > /var/lib/workbench/started
echo "workbench: launch {launch_id} started $(cat /var/lib/workbench/started)" > /dev/console 2>/dev/null || true
{DRIVER if install_driver else ''}cat > /var/lib/workbench/install-guard.sh <<'WORKBENCH_GUARD_EOF'
{guard}WORKBENCH_GUARD_EOF
sh /var/lib/workbench/install-guard.sh || echo "workbench: the instance guard could not be installed" > /dev/console 2>/dev/null || true
"""
    if len(script.encode("utf-8")) > MAX_BYTES:
        raise PluginError(f"the boot script is {len(script.encode())} bytes, over ECS's {MAX_BYTES}-byte UserData limit")
    return script


def encode(script: str) -> str:
    return base64.b64encode(script.encode("utf-8")).decode("ascii")
