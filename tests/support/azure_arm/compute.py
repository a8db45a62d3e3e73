"""Microsoft.Compute in the ARM test server: VMs, managed disks, resource SKUs, usages.

VM creation checks the body like ARM (size offered here, zone, image, SSH key,
custom data, spot fields, encryption at host, NIC references, quota) and
answers 201 + Azure-AsyncOperation; capacity is decided when the operation
completes (AllocationFailed / ZonalAllocationFailed then, as in Azure, leaving
a VM in provisioning state Failed).  Deleting a VM honours each part's
``deleteOption``.  Power actions (deallocate, powerOff, start) are operations too.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
import uuid
from typing import Any

from . import catalog
from .network import release_nic
from .state import ArmError, ArmState, Ctx, Reply, public

NS = "Microsoft.Compute"
VM_TYPE = "Microsoft.Compute/virtualMachines"
DISK_TYPE = "Microsoft.Compute/disks"
PPG_TYPE = "Microsoft.Compute/proximityPlacementGroups"
IMAGES = {
    ("microsoft-dsvm", "ubuntu-hpc", "2204"), ("microsoft-dsvm", "ubuntu-hpc", "2404"),
    ("canonical", "0001-com-ubuntu-server-jammy", "22_04-lts-gen2"), ("canonical", "ubuntu-24_04-lts", "server"),
}
RESERVED_USERS = {"administrator", "admin", "root", "user", "guest", "test", "sys", "adm", "daemon", "bin"}
_COMPUTER = re.compile(r"^(?!-)[A-Za-z0-9-]{1,64}(?<!-)$")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def _bad(message: str, code: str = "InvalidParameter") -> ArmError:
    return ArmError(400, code, message)


def _not_available(rid: str, region: str, zones: list[str], sub: str) -> ArmError:
    return ArmError(409, "SkuNotAvailable", f"The requested VM size for resource '{rid}' is currently not available "
                    f"in location '{region}' zones '{','.join(zones)}' for subscription '{sub}'. Please try another "
                    "size or deploy to a different location or zones. See https://aka.ms/azureskunotavailable for details.")


# -- resource SKUs and usages ---------------------------------------------------------
def skus(state: ArmState, sub: str, location: str | None) -> list[dict[str, Any]]:
    out = []
    for region, sizes in catalog.REGIONS.items():
        if location and region != location.lower():
            continue
        for name, zones in sizes.items():
            restriction = state.config(sub).restricted.get((region, name))
            out.append(catalog.sku_json(catalog.SIZES[name], region, zones, [restriction] if restriction else []))
    return out


def usages(state: ArmState, sub: str, region: str) -> list[dict[str, Any]]:
    if region not in catalog.REGIONS:
        raise ArmError(404, "NoRegisteredProviderFound", f"No registered resource provider found for location '{region}'.")
    used = state.usage(sub, region)
    names = ["cores", "virtualMachines", "lowPriorityCores"]
    names += sorted({catalog.SIZES[s].family for s in catalog.REGIONS[region]})
    return [{"unit": "Count", "currentValue": used.get(n, 0), "limit": state.limit(sub, region, n),
             "name": {"value": n, "localizedValue": catalog.QUOTA_NAMES.get(n, f"Standard {n} vCPUs")}}
            for n in names]


# -- virtual machines ----------------------------------------------------------------
def _instance_view(vm: dict[str, Any]) -> dict[str, Any]:
    prov = vm["properties"]["provisioningState"]
    statuses = [{"code": f"ProvisioningState/{prov.lower()}", "level": "Info" if prov != "Failed" else "Error",
                 "displayStatus": f"Provisioning {prov.lower()}", "time": vm["properties"]["timeCreated"]}]
    if vm.get("_error"):
        statuses[0]["code"] = f"ProvisioningState/failed/{vm['_error']}"
    power = vm.get("_power")
    if power:
        statuses.append({"code": f"PowerState/{power}", "level": "Info", "displayStatus": f"VM {power}"})
    return {"computerName": vm["properties"]["osProfile"]["computerName"], "osName": "ubuntu",
            "statuses": statuses}


def vm_json(vm: dict[str, Any], with_view: bool) -> dict[str, Any]:
    out = public(vm)
    out["properties"] = dict(out["properties"])
    if with_view:
        out["properties"]["instanceView"] = _instance_view(vm)
    return out


def _check_vm_body(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any], require) -> dict[str, Any]:
    props = body.get("properties")
    if not isinstance(props, dict):
        raise _bad("Required parameter 'properties' is missing (null).", "InvalidRequestContent")
    region = body.get("location")
    if not region:
        raise _bad("Required parameter 'location' is missing (null).")
    size_name = (props.get("hardwareProfile") or {}).get("vmSize")
    if not size_name:
        raise _bad("Required parameter 'hardwareProfile.vmSize' is missing (null).")
    zones = list(body.get("zones") or [])
    offered = catalog.REGIONS.get(region, {})
    cfg = state.config(ctx.sub)
    if size_name not in offered or (region, size_name) in cfg.restricted:
        raise _not_available(rid, region, zones, ctx.sub)
    if any(z not in offered[size_name] for z in zones):
        raise _not_available(rid, region, zones, ctx.sub)
    size = catalog.SIZES[size_name]
    storage = props.get("storageProfile") or {}
    image = storage.get("imageReference") or {}
    if (str(image.get("publisher", "")).lower(), str(image.get("offer", "")).lower(),
            str(image.get("sku", "")).lower()) not in IMAGES:
        raise ArmError(404, "PlatformImageNotFound", f"The platform image '{image.get('publisher')}:"
                       f"{image.get('offer')}:{image.get('sku')}:{image.get('version')}' is not available.")
    os_disk = storage.get("osDisk") or {}
    if os_disk.get("createOption") != "FromImage":
        raise _bad("osDisk.createOption must be FromImage for a platform image.")
    disk_type = (os_disk.get("managedDisk") or {}).get("storageAccountType", "Standard_LRS")
    if disk_type.startswith("Premium") and not size.premium_io:
        raise _bad(f"Requested operation cannot be performed because storage account type '{disk_type}' is not "
                   f"supported for VM size '{size_name}'.")
    if os_disk.get("diskSizeGB") is not None and not 30 <= int(os_disk["diskSizeGB"]) <= 4095:
        raise _bad("The specified disk size is smaller than the size of the image or out of range.",
                   "ResourceDiskSizeInvalid")
    if os_disk.get("deleteOption", "Detach") not in ("Delete", "Detach"):
        raise _bad(f"Invalid osDisk.deleteOption {os_disk.get('deleteOption')!r}.")
    osp = props.get("osProfile") or {}
    user = osp.get("adminUsername") or ""
    if not user or user.lower() in RESERVED_USERS:
        raise _bad(f"The Admin Username specified is not allowed.", "InvalidParameter")
    if not _COMPUTER.match(osp.get("computerName") or "") or (osp.get("computerName") or "").isdigit():
        raise _bad("Linux host name cannot exceed 64 characters in length or contain the following characters: "
                   "` ~ ! @ # $ % ^ & * ( ) = + _ [ ] { } \\ | ; : ' \" , < > / ?.")
    linux = osp.get("linuxConfiguration") or {}
    keys = ((linux.get("ssh") or {}).get("publicKeys")) or []
    if linux.get("disablePasswordAuthentication") and not keys:
        raise _bad("Authentication using either SSH or by user name and password must be enabled in Linux profile.")
    for k in keys:
        if k.get("path") != f"/home/{user}/.ssh/authorized_keys":
            raise _bad(f"Destination path for SSH public keys is currently limited to its default value "
                       f"/home/{user}/.ssh/authorized_keys due to a known issue in Linux provisioning agent.")
        if not str(k.get("keyData", "")).startswith(("ssh-rsa ", "ssh-ed25519 ")):
            raise _bad("The value of parameter linuxConfiguration.ssh.publicKeys.keyData is invalid.")
    custom = osp.get("customData")
    if custom is not None:
        try:
            base64.b64decode(custom, validate=True)
        except (binascii.Error, ValueError):
            raise _bad("Custom data in OSProfile must be in Base64 encoding and with a maximum length of 87380 "
                       "characters.") from None
        if len(custom) > 87380:
            raise _bad("Custom data in OSProfile must be in Base64 encoding and with a maximum length of 87380 "
                       "characters.")
    nics = ((props.get("networkProfile") or {}).get("networkInterfaces")) or []
    if not nics:
        raise _bad("At least one network interface is required.")
    for ref in nics:
        nic = state.find(ref.get("id", ""))
        if nic is None:
            raise ArmError(404, "NotFound", f"Resource {ref.get('id')} not found.")
        require("Microsoft.Network/networkInterfaces/join/action", nic["id"])
        if nic["location"] != region:
            raise _bad(f"The network interface {nic['id']} is in location {nic['location']}, not {region}.",
                       "InvalidParameter")
        owner = nic["properties"].get("virtualMachine")
        if owner and owner["id"].lower() != rid.lower():
            raise _bad(f"Network interface {nic['id']} is used by virtual machine {owner['id']}.", "NicInUse")
        if (ref.get("properties") or {}).get("deleteOption", "Detach") not in ("Delete", "Detach"):
            raise _bad("Invalid networkInterfaces.deleteOption.")
    if props.get("priority") == "Spot":
        if props.get("evictionPolicy") not in ("Delete", "Deallocate"):
            raise _bad("Eviction policy can be set only for Spot VMs, and must be Delete or Deallocate.")
        max_price = (props.get("billingProfile") or {}).get("maxPrice", -1)
        if max_price != -1 and max_price <= 0:
            raise _bad("Max price must be -1 or greater than zero.", "InvalidMaxPrice")
    elif props.get("priority") not in (None, "Regular"):
        raise _bad(f"Invalid priority {props.get('priority')!r}.")
    ppg_ref = props.get("proximityPlacementGroup")
    if ppg_ref is not None:
        ppg = state.find(ppg_ref.get("id", ""))
        if ppg is None:
            raise ArmError(404, "NotFound", f"Proximity placement group {ppg_ref.get('id')} was not found.")
        if ppg["location"] != region:
            raise _bad(f"The proximity placement group {ppg['id']} is in location {ppg['location']}, not {region}.")
        if ppg.get("zones") and zones and ppg["zones"] != zones:
            raise _bad(f"The VM's zones {zones} differ from the proximity placement group's {ppg['zones']}.")
    if (props.get("securityProfile") or {}).get("encryptionAtHost"):
        if not size.encryption_at_host:
            raise _bad(f"Encryption at host is not supported for VM size {size_name}.")
        if "Microsoft.Compute/EncryptionAtHost" not in cfg.features:
            raise _bad("The property 'securityProfile.encryptionAtHost' is not valid because the "
                       "'Microsoft.Compute/EncryptionAtHost' feature is not enabled for this subscription.")
    return {"size": size, "region": region, "zones": zones, "disk_type": disk_type, "nics": nics}


def _check_quota(state: ArmState, ctx: Ctx, size: catalog.Size, region: str, spot: bool) -> None:
    used = state.usage(ctx.sub, region)
    names = ["lowPriorityCores"] if spot else ["cores", size.family]
    for n in names:
        limit, current = state.limit(ctx.sub, region, n), used.get(n, 0)
        if current + size.vcpus > limit:
            raise ArmError(409, "OperationNotAllowed", f"Operation could not be completed as it results in exceeding "
                           f"approved {n} Cores quota. Additional details - Deployment Model: Resource Manager, "
                           f"Location: {region}, Current Limit: {limit}, Current Usage: {current}, Additional "
                           f"Required: {size.vcpus}, (Minimum) New Limit Required: {current + size.vcpus}. Submit a "
                           "request for Quota increase at https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity"
                           "/UsageAndQuota.ReactView by specifying parameters listed in the 'Details' section for "
                           "deployment to succeed.")


def put_vm(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any], require) -> Reply:
    existing = state.find(rid)
    if existing is not None and existing["properties"]["provisioningState"] in ("Succeeded", "Creating", "Updating"):
        return Reply(200, vm_json(existing, False))  # nothing changes: an idempotent re-PUT
    if existing is not None:
        state.remove(rid)  # a Failed VM may be re-PUT
    c = _check_vm_body(state, ctx, rid, name, body, require)
    props = body["properties"]
    spot = props.get("priority") == "Spot"
    _check_quota(state, ctx, c["size"], c["region"], spot)
    group = rid.split("/")[4]
    os_disk = dict(props["storageProfile"]["osDisk"])
    os_disk.setdefault("name", f"{name}_OsDisk_1_{uuid.uuid4().hex}")
    disk_id = f"/subscriptions/{ctx.sub}/resourceGroups/{group}/providers/{DISK_TYPE}/{os_disk['name']}"
    os_disk["managedDisk"] = {**(os_disk.get("managedDisk") or {}), "id": disk_id}
    os_disk.setdefault("deleteOption", "Detach")
    os_disk.setdefault("diskSizeGB", 30)
    osp = {k: v for k, v in props["osProfile"].items() if k != "customData"}  # ARM never returns custom data
    image = dict(props["storageProfile"]["imageReference"])
    vm: dict[str, Any] = {
        "id": rid, "name": name, "type": VM_TYPE, "location": c["region"], "tags": dict(body.get("tags") or {}),
        "properties": {**props, "osProfile": osp, "vmId": str(uuid.uuid4()), "timeCreated": _now(),
                       "storageProfile": {**props["storageProfile"], "osDisk": {**os_disk, "osType": "Linux"},
                                          "imageReference": {**image, "exactVersion": "22.04.2025010101"}},
                       "provisioningState": "Creating"},
        "_custom_data": props["osProfile"].get("customData"),
    }
    if c["zones"]:
        vm["zones"] = c["zones"]
    if body.get("identity"):
        vm["identity"] = _vm_identity(state, ctx, body["identity"], require)
    state.store(vm)
    for ref in c["nics"]:
        state.find(ref["id"])["properties"]["virtualMachine"] = {"id": rid}
    ppg = state.find((props.get("proximityPlacementGroup") or {}).get("id", ""))
    if ppg is not None:
        ppg["properties"]["virtualMachines"].append({"id": rid})

    def done() -> None:
        zone = c["zones"][0] if c["zones"] else "*"
        gone = state.config(ctx.sub).no_capacity
        if (c["region"], c["size"].name, zone) in gone or (c["region"], c["size"].name, "*") in gone:
            if c["zones"]:
                raise ArmError(200, "ZonalAllocationFailed", "Allocation failed. We do not have sufficient capacity "
                               "for the requested VM size in this zone. Read more about improving likelihood of "
                               "allocation success at http://aka.ms/allocation-guidance")
            raise ArmError(200, "AllocationFailed", "Allocation failed. We do not have sufficient capacity for the "
                           "requested VM size in this region. Read more about improving likelihood of allocation "
                           "success at http://aka.ms/allocation-guidance")
        vm["properties"]["provisioningState"] = "Succeeded"
        vm["_power"] = "running"
        state.store({
            "id": disk_id, "name": os_disk["name"], "type": DISK_TYPE, "location": c["region"], "tags": {},
            "managedBy": rid, "sku": {"name": c["disk_type"], "tier": c["disk_type"].split("_")[0]},
            **({"zones": c["zones"]} if c["zones"] else {}),
            "properties": {"osType": "Linux", "hyperVGeneration": "V2", "diskSizeGB": os_disk["diskSizeGB"],
                           "diskState": "Attached", "provisioningState": "Succeeded", "timeCreated": _now(),
                           "encryption": {"type": "EncryptionAtRestWithPlatformKey"},
                           "creationData": {"createOption": "FromImage"}},
        })

    def failed(exc: ArmError) -> None:
        vm["properties"]["provisioningState"] = "Failed"
        vm["_error"] = exc.code

    op = state.new_operation(ctx, done, failed)
    return Reply(201, vm_json(vm, False), state.async_headers(ctx, NS, c["region"], op))


def _vm_identity(state: ArmState, ctx: Ctx, ident: dict[str, Any], require) -> dict[str, Any]:
    """The VM's ``identity`` as ARM echoes it: a system-assigned principal made now, each user-assigned identity
    (which must exist; attaching one needs ``…/userAssignedIdentities/assign/action`` on it) with its ids."""
    kind = ident.get("type") or ""
    parts = {p.strip() for p in kind.split(",")}
    if not parts or not parts <= {"SystemAssigned", "UserAssigned"}:
        raise _bad(f"Unsupported identity type {kind!r}.")
    out: dict[str, Any] = {"type": kind}
    if "SystemAssigned" in parts:
        out.update(principalId=str(uuid.uuid4()), tenantId=ctx.client.tenant)
        state.principals.add(out["principalId"])
    users = ident.get("userAssignedIdentities") or {}
    if ("UserAssigned" in parts) != bool(users):
        raise _bad("The identity type 'UserAssigned' needs userAssignedIdentities, and only it may have them.")
    if users:
        echoed = {}
        for uid in users:
            require("Microsoft.ManagedIdentity/userAssignedIdentities/assign/action", uid)
            found = state.find(uid)
            if found is None or found["type"] != "Microsoft.ManagedIdentity/userAssignedIdentities":
                raise ArmError(400, "FailedIdentityOperation", f"Identity operation for resource '{uid}' failed: "
                               "the user-assigned identity was not found.")
            echoed[found["id"]] = {"principalId": found["properties"]["principalId"],
                                   "clientId": found["properties"]["clientId"]}
        out["userAssignedIdentities"] = echoed
    return out


def remove_vm(state: ArmState, vm: dict[str, Any]) -> None:
    """Delete a VM now, with each part's deleteOption (also what a spot eviction with policy Delete does)."""
    os_disk = vm["properties"]["storageProfile"]["osDisk"]
    disk = state.find(os_disk["managedDisk"]["id"])
    if disk is not None:
        if os_disk.get("deleteOption") == "Delete":
            state.remove(disk["id"])
        else:
            disk["managedBy"] = None
            disk["properties"]["diskState"] = "Unattached"
    for ref in vm["properties"]["networkProfile"]["networkInterfaces"]:
        nic = state.find(ref["id"])
        if nic is None:
            continue
        nic["properties"]["virtualMachine"] = None
        if (ref.get("properties") or {}).get("deleteOption") == "Delete":
            release_nic(state, nic, delete_ips=True)
    if (vm.get("identity") or {}).get("principalId"):
        state.principals.discard(vm["identity"]["principalId"])
    ppg = state.find((vm["properties"].get("proximityPlacementGroup") or {}).get("id", ""))
    if ppg is not None:
        ppg["properties"]["virtualMachines"] = [v for v in ppg["properties"]["virtualMachines"]
                                                if v["id"].lower() != vm["id"].lower()]
    state.remove(vm["id"])


def delete_vm(state: ArmState, ctx: Ctx, vm: dict[str, Any]) -> Reply:
    vm["properties"]["provisioningState"] = "Deleting"
    op = state.new_operation(ctx, lambda: remove_vm(state, vm))
    return Reply(202, None, state.async_headers(ctx, NS, vm["location"], op, location_header=True))


def vm_action(state: ArmState, ctx: Ctx, vm: dict[str, Any], action: str) -> Reply:
    target = {"deallocate": "deallocated", "poweroff": "stopped", "start": "running", "restart": "running"}.get(action.lower())
    if target is None:
        raise ArmError(400, "InvalidResourceType", f"The resource type 'virtualMachines/{action}' could not be found.")
    if vm["properties"]["provisioningState"] != "Succeeded" and not (action.lower() == "deallocate"):
        raise ArmError(409, "OperationNotAllowed", f"Operation '{action}' is not allowed on VM '{vm['name']}' since "
                       f"the VM is in provisioning state {vm['properties']['provisioningState']}.")
    if action.lower() == "start" and vm.get("_power") == "deallocated":
        size = catalog.SIZES[vm["properties"]["hardwareProfile"]["vmSize"]]
        _check_quota(state, ctx, size, vm["location"], vm["properties"].get("priority") == "Spot")

    def done() -> None:
        vm["_power"] = target

    op = state.new_operation(ctx, done)
    return Reply(202, None, state.async_headers(ctx, NS, vm["location"], op, location_header=True))


# -- proximity placement groups -------------------------------------------------------
def put_ppg(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    """A proximity placement group (synchronous: 200 on update, 201 when new), as the compute API answers."""
    region = body.get("location")
    if not region:
        raise _bad("Required parameter 'location' is missing (null).")
    kind = (body.get("properties") or {}).get("proximityPlacementGroupType", "Standard")
    if kind not in ("Standard", "Ultra"):
        raise _bad(f"Invalid proximityPlacementGroupType {kind!r}.")
    existing = state.find(rid)
    ppg = {"id": rid, "name": name, "type": PPG_TYPE, "location": region, "tags": dict(body.get("tags") or {}),
           "properties": {"proximityPlacementGroupType": kind,
                          "virtualMachines": (existing or {}).get("properties", {}).get("virtualMachines", []),
                          "virtualMachineScaleSets": [], "availabilitySets": []}}
    if body.get("zones"):
        ppg["zones"] = list(body["zones"])
    state.store(ppg)
    return Reply(200 if existing else 201, public(ppg))


def delete_ppg(state: ArmState, ctx: Ctx, ppg: dict[str, Any]) -> Reply:
    if ppg["properties"]["virtualMachines"]:
        raise ArmError(409, "OperationNotAllowed", f"Proximity placement group {ppg['name']} is in use by virtual "
                       "machines; delete them first.")
    state.remove(ppg["id"])
    return Reply(200)


# -- disks ---------------------------------------------------------------------------
def put_disk(state: ArmState, ctx: Ctx, rid: str, name: str, body: dict[str, Any]) -> Reply:
    """An empty data disk (tests create orphans this way); 200 with the disk."""
    props = body.get("properties") or {}
    if (props.get("creationData") or {}).get("createOption") != "Empty" or not props.get("diskSizeGB"):
        raise _bad("Only empty disks with a diskSizeGB are supported here.")
    disk = {"id": rid, "name": name, "type": DISK_TYPE, "location": body["location"],
            "tags": dict(body.get("tags") or {}), "managedBy": None,
            "sku": {"name": (body.get("sku") or {}).get("name", "Premium_LRS")},
            "properties": {"diskSizeGB": props["diskSizeGB"], "diskState": "Unattached", "provisioningState": "Succeeded",
                           "timeCreated": _now(), "encryption": {"type": "EncryptionAtRestWithPlatformKey"},
                           "creationData": {"createOption": "Empty"}}}
    state.store(disk)
    return Reply(200, public(disk))


def patch_disk(state: ArmState, ctx: Ctx, disk: dict[str, Any], body: dict[str, Any]) -> Reply:
    if "tags" in body:
        disk["tags"] = dict(body["tags"] or {})
    return Reply(200, public(disk))


def delete_disk(state: ArmState, ctx: Ctx, disk: dict[str, Any]) -> Reply:
    if disk.get("managedBy"):
        raise ArmError(409, "OperationNotAllowed", f"Disk {disk['name']} is attached to VM {disk['managedBy']}.")
    op = state.new_operation(ctx, lambda: state.remove(disk["id"]))
    return Reply(202, None, state.async_headers(ctx, NS, disk["location"], op, location_header=True))
