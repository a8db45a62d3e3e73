"""The launch's network is asynchronous in Alibaba's API, and the plugin waits for it.

CreateVpc and CreateVSwitch answer while the VPC / vSwitch is still ``Pending`` (their reference pages:
"an asynchronous operation … runs the task in the background"); RunInstances into a Pending vSwitch
fails with IncorrectVSwitchStatus.  DeleteVSwitch and DeleteVpc are asynchronous too (the vSwitch
shows Pending, the VPC Deleting, until gone), a Pending vSwitch cannot be deleted, nor one whose VPC is
busy with another vSwitch (OperationDenied.OtherSubnetProcessing).  The server does all of that by
its knobs (``vpc_pending_s``, ``vswitch_pending_s``, ``vswitch_delete_s``, ``vpc_delete_s``).
"""

from __future__ import annotations

import time

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import CapacityError, TransientError
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER

from .conftest import offer_of, request_for

HZ = "cn-hangzhou"


def _codes(ali: AlibabaServer, account: Account) -> list[tuple[str, str]]:
    return [(s.action, s.code) for s in ali.calls_of(account) if s.code]


def _eventually_nothing_left(ali: AlibabaServer, account: Account, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while True:
        left = {k: v for k, v in ali.resources(account).items() if v}
        if not left:
            return
        assert time.monotonic() < deadline, f"left behind: {left}"
        time.sleep(0.05)


def test_a_new_vswitch_is_waited_for_before_run_instances(ali, account, make_provider, install_id):
    knobs = ali.knobs(account)
    knobs.vpc_pending_s = knobs.vswitch_pending_s = 0.5
    p = make_provider()
    req = request_for(offer_of(p), install_id)
    started = time.monotonic()
    got = p.launch(req)
    assert len(got) == 1 and got[0].launch_id == req.launch_id
    assert time.monotonic() - started >= 1.0  # both waits, one after the other
    assert _codes(ali, account) == []  # no IncorrectVSwitchStatus / IncorrectVpcStatus on the way
    order = [s.action for s in ali.calls_of(account)]
    made, run = order.index("vpc:CreateVSwitch"), order.index("ecs:RunInstances")
    assert "vpc:DescribeVSwitches" in order[made + 1:run]
    assert [w["Status"] for w in ali.resources(account)["vswitches"]] == ["Available"]


def _pending_network_of(ali: AlibabaServer, account: Account, install_id: str, launch_id: str, zone: str) -> str:
    """What a launch that crashed right after CreateVSwitch left: its tagged VPC and a still-Pending vSwitch."""
    from alibabacloud_tea_openapi.utils_models import Config
    from alibabacloud_vpc20160428 import models as vm
    from alibabacloud_vpc20160428.client import Client as Vpc

    vpc = Vpc(Config(access_key_id=account.access_key_id, access_key_secret=account.secret, endpoint=ali.endpoint,
                     protocol="http", region_id=HZ))
    tags = [vm.CreateVpcRequestTag(key=k, value=v)
            for k, v in ((TAG_MANAGED, "true"), (TAG_OWNER, install_id), (TAG_LAUNCH, launch_id))]
    vid = vpc.create_vpc(vm.CreateVpcRequest(region_id=HZ, cidr_block="10.88.0.0/16", tag=tags)).body.vpc_id
    deadline = time.monotonic() + 5
    while vpc.describe_vpcs(vm.DescribeVpcsRequest(region_id=HZ, vpc_id=vid)).body.vpcs.vpc[0].status != "Available":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return vpc.create_vswitch(vm.CreateVSwitchRequest(region_id=HZ, vpc_id=vid, zone_id=zone,
                                                      cidr_block="10.88.18.0/24")).body.v_switch_id


def test_a_found_vswitch_still_pending_is_waited_for(ali, account, make_provider, install_id):
    ali.knobs(account).vswitch_pending_s = 0.6
    p = make_provider(zones="cn-hangzhou-i")
    req = request_for(offer_of(p), install_id)
    wid = _pending_network_of(ali, account, install_id, req.launch_id, "cn-hangzhou-i")
    got = p.launch(req)  # the resumed launch finds the VPC and the Pending vSwitch and uses them once Available
    assert len(got) == 1
    res = ali.resources(account)
    assert [w["VSwitchId"] for w in res["vswitches"]] == [wid] and len(res["vpcs"]) == 1
    assert res["instances"][0]["VpcAttributes"]["VSwitchId"] == wid
    assert len(ali.calls(account, "vpc:CreateVSwitch")) == 1  # the test's own: the plugin made none
    assert _codes(ali, account) == []


@pytest.mark.parametrize("knob, what", [("vswitch_pending_s", "vSwitch"), ("vpc_pending_s", "VPC")])
def test_a_network_that_stays_pending_fails_clearly_and_leaves_nothing(ali, account, make_provider, install_id,
                                                                       knob, what):
    setattr(ali.knobs(account), knob, 1.5)  # longer than the launch waits (launch_timeout_s 1)
    p = make_provider(launch_timeout_s="1")
    with pytest.raises(TransientError) as err:
        p.launch(request_for(offer_of(p), install_id))
    assert f"{what} " in err.value.message and "still Pending" in err.value.message
    assert "launch_timeout_s" in (err.value.hint or "")
    assert ("ecs:RunInstances", "IncorrectVSwitchStatus") not in _codes(ali, account)
    # the rollback waited until the Pending network could be deleted (only Available ones can)
    _eventually_nothing_left(ali, account, within=0.5)
    assert p.instances() == [] and p.leftovers() == []


def test_asynchronous_deletes_are_waited_out_by_down_and_by_a_rollback(ali, account, make_provider, install_id):
    knobs = ali.knobs(account)
    knobs.vswitch_delete_s = knobs.vpc_delete_s = 0.4
    knobs.release_s = 0.2
    knobs.no_stock.add(("cn-hangzhou-h", "*", "*"))  # two zones tried: two vSwitches in the launch's VPC
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    req = request_for(offer_of(p), install_id)
    launched = p.launch(req)
    assert len(ali.resources(account)["vswitches"]) == 2
    p.terminate(launched)  # returns once the network is gone, not while the VPC is still Deleting
    assert {k: v for k, v in ali.resources(account).items() if v} == {}
    assert p.leftovers() == []
    codes = {c for _, c in _codes(ali, account)}
    assert codes & {"OperationDenied.OtherSubnetProcessing", "DependencyViolation.VSwitch"}, codes

    knobs.no_stock.add(("*", "*", "*"))  # now a launch that fails in both zones and is rolled back
    with pytest.raises(CapacityError):
        p.launch(request_for(offer_of(p), install_id))
    _eventually_nothing_left(ali, account)
    assert p.leftovers() == []
