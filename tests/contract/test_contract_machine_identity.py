"""The controller machine signs in as its own cloud identity, never with a stored secret (issue 33).

On the controller, ``workbench controller serve`` builds its Accounts with
:class:`~workbench.core.controller.service.MachineCredentials`: no keyring, only the non-secret fields of
``controller.json`` (:func:`~workbench.core.controller.deploy.machine_identity`).  Here, per cloud: the app
(with the user's key) creates the controller's identity and launches the controller's machine; then an
Accounts of a separate home, with only those fields, signs in through the machine's metadata service of
ours (Azure: IMDS tokens of its user-assigned identity, which the ARM server honours for the actions of the
roles assigned to it; Alibaba: the ECS RAM role's STS key, each call's signature and ``SecurityToken``
checked by the ECS server), lists the instances, launches a job and tears it down as a relaunch would.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from workbench.core.controller import deploy
from workbench.core.controller.service import MachineCredentials, ensure_install_id
from workbench.core.domain.models import InstanceState
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store

from .harness import HARNESSES

CLOUDS = ("azure", "alibaba")
#: the variables that would send azure-identity anywhere but our IMDS (App Service, Arc, Cloud Shell, AKS)
OTHER_IDENTITY_VARS = ("IDENTITY_ENDPOINT", "IDENTITY_HEADER", "IMDS_ENDPOINT", "MSI_ENDPOINT", "MSI_SECRET",
                       "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET",
                       "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_ECS_METADATA")


@pytest.fixture(params=[pytest.param(e, id=e.id, marks=list(e.marks)) for e in HARNESSES if e.id in CLOUDS])
def cloud(request: pytest.FixtureRequest):
    made = request.param.factory()
    made.install_id = uuid.uuid4().hex[:12]  # the form paths.install_id keeps: the controller takes the app's
    try:
        yield made
    finally:
        made.cleanup()


def test_the_controller_lists_launches_and_tears_down_as_its_machine(cloud, tmp_path, monkeypatch):
    for name in OTHER_IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    app = cloud.make_provider(tmp_path / "app")
    cloud.allow_controller_setup()
    identity = app.controller_identity(create=True)
    extra = deploy.machine_identity(identity)
    assert extra["identity"] and all(isinstance(v, str) for v in extra["identity"].values())
    base = cloud.make_request(f"contract-{uuid.uuid4().hex[:12]}")
    machine = app.launch(dataclasses.replace(base, tags={**base.tags, TAG_ROLE: ROLE_CONTROLLER}))

    meta, settings, env = cloud.machine_metadata(machine[0])
    try:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "controller"))  # its own store, no app secret there
        ensure_install_id(cloud.install_id)
        accounts = Accounts(Store.open(), entries=discover(), credentials=MachineCredentials(extra["identity"]))
        try:
            profile = dataclasses.replace(app.profile, settings={
                **deploy.controller_settings(app.profile, identity), **settings})
            accounts.save_profile(profile)
            ctl = accounts.provider(accounts.profile(profile.name))
            assert ctl.context.machine_identity and ctl.context.install_id == cloud.install_id
            assert cloud.account.secret not in extra["identity"].values()  # the user's secret stayed with the app

            seen = {i.instance_id for i in ctl.instances()}
            assert machine[0].instance_id in seen  # the app's tags, found by the machine's identity
            job = ctl.launch(cloud.make_request(f"contract-{uuid.uuid4().hex[:12]}"))
            assert job and job[0].state in (InstanceState.PENDING, InstanceState.RUNNING)
            assert job[0].instance_id in {i.instance_id for i in ctl.instances()}
            ctl.terminate(job)
            assert job[0].instance_id not in {i.instance_id for i in ctl.instances()
                                              if i.state not in (InstanceState.TERMINATED,)}
            done = cloud.machine_actions(meta)
            assert set(cloud.machine_launch_actions) <= done, done
            assert meta.requests  # the key came from the metadata service
        finally:
            accounts.store.close()
    finally:
        meta.stop()
        app.terminate(machine)
