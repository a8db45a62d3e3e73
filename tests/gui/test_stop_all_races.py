"""Stop all billing (the window) while a launch from the window is in flight: its RunInstances (moto) or VM
create (ARM server) parked by a hold rule.  The dialog lists the launch as starting, its teardown waits for
it (saying so), ends what it made, and says "0 billable resources remain" only then; afterwards the cloud
holds nothing billable.  Real HTTP, the real SDKs, a real QApplication (offscreen)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import aws_moto
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Profile
from workbench.core.lifecycle.launcher import choose_offer
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store
from workbench.ui.instances.stop_all import StopAllDialog
from workbench.ui.launch.launch_draft import LaunchDraft
from workbench.ui.launch.launch_run import LaunchRun
from workbench.ui.runtime.session import Session
from workbench_testing import MemoryCredentials


from azure_arm import profile_for, shared_server  # noqa: E402

SPEC = parse_spec("name: racing\nrun: python3 train.py\nresources:\n  gpu: V100:1\nguards:\n  max_runtime: 1h\n")
AWS_SETTINGS = {"regions": "us-east-1", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10",
                "retry_backoff_cap_s": "0.02", "read_timeout": "150"}
VM_PUT = r"/providers/microsoft.compute/virtualmachines/[^/]+$"


@pytest.fixture(params=["aws", "azure"])
def cloud(request, home):
    """(accounts, profile name, hold rule factory, what-bills check) for one cloud."""
    store = Store.open()
    creds = MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    if request.param == "aws":
        stack = aws_moto.start()
        stack.reset()
        acc.save_profile(Profile("aws-race", "aws", "us-east-1", endpoint_url=stack.url, settings=AWS_SETTINGS))
        creds.set("aws", "aws-race", {"access_key_id": "AKIARACE000000000001", "secret_access_key": "race/secret"})

        def hold():
            return stack.faults.hold("RunInstances", timeout_s=150)

        def billing() -> list[str]:
            import boto3

            ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIACHECK",
                               aws_secret_access_key="check")
            owner = [{"Name": "tag:workbench:owner", "Values": [acc.context.install_id]}]
            return [i["InstanceId"] for r in ec2.describe_instances(Filters=owner)["Reservations"]
                    for i in r["Instances"] if i["State"]["Name"] not in ("terminated", "shutting-down")] + \
                [v["VolumeId"] for v in ec2.describe_volumes(Filters=owner)["Volumes"]]
        cleanup = stack.reset
        name = "aws-race"
    else:
        arm = shared_server()
        account = arm.new_account()
        p = profile_for(arm, account, name="az-race", read_timeout="150")
        acc.save_profile(p)
        creds.set("azure", "az-race", {"client_secret": account.secret})

        def hold():
            return arm.hold(VM_PUT, method="PUT", sub=account.subscription, timeout_s=150)

        def billing() -> list[str]:
            kinds = ("microsoft.compute/virtualmachines", "microsoft.compute/disks",
                     "microsoft.network/publicipaddresses")
            return [r["id"] for r in arm.resources(account.subscription) if r["type"].lower() in kinds]
        cleanup = lambda: arm.clear_faults(account.subscription)  # noqa: E731
        name = "az-race"
    yield acc, name, hold, billing
    from workbench.core.lifecycle.teardown import teardown

    try:
        teardown(acc, None, timeout=30, poll=0.1)
    finally:
        store.close()
        cleanup()


@pytest.mark.timeout(240)
def test_stop_all_waits_for_the_launch_in_flight_then_ends_it(qtbot, cloud):
    accounts, profile, make_hold, billing = cloud
    session = Session(accounts)
    try:
        plan = choose_offer(accounts, SPEC, profile=profile)
        run = LaunchRun(session, LaunchDraft(spec=SPEC, choice=plan.choice), wait_s=30)
        hold = make_hold()
        run.start()
        try:
            hold.wait_arrived(timeout=90)  # the launch is inside its provider call
            dlg = StopAllDialog.open_for(session, timeout=120, poll=0.1)
            qtbot.addWidget(dlg)
            qtbot.waitUntil(lambda: dlg.state == "confirm", timeout=60_000)
            assert [lid for _, lid in dlg.inventory.launching] == [run.launch_id]  # listed as starting
            assert run.launch_id in dlg.launching.text() and dlg.stop_button.isEnabled()
            dlg.confirm()
            qtbot.waitUntil(lambda: dlg.launching.text().startswith(f"Waiting for {run.launch_id}"),
                            timeout=60_000)
            assert dlg.running and hold.held == 1  # it waits; it has claimed nothing
        finally:
            hold.release()
        qtbot.waitUntil(lambda: dlg.state == "done", timeout=180_000)
        qtbot.waitUntil(lambda: not run.in_flight, timeout=60_000)
        assert not hold.timed_out
        assert dlg.report.clean and dlg.result.text() == "0 billable resources remain"
        assert billing() == []
    finally:
        session.shutdown()
