"""The provider contract: what the app relies on from every provider.

Launch → visible with its launch id → relaunch creates nothing → terminate →
gone, terminate again is fine, nothing left over.  Listings may lag by the
harness's ``settle_s``, so state checks poll with a deadline.
"""

from __future__ import annotations

import time
import uuid
from typing import Callable, TypeVar

import pytest

from workbench.core.domain.models import PRICE_TERMS, Identity, Instance, Offer, Region
from workbench.core.providers import price_snapshot
from workbench.core.providers.contract import Provider

from .harness import ProviderHarness

T = TypeVar("T")


def wait_for(probe: Callable[[], T], seconds: float, what: str) -> T:
    """Poll ``probe`` until it returns something truthy, or fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {seconds:g}s waiting for {what}")
        time.sleep(0.05)


def new_launch_id() -> str:
    return f"contract-{uuid.uuid4().hex[:12]}"


def of_launch(provider: Provider, launch_id: str) -> list[Instance]:
    return [i for i in provider.instances() if i.launch_id == launch_id]


def test_check_credentials_returns_identity(provider: Provider) -> None:
    identity = provider.check_credentials()
    assert isinstance(identity, Identity)
    assert identity.account and identity.principal


def test_regions_not_empty(provider: Provider) -> None:
    regions = provider.regions()
    assert regions and all(isinstance(r, Region) and r.name for r in regions)


def test_offers_have_prices_with_source_and_date(provider: Provider) -> None:
    offers = list(provider.offers())
    assert offers
    for offer in offers:
        assert isinstance(offer, Offer)
        assert offer.provider == provider.id
        assert offer.hourly() is not None or offer.hourly(spot=True) is not None
        assert offer.prices.source and offer.prices.source != "unknown"
        # every price it has says where it comes from and of when: an ISO date, an upper bound ("<=DATE", on
        # or before) or, for a source that gives none, "unknown" (issue 32)
        for term in PRICE_TERMS:
            if getattr(offer.prices, term) is not None:
                d = offer.prices.detail(term)
                assert d.source and d.as_of, (offer.instance_type, term)
                assert d.as_of == price_snapshot.UNKNOWN_DATE or price_snapshot.date_of(d.as_of), d.as_of


def test_launch_is_listed_with_its_launch_id(harness: ProviderHarness, provider: Provider) -> None:
    launch_id = new_launch_id()
    launched = provider.launch(harness.make_request(launch_id))
    assert launched and all(i.launch_id == launch_id for i in launched)
    assert all(i.provider == provider.id for i in launched)
    listed = wait_for(lambda: of_launch(provider, launch_id), harness.settle_s, "the launch to be listed")
    assert {i.instance_id for i in listed} == {i.instance_id for i in launched}
    assert all(i.state.billable and i.state.active for i in listed)


def test_relaunch_same_id_creates_nothing(harness: ProviderHarness, provider: Provider) -> None:
    launch_id = new_launch_id()
    request = harness.make_request(launch_id)
    first = provider.launch(request)
    wait_for(lambda: of_launch(provider, launch_id), harness.settle_s, "the launch to be listed")
    count = len(provider.instances())
    again = provider.launch(request)
    assert {i.instance_id for i in again} == {i.instance_id for i in first}
    assert len(provider.instances()) == count


def test_terminate_ends_it_and_leaves_nothing(harness: ProviderHarness, provider: Provider) -> None:
    launch_id = new_launch_id()
    launched = provider.launch(harness.make_request(launch_id))
    wait_for(lambda: of_launch(provider, launch_id), harness.settle_s, "the launch to be listed")

    provider.terminate(launched)

    def gone() -> bool:
        return all(not i.state.billable for i in of_launch(provider, launch_id))

    wait_for(gone, harness.settle_s, "the instance to be gone or terminated")
    provider.terminate(launched)  # already gone: still a success
    provider.terminate(of_launch(provider, launch_id))
    assert [r for r in provider.leftovers() if r.launch_id == launch_id] == []
    provider.delete([])
