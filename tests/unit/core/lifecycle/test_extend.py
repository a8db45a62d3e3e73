"""extend_launch on the fake cloud: the app-side guard follows the new max runtime, the projection rises, and every
refusal is clear and changes nothing (the real SSH and cloud paths: tests/remote/test_extend_remote.py)."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import ConfigError, NotFoundError, SpecError, WorkbenchError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.remote import extend as ext
from workbench.core.lifecycle.guards import GuardEngine
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench_testing import fake_cloud_accounts


@pytest.fixture
def acc(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    accounts, _ = fake_cloud_accounts(monkeypatch, {"fk": {}})
    yield accounts
    from workbench.core.lifecycle.teardown import teardown

    teardown(accounts, None, timeout=10, poll=0.05)
    accounts.store.close()


def _launch(acc, runtime: str = "10m") -> str:
    sp = parse_spec(f"name: g\nrun: python train.py\nresources:\n  gpu: V100:1\nguards:\n  max_runtime: {runtime}\n")
    lp = choose_offer(acc, sp, profile="fk")
    execute(acc, lp)
    return lp.launch_id


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_the_app_guard_follows_the_extension_and_the_projection_rises(acc):
    lid = _launch(acc)
    start = acc.store.get_launch(lid).created_at
    clock = Clock(start + 60)
    eng = GuardEngine(acc, clock=clock, collect_samples=False, teardown_poll_s=0.02, teardown_timeout_s=10)
    from workbench.core.money.spend import SpendBook

    before = SpendBook.load(acc.store).projection(lid, clock.t)
    result = ext.extend_launch(acc, lid, 20, clock=clock)
    assert (result.max_runtime_minutes, result.previous_minutes) == (30, 10)
    assert result.ends_at == start + 1800 and not result.cloud_release_moved and result.machines_told == []
    assert result.projected_cost > before and result.currency == "USD"
    assert acc.store.get_launch(lid).projected_cost == pytest.approx(result.projected_cost)
    assert result.to_json()["max_runtime_minutes"] == 30 and "projected cost" in result.summary()
    clock.t = start + 600  # the old deadline: nothing happens
    assert eng.poll() == []
    clock.t = start + 1800
    assert [(e.guard, e.action) for e in eng.poll()] == [("max_runtime", "teardown"), ("max_runtime", "verified")]


def test_refusals_are_clear_and_change_nothing(acc, monkeypatch):
    lid = _launch(acc)
    start = acc.store.get_launch(lid).created_at
    with pytest.raises(NotFoundError):
        ext.extend_launch(acc, "nope", 10)
    for bad in (0, -5, True, 1.5):
        with pytest.raises(SpecError):
            ext.extend_launch(acc, lid, bad)
    # already far past its end (the guard was not running): too little is refused with the least that works
    with pytest.raises(SpecError) as err:
        ext.extend_launch(acc, lid, 5, clock=lambda: start + 3600)
    assert "at least 51 minutes" in err.value.hint
    # a machine that cannot be told: the app keeps its old max runtime
    def unreachable(*_a, **_k):
        raise WorkbenchError("could not reach it")

    monkeypatch.setattr(ext, "tell_machine", unreachable)
    with pytest.raises(WorkbenchError, match="could not reach"):
        ext.extend_launch(acc, lid, 10, guarded=lambda _i: True)
    assert acc.store.get_launch(lid).spec["guards"]["max_runtime_minutes"] == 10
    # no max runtime: nothing to extend
    spec = acc.store.get_launch(lid).spec
    spec["guards"]["max_runtime_minutes"] = None
    acc.store.update_launch(lid, spec=spec)
    with pytest.raises(ConfigError, match="no max runtime"):
        ext.extend_launch(acc, lid, 10)


def test_a_launch_that_is_not_running_is_refused(acc):
    lid = _launch(acc)
    from workbench.core.lifecycle.teardown import teardown

    assert teardown(acc, [lid], timeout=10, poll=0.05).clean
    with pytest.raises(ConfigError, match="is not running"):
        ext.extend_launch(acc, lid, 10)


@pytest.mark.parametrize("text, minutes", [("30m", 30), ("2h", 120), ("90", 90), ("1h30m", 90), ("1d", 1440)])
def test_durations(text, minutes):
    assert ext.parse_extension(text) == minutes


@pytest.mark.parametrize("text", ["", "soon", "0", "0m", "90s", "-5m", "400d"])
def test_bad_durations(text):
    with pytest.raises(SpecError, match="--by"):
        ext.parse_extension(text)
