"""The Azure provider: GPU VMs (NC/ND series) with retail prices, one resource group per launch.

Profile settings: see :mod:`.settings`.  Credentials (keyring): ``client_secret``
(secret); ``tenant_id`` and ``client_id`` may be stored with it or set in the
profile's settings; with ``auth=cli`` no secret is needed (the user's ``az login``).

What each part does: :mod:`.clients` (sign-in, clouds, SDK clients), :mod:`.offers`
(resource SKUs + usages + :mod:`.retail` prices, :mod:`.snapshot` fallback),
:mod:`.launch` (resource group per launch, rollback, zone/region fallback, guard),
:mod:`.inventory` (tag-based instances/leftovers, verified teardown),
:mod:`.errors` (SDK errors → workbench errors), :mod:`.billing` (Cost Management actuals).

Threading: a provider object may be used from several worker threads; it keeps
only lazily built SDK clients and caches, each behind a lock.  Every method may
block on the network; none touches Qt.  Failure rules: only workbench errors
leave; a secret never appears in a message.
"""

from __future__ import annotations

import logging
import threading
from typing import Iterable, Mapping, Sequence

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import ActualCost, Identity, Instance, LaunchRequest, Offer, Profile, Region, Resource
from workbench.core.providers.profile_settings import apply_ssh_address
from workbench.core.providers.public_address import public_cidr
from workbench.core.providers.contract import (CredentialField, Provider, ProviderContext, SettingField, SupportsBilling,
                                               SupportsCancelLaunch, SupportsController, SupportsExtend,
                                               SupportsPublicPrices, SupportsStop, ControllerIdentity, launch_tags)
from workbench.core.storage.contract import ServesObjectStorage

from .settings import AzureSettings, parse

log = logging.getLogger("workbench.azure")

REGION_NAMES = {
    "eastus": "East US", "eastus2": "East US 2", "southcentralus": "South Central US", "westus2": "West US 2",
    "westus3": "West US 3", "westeurope": "West Europe", "northeurope": "North Europe", "uksouth": "UK South",
    "swedencentral": "Sweden Central", "japaneast": "Japan East", "southeastasia": "Southeast Asia",
    "australiaeast": "Australia East", "centralindia": "Central India", "chinanorth3": "China North 3",
    "chinaeast2": "China East 2", "chinanorth2": "China North 2", "chinaeast3": "China East 3",
}


class AzureProvider(Provider, SupportsStop, SupportsBilling, ServesObjectStorage, SupportsPublicPrices, SupportsExtend,
                    SupportsCancelLaunch, SupportsController):
    """Azure virtual machines through azure-mgmt-compute/network/resource (see the module doc)."""

    id = "azure"
    display_name = "Microsoft Azure"
    storage_kinds, storage_addresses = ("azure",), "https://ACCOUNT.blob.core.windows.net"
    sdk_modules = ("azure.identity", "azure.mgmt.compute", "azure.mgmt.network", "azure.mgmt.resource",
                   "azure.mgmt.resource.subscriptions", "requests")
    install_extra = "azure"
    public_price_regions = ("eastus", "westus2", "westeurope")
    public_price_source = "Azure Retail Prices API"

    @classmethod
    def public_prices(cls, regions, known, fetch):  # type: ignore[no-untyped-def]
        """The public Retail Prices API (no sign-in, no SDK): :mod:`.public_prices`."""
        from .public_prices import public_prices

        return public_prices(regions, known, fetch)
    credential_fields = (
        CredentialField("tenant_id", "Tenant ID", optional=True,
                        help="Directory (tenant) ID of the app registration; or tenant_id= in the profile settings"),
        CredentialField("client_id", "Client ID", optional=True,
                        help="Application (client) ID of the service principal; or client_id= in the settings"),
        CredentialField("client_secret", "Client secret", secret=True, optional=True,
                        help="The secret's Value; not needed with auth=cli (your `az login`)"),
    )
    setting_fields = (
        SettingField("subscription_id", "Subscription", optional=True,
                     help="the subscription to launch in; Test lists the ones this identity may use "
                          "(empty: the only one it sees)"),
    )

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)
        self._lock = threading.Lock()
        self._parts: tuple | None = None
        self._blob = None

    @classmethod
    def default_region(cls) -> str | None:
        return "eastus"

    # -- parts, built on first use (no SDK import before) -------------------------------
    @property
    def settings(self) -> AzureSettings:
        return self._build()[0]

    def _build(self) -> tuple:
        with self._lock:
            if self._parts is None:
                from .clients import AzureClients
                from .inventory import Inventory
                from .launch import Launcher
                from .offers import OfferCatalog

                settings = parse(self.profile, self._secrets, self.context.machine_identity)
                clients = AzureClients(settings, self._secrets.get("client_secret"))
                catalog = OfferCatalog(clients, self.context.data_dir / "azure")
                inventory = Inventory(clients, self.profile.name, self.context.install_id)
                launcher = Launcher(clients, catalog, inventory, self.context, self.profile.name, self._ssh_cidr)
                self._parts = (settings, clients, catalog, inventory, launcher)
            return self._parts

    @property
    def _clients(self):
        return self._build()[1]

    # -- account --------------------------------------------------------------------------
    def check_credentials(self) -> Identity:
        settings, clients = self._build()[:2]
        clients.token()
        sub = clients.subscription()
        try:  # a read the workbench role grants: proves a role, not only a sign-in
            next(iter(clients.resources.resource_groups.list(top=1)), None)
        except Exception as exc:  # noqa: BLE001 - mapped
            raise clients.error(exc, "listing resource groups") from None
        who = {"secret": settings.client_id, "cli": "Azure CLI login"}.get(
            settings.auth, f"managed identity {settings.managed_identity_client_id}".strip())
        return Identity(account=sub["id"], principal=who,
                        display=f"{who} on subscription {sub['name'] or sub['id']} ({sub['id']}), {settings.cloud} cloud")

    def regions(self) -> list[Region]:
        return [Region(r, REGION_NAMES.get(r, r)) for r in self.settings.regions]

    def offers(self, region: str | None = None) -> Iterable[Offer]:
        settings, _, catalog = self._build()[:3]
        wanted = [region] if region else list(settings.regions)
        out: list[Offer] = []
        for r in wanted:
            out.extend(catalog.region(r))
        return out

    # -- lifecycle ------------------------------------------------------------------------
    def launch(self, req: LaunchRequest) -> list[Instance]:
        """Create the launch's resource group and VM; blocks until the VM is provisioned (see .launch)."""
        where = self._build()[0].ssh_address
        return [apply_ssh_address(i, where) for i in self._build()[4].launch(req)]

    def setting_choices(self) -> Mapping[str, list[tuple[str, str]]]:
        """The subscriptions this identity sees, to pick one (works before one is chosen)."""
        subs = self._clients.list_subscriptions()
        return {"subscription_id": [(s["id"], f"{s['name']} ({s['id']})" if s["name"] else s["id"]) for s in subs]}

    def cancel_launch(self, launch_id: str) -> bool:
        """Ask an in-flight launch to stop and roll back (any thread); False when none is running."""
        return self._build()[4].cancel(launch_id)

    def instances(self) -> list[Instance]:
        where = self._build()[0].ssh_address
        return [apply_ssh_address(i, where) for i in self._build()[3].instances()]

    def terminate(self, instances: Sequence[Instance]) -> None:
        """Delete each instance's resource group and verify it is gone (already gone is success)."""
        settings, _, _, inventory, _ = self._build()
        groups = [i.extra.get("resource_group") or i.instance_id.split("/")[4] for i in instances
                  if i.provider == self.id]
        if groups:
            inventory.delete_groups(groups, settings.terminate_timeout_s)

    def extend(self, instances: Sequence[Instance], not_after: float) -> bool:
        """A run was extended: its VMs' auto-shutdown schedules (the second line, "auto" mode) follow.

        False when none follows the max runtime (``auto_shutdown`` off or a fixed time)."""
        from .self_delete import move_shutdown_schedule

        moved = False
        for i in instances:
            if i.provider == self.id and i.state.billable:
                moved = move_shutdown_schedule(self._clients, i.instance_id, i.region,
                                               launch_tags(i.launch_id, self.context.install_id), not_after) \
                    is not None or moved
        return moved

    def stop(self, instances: Sequence[Instance]) -> None:
        """Deallocate (a Stopped VM still bills compute on Azure; a deallocated one does not)."""
        clients = self._clients
        errors = []
        for i in instances:
            group = i.extra.get("resource_group") or i.instance_id.split("/")[4]
            try:
                clients.compute.virtual_machines.begin_deallocate(group, i.instance_id.rsplit("/", 1)[-1]).result()
            except Exception as exc:  # noqa: BLE001 - mapped, collected per VM
                errors.append(clients.error(exc, f"deallocating the VM of {group}"))
        if errors:
            raise errors[0] if len(errors) == 1 else WorkbenchError("; ".join(e.message for e in errors))

    def leftovers(self) -> list[Resource]:
        return self._build()[3].leftovers()

    def delete(self, resources: Sequence[Resource]) -> None:
        mine = [r for r in resources if r.provider == self.id]
        if mine:
            settings, _, _, inventory, _ = self._build()
            inventory.delete_resources(mine, settings.terminate_timeout_s)

    def actual_costs(self, start_day: str, end_day: str) -> list[ActualCost]:
        """Billed cost per launch tag and UTC day from Azure Cost Management (slow, lags by hours: cache it)."""
        from .billing import actual_costs

        return actual_costs(self._clients, self.id, self.profile.name, self.context.install_id, start_day, end_day)

    def controller_identity(self, create: bool = False,
                            storage_accounts: Sequence[str] | None = None) -> ControllerIdentity:
        """The controller's user-assigned identity and its roles (:mod:`.controller`); ``storage_accounts``
        (resource ids) adds to the profile's ``controller_storage_accounts``.  Blocks; AuthError names the
        role of resources/policies/azure-app-controller-additions.json when the user may not create it."""
        from .controller import controller_identity
        from .settings import storage_account_ids

        settings, clients = self._build()[:2]
        wanted = storage_account_ids([*settings.controller_storage_accounts, *storage_account_ids(storage_accounts)])
        return controller_identity(clients, create, wanted)

    def console_url(self, item: Instance | Resource) -> str | None:
        """The Azure portal page of a VM, resource group or resource (no network)."""
        try:
            settings = parse(self.profile, self._secrets)
        except WorkbenchError:
            return None
        rid = item.instance_id if isinstance(item, Instance) else item.resource_id
        if not rid.startswith("/subscriptions/"):
            return None
        tenant = f"@{settings.tenant_id}/" if settings.tenant_id else ""
        return f"{settings.portal_url}/#{tenant}resource{rid}/overview"

    def close(self) -> None:
        """Release the SDK clients' connections (not part of the contract; the app keeps providers for life)."""
        with self._lock:
            parts = self._parts
        if parts is not None:
            parts[1].close()

    # -- object storage (Azure Blob: see .storage; the storage_* methods are ServesObjectStorage's) --
    def _object_store(self):  # type: ignore[no-untyped-def]
        from .storage import BlobStorage

        clients = self._clients
        with self._lock:
            if self._blob is None:
                self._blob = BlobStorage(clients, self.profile.name)
            return self._blob

    # -- SSH source address ------------------------------------------------------------------
    def _ssh_cidr(self) -> str:
        """The profile's ssh_cidr, else this computer's public address (core lookup: cached, with a timeout)."""
        settings = self.settings
        if settings.ssh_cidr:
            return settings.ssh_cidr
        return public_cidr(settings.checkip_url, timeout=5.0)
