"""Teardown progress events and the billing inventory, against the file-backed fake cloud in-process."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from workbench.core.domain.errors import AuthError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import Instance, InstanceState, Profile, Resource
from workbench_testing import fake_cloud_accounts
from workbench.core.lifecycle.teardown import TeardownEvent, hourly_price, inventory, item_key, teardown

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "plugins"
SPEC = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch)
    store = acc.store

    def add_fake(name: str, **settings: str) -> Profile:
        prof = Profile(name, "fakecloud", "fake-east", settings=settings)
        acc.save_profile(prof)
        creds.set("fakecloud", name, {"account": "a"})
        return prof

    acc.add_fake = add_fake  # type: ignore[attr-defined]
    yield acc
    for p in acc.profiles():  # unstick, so the cleanup can end everything
        if p.provider == "fakecloud":
            acc.save_profile(Profile(p.name, p.provider, p.region, settings={}))
    teardown(acc, None, timeout=5, poll=0.05)
    store.close()
    for m in [m for m in sys.modules if m.startswith("workbench_fakecloud") or m.startswith("workbench_broken")]:
        sys.modules.pop(m, None)


class Recorder:
    """A progress callback that remembers events and the threads they came from."""

    def __init__(self) -> None:
        self.events: list[TeardownEvent] = []
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    def __call__(self, ev: TeardownEvent) -> None:
        with self._lock:
            self.events.append(ev)
            self.threads.add(threading.get_ident())

    def kinds_for(self, item) -> list[str]:
        return [e.kind for e in self.events if e.item is not None and item_key(e.item) == item_key(item)]


def test_inventory_lists_instances_and_leftovers_with_prices(accounts):
    accounts.add_fake("fc")
    accounts.add_fake("leaky", leak_disk="true")
    keep = execute(accounts, choose_offer(accounts, SPEC, profile="fc"))[0]
    leaked_from = execute(accounts, choose_offer(accounts, SPEC, profile="leaky"))[0]
    running = execute(accounts, choose_offer(accounts, SPEC, profile="leaky"))[0]
    accounts.provider(accounts.profile("leaky")).terminate([leaked_from])  # its disk stays behind

    inv = inventory(accounts)

    by_name = {p.profile.name: p for p in inv.profiles}
    assert {i.instance_id for i in by_name["fc"].instances} == {keep.instance_id}
    assert {i.instance_id for i in by_name["leaky"].instances} == {running.instance_id}
    assert [(r.kind, r.resource_id) for r in by_name["leaky"].leftovers] == [
        ("disk", f"disk-{leaked_from.instance_id}")]
    assert by_name["fc"].leftovers == [] and not inv.errors and not inv.nothing_billing
    assert hourly_price(keep) == 3.06
    assert inv.hourly_total == pytest.approx(2 * 3.06)  # the disk's price is unknown to the fake cloud
    assert [r.kind for r in inv.unpriced] == ["disk"]
    # reconciled on the way: the terminated instance is no longer billable in the store
    states = {i.instance_id: i.state for i in accounts.store.list_instances()}
    assert states[leaked_from.instance_id] == InstanceState.TERMINATED


def test_inventory_keeps_going_past_a_profile_that_fails(accounts):
    accounts.add_fake("fc")
    accounts.save_profile(Profile("nocreds", "fakecloud", "fake-east"))  # no credentials stored
    inst = execute(accounts, choose_offer(accounts, SPEC, profile="fc"))[0]
    inv = inventory(accounts)
    assert [i.instance_id for i in inv.items] == [inst.instance_id]
    assert [(name, type(e)) for name, e in inv.errors] == [("nocreds", AuthError)]
    assert not inv.nothing_billing  # something may bill where we could not look


def test_inventory_of_nothing(accounts):
    accounts.add_fake("fc")
    inv = inventory(accounts)
    assert inv.nothing_billing and inv.items == [] and inv.hourly_total == 0


def test_events_for_each_instance_and_leftover(accounts):
    accounts.add_fake("fc")
    accounts.add_fake("leaky", leak_disk="true")
    plain = execute(accounts, choose_offer(accounts, SPEC, profile="fc"))[0]
    leaky = execute(accounts, choose_offer(accounts, SPEC, profile="leaky"))[0]
    rec = Recorder()

    report = teardown(accounts, None, timeout=5, poll=0.05, progress=rec)

    assert report.clean
    for inst in (plain, leaky):
        assert rec.kinds_for(inst) == ["terminating", "terminated", "verified"]
    disk = [e.item for e in rec.events if isinstance(e.item, Resource)]
    assert disk and disk[0].resource_id == f"disk-{leaky.instance_id}"
    assert rec.kinds_for(disk[0]) == ["deleting", "deleted", "verified"]
    assert [r.resource_id for r in report.deleted] == [disk[0].resource_id]
    # one profile-wide "verified" per profile that had something (and local, which had nothing)
    assert {e.profile for e in rec.events if e.kind == "verified" and e.item is None} == {"fc", "leaky", "local"}
    assert threading.get_ident() not in rec.threads  # emitted from the worker threads
    assert not [e for e in rec.events if e.kind in ("error", "remaining")]


def test_stuck_profile_ends_with_remaining_events(accounts):
    accounts.add_fake("stuck", stuck="true")
    inst = execute(accounts, choose_offer(accounts, SPEC, profile="stuck"))[0]
    rec = Recorder()

    report = teardown(accounts, None, timeout=0.3, poll=0.05, progress=rec)

    assert [x.instance_id for x in report.remaining if isinstance(x, Instance)] == [inst.instance_id]
    assert not report.clean
    assert rec.kinds_for(inst) == ["terminating", "terminated", "remaining"]
    assert [e.kind for e in rec.events if e.profile == "stuck" and e.item is None] == []  # never verified


def test_errors_are_events_too_and_a_failing_callback_is_ignored(accounts):
    accounts.add_fake("fc")
    accounts.save_profile(Profile("nocreds", "fakecloud", "fake-east"))
    inst = execute(accounts, choose_offer(accounts, SPEC, profile="fc"))[0]
    seen: list[TeardownEvent] = []

    def flaky(ev: TeardownEvent) -> None:
        seen.append(ev)
        raise RuntimeError("display broke")

    report = teardown(accounts, None, timeout=5, poll=0.05, progress=flaky)

    assert [i.instance_id for i in report.terminated] == [inst.instance_id]
    assert not report.remaining
    errors = [e for e in seen if e.kind == "error"]
    assert errors and {e.profile for e in errors} == {"nocreds"}
    assert "no credentials stored" in errors[0].message
    assert any(e.kind == "verified" and e.item is not None for e in seen)


def test_teardown_without_progress_still_works(accounts):
    accounts.add_fake("fc")
    execute(accounts, choose_offer(accounts, SPEC, profile="fc"))
    assert teardown(accounts, None, timeout=5, poll=0.05).clean
