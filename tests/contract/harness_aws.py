"""The contract suite against the AWS plugin: moto in server mode (real HTTP, real boto3).

The process's moto server (``tests/support/aws_moto.py``) is reset for every
test; each test also gets its own install id, so even a leftover from another
test could never be listed as this one's.  moto never runs the job: a launched
instance stays running until terminated.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from workbench.core.domain.models import JobSpec, LaunchRequest, Profile
from workbench.core.providers.contract import Provider, ProviderContext, launch_tags

from .harness import HarnessEntry

SETTINGS = {"regions": "us-east-1", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10",
            "connect_timeout": "2", "read_timeout": "20", "retry_backoff_cap_s": "0.02"}


class AwsHarness:
    name = "aws"
    settle_s = 5.0

    def __init__(self) -> None:
        import aws_moto  # tests/support (put on sys.path by tests/conftest.py)

        self.stack = aws_moto.start()
        self.stack.reset()
        self.install_id = f"aws-contract-{uuid.uuid4().hex[:8]}"
        self._provider: Provider | None = None

    def make_provider(self, tmp_path: Path) -> Provider:
        from workbench_aws.provider import AwsProvider

        profile = Profile("aws-contract", "aws", "us-east-1", endpoint_url=self.stack.url, settings=SETTINGS)
        secrets = {"access_key_id": "AKIACONTRACT00000001", "secret_access_key": "contract/secret"}
        self._provider = AwsProvider(profile, secrets, ProviderContext(install_id=self.install_id, data_dir=tmp_path))
        return self._provider

    def make_request(self, launch_id: str) -> LaunchRequest:
        assert self._provider is not None, "make_provider first"
        offer = next(o for o in self._provider.offers("us-east-1") if o.instance_type == "p3.2xlarge")
        return LaunchRequest(launch_id=launch_id, spec=JobSpec(name="contract-sleep", run="sleep 30"), offer=offer,
                             profile=self._provider.profile.name, tags=launch_tags(launch_id, self.install_id))

    def cleanup(self) -> None:
        try:
            self.stack.reset()
        except Exception:  # noqa: BLE001 - cleanup never raises
            pass


ENTRIES = [HarnessEntry("aws", AwsHarness)]
