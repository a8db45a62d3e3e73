"""Launch one job on Azure: a resource group per launch, network, VM, guard identity, auto-shutdown.

Layout of launch ``L`` (every resource tagged with the launch's three tags; a multi-node launch
adds a proximity placement group and one IP, NIC, VM and disk per node: :mod:`.cluster`):

    resource group  wb-L              (also tagged workbench:name/size/gpu/price/spot; workbench:vm once the VM exists)
      NSG           wb-nsg            SSH (TCP 22) only from the profile's ssh_cidr
      VNet/subnet   wb-vnet/default   10.0.0.0/16, 10.0.0.0/24
      public IP     wb-ip             Standard, static
      NIC           wb-nic            accelerated networking where the size has it
      VM            wb-vm             the app's SSH key, custom data, system-assigned identity,
                                      deleteOption Delete on OS disk, NIC and public IP; spot: priority
                                      Spot, evictionPolicy Delete, maxPrice -1 or the job's cap;
                                      disks encrypted with platform keys, and at host where allowed
      OS disk       wb-osdisk         tagged after the VM exists (Azure does not copy VM tags)
      role assignment                 the VM's identity gets guard_role_id on wb-L (the guard may delete it)
                                      — not for the controller's VM (tag workbench:role=controller): it runs
                                      as the user-assigned identity workbench-controller alone, whose role
                                      already may delete its group (:mod:`.controller`)
      schedule      shutdown-computevm-wb-vm   DevTestLab auto-shutdown (deallocates) as a second line

Idempotent per launch id: an existing ``wb-L`` with its VM is returned as it is; a
group left by a crash mid-launch is completed (ARM PUTs are idempotent by name).

Capacity: AllocationFailed / ZonalAllocationFailed / SkuNotAvailable move on to the
next zone the profile allows (``zones``), then to the next region the job allows
(``spec.regions``); each failed attempt's VM (or, between regions, the whole group) is
deleted first.  Any other failure deletes the group and raises the mapped error.

Long-running operations go through the SDK pollers; the waiting loop checks the
cancel flag (:meth:`Launcher.cancel`) twice a second, and a cancelled launch is
rolled back like a failed one.  Threading: one launch per launch id at a time (the
app's per-profile mutation lane); ``cancel`` may be called from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from workbench.core.domain.errors import CapacityError, ConfigError, NotFoundError, PluginError, WorkbenchError
from workbench.core.domain.models import Instance, LaunchRequest
from workbench.core.paths import check_launch_id
from workbench.core.providers.contract import ProviderContext, TAG_OWNER

from . import cluster, controller, customdata
from .clients import AzureClients
from .self_delete import add_shutdown_schedule, grant_guard_role
from .inventory import (TAG_GPU, TAG_GPUS, TAG_NAME, TAG_PRICE, TAG_SIZE, TAG_SPOT, TAG_VM, VM_NAME, Inventory,
                        build_instance)
from .offers import OfferCatalog
from .skus import SizeInfo, text

log = logging.getLogger("workbench.azure.launch")
NSG, VNET, SUBNET, IP, NIC, OS_DISK = "wb-nsg", "wb-vnet", "default", "wb-ip", "wb-nic", "wb-osdisk"
MAX_NODES = 64


class Cancelled(WorkbenchError):
    """The user cancelled the launch; what it had created has been deleted."""

    kind = "cancelled"


def group_name(launch_id: str) -> str:
    name = f"wb-{check_launch_id(launch_id)}"
    if len(name) > 90 or name.endswith("."):
        raise ConfigError(f"launch id {launch_id!r} is too long for an Azure resource group name (90 characters)")
    return name


class Launcher:
    """Creates (and rolls back) the resources of one launch (see the module doc)."""

    def __init__(self, clients: AzureClients, catalog: OfferCatalog, inventory: Inventory,
                 context: ProviderContext, profile: str, ssh_cidr: Callable[[], str]) -> None:
        self.clients = clients
        self.settings = clients.settings
        self.catalog = catalog
        self.inventory = inventory
        self.context = context
        self.profile = profile
        self.ssh_cidr = ssh_cidr
        self._cancel: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._host_encryption_refused = False  # the subscription lacks the EncryptionAtHost feature

    # -- cancel --------------------------------------------------------------------------
    def cancel(self, launch_id: str) -> bool:
        """Ask a running launch to stop and roll back; False when none is running."""
        with self._lock:
            ev = self._cancel.get(launch_id)
        if ev is None:
            return False
        ev.set()
        return True

    def _check(self, launch_id: str) -> None:
        ev = self._cancel.get(launch_id)
        if ev is not None and ev.is_set():
            raise Cancelled(f"launch {launch_id} was cancelled")

    def _wait(self, poller: Any, launch_id: str, deadline: float, what: str) -> Any:
        while not poller.done():
            self._check(launch_id)
            if time.monotonic() >= deadline:
                raise PluginError(f"{what} did not finish in {self.settings.launch_timeout_s:g} s",
                                  hint="raise launch_timeout_s in the profile, or try again")
            poller.wait(0.5)
        return poller.result()

    # -- launch -----------------------------------------------------------------------------
    def launch(self, req: LaunchRequest) -> list[Instance]:
        if not 1 <= req.count <= MAX_NODES:
            raise ConfigError(f"an Azure launch starts 1 to {MAX_NODES} VMs, not {req.count}")
        lid = check_launch_id(req.launch_id)
        group = group_name(lid)
        existing = self._existing(group, req)
        if existing is not None:
            return existing if isinstance(existing, list) else [existing]
        with self._lock:
            if lid in self._cancel:
                raise PluginError(f"launch {lid} is already in progress")
            self._cancel[lid] = threading.Event()
        deadline = time.monotonic() + self.settings.launch_timeout_s
        try:
            got = self._launch(req, group, deadline)
            return got if isinstance(got, list) else [got]
        except BaseException as exc:
            err = exc if isinstance(exc, WorkbenchError) else self.clients.error(exc, f"launching {lid}")
            self._rollback(group, err)
            if isinstance(exc, WorkbenchError) or not isinstance(exc, Exception):
                raise
            raise err from None
        finally:
            with self._lock:
                self._cancel.pop(lid, None)

    def _existing(self, group: str, req: LaunchRequest) -> Instance | list[Instance] | None:
        rg = self.clients.resources.resource_groups
        try:
            g = rg.get(group)
        except Exception as exc:  # noqa: BLE001 - mapped
            err = self.clients.error(exc, f"looking up resource group {group}")
            if isinstance(err, NotFoundError):
                return None
            raise err from None
        if (g.tags or {}).get(TAG_OWNER) != req.tags.get(TAG_OWNER):
            raise ConfigError(f"resource group {group} exists but was not created by this install",
                              hint="choose another launch id")
        try:
            vm = self.clients.compute.virtual_machines.get(group, VM_NAME, expand="instanceView")
        except Exception as exc:  # noqa: BLE001 - mapped
            err = self.clients.error(exc, f"looking up the VM of {group}")
            if isinstance(err, NotFoundError):
                return None  # a launch that crashed before its VM: complete it
            raise err from None
        if text(vm.provisioning_state).lower() == "failed":
            return None
        if req.count > 1:
            return cluster.existing(self, group, dict(g.tags or {}), req)
        return self._instance(vm, g.name, dict(g.tags or {}))

    def _launch(self, req: LaunchRequest, group: str, deadline: float) -> Instance | list[Instance]:
        lid = req.launch_id
        if controller.is_controller(req.tags):
            if req.count != 1:
                raise ConfigError("the controller is one machine, not a multi-node launch")
            controller.require_identity(self.clients, self.clients.subscription_id())
        regions = [req.region] + [r for r in req.spec.regions if r != req.region]
        capacity: list[str] = []
        for n, region in enumerate(regions):
            self._check(lid)
            size = self.catalog.size(region, req.offer.instance_type)
            if size is None or size.unavailable:
                capacity.append(f"{region}: {size.unavailable if size else 'size not offered'}")
                continue
            if n > 0 and self._group_location(group) not in (None, region):
                self.inventory.delete_groups([group], self.settings.terminate_timeout_s)
            for zone in self.settings.zone_choices(size.zones):
                try:
                    return self._attempt(req, group, region, zone, size, deadline)
                except CapacityError as exc:
                    where = f"{region}" + (f" zone {zone}" if zone else "")
                    log.warning("launch %s: no capacity in %s: %s", lid, where, exc.message)
                    capacity.append(f"{where}: {exc.message}")
                    self._delete_vm(group)
        raise CapacityError(f"no capacity for {req.offer.instance_type} anywhere allowed: " + "; ".join(capacity),
                            hint="allow more regions in the job spec (regions:) or zones in the profile "
                                 "(zones=auto), or try another size or later")

    def _group_location(self, group: str) -> str | None:
        try:
            return self.clients.resources.resource_groups.get(group).location
        except Exception:  # noqa: BLE001 - absent or unreadable: nothing to move
            return None

    def _price(self, req: LaunchRequest, region: str) -> tuple[float, str]:
        if region == req.region:
            price = req.offer.hourly(req.spot)
            return price or 0.0, req.offer.prices.currency
        for o in self.catalog.region(region):
            if o.instance_type.lower() == req.offer.instance_type.lower():
                return o.hourly(req.spot) or 0.0, o.prices.currency
        return req.offer.hourly(req.spot) or 0.0, req.offer.prices.currency

    def _attempt(self, req: LaunchRequest, group: str, region: str, zone: str | None, size: SizeInfo,
                 deadline: float) -> Instance | list[Instance]:
        s, lid, c = self.settings, req.launch_id, self.clients
        price, currency = self._price(req, region)
        tags = dict(req.tags)
        group_tags = {**tags, TAG_NAME: req.spec.name[:250], TAG_SIZE: size.name, TAG_GPU: size.gpu_model or "",
                      TAG_GPUS: str(size.gpus), TAG_PRICE: f"{price:.6g} {currency}", TAG_SPOT: str(req.spot).lower()}
        sub = c.subscription_id()
        gid = f"/subscriptions/{sub}/resourceGroups/{group}"
        net = c.network

        def step(what: str, fn: Callable[[], Any]) -> Any:
            self._check(lid)
            try:
                result = fn()
                return self._wait(result, lid, deadline, what) if hasattr(result, "done") else result
            except WorkbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - mapped
                raise c.error(exc, what) from None

        step(f"creating resource group {group}", lambda: c.resources.resource_groups.create_or_update(
            group, {"location": region, "tags": group_tags}))
        cidr = self.ssh_cidr()
        rules = [{"name": "allow-ssh", "properties": {
            "protocol": "Tcp", "access": "Allow", "direction": "Inbound", "priority": 1000,
            "sourceAddressPrefix": cidr, "sourcePortRange": "*", "destinationAddressPrefix": "*",
            "destinationPortRange": "22", "description": "SSH from the workbench user's address only"}}]
        if req.count > 1:
            rules.append(cluster.nodes_rule())
        nsg = step("creating the network security group", lambda: net.network_security_groups.begin_create_or_update(
            group, NSG, {"location": region, "tags": tags, "properties": {"securityRules": rules}}))
        vnet = step("creating the virtual network", lambda: net.virtual_networks.begin_create_or_update(
            group, VNET, {"location": region, "tags": tags, "properties": {
                "addressSpace": {"addressPrefixes": ["10.0.0.0/16"]},
                "subnets": [{"name": SUBNET, "properties": {"addressPrefix": "10.0.0.0/24"}}]}}))
        if req.count > 1:
            at_host = s.encryption_at_host == "on" or (s.encryption_at_host == "auto" and size.encryption_at_host
                                                       and not self._host_encryption_refused)
            return cluster.attempt(self, req, group, region, zone, size, deadline, step, group_tags, nsg.id,
                                   f"{vnet.id}/subnets/{SUBNET}", sub, at_host)
        pip = step("creating the public IP address", lambda: net.public_ip_addresses.begin_create_or_update(
            group, IP, {"location": region, "tags": tags, "sku": {"name": "Standard", "tier": "Regional"},
                        "properties": {"publicIPAllocationMethod": "Static", "publicIPAddressVersion": "IPv4"}}))
        nic = step("creating the network interface", lambda: net.network_interfaces.begin_create_or_update(
            group, NIC, {"location": region, "tags": tags, "properties": {
                "enableAcceleratedNetworking": size.accelerated_networking,
                "networkSecurityGroup": {"id": nsg.id},
                "ipConfigurations": [{"name": "ipconfig1", "properties": {
                    "subnet": {"id": f"{vnet.id}/subnets/{SUBNET}"}, "privateIPAllocationMethod": "Dynamic",
                    "publicIPAddress": {"id": pip.id, "properties": {"deleteOption": "Delete"}}}}]}}))
        at_host = s.encryption_at_host == "on" or (s.encryption_at_host == "auto" and size.encryption_at_host
                                                   and not self._host_encryption_refused)
        body = self._vm_body(req, region, zone, size, {**group_tags}, nic.id, sub, group, at_host)
        try:
            vm = step(f"creating VM {size.name} in {region}" + (f" zone {zone}" if zone else ""),
                      lambda: c.compute.virtual_machines.begin_create_or_update(group, VM_NAME, body))
        except PluginError as exc:
            if not (at_host and s.encryption_at_host == "auto" and "encryptionathost" in exc.message.lower()):
                raise
            log.warning("launch %s: encryption at host refused (%s); creating the VM without it", lid, exc.message)
            self._host_encryption_refused = True
            self._delete_vm(group)
            body = self._vm_body(req, region, zone, size, {**group_tags}, nic.id, sub, group, False)
            at_host = False
            vm = step(f"creating VM {size.name} in {region}",
                      lambda: c.compute.virtual_machines.begin_create_or_update(group, VM_NAME, body))
        if text(vm.provisioning_state).lower() == "failed":
            raise CapacityError(f"VM {size.name} in {region} ended in provisioning state Failed")
        step("tagging the OS disk", lambda: c.compute.disks.begin_update(group, OS_DISK, {"tags": tags}))
        if not controller.is_controller(req.tags):
            grant_guard_role(self.clients, gid, vm, sub, lid, deadline, lambda: self._check(lid))
        shutdown = add_shutdown_schedule(self.clients, req, region, gid, tags)
        step("marking the launch group", lambda: c.resources.resource_groups.update(
            group, {"tags": {**group_tags, TAG_VM: "created"}}))
        full = step("reading the VM", lambda: c.compute.virtual_machines.get(group, VM_NAME, expand="instanceView"))
        inst = build_instance(full, group, {**group_tags, TAG_VM: "created"}, self.profile, sub,
                              getattr(pip, "ip_address", None))
        extra = {**inst.extra, "disk_encryption": "platform-managed keys" + (" + encryption at host" if at_host else ""),
                 "ssh_cidr": cidr, "auto_shutdown_utc": shutdown}
        log.info("launch %s: %s running in %s%s", lid, size.name, region, f" zone {zone}" if zone else "")
        return inst.with_state(inst.state, extra=extra)

    def _vm_body(self, req: LaunchRequest, region: str, zone: str | None, size: SizeInfo, tags: dict[str, str],
                 nic_id: str, sub: str, group: str, at_host: bool) -> dict[str, Any]:
        s = self.settings
        from workbench.core.providers.sshkeys import ensure_keypair

        key = ensure_keypair(self.context.data_dir).public_openssh
        publisher, offer, sku, version = s.image
        data = customdata.render(req.launch_id, req.tags.get(TAG_OWNER, ""), req.spec, s.ssh_user,
                                 subscription_id=sub, resource_group=group, arm_endpoint=s.arm_endpoint,
                                 arm_audience=s.arm_audience)
        props: dict[str, Any] = {
            "hardwareProfile": {"vmSize": size.name},
            "storageProfile": {
                "imageReference": {"publisher": publisher, "offer": offer, "sku": sku, "version": version},
                "osDisk": {"name": OS_DISK, "createOption": "FromImage", "deleteOption": "Delete", "caching": "ReadWrite",
                           "diskSizeGB": _os_disk_gb(req),
                           "managedDisk": {"storageAccountType": _os_disk_type(req, size.premium_io)}}},
            "osProfile": {
                "computerName": ("wb-" + "".join(ch if ch.isalnum() else "-" for ch in req.launch_id))[:63].strip("-"),
                "adminUsername": s.ssh_user, "customData": customdata.encode(data),
                "linuxConfiguration": {"disablePasswordAuthentication": True, "ssh": {"publicKeys": [
                    {"path": f"/home/{s.ssh_user}/.ssh/authorized_keys", "keyData": key}]}}},
            "networkProfile": {"networkInterfaces": [{"id": nic_id, "properties": {"primary": True,
                                                                                   "deleteOption": "Delete"}}]},
            "diagnosticsProfile": {"bootDiagnostics": {"enabled": True}},
        }
        if at_host:
            props["securityProfile"] = {"encryptionAtHost": True}
        if req.spot:
            cap = req.spec.resources.max_price
            props.update(priority="Spot", evictionPolicy="Delete", billingProfile={"maxPrice": cap if cap else -1})
        identity = controller.vm_identity(sub) if controller.is_controller(req.tags) else {"type": "SystemAssigned"}
        body: dict[str, Any] = {"location": region, "tags": tags, "identity": identity, "properties": props}
        if zone:
            body["zones"] = [zone]
        return body

    def _instance(self, vm: Any, group: str, group_tags: dict[str, str], ip_name: str = IP) -> Instance:
        ip = None
        try:
            ip = self.clients.network.public_ip_addresses.get(group, ip_name).ip_address
        except Exception:  # noqa: BLE001 - the address is a convenience; listing fills it later
            pass
        return build_instance(vm, group, group_tags, self.profile, self.clients.subscription_id(), ip)

    # -- clean-up ---------------------------------------------------------------------------
    def _delete_vm(self, group: str) -> None:
        """Delete a failed attempt's VM (its NIC and IP go with it: deleteOption Delete); a multi-node
        attempt deleted its own VMs already (``cluster.delete_vms``)."""
        try:
            self.clients.compute.virtual_machines.begin_delete(group, VM_NAME).result(
                timeout=self.settings.terminate_timeout_s)
        except Exception as exc:  # noqa: BLE001 - mapped; a missing VM is fine
            err = self.clients.error(exc, f"deleting the failed VM in {group}")
            if not isinstance(err, NotFoundError):
                raise err from None

    def _rollback(self, group: str, cause: WorkbenchError) -> None:
        try:
            self.inventory.delete_groups([group], self.settings.terminate_timeout_s)
            log.info("rolled back %s after: %s", group, cause.message)
        except WorkbenchError as exc:
            log.error("rollback of %s failed: %s", group, exc.message)
            cause.hint = ((cause.hint + "; ") if cause.hint else "") + (
                f"cleaning up resource group {group} failed too ({exc.message}): run `workbench down` for this "
                "launch or delete the group in the Azure portal")


def _os_disk_gb(req: LaunchRequest) -> int:
    """A job's OS disk: at least 64 GB (drivers, images, caches); the controller's: what it asked for (the 32 GiB
    Standard HDD its all-in price counts: core/money/controller_cost), never below 30 GB (the images' own)."""
    if controller.is_controller(req.tags):
        return max(int(req.spec.resources.disk_gb or 0), 30)
    return max(int(req.spec.resources.disk_gb or 0), 64)


def _os_disk_type(req: LaunchRequest, premium_io: bool) -> str:
    if controller.is_controller(req.tags):
        return "Standard_LRS"  # the cheapest managed disk: the controller reads and writes little
    return "Premium_LRS" if premium_io else "StandardSSD_LRS"
