"""The contract suite against the Azure plugin and our ARM-protocol test server (real HTTPS, real SDKs).

Each test gets its own tenant, service principal and subscription on the shared
server, so tests never see each other's resources; the job is never run (there is
no machine), so a launch stays RUNNING until terminated.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

from workbench.core.domain.models import JobSpec, LaunchRequest
from workbench.core.providers.contract import Provider, ProviderContext, launch_tags

from .harness import HarnessEntry


from azure_arm import profile_for, shared_server  # noqa: E402


class AzureHarness:
    name = "azure"
    settle_s = 10.0

    def __init__(self) -> None:
        self.server = shared_server()
        self.account = self.server.new_account()
        self.install_id = f"azure-contract-{uuid.uuid4().hex[:8]}"
        self._provider: Provider | None = None

    def make_provider(self, tmp_path: Path) -> Provider:
        from workbench_azure.provider import AzureProvider

        profile = profile_for(self.server, self.account, name="azure-contract")
        self._provider = AzureProvider(profile, {"client_secret": self.account.secret},
                                       ProviderContext(install_id=self.install_id, data_dir=tmp_path))
        return self._provider

    def make_request(self, launch_id: str) -> LaunchRequest:
        assert self._provider is not None, "make_provider first"
        offer = next(o for o in self._provider.offers("eastus") if o.instance_type == "Standard_NC4as_T4_v3")
        return LaunchRequest(launch_id=launch_id, spec=JobSpec(name="contract-sleep", run="sleep 30"), offer=offer,
                             profile=self._provider.profile.name, tags=launch_tags(launch_id, self.install_id))

    # -- the controller's identity (tests/contract/test_contract_controller.py) ------------------------
    def allow_controller_setup(self) -> None:
        """The harness's principal holds every action ("*"): nothing to grant."""

    def runs_as(self, instance) -> str | None:
        """The name of the user-assigned identity the instance's VM runs as (None: none)."""
        group = instance.extra.get("resource_group") or instance.instance_id.split("/")[4]
        vm = self.server.vm(self.account.subscription, group) or {}
        users = (vm.get("identity") or {}).get("userAssignedIdentities") or {}
        return next((uid.rsplit("/", 1)[-1] for uid in users), None)

    # -- the controller machine's own identity (tests/contract/test_contract_machine_identity.py) ----------
    #: what a launch and its teardown need: the machine's identity must have done these itself
    machine_launch_actions = ("Microsoft.Compute/virtualMachines/write",
                              "Microsoft.Resources/subscriptions/resourceGroups/delete")

    def machine_metadata(self, instance):
        """The IMDS of ``instance``'s VM (the identities it runs as): (the service, the profile settings the plugin
        on that VM needs beyond the app's, the environment variables that point azure-identity at it)."""
        from azure_arm.imds import VmMetadata

        group = instance.extra.get("resource_group") or instance.instance_id.split("/")[4]
        vm = self.server.vm(self.account.subscription, group) or {}
        meta = VmMetadata(self.server)
        for uid in (vm.get("identity") or {}).get("userAssignedIdentities") or {}:
            meta.attach(uid)
        return meta, {}, meta.env()

    def machine_actions(self, meta) -> set[str]:
        """The RBAC actions of the answered calls signed with the tokens ``meta`` handed out."""
        clients = set(meta.issued.values())
        with self.server.state.lock:
            return {a for s in self.server.seen if s.client_id in clients and s.status < 400 for a in s.actions}

    def cleanup(self) -> None:
        """Close the provider's connections; its resources live only in the test server's memory."""
        if self._provider is not None:
            self._provider.close()


ENTRIES = [HarnessEntry("azure", AzureHarness)]
