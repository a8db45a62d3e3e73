"""The contract of ``SupportsController`` (issue 33): the controller machine's own cloud identity.

Looking creates nothing and says "not ready"; creating is idempotent (a second call creates nothing); a
launch tagged ``workbench:role=controller`` runs as that identity, and nothing else does.  Over the clouds
whose harness can show which identity a machine runs as: Azure (ARM server: the VM's user-assigned
identity) and Alibaba (ECS server: the instance's RAM role).  AWS is not here yet: its plugin's part is
written separately (plugins/workbench_aws/controller_identity.py) and its harness gains ``runs_as`` with it.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE, ControllerIdentity, SupportsController

from .harness import HARNESSES

CLOUDS = ("azure", "alibaba")


@pytest.fixture(params=[pytest.param(e, id=e.id, marks=list(e.marks)) for e in HARNESSES if e.id in CLOUDS])
def cloud(request: pytest.FixtureRequest):
    made = request.param.factory()
    try:
        yield made
    finally:
        made.cleanup()


def test_looking_creates_nothing_and_is_not_ready(cloud, tmp_path):
    provider = cloud.make_provider(tmp_path)
    assert isinstance(provider, SupportsController)
    cloud.allow_controller_setup()
    looked = provider.controller_identity()
    assert isinstance(looked, ControllerIdentity)
    assert looked.name and not looked.ready and looked.created == () and looked.missing
    assert looked.policy_files and all(f.startswith("resources/policies/") for f in looked.policy_files)
    assert not provider.controller_identity().ready  # still nothing made


def test_creating_is_idempotent(cloud, tmp_path):
    provider = cloud.make_provider(tmp_path)
    cloud.allow_controller_setup()
    made = provider.controller_identity(create=True)
    assert made.ready and made.created and made.missing == ()
    again = provider.controller_identity(create=True)
    assert again.ready and again.created == () and again.name == made.name
    assert provider.controller_identity().ready


def test_a_controller_launch_runs_as_the_identity(cloud, tmp_path):
    provider = cloud.make_provider(tmp_path)
    cloud.allow_controller_setup()
    name = provider.controller_identity(create=True).name
    plain = cloud.make_request(f"contract-{uuid.uuid4().hex[:12]}")
    req = dataclasses.replace(plain, tags={**plain.tags, TAG_ROLE: ROLE_CONTROLLER})
    launched = provider.launch(req)
    assert len(launched) == 1 and cloud.runs_as(launched[0]) == name
    other = provider.launch(cloud.make_request(f"contract-{uuid.uuid4().hex[:12]}"))
    assert cloud.runs_as(other[0]) is None  # only the controller's machine gets it
    provider.terminate([*launched, *other])
