"""A multi-node launch on Azure: N VMs of one size in the launch's resource group, close together.

In the group ``wb-<launch id>`` (one group per launch, as for one VM; teardown deletes it):

    PPG           wb-ppg            a proximity placement group every VM joins (low latency)
    NSG rule      allow-nodes       every port from the launch's subnet (10.0.0.0/24): the nodes talk
                                    to each other; SSH from outside stays the user's address only
    per node r    wb-ip, wb-nic, wb-vm, wb-osdisk for the head (r = 0, the names of a single VM);
                  wb-ip-r, wb-nic-r, wb-vm-r, wb-osdisk-r for the others; each VM tagged
                  ``workbench:node-rank``, its own guard role and auto-shutdown schedule

All N VM creations are started before any is awaited (one round of long-running operations),
and the launch is all or nothing: a capacity failure of any node deletes every VM of that
attempt (the next zone is tried); any other failure rolls the whole group back.  Sizes with
InfiniBand (``rdma``) want the HPC image (the profile's default ``microsoft-dsvm:ubuntu-hpc``:
drivers, NCCL and the IB stack); their instances say ``interconnect: infiniband``, which gives
the job the NCCL settings for it (``core.remote.cluster_files.INTERCONNECT_ENV``).

Threading: runs on the launcher's thread; the launch's cancel flag is checked between steps.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from workbench.core.domain.errors import CapacityError, NotFoundError, PluginError, WorkbenchError
from workbench.core.domain.models import Instance, LaunchRequest

from .inventory import TAG_INTERCONNECT, TAG_NODE_RANK, TAG_VM, VM_NAME, build_instance
from .self_delete import add_shutdown_schedule, grant_guard_role
from .skus import SizeInfo, text

#: the plugin's launch.Launcher (not imported here: launch imports this module)
Launcher = Any

log = logging.getLogger("workbench.azure.cluster")
PPG = "wb-ppg"
SUBNET_PREFIX = "10.0.0.0/24"
HPC_OFFERS = ("ubuntu-hpc", "almalinux-hpc")


def node_names(rank: int) -> dict[str, str]:
    """The resource names of node ``rank`` (the head keeps a single VM's names)."""
    suffix = "" if rank == 0 else f"-{rank}"
    return {"ip": f"wb-ip{suffix}", "nic": f"wb-nic{suffix}", "vm": f"{VM_NAME}{suffix}",
            "disk": f"wb-osdisk{suffix}"}


def nodes_rule() -> dict[str, Any]:
    return {"name": "allow-nodes", "properties": {
        "protocol": "*", "access": "Allow", "direction": "Inbound", "priority": 1010,
        "sourceAddressPrefix": SUBNET_PREFIX, "sourcePortRange": "*", "destinationAddressPrefix": SUBNET_PREFIX,
        "destinationPortRange": "*", "description": "the launch's nodes talk to each other"}}


def attempt(launcher: Launcher, req: LaunchRequest, group: str, region: str, zone: str | None, size: SizeInfo,
            deadline: float, step: Callable[[str, Callable[[], Any]], Any], group_tags: dict[str, str],
            nsg_id: str, subnet_id: str, sub: str, at_host: bool) -> list[Instance]:
    """Create the N nodes of ``req`` in ``group`` (network and NSG exist already); see the module doc."""
    c, lid, tags = launcher.clients, req.launch_id, dict(req.tags)
    gid = f"/subscriptions/{sub}/resourceGroups/{group}"
    if size.rdma and launcher.settings.image[1].lower() not in HPC_OFFERS:
        log.warning("launch %s: %s has InfiniBand but the profile's image %s is not an HPC image: NCCL may not "
                    "use InfiniBand", lid, size.name, ":".join(launcher.settings.image))
    ppg = step("creating the proximity placement group", lambda: c.compute.proximity_placement_groups.create_or_update(
        group, PPG, {"location": region, "tags": tags, **({"zones": [zone]} if zone else {}),
                     "properties": {"proximityPlacementGroupType": "Standard"}}))
    nics: list[Any] = []
    for rank in range(req.count):
        names = node_names(rank)
        pip = step(f"creating the public IP address of node {rank}", lambda n=names: c.network.public_ip_addresses
                   .begin_create_or_update(group, n["ip"], {
                       "location": region, "tags": tags, "sku": {"name": "Standard", "tier": "Regional"},
                       "properties": {"publicIPAllocationMethod": "Static", "publicIPAddressVersion": "IPv4"}}))
        nics.append(step(f"creating the network interface of node {rank}", lambda n=names, p=pip: c.network
                         .network_interfaces.begin_create_or_update(group, n["nic"], {
                             "location": region, "tags": tags, "properties": {
                                 "enableAcceleratedNetworking": size.accelerated_networking,
                                 "networkSecurityGroup": {"id": nsg_id},
                                 "ipConfigurations": [{"name": "ipconfig1", "properties": {
                                     "subnet": {"id": subnet_id}, "privateIPAllocationMethod": "Dynamic",
                                     "publicIPAddress": {"id": p.id, "properties": {"deleteOption": "Delete"}}}}]}})))
    extra_tags = {TAG_INTERCONNECT: "infiniband"} if size.rdma else {}
    try:
        pollers = _create_vms(launcher, req, group, region, zone, size, group_tags, extra_tags, nics, ppg.id, sub,
                              at_host)
    except PluginError as exc:
        s = launcher.settings
        if not (at_host and s.encryption_at_host == "auto" and "encryptionathost" in exc.message.lower()):
            raise
        log.warning("launch %s: encryption at host refused (%s); creating the VMs without it", lid, exc.message)
        launcher._host_encryption_refused = True
        delete_vms(launcher, group, req.count)
        pollers = _create_vms(launcher, req, group, region, zone, size, group_tags, extra_tags, nics, ppg.id, sub,
                              False)
    vms: dict[int, Any] = {}
    capacity: CapacityError | None = None
    for rank, names, poller in pollers:  # wait for all, even after a failure: each one must be known
        try:
            vms[rank] = launcher._wait(poller, lid, deadline, f"creating VM {names['vm']}")
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            err = c.error(exc, f"creating VM {names['vm']} in {region}" + (f" zone {zone}" if zone else ""))
            if not isinstance(err, CapacityError):
                raise err from None
            capacity = capacity or err
            continue
        if text(vms[rank].provisioning_state).lower() == "failed":
            capacity = capacity or CapacityError(f"VM {names['vm']} ({size.name}) in {region} ended in provisioning "
                                                 "state Failed")
    if capacity is not None:
        delete_vms(launcher, group, req.count)
        raise capacity
    out = []
    for rank, names, _ in pollers:
        vm = vms[rank]
        step(f"tagging the OS disk of node {rank}", lambda n=names: c.compute.disks.begin_update(group, n["disk"],
                                                                                                 {"tags": tags}))
        grant_guard_role(c, gid, vm, sub, lid if rank == 0 else f"{lid}/node-{rank}", deadline,
                         lambda: launcher._check(lid))
        add_shutdown_schedule(c, req, region, gid, tags, vm_name=names["vm"])
    step("marking the launch group", lambda: c.resources.resource_groups.update(
        group, {"tags": {**group_tags, TAG_VM: "created"}}))
    for rank, names, _ in pollers:
        full = step(f"reading VM {names['vm']}", lambda n=names: c.compute.virtual_machines.get(
            group, n["vm"], expand="instanceView"))
        nic = nics[rank]
        ip = c.network.public_ip_addresses.get(group, names["ip"]).ip_address
        inst = build_instance(full, group, {**group_tags, TAG_VM: "created"}, launcher.profile, sub, ip)
        private = nic.ip_configurations[0].private_ip_address if nic.ip_configurations else None
        out.append(inst.with_state(inst.state, extra={**inst.extra, "node_rank": rank, "num_nodes": req.count,
                                                      "private_ip": private, "ppg": ppg.id}))
    log.info("launch %s: %d × %s running in %s%s", lid, req.count, size.name, region, f" zone {zone}" if zone else "")
    return out


def _create_vms(launcher: Launcher, req: LaunchRequest, group: str, region: str, zone: str | None,
                size: SizeInfo, group_tags: dict[str, str], extra_tags: dict[str, str], nics: list[Any], ppg_id: str,
                sub: str, at_host: bool) -> list[tuple[int, dict[str, str], Any]]:
    """Start every node's VM creation (none is awaited here); (rank, names, poller) each."""
    c, lid = launcher.clients, req.launch_id
    pollers = []
    for rank, nic in enumerate(nics):
        names = node_names(rank)
        body = launcher._vm_body(req, region, zone, size, {**group_tags, **extra_tags, TAG_NODE_RANK: str(rank)},
                                 nic.id, sub, group, at_host)
        props = body["properties"]
        props["proximityPlacementGroup"] = {"id": ppg_id}
        props["storageProfile"]["osDisk"]["name"] = names["disk"]
        props["osProfile"]["computerName"] = (props["osProfile"]["computerName"][:59] + (f"-{rank}" if rank else ""))
        launcher._check(lid)
        try:
            pollers.append((rank, names, c.compute.virtual_machines.begin_create_or_update(group, names["vm"], body)))
        except Exception as exc:  # noqa: BLE001 - mapped
            raise c.error(exc, f"creating VM {names['vm']} in {region}") from None
    return pollers


def delete_vms(launcher: Launcher, group: str, count: int) -> None:
    """Delete a failed attempt's VMs (their NICs and IPs go with them: deleteOption Delete)."""
    c = launcher.clients
    pollers = []
    for rank in range(count):
        try:
            pollers.append(c.compute.virtual_machines.begin_delete(group, node_names(rank)["vm"]))
        except Exception as exc:  # noqa: BLE001 - mapped; a missing VM is fine
            err = c.error(exc, f"deleting the failed VMs in {group}")
            if not isinstance(err, NotFoundError):
                raise err from None
    for poller in pollers:
        try:
            poller.result(timeout=launcher.settings.terminate_timeout_s)
        except Exception as exc:  # noqa: BLE001 - mapped
            err = c.error(exc, f"deleting the failed VMs in {group}")
            if not isinstance(err, NotFoundError):
                raise err from None


def existing(launcher: Launcher, group: str, group_tags: dict[str, str], req: LaunchRequest) -> list[Instance] | None:
    """The nodes of a launch that already has all of them (a repeated launch call), else None."""
    c = launcher.clients
    try:
        vms = list(c.compute.virtual_machines.list(group))
    except Exception as exc:  # noqa: BLE001 - mapped
        err = c.error(exc, f"listing the VMs of {group}")
        if isinstance(err, NotFoundError):
            return None
        raise err from None
    if len(vms) < req.count or any(text(v.provisioning_state).lower() == "failed" for v in vms):
        return None
    out = []
    for vm in vms:
        rank = int((vm.tags or {}).get(TAG_NODE_RANK, "0") or 0)
        inst = launcher._instance(vm, group, group_tags, node_names(rank)["ip"])
        out.append(inst.with_state(inst.state, extra={**inst.extra, "node_rank": rank, "num_nodes": req.count}))
    return sorted(out, key=lambda i: i.extra["node_rank"])


__all__ = ["PPG", "TAG_INTERCONNECT", "TAG_NODE_RANK", "attempt", "existing", "node_names", "nodes_rule",
           "PluginError"]
