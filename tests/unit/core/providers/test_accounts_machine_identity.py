"""A machine-identity Accounts (the controller, issue 33) against the keyring's rules (accounts.py).

A normal credential store still refuses a profile whose required secret is missing; the controller's
:class:`MachineCredentials` has no secret by design, so nothing is refused there and each plugin is told
(``ProviderContext.machine_identity``) to sign in as the machine, with the non-secret fields
``controller.json`` carries.  The Azure and Alibaba plugins then choose their machine sign-in by themselves.
"""

from __future__ import annotations

import pytest

from workbench.core.controller import deploy
from workbench.core.controller.service import ControllerConfig, MachineCredentials
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.models import Profile
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import ControllerIdentity, CredentialField, Provider
from workbench.core.providers.registry import ProviderEntry
from workbench.core.store.database import Store
from workbench_testing import MemoryCredentials

SUB = "11111111-2222-3333-4444-555555555555"
CLIENT = "66666666-7777-8888-9999-000000000000"


class RequiredSecretProvider(Provider):
    id = "required"
    display_name = "Required"
    credential_fields = (CredentialField("secret", "Secret", secret=True, optional=False),)
    built: list = []

    def __init__(self, profile, secrets, context) -> None:
        super().__init__(profile, secrets, context)
        type(self).built.append((dict(secrets), context.machine_identity))

    def check_credentials(self):  # pragma: no cover - not called
        raise NotImplementedError

    def regions(self):  # pragma: no cover
        return []

    def offers(self, region=None):  # pragma: no cover
        return []

    def launch(self, req):  # pragma: no cover
        return []

    def instances(self):  # pragma: no cover
        return []

    def terminate(self, instances):  # pragma: no cover
        return None

    def leftovers(self):  # pragma: no cover
        return []

    def delete(self, resources):  # pragma: no cover
        return None


@pytest.fixture
def accounts_with(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    made: list[Accounts] = []
    RequiredSecretProvider.built = []

    def make(credentials) -> Accounts:
        entry = ProviderEntry("required", "tests:RequiredSecretProvider", None, None, RequiredSecretProvider)
        acc = Accounts(Store.open(), entries={"required": entry}, credentials=credentials)
        acc.save_profile(Profile("r", "required", None))
        made.append(acc)
        return acc

    yield make
    for acc in made:
        acc.store.close()


def test_a_normal_store_still_refuses_a_missing_required_secret(accounts_with):
    acc = accounts_with(MemoryCredentials())
    assert not acc.machine_identity
    with pytest.raises(AuthError, match=r"no credentials stored for required/r \(missing: secret\)"):
        acc.provider(acc.profile("r"))
    assert RequiredSecretProvider.built == []


def test_the_machine_identity_is_never_refused_and_the_plugin_is_told(accounts_with):
    acc = accounts_with(MachineCredentials({"managed_identity_client_id": CLIENT}))
    assert acc.machine_identity
    acc.provider(acc.profile("r"))
    assert RequiredSecretProvider.built == [({"managed_identity_client_id": CLIENT}, True)]


def test_controller_json_carries_the_identitys_machine_fields(tmp_path):
    ident = ControllerIdentity("workbench-controller", ready=True, details={"principal_id": "p"},
                               machine={"managed_identity_client_id": CLIENT, "subscription_id": SUB})
    config = ControllerConfig(launch_id="l", profile={"name": "a", "provider": "azure"}, install_id="0" * 12,
                              extra=deploy.machine_identity(ident))
    config.save(tmp_path / "controller.json")
    back = ControllerConfig.load(tmp_path / "controller.json")
    assert MachineCredentials(back.extra["identity"]).get("azure", "a") == dict(ident.machine)
    assert deploy.machine_identity(None) == {} == deploy.machine_identity(ControllerIdentity("x", ready=True))


def test_azure_signs_in_as_the_vms_managed_identity_on_a_machine():
    from workbench_azure.settings import parse

    app = Profile("az", "azure", "eastus", settings={"tenant_id": "t", "client_id": "app-sp", "auth": "cli"})
    on_machine = parse(app, {"managed_identity_client_id": CLIENT, "subscription_id": SUB}, machine_identity=True)
    assert (on_machine.auth, on_machine.managed_identity_client_id, on_machine.subscription_id) == (
        "managed_identity", CLIENT, SUB)
    assert parse(app, {"client_secret": "s"}, machine_identity=True).auth == "cli"  # a stored secret wins
    assert parse(app, {}).auth == "cli"  # the user's computer: as configured
    with pytest.raises(ConfigError, match="managed_identity_client_id"):
        parse(app, {"managed_identity_client_id": "nope"}, machine_identity=True)


def test_alibaba_signs_in_as_the_instances_ram_role_on_a_machine():
    from workbench_alibaba.settings import parse

    app = Profile("ali", "alibaba", "cn-hangzhou", settings={"auth": "ram_role",
                                                               "role_arn": "acs:ram::1234567890123456:role/wb"})
    on_machine = parse(app, {"ram_role_name": "workbench-controller"}, machine_identity=True)
    assert (on_machine.auth, on_machine.ram_role_name) == ("ecs_ram_role", "workbench-controller")
    assert parse(app, {"access_key_id": "LTAI", "access_key_secret": "s"}, machine_identity=True).auth == "ram_role"
    assert parse(app, {}).auth == "ram_role"
    remote = Profile("ali", "alibaba", "cn-hangzhou", settings={"ecs_metadata_host": "100.100.100.200"})
    with pytest.raises(ConfigError, match="ecs_metadata_host"):
        parse(remote, {}, machine_identity=True)
