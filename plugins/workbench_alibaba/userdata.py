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

from workbench.core.domain.models import JobSpec
from workbench.core.providers import bootscript as boot

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
    """The shell script for one launch (plain text; :func:`encode` before sending).

    SpecError when the job's text would break the script, PluginError when it grows over 32 KB.
    """
    meta = boot.launch_json(launch_id, owner, "alibaba", spec, ssh_user, not_after=not_after)
    guard = boot.render_guard_shell(spec, launch_id, "alibaba", not_after=not_after)
    script = boot.shell_boot_script(launch_id, meta, ssh_user, guard, errexit=False,
                                    before_guard=(DRIVER if install_driver else "")
                                    + boot.container_runtime(spec, ssh_user))
    return boot.check_size(script, MAX_BYTES, "instance's UserData")


def encode(script: str) -> str:
    return base64.b64encode(script.encode("utf-8")).decode("ascii")
