"""Races, run for real: the server holds RunInstances (a hold rule) while something else happens."""

from __future__ import annotations

import threading

import pytest

from workbench.core.domain.errors import WorkbenchError

from .conftest import offer_of, request_for


def _launch_in_thread(p, req):
    box: dict = {}

    def body() -> None:
        try:
            box["instances"] = p.launch(req)
        except WorkbenchError as exc:
            box["error"] = exc

    t = threading.Thread(target=body, name="held-launch")
    t.start()
    return t, box


def test_a_launch_in_flight_is_not_a_leftover_of_its_own_provider(ali, account, make_provider, install_id):
    p = make_provider()
    req = request_for(offer_of(p), install_id)
    hold = ali.hold("ecs:RunInstances", account)
    t, box = _launch_in_thread(p, req)
    try:
        assert hold.arrived.wait(20)
        assert ali.resources(account)["groups"], "the network is made before RunInstances"
        assert [r for r in p.leftovers() if r.launch_id == req.launch_id] == []  # in flight: not leftovers
    finally:
        hold.release()
        t.join(30)
    assert len(box["instances"]) == 1
    p.terminate(box["instances"])
    assert not any(ali.resources(account).values())


def test_a_teardown_racing_a_launch_leaves_nothing(ali, account, make_provider, install_id):
    """Another process (a second provider object) deletes the launch's network while RunInstances is held:
    the launch fails, rolls back, and nothing of it is left."""
    p = make_provider()
    req = request_for(offer_of(p), install_id)
    hold = ali.hold("ecs:RunInstances", account)
    t, box = _launch_in_thread(p, req)
    try:
        assert hold.arrived.wait(20)
        other = make_provider()
        swept = [r for r in other.leftovers() if r.launch_id == req.launch_id]
        assert {r.kind for r in swept} == {"vpc", "vswitch", "security-group", "key-pair"}
        other.delete(swept)
    finally:
        hold.release()
        t.join(30)
    assert "error" in box, box
    assert "does not exist" in box["error"].message
    left = {k: v for k, v in ali.resources(account).items() if v}
    assert left == {}, left
    assert p.instances() == [] and p.leftovers() == []


def test_stop_all_while_a_launch_is_held_then_released(ali, account, make_provider, install_id):
    """Teardown of everything listed while a launch is held finds nothing to end yet; after the launch
    returns, a second teardown ends it and the account is empty (core orders the two, see issue 16)."""
    p = make_provider()
    req = request_for(offer_of(p), install_id)
    hold = ali.hold("ecs:RunInstances", account)
    t, box = _launch_in_thread(p, req)
    try:
        assert hold.arrived.wait(20)
        assert p.instances() == []
    finally:
        hold.release()
        t.join(30)
    p.terminate(p.instances())
    assert not any(ali.resources(account).values())
    assert box["instances"][0].launch_id == req.launch_id


pytestmark = pytest.mark.timeout(60)
