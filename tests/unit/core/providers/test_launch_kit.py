"""The launch kit: one launch per launch id at a time, the in-flight set, the checks before a launch."""

from __future__ import annotations

import threading

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import LaunchRequest, Offer, Prices
from workbench.core.providers.launch_kit import LaunchTracker, check_launch


def test_a_launch_is_in_flight_while_it_runs_and_after_a_failure_it_is_not() -> None:
    launches = LaunchTracker()
    with launches.running("L1"):
        with launches.running("L2"):  # another id does not wait
            assert launches.in_flight() == {"L1", "L2"}
        assert launches.in_flight() == {"L1"}
    with pytest.raises(RuntimeError):
        with launches.running("L1"):
            raise RuntimeError("the cloud said no")
    assert launches.in_flight() == set()


def test_the_same_launch_id_waits_for_the_first() -> None:
    launches = LaunchTracker()
    inside, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        with launches.running("L"):
            inside.set()
            release.wait(5)
            order.append("first")

    def second() -> None:
        inside.wait(5)
        with launches.running("L"):
            order.append("second")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    inside.wait(5)
    assert launches.in_flight() == {"L"}
    release.set()
    for t in threads:
        t.join(5)
    assert order == ["first", "second"] and launches.in_flight() == set()


def _request(region: str, count: int = 1) -> LaunchRequest:
    spec = parse_spec("name: t\nrun: echo hi\n")
    offer = Offer("aws", region, "g5.xlarge", "A10G", 1, 24.0, 4, 16.0, Prices(on_demand=1.0))
    return LaunchRequest("L1", spec, offer, "lab", {}, count=count)


def test_check_launch_refuses_a_region_the_profile_does_not_enable_and_unreachable_nodes() -> None:
    check_launch("lab", _request("us-east-1", 2), ("us-east-1",), None)
    check_launch("lab", _request("us-east-1", 2), ("us-east-1",), ("private", 22, None))
    check_launch("lab", _request("us-east-1"), ("us-east-1",), ("127.0.0.1", 2222, None))
    with pytest.raises(ConfigError, match="region eu-west-1 is not enabled in profile 'lab'") as bad:
        check_launch("lab", _request("eu-west-1"), ("us-east-1",), None)
    assert "regions setting" in (bad.value.hint or "")
    with pytest.raises(ConfigError, match=r"one ssh_address \(127.0.0.1\), which cannot reach 2 nodes"):
        check_launch("lab", _request("us-east-1", 2), ("us-east-1",), ("127.0.0.1", 2222, None))
