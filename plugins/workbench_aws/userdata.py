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

import time

from workbench.core.domain.models import JobSpec
from workbench.core.providers import bootscript as boot

MAX_BYTES = 16 * 1024  # EC2's limit on user data (before base64)


def render(launch_id: str, owner: str, spec: JobSpec, ssh_user: str) -> str:
    """The shell script for one launch (plain text; boto3 base64-encodes it).

    SpecError when the job's text would break the script, PluginError when it grows over 16 KiB.
    """
    meta = boot.launch_json(launch_id, owner, "aws", spec, ssh_user)
    script = boot.shell_boot_script(launch_id, meta, ssh_user, _guard(spec, launch_id), errexit=True,
                                    before_guard=boot.container_runtime(spec, ssh_user))
    return boot.check_size(script, MAX_BYTES, "instance's user data")


def _guard(spec: JobSpec, launch_id: str) -> str:
    """The sh fragment that installs the instance guard (a systemd timer; shutdown ends the bill)."""
    minutes = spec.guards.max_runtime_minutes
    not_after = None if minutes is None else time.time() + minutes * 60
    return boot.render_guard_shell(spec, launch_id, "aws", not_after=not_after)
