"""The contract suite against the Alibaba plugin and our ECS/VPC/STS RPC test server (real HTTP, real SDKs,
the SDK's real request signature checked by the server).

Each test gets its own account on the shared server (its own AccessKey and resources), granted exactly
the RAM actions of resources/policies/alibaba-ram-policy.json, so a call outside the policy fails the
test.  The job never runs (there is no machine): a launch stays Running until it is released.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

from workbench.core.domain.models import JobSpec, LaunchRequest
from workbench.core.providers.contract import Provider, ProviderContext, launch_tags

from .harness import HarnessEntry


from alibaba_ecs import profile_for, shared_server  # noqa: E402

POLICY = Path(__file__).resolve().parents[2] / "resources" / "policies" / "alibaba-ram-policy.json"
_RSA: Path | None = None


def _seed_rsa_key(data_dir: Path) -> None:
    """Copy one RSA key made per process into ``data_dir`` (a fresh 3072-bit key per test costs a second)."""
    global _RSA
    import shutil
    import tempfile

    from workbench.core.providers.sshkeys import ensure_keypair

    if _RSA is None:
        folder = Path(tempfile.mkdtemp(prefix="ali-rsa-"))
        ensure_keypair(folder, key_type="rsa")
        _RSA = folder / "ssh"
    if not (data_dir / "ssh").exists():
        shutil.copytree(_RSA, data_dir / "ssh")


def policy_actions() -> tuple[str, ...]:
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    return tuple(a for s in doc["Statement"] if s["Effect"] == "Allow" for a in s["Action"])


class AlibabaHarness:
    name = "alibaba"
    settle_s = 10.0

    def __init__(self) -> None:
        self.server = shared_server()
        self.account = self.server.new_account(actions=policy_actions())
        knobs = self.server.knobs(self.account)
        knobs.pending_s = knobs.starting_s = 0.05  # Pending → Starting → Running, quickly
        self.install_id = f"alibaba-contract-{uuid.uuid4().hex[:8]}"
        self._provider: Provider | None = None

    def make_provider(self, tmp_path: Path) -> Provider:
        from workbench_alibaba.provider import AlibabaProvider

        _seed_rsa_key(tmp_path)
        profile = profile_for(self.server, self.account, name="alibaba-contract")
        secrets = {"access_key_id": self.account.access_key_id, "access_key_secret": self.account.secret}
        self._provider = AlibabaProvider(profile, secrets, ProviderContext(install_id=self.install_id,
                                                                           data_dir=tmp_path))
        return self._provider

    def make_request(self, launch_id: str) -> LaunchRequest:
        assert self._provider is not None, "make_provider first"
        offer = next(o for o in self._provider.offers("cn-hangzhou") if o.instance_type == "ecs.gn6i-c4g1.xlarge")
        return LaunchRequest(launch_id=launch_id, spec=JobSpec(name="contract-sleep", run="sleep 30"), offer=offer,
                             profile=self._provider.profile.name, tags=launch_tags(launch_id, self.install_id))

    # -- the controller's identity (tests/contract/test_contract_controller.py) ------------------------
    def allow_controller_setup(self) -> None:
        """Grant the account also resources/policies/alibaba-app-controller-additions.json (RAM role set-up)."""
        import dataclasses

        doc = json.loads((POLICY.parent / "alibaba-app-controller-additions.json").read_text(encoding="utf-8"))
        more = tuple(a for st in doc["Statement"] for a in st["Action"])
        with self.server.state.lock:
            self.account = dataclasses.replace(self.account, actions=(*self.account.actions, *more))
            self.server.state.accounts[self.account.access_key_id] = self.account

    def runs_as(self, instance) -> str | None:
        """The RAM role RunInstances attached to the instance (None: none)."""
        found = [i for i in self.server.instances(self.account) if i["InstanceId"] == instance.instance_id]
        return found[0].get("_ram_role") if found else None

    # -- the controller machine's own identity (tests/contract/test_contract_machine_identity.py) ----------
    #: what a launch and its teardown need: the machine's role must have done these itself
    machine_launch_actions = ("ecs:RunInstances", "ecs:DeleteInstances")

    def machine_metadata(self, instance):
        """The metadata service of ``instance`` (its RAM role's STS key): (the service, the profile settings the
        plugin on that instance needs beyond the app's — the test-only ``ecs_metadata_host`` —, no variables)."""
        from alibaba_ecs.metadata import InstanceMetadata

        meta = InstanceMetadata(self.server, self.account, instance.instance_id)
        return meta, {"ecs_metadata_host": meta.host}, {}

    def machine_actions(self, meta) -> set[str]:
        """The RAM actions of the calls signed with the keys ``meta`` minted."""
        keys = {t.access_key_id for t in meta.minted}
        with self.server.state.lock:
            return {s.action for s in self.server.seen if s.access_key_id in keys and s.status < 400}

    def cleanup(self) -> None:
        """Nothing to stop: the account's resources live only in the test server's memory."""


ENTRIES = [HarnessEntry("alibaba", AlibabaHarness)]
