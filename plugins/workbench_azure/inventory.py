"""Reconcile and teardown: everything this install created, found by tags across the subscription.

* :meth:`Inventory.instances` — VMs tagged with this install's owner tag (one
  ``list_all(statusOnly)`` call gives their power states), their public IPs (one
  listing) and the launch's resource group.  A launch group whose VM has gone (a spot
  eviction with policy Delete, or a delete outside the app) shows as TERMINATED with
  the reason, so the user sees what happened; nothing of it bills but the group.
* :meth:`Inventory.leftovers` — launch groups without a VM (their contents, with an
  estimated price), and tagged billable resources outside any launch group (detached
  disks, public IPs).
* :meth:`Inventory.terminate` / :meth:`Inventory.delete` — delete resource groups
  (one long-running operation each, all started before any is awaited) and verify
  each is gone; resources outside groups are deleted one by one.  Already gone is
  success; failures are reported resource by resource.

State is rebuilt from Azure alone: nothing here reads the app's store.
Threading: callable from any worker thread; no state of its own.
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import Any, Sequence

from workbench.core.domain.errors import NotFoundError, PluginError, WorkbenchError
from workbench.core.domain.models import Instance, InstanceState, Resource
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER

from workbench.core.providers import price_snapshot
from .clients import AzureClients
from .skus import gpu_of, text

log = logging.getLogger("workbench.azure.inventory")
PROVIDER = "azure"
TAG_NAME, TAG_PRICE, TAG_SPOT, TAG_VM = "workbench:name", "workbench:price", "workbench:spot", "workbench:vm"
TAG_SIZE, TAG_GPU, TAG_GPUS = "workbench:size", "workbench:gpu", "workbench:gpus"
VM_NAME = "wb-vm"
TAG_NODE_RANK, TAG_INTERCONNECT = "workbench:node-rank", "workbench:interconnect"  # multi-node launches
POWER = {"running": InstanceState.RUNNING, "starting": InstanceState.PENDING, "stopping": InstanceState.STOPPING,
         "stopped": InstanceState.STOPPED, "deallocating": InstanceState.STOPPING,
         "deallocated": InstanceState.DEALLOCATED}
STOPPED_NOTE = "Stopped but not deallocated: Azure still bills the compute. Deallocate (Stop) or terminate it."
#: approximate pay-as-you-go list prices (USD per month, LRS, East US) by disk tier, for leftovers
DISK_MONTHLY = {
    "premium": ((32, 5.28), (64, 10.21), (128, 19.71), (256, 38.02), (512, 73.22), (1024, 135.17), (2048, 259.05),
                (4096, 495.57)),
    "standardssd": ((32, 2.40), (64, 4.80), (128, 9.60), (256, 19.20), (512, 38.40), (1024, 76.80), (2048, 153.60),
                    (4096, 307.20)),
    "standard": ((32, 1.54), (64, 3.01), (128, 5.89), (256, 11.33), (512, 21.76), (1024, 40.96), (2048, 77.83),
                 (4096, 143.36)),
}
PUBLIC_IP_HOURLY = 0.005  # Standard static IPv4
BILLABLE_TYPES = {"microsoft.compute/disks", "microsoft.network/publicipaddresses"}  # what the app creates that bills


def group_of(resource_id: str) -> str:
    parts = resource_id.split("/")
    return parts[4] if len(parts) > 4 and parts[3].lower() == "resourcegroups" else ""


def disk_hourly(sku: str | None, size_gb: float | None) -> float | None:
    tier = (sku or "").split("_")[0].lower()
    table = DISK_MONTHLY.get(tier)
    if table is None or not size_gb:
        return None
    for cap, monthly in table:
        if size_gb <= cap:
            return round(monthly / 730, 5)
    return round(table[-1][1] / 730 * (size_gb / table[-1][0]), 5)


def _state(vm: Any) -> tuple[InstanceState, str, str]:
    view = getattr(vm, "instance_view", None)
    codes = [text(s.code) for s in (getattr(view, "statuses", None) or [])]
    power = next((c.split("/", 1)[1] for c in codes if c.startswith("PowerState/")), "")
    prov = text(getattr(vm, "provisioning_state", ""))
    if prov.lower() == "deleting":
        return InstanceState.TERMINATING, power, prov
    if power in POWER:
        return POWER[power], power, prov
    if prov.lower() in ("creating", "updating", ""):
        return InstanceState.PENDING, power, prov
    return InstanceState.UNKNOWN, power, prov  # e.g. Failed without a power state: may still bill


def _price(tags: dict[str, str], region: str, size: str, spot: bool) -> tuple[float, str]:
    raw = tags.get(TAG_PRICE, "")
    try:
        value, currency = raw.split()
        return float(value), currency
    except ValueError:
        row = price_snapshot.load(PROVIDER).find(region, size)
        hourly = (row.spot if spot else row.on_demand) if row else None
        return (hourly or 0.0), (row.currency if row else "USD")


def build_instance(vm: Any, group_name: str, group_tags: dict[str, str], profile: str, sub: str,
                   ip: str | None, private_ip: str | None = None) -> Instance:
    tags = {**group_tags, **dict(vm.tags or {})}
    state, power, prov = _state(vm)
    spot = text(getattr(vm, "priority", "")) == "Spot"
    size = text(vm.hardware_profile.vm_size)
    price, currency = _price(tags, vm.location, size, spot)
    created = getattr(vm, "time_created", None)
    shape = price_snapshot.load(PROVIDER).shape(size)
    model = shape.gpu_model if shape else gpu_of("", size)[0]
    extra: dict[str, Any] = {"ssh_user": vm.os_profile.admin_username if vm.os_profile else None,
                             "zone": (vm.zones or [None])[0], "spot": spot, "resource_group": group_name,
                             "power_state": power or None, "provisioning_state": prov or None,
                             "subscription_id": sub, "vm_name": vm.name}
    if state == InstanceState.STOPPED:
        extra["billing_note"] = STOPPED_NOTE
    vm_tags = dict(vm.tags or {})
    if str(vm_tags.get(TAG_NODE_RANK, "")).isdigit():
        extra["node_rank"] = int(vm_tags[TAG_NODE_RANK])
    if vm_tags.get(TAG_INTERCONNECT):
        extra["interconnect"] = vm_tags[TAG_INTERCONNECT]
    if private_ip:
        extra["private_ip"] = private_ip
    return Instance(
        provider=PROVIDER, profile=profile,
        instance_id=f"/subscriptions/{sub}/resourceGroups/{group_name}/providers/Microsoft.Compute/virtualMachines/{vm.name}",
        launch_id=tags.get(TAG_LAUNCH, ""), region=vm.location, instance_type=size, state=state,
        name=tags.get(TAG_NAME, ""), gpu_model=tags.get(TAG_GPU) or model,
        gpu_count=int(tags.get(TAG_GPUS) or (shape.gpu_count if shape else 0)),
        price_per_hour=price,
        currency=currency, spot=spot, launched_at=created.timestamp() if isinstance(created, datetime.datetime) else None,
        host=ip, extra=extra)


class Inventory:
    """Tag-based listing and deletion for one profile (see the module doc)."""

    def __init__(self, clients: AzureClients, profile: str, owner: str) -> None:
        self.clients = clients
        self.profile = profile
        self.owner = owner

    def _owner_filter(self) -> str:
        return f"tagName eq '{TAG_OWNER}' and tagValue eq '{self.owner}'"

    def _ours(self, tags: dict[str, str] | None) -> bool:
        tags = tags or {}
        return tags.get(TAG_OWNER) == self.owner and tags.get(TAG_MANAGED) == "true"

    def groups(self) -> dict[str, Any]:
        """This install's launch groups by lower-case name."""
        try:
            found = self.clients.resources.resource_groups.list(filter=self._owner_filter())
            return {g.name.lower(): g for g in found if self._ours(g.tags)}
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing resource groups") from None

    def _vms(self) -> list[Any]:
        try:
            return [v for v in self.clients.compute.virtual_machines.list_all(status_only="true") if self._ours(v.tags)]
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing virtual machines") from None

    def _ips(self) -> dict[str, str]:
        """NIC id (lower case) → public IP address, for this install's public IPs."""
        try:
            out = {}
            for pip in self.clients.network.public_ip_addresses.list_all():
                cfg = getattr(pip, "ip_configuration", None)
                if self._ours(pip.tags) and cfg is not None and cfg.id and pip.ip_address:
                    out[cfg.id.split("/ipConfigurations/")[0].lower()] = pip.ip_address
            return out
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing public IP addresses") from None

    def _private_ips(self) -> dict[str, str]:
        """NIC id (lower case) → private address, for this install's NICs (multi-node launches need them)."""
        try:
            out = {}
            for nic in self.clients.network.network_interfaces.list_all():
                configs = getattr(nic, "ip_configurations", None) or []
                if self._ours(nic.tags) and configs and configs[0].private_ip_address:
                    out[(nic.id or "").lower()] = configs[0].private_ip_address
            return out
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing network interfaces") from None

    def instances(self) -> list[Instance]:
        sub = self.clients.subscription_id()
        groups = self.groups()
        vms = self._vms()
        ips = self._ips() if vms else {}
        privates = self._private_ips() if any(TAG_NODE_RANK in (v.tags or {}) for v in vms) else {}
        out, with_vm = [], set()
        for vm in vms:
            gname = group_of(vm.id)
            group = groups.get(gname.lower())
            with_vm.add(gname.lower())
            nic = next(iter(vm.network_profile.network_interfaces or []), None) if vm.network_profile else None
            nic_id = (nic.id or "").lower() if nic else ""
            out.append(build_instance(vm, group.name if group else gname, dict(group.tags or {}) if group else {},
                                      self.profile, sub, ips.get(nic_id), privates.get(nic_id)))
        for key, g in groups.items():
            tags = dict(g.tags or {})
            if key in with_vm or tags.get(TAG_VM) != "created" or _deleting(g):
                continue
            spot = tags.get(TAG_SPOT) == "true"
            out.append(Instance(
                provider=PROVIDER, profile=self.profile,
                instance_id=f"/subscriptions/{sub}/resourceGroups/{g.name}/providers/Microsoft.Compute/virtualMachines/{VM_NAME}",
                launch_id=tags.get(TAG_LAUNCH, ""), region=g.location, instance_type=tags.get(TAG_SIZE, ""),
                state=InstanceState.TERMINATED, name=tags.get(TAG_NAME, ""), spot=spot,
                extra={"resource_group": g.name, "subscription_id": sub, "evicted": spot,
                       "reason": "evicted (spot capacity reclaimed)" if spot else "the VM was deleted outside the app"}))
        return out

    def leftovers(self) -> list[Resource]:
        sub = self.clients.subscription_id()
        groups = self.groups()
        live = {group_of(v.id).lower() for v in self._vms()}
        try:
            tagged = list(self.clients.resources.resources.list(filter=self._owner_filter()))
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing tagged resources") from None
        inside: dict[str, list[Any]] = {}
        out = []
        for r in tagged:
            g = group_of(r.id).lower()
            if g in groups:
                inside.setdefault(g, []).append(r)
            elif self._ours(r.tags) and text(r.type).lower() in BILLABLE_TYPES and not getattr(r, "managed_by", None):
                out.append(self._resource(r, sub))
        for key, g in groups.items():
            if key in live or _deleting(g):
                continue
            contents = inside.get(key, [])
            prices = [p for p in (self._hourly(r) for r in contents) if p is not None]
            out.append(Resource(
                provider=PROVIDER, profile=self.profile, resource_id=g.id, kind="resource_group", region=g.location,
                launch_id=(g.tags or {}).get(TAG_LAUNCH), extra={
                    "name": g.name, "contains": [f"{r.type}/{r.name}" for r in contents],
                    "price_per_hour": round(sum(prices), 5) if prices else 0.0,
                    "note": "launch group without a VM; deleting it deletes everything in it"}))
        return out

    def _hourly(self, r: Any) -> float | None:
        t = text(r.type).lower()
        if t == "microsoft.network/publicipaddresses":
            return PUBLIC_IP_HOURLY
        if t == "microsoft.compute/disks":
            try:
                disk = self.clients.compute.disks.get(group_of(r.id), r.name)
            except Exception:  # noqa: BLE001 - a price estimate is best effort
                return None
            return disk_hourly(getattr(disk.sku, "name", None), getattr(disk, "disk_size_gb", None))
        return None

    def _resource(self, r: Any, sub: str) -> Resource:
        return Resource(provider=PROVIDER, profile=self.profile, resource_id=r.id, kind=text(r.type).split("/")[-1],
                        region=r.location, launch_id=(r.tags or {}).get(TAG_LAUNCH),
                        extra={"name": r.name, "resource_group": group_of(r.id), "price_per_hour": self._hourly(r)})

    # -- deleting ------------------------------------------------------------------------------
    def delete_groups(self, names: Sequence[str], timeout: float) -> None:
        """Delete resource groups in parallel, wait, verify each is gone; PluginError naming what is left."""
        rg = self.clients.resources.resource_groups
        pollers, problems = {}, {}
        for name in dict.fromkeys(names):
            try:
                pollers[name] = rg.begin_delete(name)
            except Exception as exc:  # noqa: BLE001 - collected per group
                err = self.clients.error(exc, f"deleting resource group {name}")
                if not isinstance(err, NotFoundError):
                    problems[name] = err
        deadline = time.monotonic() + timeout
        for name, poller in pollers.items():
            try:
                poller.result(timeout=max(1.0, deadline - time.monotonic()))
                if not poller.done():
                    problems[name] = PluginError(f"deleting resource group {name} did not finish in {timeout:g} s")
            except Exception as exc:  # noqa: BLE001 - collected per group
                err = self.clients.error(exc, f"deleting resource group {name}")
                if not isinstance(err, NotFoundError):
                    problems[name] = err
        for name in pollers:
            if name not in problems and self._group_exists(name):
                problems[name] = PluginError(f"resource group {name} still exists after its deletion finished")
        if problems:
            raise self._report(problems)

    def _group_exists(self, name: str) -> bool:
        try:
            g = self.clients.resources.resource_groups.get(name)
        except Exception as exc:  # noqa: BLE001 - mapped
            err = self.clients.error(exc, f"checking resource group {name}")
            if isinstance(err, NotFoundError):
                return False
            raise err from None
        return not _deleting(g)

    def _report(self, problems: dict[str, WorkbenchError]) -> WorkbenchError:
        lines = []
        for name, err in problems.items():
            try:
                left = [f"{r.type}/{r.name}" for r in self.clients.resources.resources.list_by_resource_group(name)]
            except Exception:  # noqa: BLE001 - the listing is extra detail only
                left = []
            lines.append(f"{name}: {err.message}" + (f" (still there: {', '.join(left)})" if left else ""))
        first = next(iter(problems.values()))
        cls = type(first) if len(problems) == 1 else PluginError
        out = cls("could not delete everything: " + "; ".join(lines),
                  hint=first.hint or "retry; or delete the resource group in the Azure portal")
        return out

    def delete_resources(self, resources: Sequence[Resource], timeout: float) -> None:
        groups = [r.extra.get("name") or r.resource_id.rsplit("/", 1)[-1] for r in resources if r.kind == "resource_group"]
        problems: dict[str, WorkbenchError] = {}
        if groups:
            try:
                self.delete_groups(groups, timeout)
            except WorkbenchError as exc:
                problems["resource groups"] = exc
        for r in resources:
            if r.kind == "resource_group":
                continue
            try:
                self._delete_one(r.resource_id)
            except WorkbenchError as exc:
                if not isinstance(exc, NotFoundError):
                    problems[r.resource_id] = exc
        if problems:
            first = next(iter(problems.values()))
            raise PluginError("could not delete: " + "; ".join(f"{k}: {v.message}" for k, v in problems.items()),
                              hint=first.hint)

    def _delete_one(self, rid: str) -> None:
        parts = rid.split("/")
        group, rtype, name = group_of(rid), "/".join(parts[6:8]).lower(), parts[-1]
        try:
            if rtype == "microsoft.compute/disks":
                self.clients.compute.disks.begin_delete(group, name).result()
            elif rtype == "microsoft.network/publicipaddresses":
                self.clients.network.public_ip_addresses.begin_delete(group, name).result()
            else:
                raise PluginError(f"do not know how to delete {rid}", hint="delete it in the Azure portal")
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, f"deleting {rid}") from None


def _deleting(group: Any) -> bool:
    props = getattr(group, "properties", None)
    return text(getattr(props, "provisioning_state", "")).lower() == "deleting"
