"""The controller machine of issue 33 is plannable on AWS: a job that asks for no GPU gets the catalog's
small CPU type (t3a.nano) from the plugin's offers, at the catalog's price; GPU lists never show it."""

from __future__ import annotations

import pytest

from .conftest import FAST, KEY_ID, SECRET
from workbench.core.domain.models import JobSpec, Profile, Resources
from workbench.core.money.controller_cost import controller_cost, controller_instance_type
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.offers.query import OfferQuery
from workbench.core.providers import price_snapshot
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store


@pytest.fixture
def accounts(moto, tmp_path, monkeypatch):
    from workbench_testing import MemoryCredentials

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    creds = MemoryCredentials()
    creds.set("aws", "moto", {"access_key_id": KEY_ID, "secret_access_key": SECRET})
    store = Store.open()
    accounts = Accounts(store, credentials=creds)
    accounts.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=moto.url, settings=dict(FAST)))
    yield accounts
    store.close()


def _cpu_spec() -> JobSpec:
    return JobSpec(name="controller", run="python -m workbench controller serve", resources=Resources(cpus=2))


def test_a_job_without_a_gpu_is_offered_the_controller_type_at_the_catalog_price(accounts):
    profile = accounts.profile("moto")
    found = find_offers(accounts, _cpu_spec(), profiles=[profile], region="us-east-1", catalog=NEVER)
    assert not found.errors and found.ranked
    best = found.ranked[0]
    row = price_snapshot.load("aws").find("us-east-1", "t3a.nano")
    assert best.offer.instance_type == controller_instance_type("aws", "us-east-1") == "t3a.nano"
    assert best.offer.available and best.profile == "moto" and best.offer.gpu_count == 0
    assert best.offer.vcpus == 2 and best.offer.memory_gb == 0.5
    assert best.offer.extra.get("shape_source") == "live"  # moto's DescribeInstanceTypes knows it
    assert best.price == row.on_demand == controller_cost("aws", "us-east-1").machine_per_h == 0.0047
    assert best.offer.prices.detail("on_demand").source == row.detail("on_demand").source


def test_gpu_queries_never_show_the_controller_types(accounts):
    profile = accounts.profile("moto")
    for query in (OfferQuery(), OfferQuery(gpu_count=1), OfferQuery(gpu_model="T4")):
        found = find_offers(accounts, query, profiles=[profile], region="us-east-1", catalog=NEVER)
        assert found.ranked and all(r.offer.gpu_count >= 1 for r in found.ranked), query
