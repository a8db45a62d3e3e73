"""Comparing clouds with and without accounts, and the real reason when nothing matches (in-process)."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import AuthError, TransientError
from workbench.core.domain.models import Offer, Prices, Profile
from workbench.core.providers.accounts import Accounts
from workbench.core.offers.find import ACCOUNTS_FAILED, NO_ACCOUNT, NO_MATCH, PRICES_FAILED, explain_empty
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.offers.query import OfferQuery
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    yield Accounts(store, entries=discover())
    store.close()


def test_without_an_account_every_cloud_is_priced_from_the_catalog(accounts):
    got = find_offers(accounts, OfferQuery(gpu_model="V100"))
    assert {"aws", "azure"} <= set(got.catalog_providers) and got.reason is None and not got.errors
    assert set(got.catalog_providers) == {r.offer.provider for r in got.ranked}
    assert all(r.needs_account and r.profile == "" and not r.offer.available for r in got.ranked)
    assert all(r.offer.availability_note == "add an account to launch" for r in got.ranked)
    usd = [r.price for r in got.ranked if r.offer.prices.currency == "USD"]
    assert usd == sorted(usd) and got.oldest_price <= "2024-11-01"


def test_a_cloud_whose_account_cannot_be_asked_is_priced_from_the_catalog_with_the_reason(accounts):
    accounts.save_profile(Profile("broken", "aws", "us-east-1", settings={"regions": "mars-1"}))  # cannot start
    got = find_offers(accounts, OfferQuery(gpu_model="V100"))
    assert [name for name, _ in got.errors] == ["broken"]
    aws = [r for r in got.ranked if r.offer.provider == "aws"]
    assert aws and all(r.needs_account and "did not answer" in r.offer.availability_note for r in aws)
    only = find_offers(accounts, OfferQuery(gpu_model="V100"), catalog=NEVER)
    assert only.ranked == [] and only.reason.kind in (ACCOUNTS_FAILED, PRICES_FAILED)


@pytest.mark.parametrize("q, kind, words", [
    (OfferQuery(gpu_model="V100", gpu_count=16), NO_MATCH, "the largest has 8"),
    (OfferQuery(gpu_model="B200"), NO_MATCH, "no cloud offers B200"),
    (OfferQuery(gpu_model="V100", region="mars-1"), NO_MATCH, "none in region mars-1"),
    (OfferQuery(gpu_model="V100", gpu_count=8, max_price=1.0), NO_MATCH, "above the limit of 1/h"),
    (OfferQuery(gpu_model="A100", spot=True), NO_MATCH, None),
    (OfferQuery(gpu_model="T4", provider="azure", rdma=True), NO_MATCH, "RDMA"),
])
def test_an_empty_answer_names_the_constraint_that_no_cloud_meets(accounts, q, kind, words):
    got = find_offers(accounts, q)
    if words is None:  # AWS has A100 spot prices in the catalog: not empty
        assert got.ranked and got.reason is None
        return
    assert got.ranked == [] and got.reason.kind == kind and words in got.reason.detail, got.reason


def test_reasons_when_nothing_is_known():
    assert explain_empty(OfferQuery(gpu_model="V100"), [], [], has_cloud_account=False,
                         catalog_included=False).kind == NO_ACCOUNT
    failed = explain_empty(OfferQuery(), [], [("aws1", TransientError("the Price List timed out"))], True)
    assert failed.kind == PRICES_FAILED and "the Price List timed out" in failed.detail
    refused = explain_empty(OfferQuery(), [], [("aws1", AuthError("bad key"))], True)
    assert refused.kind == ACCOUNTS_FAILED and "aws1: bad key" in refused.detail
    one = Offer("c", "r", "t", "V100", 1, 16, 8, 61, Prices(on_demand=3.0))
    assert explain_empty(OfferQuery(gpu_model="V100", spot=True), [one], [], True).detail.startswith("none of them "
                                                                                                      "has a spot")
