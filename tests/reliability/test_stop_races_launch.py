"""A stop that cannot race a launch: `down --all` (CLI, another process) while a launch's RunInstances (moto)
or VM create (ARM server) is parked in flight by a hold rule.

The teardown must wait for the launch (or have it cancelled), then end what it made, and say "clean"
only after that: afterwards the cloud holds nothing billable.  Evidence, not timing: the hold keeps the
launch inside its provider call for as long as the test wants, and the teardown's gate marker
(``<data>/locks/<provider>.<profile>/stop-*.json``) shows it is waiting for it.
"""

from __future__ import annotations

import time

import pytest

from reltools import arm_billable, arm_groups, aws_remains, needs_secret_service, unique

VM_PUT = r"/providers/microsoft.compute/virtualmachines/[^/]+$"
NOTHING = {"instances": [], "volumes": [], "addresses": [], "groups": [], "keys": []}


def wait_until(cond, timeout: float, what: str):
    """Poll ``cond`` until it gives something truthy (the evidence), or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not (got := cond()):
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(0.02)
    return got


def _hold(cloud: str, wbhome, moto, arm, account):
    # the parked request must not time out in the client (which would send it again) while the test races
    if cloud == "aws":
        wbhome.add_aws(moto, "moto", "read_timeout=150")
        return moto.faults.hold("RunInstances", timeout_s=150), "aws.moto"
    name = unique("arm")  # keyring entries are shared by the parallel test workers: a name of its own
    wbhome.add_azure(arm, account, name, True, "read_timeout=150")
    return arm.hold(VM_PUT, method="PUT", sub=account.subscription, timeout_s=150), f"azure.{name}"


@needs_secret_service
@pytest.mark.timeout(240)
@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_down_all_waits_for_the_launch_in_flight_then_ends_what_it_made(cloud, wbhome, moto, arm, account):
    hold, gate = _hold(cloud, wbhome, moto, arm, account)
    launch = wbhome.popen("launch", str(wbhome.spec("inflight")), "--provider", cloud, "--yes", "--json")
    down = None
    try:
        hold.wait_arrived(timeout=90)  # the launch is inside its provider call, its request parked
        (lid,) = [x["launch_id"] for x in wbhome.json("status")["launches"]]
        locks = wbhome.path / "data" / "locks" / gate
        assert (locks / f"launch-{lid}").exists()  # in flight, as the gate sees it
        down = wbhome.popen("down", "--all", "--yes", "--json")
        wait_until(lambda: list(locks.glob("stop-*.json")), timeout=60, what="down --all waiting at the gate")
        assert down.poll() is None and hold.held == 1  # it waits: nothing was claimed while the launch was in flight
    finally:
        hold.release()
    out, err = down.communicate(timeout=180)
    try:
        assert not hold.timed_out
        assert down.returncode == 0, out + err
        import json

        report = json.loads(out)
        assert report["clean"] and report["remaining"] == []
        if cloud == "aws":  # RunInstances cannot be called back: the machine it made was ended afterwards
            assert [i["launch_id"] for i in report["terminated"]] == [lid], json.dumps(report["terminated"], indent=1)
            assert aws_remains(moto, wbhome.install_id()) == NOTHING
        else:  # the VM create was cancelled (rolled back) or finished and was deleted: either way, nothing bills
            assert arm_billable(arm, account) == [] and f"wb-{lid}" not in arm_groups(arm, account)
        assert wbhome.json("status")["billable"] == 0
    finally:
        launch.kill()  # an AWS launch goes on to wait for SSH on the machine that is gone
        launch.communicate(timeout=30)
