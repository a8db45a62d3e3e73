"""The custom data (cloud-init runs it on first boot) of a workbench VM.

A ``#cloud-config`` document that

* records the launch on the machine (``/var/lib/workbench/launch.json``: launch id, owner,
  job, SSH user, limits; no secret — those are tags anyway) and the time it started,
* prepares the folders of the remote-job runner (``/opt/workbench/jobs``, owned by the
  SSH user) and the per-launch state folder,
* installs the instance-side guard (``workbench.core.providers.bootscript``) configured to delete
  the VM's own resource group through ARM with the VM's managed identity — on Azure an OS
  shutdown would leave a *Stopped* VM that still bills,
* writes a line to the serial console (visible in boot diagnostics).

Azure limits custom data to 64 KiB before base64; :func:`render` refuses more.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import yaml

from workbench.core.domain.models import JobSpec
from workbench.core.providers import bootscript as boot

MAX_BYTES = 64 * 1024


def render(launch_id: str, owner: str, spec: JobSpec, ssh_user: str, *, subscription_id: str,
           resource_group: str, arm_endpoint: str, arm_audience: str) -> str:
    """The cloud-config text for one launch (PluginError when it grows over Azure's 64 KiB)."""
    meta = boot.launch_metadata(launch_id, owner, "azure", spec, ssh_user, resource_group=resource_group)
    doc: dict[str, Any] = {
        "write_files": [{"path": boot.LAUNCH_JSON, "permissions": "0644", "owner": "root:root",
                         "content": json.dumps(meta, indent=1, sort_keys=True) + "\n"}],
        "runcmd": [
            ["install", "-d", "-m", "0755", boot.STATE_DIR, boot.RUNNER_DIR, f"{boot.STATE_DIR}/{launch_id}"],
            ["install", "-d", "-m", "0755", "-o", ssh_user, boot.JOBS_DIR],
            ["sh", "-c", boot.STAMP_STARTED],
            ["sh", "-c", f"echo '{boot.console_line(launch_id)}' > /dev/console || true"],
        ],
    }
    if spec.image is not None:  # Docker and the NVIDIA container toolkit where the image lacks them
        doc["runcmd"].append(["bash", "-c", boot.container_runtime(spec, ssh_user)])
    guard = _guard(spec, launch_id, subscription_id, resource_group, arm_endpoint, arm_audience)
    doc["write_files"] += guard.get("write_files", [])
    doc["runcmd"] += guard.get("runcmd", [])
    text = "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False, width=1_000_000)
    return boot.check_size(text, MAX_BYTES, "VM's custom data")


def encode(text: str) -> str:
    """Base64, as the VM's ``osProfile.customData`` wants it."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _guard(spec: JobSpec, launch_id: str, subscription_id: str, resource_group: str, arm_endpoint: str,
           arm_audience: str) -> dict[str, Any]:
    not_after = None
    if spec.guards.max_runtime_minutes is not None:
        not_after = time.time() + spec.guards.max_runtime_minutes * 60
    return boot.guard_cloud_config(spec, launch_id, "azure", not_after=not_after, azure={
        "arm": arm_endpoint, "resource": arm_audience.rstrip("/") + "/",
        "subscription_id": subscription_id, "resource_group": resource_group})
