"""The two lines of defence a launch arms on Azure besides the app itself.

* :func:`grant_guard_role` — the VM's system-assigned identity gets a role
  (``guard_role_id``, default Contributor) on the launch's own resource group, so the
  instance-side guard (installed by the custom data) can delete that group — the whole
  bill — when its limits are hit.  A brand-new identity takes a while to reach the
  directory: PrincipalNotFound is retried with backoff.  The assignment's name is a
  UUID derived from the launch id, so a retried launch does not add a second one.
* :func:`add_shutdown_schedule` — a DevTestLab auto-shutdown schedule (it deallocates,
  which stops compute billing) at the max-runtime deadline when that is within a day;
  the schedule is daily, so longer runs rely on the guard.

Both go through the management client's ``send_request`` (no extra SDK package) with
the same pipeline (auth, retries, TLS) as every other call.  Blocking; errors mapped.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any, Callable

from workbench.core.domain.errors import AuthError, PluginError
from workbench.core.domain.models import LaunchRequest

from .clients import AzureClients
from .errors import error_code
from .inventory import VM_NAME

SCHEDULE = f"shutdown-computevm-{VM_NAME}"
AUTHZ_API, DEVTESTLAB_API = "2022-04-01", "2018-09-15"
ROLE_NAMESPACE = uuid.UUID("4f7c3a52-6a5e-4b8e-9d1e-2b9f3c0d7a11")  # uuid5(…, launch id): idempotent names
PRINCIPAL_RETRIES = 8


def _put(clients: AzureClients, url: str, body: dict[str, Any]) -> Any:
    from azure.core.exceptions import HttpResponseError
    from azure.core.rest import HttpRequest
    from azure.mgmt.core.exceptions import ARMErrorFormat

    resp = clients.resources.send_request(HttpRequest("PUT", url, json=body))
    if resp.status_code not in (200, 201):
        raise HttpResponseError(response=resp, error_format=ARMErrorFormat)
    return resp


def grant_guard_role(clients: AzureClients, group_id: str, vm: Any, sub: str, launch_id: str, deadline: float,
                     check_cancel: Callable[[], None]) -> None:
    """Give the VM's identity ``guard_role_id`` on ``group_id`` (see the module doc)."""
    principal = getattr(getattr(vm, "identity", None), "principal_id", None)
    if not principal:
        raise PluginError("the VM was created without a managed identity; the instance guard could not be armed")
    name = str(uuid.uuid5(ROLE_NAMESPACE, launch_id))
    body = {"properties": {
        "roleDefinitionId": f"/subscriptions/{sub}/providers/Microsoft.Authorization/roleDefinitions/"
                            f"{clients.settings.guard_role_id}",
        "principalId": principal, "principalType": "ServicePrincipal"}}
    url = f"{group_id}/providers/Microsoft.Authorization/roleAssignments/{name}?api-version={AUTHZ_API}"
    err = assign_role(lambda: _put(clients, url, body), deadline, clients.settings.retry_backoff, check_cancel)
    if err is None:
        return
    mapped = clients.error(err, "giving the VM's identity its role on the launch group")
    if isinstance(mapped, AuthError):
        mapped.hint = ("the guard needs Microsoft.Authorization/roleAssignments/write on the launch's "
                       "group; see resources/policies/azure-custom-role.json")
    raise mapped from None


def assign_role(put: Callable[[], Any], deadline: float, backoff: float,
                check_cancel: Callable[[], None] = lambda: None) -> BaseException | None:
    """PUT a role assignment (``put``) to a principal that may not have replicated yet: ARM answers
    PrincipalNotFound for a while after a managed identity is made, so that is retried with backoff until
    ``deadline``; an assignment that exists already counts as made.  None when made, else the error to map."""
    for attempt in range(PRINCIPAL_RETRIES):
        check_cancel()
        try:
            put()
            return None
        except Exception as exc:  # noqa: BLE001 - returned to the caller, which maps it
            err = exc
        code = error_code(err).lower()
        if code == "roleassignmentexists":
            return None
        if code != "principalnotfound" or attempt + 1 == PRINCIPAL_RETRIES or time.monotonic() >= deadline:
            return err
        time.sleep(min(30.0, backoff * (2 ** attempt)))
    return None


def add_shutdown_schedule(clients: AzureClients, req: LaunchRequest, region: str, group_id: str,
                          tags: dict[str, str], vm_name: str = VM_NAME) -> str | None:
    """Create the auto-shutdown schedule of ``vm_name``; returns its UTC time "HHMM", or None when none is wanted."""
    mode = clients.settings.auto_shutdown
    minutes = req.spec.guards.max_runtime_minutes
    if mode == "off" or (mode == "auto" and (minutes is None or minutes >= 24 * 60)):
        return None
    if mode == "auto":
        at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes + 5)
        hhmm = at.strftime("%H%M")
    else:
        hhmm = mode
    body = {"location": region, "tags": tags, "properties": {
        "status": "Enabled", "taskType": "ComputeVmShutdownTask", "dailyRecurrence": {"time": hhmm},
        "timeZoneId": "UTC", "notificationSettings": {"status": "Disabled"},
        "targetResourceId": f"{group_id}/providers/Microsoft.Compute/virtualMachines/{vm_name}"}}
    url = f"{group_id}/providers/Microsoft.DevTestLab/schedules/shutdown-computevm-{vm_name}?api-version={DEVTESTLAB_API}"
    try:
        _put(clients, url, body)
    except Exception as exc:  # noqa: BLE001 - mapped
        raise clients.error(exc, "creating the auto-shutdown schedule") from None
    return hhmm


def move_shutdown_schedule(clients: AzureClients, vm_id: str, region: str, tags: dict[str, str],
                           not_after: float, now: float | None = None) -> str | None:
    """A run was extended: move the auto-shutdown of the VM ``vm_id`` to the new deadline (+5 min, as at launch).

    Only the "auto" mode follows the max runtime (a fixed "HHMM" is the user's own and stays); a deadline
    24 h or more ahead cannot be a daily schedule, so the schedule is disabled (the guard keeps the
    deadline).  Returns the new UTC "HHMM", "disabled", or None when nothing follows the max runtime.
    A PUT only (the write permission the launch already needs).
    """
    if clients.settings.auto_shutdown != "auto":
        return None
    t = time.time() if now is None else now
    group_id, _, rest = vm_id.partition("/providers/")
    vm_name = rest.rsplit("/", 1)[-1]
    if not group_id or not vm_name:
        raise PluginError(f"not the id of a VM: {vm_id!r}")
    at = datetime.datetime.fromtimestamp(not_after, datetime.timezone.utc) + datetime.timedelta(minutes=5)
    disabled = not_after - t >= 24 * 3600
    hhmm = at.strftime("%H%M")
    body = {"location": region, "tags": tags, "properties": {
        "status": "Disabled" if disabled else "Enabled", "taskType": "ComputeVmShutdownTask",
        "dailyRecurrence": {"time": hhmm}, "timeZoneId": "UTC", "notificationSettings": {"status": "Disabled"},
        "targetResourceId": f"{group_id}/providers/Microsoft.Compute/virtualMachines/{vm_name}"}}
    url = f"{group_id}/providers/Microsoft.DevTestLab/schedules/shutdown-computevm-{vm_name}?api-version={DEVTESTLAB_API}"
    try:
        _put(clients, url, body)
    except Exception as exc:  # noqa: BLE001 - mapped
        raise clients.error(exc, "moving the auto-shutdown schedule") from None
    return "disabled" if disabled else hhmm
