"""reconcile(leftovers=True): one listing per profile gives the store its instances and status its leftovers;
the listing cache that lets ``status --max-age`` answer without the clouds."""

from __future__ import annotations

import json
import threading

import pytest

from workbench.core.domain.errors import AuthError
from workbench.core.domain.models import Instance, InstanceState, Profile, Resource
from workbench.core.lifecycle import listing_cache
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import Provider
from workbench.core.providers.registry import ProviderEntry, discover
from workbench.core.store.database import Store
from workbench_testing import MemoryCredentials


class ListedProvider(Provider):
    """Lists what the test puts in ``world`` (per profile name); ``leftovers`` may raise."""

    id = "listed"
    display_name = "Listed (tests)"
    world: dict[str, dict] = {}
    threads: list[str] = []

    def _mine(self) -> dict:
        return type(self).world[self.profile.name]

    def check_credentials(self):
        raise NotImplementedError

    def regions(self):
        return []

    def offers(self, region=None):
        return []

    def launch(self, req):
        raise NotImplementedError

    def instances(self) -> list[Instance]:
        return list(self._mine()["instances"])

    def terminate(self, instances) -> None:
        pass

    def leftovers(self) -> list[Resource]:
        type(self).threads.append(threading.current_thread().name)
        failure = self._mine().get("leftovers_error")
        if failure is not None:
            raise failure
        return list(self._mine()["leftovers"])

    def delete(self, resources) -> None:
        pass


def _inst(profile: str, iid: str, state: InstanceState = InstanceState.RUNNING) -> Instance:
    return Instance("listed", profile, iid, f"launch-{iid}", "r1", "big", state, name=iid, price_per_hour=1.0)


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    ListedProvider.world = {}
    ListedProvider.threads = []
    entries = {"listed": ProviderEntry("listed", "tests:ListedProvider", None, None, ListedProvider),
               "local": discover()["local"]}  # the built-in profile every store has
    acc = Accounts(Store.open(tmp_path / "state.sqlite3"), entries=entries, credentials=MemoryCredentials())
    for name in ("a", "b"):
        acc.save_profile(Profile(name, "listed", "r1"))
    yield acc
    acc.store.close()


def test_one_round_gives_instances_to_the_store_and_leftovers_per_profile(accounts):
    disk = Resource("listed", "a", "disk-1", "disk", "r1", "launch-old")
    ListedProvider.world = {"a": {"instances": [_inst("a", "i-1")], "leftovers": [disk]},
                            "b": {"instances": [_inst("b", "i-2")], "leftovers": []}}
    result = reconcile(accounts, leftovers=True)
    assert not result.errors and not result.leftover_errors
    assert result.leftovers == {"a": [disk], "b": [], "local": []}
    assert {i.instance_id for i in accounts.store.list_instances()} == {"i-1", "i-2"}
    assert sorted(result.recovered) == ["launch-i-1", "launch-i-2"]
    assert all(t.startswith("listed-leftovers") for t in ListedProvider.threads)  # beside the instances
    ListedProvider.threads.clear()
    assert reconcile(accounts).leftovers == {} and ListedProvider.threads == []  # only when asked


def test_a_failed_leftover_listing_is_kept_apart_and_the_instances_still_merge(accounts):
    ListedProvider.world = {"a": {"instances": [_inst("a", "i-1")], "leftovers": [],
                                  "leftovers_error": AuthError("not allowed to list disks")},
                            "b": {"instances": [_inst("b", "i-2")], "leftovers": []}}
    result = reconcile(accounts, leftovers=True)
    assert not result.errors
    assert list(result.leftover_errors) == ["a"] and "disks" in str(result.leftover_errors["a"])
    assert result.leftovers == {"b": [], "local": []}
    assert {i.instance_id for i in accounts.store.list_instances()} == {"i-1", "i-2"}


def test_a_vanished_instance_is_marked_terminated_in_the_same_transaction(accounts):
    ListedProvider.world = {"a": {"instances": [_inst("a", "i-1"), _inst("a", "i-3")], "leftovers": []},
                            "b": {"instances": [], "leftovers": []}}
    reconcile(accounts)
    ListedProvider.world["a"]["instances"] = [_inst("a", "i-1")]
    result = reconcile(accounts)
    states = {i.instance_id: i.state for i in accounts.store.list_instances()}
    assert states == {"i-1": InstanceState.RUNNING, "i-3": InstanceState.TERMINATED}
    assert {i.instance_id for i in result.instances} == {"i-1", "i-3"}
    ledger = [(e.instance_id, e.state) for e in accounts.store.ledger()]
    assert ledger.count(("i-3", "terminated")) == 1 and ledger.count(("i-1", "running")) == 1


# -- the listing cache ------------------------------------------------------------------------------
def test_the_cache_answers_only_within_the_age_for_the_same_profiles_and_an_unchanged_store(accounts):
    store, profiles = accounts.store, accounts.profiles()
    disk = Resource("listed", "a", "disk-1", "disk", "r1", "launch-old", {"price_per_hour": 0.01})
    ListedProvider.world = {"a": {"instances": [_inst("a", "i-1")], "leftovers": [disk]},
                            "b": {"instances": [], "leftovers": []}}
    reconcile(accounts, leftovers=True)
    listing_cache.remember(store, profiles, [disk], now=1000.0)
    assert listing_cache.recall(store, profiles, 60, now=1030.0) == (1000.0, [disk])
    assert listing_cache.recall(store, profiles, 0, now=1000.0) is None  # the default: always ask
    assert listing_cache.recall(store, profiles, 20, now=1030.0) is None  # too old for this caller
    assert listing_cache.recall(store, profiles, 60, now=990.0) is None  # from the future: a clock jump
    changed = [Profile("a", "listed", "r2"), profiles[1]]
    assert listing_cache.recall(store, changed, 60, now=1030.0) is None  # a profile's settings changed
    store.upsert_instance(_inst("a", "i-1", InstanceState.TERMINATED))  # a down, a launch, a GUI refresh …
    assert listing_cache.recall(store, profiles, 60, now=1030.0) is None


def test_a_damaged_or_missing_cache_is_a_miss(accounts):
    store, profiles = accounts.store, accounts.profiles()
    assert listing_cache.recall(store, profiles, 60) is None
    listing_cache.remember(store, profiles, [])
    assert listing_cache.recall(store, profiles, 60) is not None
    path = store.path.parent / listing_cache.FILE_NAME
    path.write_text("{not json", encoding="utf-8")
    assert listing_cache.recall(store, profiles, 60) is None
    path.write_text(json.dumps({"version": 99}), encoding="utf-8")
    assert listing_cache.recall(store, profiles, 60) is None
    listing_cache.remember(store, profiles, [])
    listing_cache.forget(store)
    assert not path.exists() and listing_cache.recall(store, profiles, 60) is None
