"""The test server itself, driven by the real Alibaba Cloud SDKs: what it must get right for the plugin
tests to mean anything (signatures, states, idempotency, tags, stock, quota, faults, holds, the clock)."""

from __future__ import annotations

import http.client
import threading
import time

import pytest

from alibaba_ecs import Account, AlibabaServer

HZ = "cn-hangzhou"


def _clients(ali: AlibabaServer, acct: Account, secret: str | None = None, ak: str | None = None):
    from alibabacloud_ecs20140526.client import Client as Ecs
    from alibabacloud_tea_openapi.utils_models import Config
    from alibabacloud_vpc20160428.client import Client as Vpc

    def cfg() -> Config:
        return Config(access_key_id=ak or acct.access_key_id, access_key_secret=secret or acct.secret,
                      endpoint=ali.endpoint, protocol="http", region_id=HZ, no_proxy="127.0.0.1")

    return Ecs(cfg()), Vpc(cfg())


@pytest.fixture
def sdk(ali: AlibabaServer, account: Account):
    return _clients(ali, account)


def _vpc_status(vpc, v: str) -> str | None:
    from alibabacloud_vpc20160428 import models as vm

    rows = vpc.describe_vpcs(vm.DescribeVpcsRequest(region_id=HZ, vpc_id=v)).body.vpcs.vpc
    return rows[0].status if rows else None


def _vswitch_status(vpc, w: str) -> str | None:
    from alibabacloud_vpc20160428 import models as vm

    rows = vpc.describe_vswitches(vm.DescribeVSwitchesRequest(region_id=HZ, v_switch_id=w)).body.v_switches.v_switch
    return rows[0].status if rows else None


def _until(look, want: str = "Available", timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while look() != want:
        assert time.monotonic() < deadline, f"not {want} in {timeout} s"
        time.sleep(0.02)


def _network(ecs, vpc) -> tuple[str, str, str]:
    """A VPC, a vSwitch and a group, each waited for as a client must (CreateVpc/CreateVSwitch are asynchronous)."""
    from alibabacloud_ecs20140526 import models as m
    from alibabacloud_vpc20160428 import models as vm

    v = vpc.create_vpc(vm.CreateVpcRequest(region_id=HZ, cidr_block="10.0.0.0/16")).body.vpc_id
    _until(lambda: _vpc_status(vpc, v))
    w = vpc.create_vswitch(vm.CreateVSwitchRequest(region_id=HZ, vpc_id=v, zone_id="cn-hangzhou-i",
                                                   cidr_block="10.0.1.0/24")).body.v_switch_id
    _until(lambda: _vswitch_status(vpc, w))
    g = ecs.create_security_group(m.CreateSecurityGroupRequest(region_id=HZ, vpc_id=v)).body.security_group_id
    return v, w, g


def _run(ecs, w: str, g: str, **kw):
    from alibabacloud_ecs20140526 import models as m

    params = dict(region_id=HZ, instance_type="ecs.gn6i-c4g1.xlarge", image_id="ubuntu_22_04_x64_20G_alibase_20250101.vhd",
                  v_switch_id=w, security_group_id=g)
    params.update(kw)
    return ecs.run_instances(m.RunInstancesRequest(**params)).body.instance_id_sets.instance_id_set


def _describe(ecs, **kw):
    from alibabacloud_ecs20140526 import models as m

    return ecs.describe_instances(m.DescribeInstancesRequest(region_id=HZ, **kw)).body.instances.instance


def test_signature_is_checked_on_the_wire(ali: AlibabaServer, account: Account):
    from alibabacloud_ecs20140526 import models as m

    ecs, _ = _clients(ali, account)
    assert ecs.describe_regions(m.DescribeRegionsRequest()).body.regions.region[0].region_id == HZ
    method, path, headers, body = ali.raw[-1]
    assert headers["Authorization"].startswith("ACS3-HMAC-SHA256 Credential=" + account.access_key_id)

    def send(path_: str) -> tuple[int, str]:
        conn = http.client.HTTPConnection(*ali.endpoint.split(":"), timeout=5)
        conn.request(method, path_, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()

    status, text = send(path)  # the same signed request again: its nonce was used
    assert status == 400 and "SignatureNonceUsed" in text
    headers["x-acs-signature-nonce"] = "f" * 32  # a new nonce the signature did not cover
    status, text = send(path + "&Injected=1" if "?" in path else path + "?Injected=1")
    assert status == 400 and "SignatureDoesNotMatch" in text

    wrong, _ = _clients(ali, account, secret="not-the-secret")
    with pytest.raises(Exception) as bad:
        wrong.describe_regions(m.DescribeRegionsRequest())
    assert bad.value.code == "SignatureDoesNotMatch"
    stranger, _ = _clients(ali, account, ak="LTAI5tUnknownKey000000")
    with pytest.raises(Exception) as unknown:
        stranger.describe_regions(m.DescribeRegionsRequest())
    assert unknown.value.code == "InvalidAccessKeyId.NotFound" and unknown.value.status_code == 404


def test_instance_states_follow_the_clock_and_auto_release_is_honoured(ali: AlibabaServer, account: Account, sdk):
    ecs, vpc = sdk
    knobs = ali.knobs(account)
    knobs.pending_s, knobs.starting_s = 60, 60
    _, w, g = _network(ecs, vpc)
    release = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ali.clock(account).now() + 3 * 3600))
    iid, = _run(ecs, w, g, auto_release_time=release)
    assert _describe(ecs)[0].status == "Pending"
    ali.clock(account).advance(61)
    assert _describe(ecs)[0].status == "Starting"
    ali.clock(account).advance(60)
    inst = _describe(ecs)[0]
    assert inst.status == "Running" and inst.auto_release_time == release[:-3] + "00Z"
    ali.clock(account).advance(3 * 3600)  # past the AutoReleaseTime: the cloud releases it by itself
    assert _describe(ecs) == []
    assert [r["reason"] for r in ali.released(account)] == ["AutoRelease"]


def test_auto_release_time_must_be_half_an_hour_ahead(sdk):
    ecs, vpc = sdk
    _, w, g = _network(ecs, vpc)
    soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 600))
    with pytest.raises(Exception) as err:
        _run(ecs, w, g, auto_release_time=soon)
    assert err.value.code == "InvalidAutoReleaseTime.Malformed"


def test_client_token_makes_run_instances_idempotent(sdk):
    ecs, vpc = sdk
    _, w, g = _network(ecs, vpc)
    first = _run(ecs, w, g, client_token="tok-1")
    assert _run(ecs, w, g, client_token="tok-1") == first
    assert len(_describe(ecs)) == 1
    with pytest.raises(Exception) as err:
        _run(ecs, w, g, client_token="tok-1", instance_type="ecs.gn6v-c8g1.2xlarge")
    assert err.value.code == "IdempotentParameterMismatch"


def test_tag_filters_stock_and_quota(ali: AlibabaServer, account: Account, sdk):
    from alibabacloud_ecs20140526 import models as m

    ecs, vpc = sdk
    _, w, g = _network(ecs, vpc)
    mine = _run(ecs, w, g, tag=[m.RunInstancesRequestTag(key="workbench:launch", value="a")])
    _run(ecs, w, g, tag=[m.RunInstancesRequestTag(key="workbench:launch", value="b")])
    found = _describe(ecs, tag=[m.DescribeInstancesRequestTag(key="workbench:launch", value="a")])
    assert [i.instance_id for i in found] == mine
    assert found[0].tags.tag[0].tag_key == "workbench:launch"

    ali.knobs(account).no_stock.add(("cn-hangzhou-i", "ecs.gn6v-c8g1.2xlarge", "*"))
    with pytest.raises(Exception) as nostock:
        _run(ecs, w, g, instance_type="ecs.gn6v-c8g1.2xlarge")
    assert nostock.value.code == "OperationDenied.NoStock" and nostock.value.status_code == 403
    stock = ecs.describe_available_resource(m.DescribeAvailableResourceRequest(
        region_id=HZ, destination_resource="InstanceType", instance_type="ecs.gn6v-c8g1.2xlarge")).body
    by_zone = {z.zone_id: z.available_resources.available_resource[0].supported_resources.supported_resource[0]
               for z in stock.available_zones.available_zone}
    assert by_zone["cn-hangzhou-i"].status_category == "WithoutStock"
    assert by_zone["cn-hangzhou-h"].status_category == "WithStock"

    ali.knobs(account).vcpu_quota = 10  # two gn6i (4 vCPUs each) are running
    with pytest.raises(Exception) as quota:
        _run(ecs, w, g)
    assert quota.value.code == "QuotaExceed.ElasticQuota"


def test_preemption_shows_recycling_then_releases(ali: AlibabaServer, account: Account, sdk):
    ecs, vpc = sdk
    _, w, g = _network(ecs, vpc)
    iid, = _run(ecs, w, g, spot_strategy="SpotAsPriceGo")
    ali.preempt(account, iid)
    locks = _describe(ecs)[0].operation_locks.lock_reason
    assert [lock.lock_reason for lock in locks] == ["Recycling"]
    ali.clock(account).advance(ali.knobs(account).recycle_s + 1)
    assert _describe(ecs) == []


def test_faults_and_holds(ali: AlibabaServer, account: Account, sdk):
    from alibabacloud_ecs20140526 import models as m

    ecs, vpc = sdk
    ali.add_fault("ecs:DescribeRegions", status=400, code="Throttling.User",
                  message="Request was denied due to user flow control.", account=account.account_id)
    with pytest.raises(Exception) as throttled:
        ecs.describe_regions(m.DescribeRegionsRequest())
    assert throttled.value.code == "Throttling.User"
    assert ecs.describe_regions(m.DescribeRegionsRequest()).body.regions.region  # times=1: gone

    hold = ali.hold("ecs:DescribeRegions", account)
    answered = threading.Event()
    worker = threading.Thread(target=lambda: (ecs.describe_regions(m.DescribeRegionsRequest()), answered.set()))
    worker.start()
    assert hold.arrived.wait(5)
    assert not answered.is_set()  # blocked on the server until released
    hold.release()
    worker.join(5)
    assert answered.is_set()


def test_vpc_dependencies_and_deletes(ali: AlibabaServer, account: Account, sdk):
    from alibabacloud_ecs20140526 import models as m
    from alibabacloud_vpc20160428 import models as vm

    ecs, vpc = sdk
    v, w, g = _network(ecs, vpc)
    iid, = _run(ecs, w, g)
    with pytest.raises(Exception) as dep:
        vpc.delete_vpc(vm.DeleteVpcRequest(region_id=HZ, vpc_id=v))
    assert dep.value.code == "DependencyViolation.VSwitch"
    with pytest.raises(Exception) as in_use:
        ecs.delete_security_group(m.DeleteSecurityGroupRequest(region_id=HZ, security_group_id=g))
    assert in_use.value.code == "DependencyViolation"
    ecs.delete_instances(m.DeleteInstancesRequest(region_id=HZ, instance_id=[iid], force=True))
    ecs.delete_security_group(m.DeleteSecurityGroupRequest(region_id=HZ, security_group_id=g))
    vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=w))
    vpc.delete_vpc(vm.DeleteVpcRequest(region_id=HZ, vpc_id=v))
    assert not any(ali.resources(account).values())


def test_the_network_calls_are_asynchronous_as_the_reference_says(ali: AlibabaServer, account: Account, sdk):
    """CreateVpc / CreateVSwitch answer while Pending; only Available ones take vSwitches, instances or a
    delete; DeleteVSwitch / DeleteVpc leave them Pending / Deleting until gone."""
    from alibabacloud_ecs20140526 import models as m
    from alibabacloud_vpc20160428 import models as vm

    ecs, vpc = sdk
    knobs, clock = ali.knobs(account), ali.clock(account)
    knobs.vpc_pending_s = knobs.vswitch_pending_s = 60
    knobs.vswitch_delete_s = knobs.vpc_delete_s = 30

    def refused(call, code: str) -> None:
        with pytest.raises(Exception) as err:
            call()
        assert (err.value.code, err.value.status_code) == (code, 400)

    def new_vswitch(cidr: str) -> str:
        return vpc.create_vswitch(vm.CreateVSwitchRequest(region_id=HZ, vpc_id=v, zone_id="cn-hangzhou-i",
                                                          cidr_block=cidr)).body.v_switch_id

    v = vpc.create_vpc(vm.CreateVpcRequest(region_id=HZ, cidr_block="10.0.0.0/16")).body.vpc_id
    assert _vpc_status(vpc, v) == "Pending"
    refused(lambda: new_vswitch("10.0.1.0/24"), "IncorrectVpcStatus")
    clock.advance(61)
    assert _vpc_status(vpc, v) == "Available"
    w = new_vswitch("10.0.1.0/24")
    g = ecs.create_security_group(m.CreateSecurityGroupRequest(region_id=HZ, vpc_id=v)).body.security_group_id
    assert _vswitch_status(vpc, w) == "Pending"
    refused(lambda: _run(ecs, w, g), "IncorrectVSwitchStatus")
    refused(lambda: vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=w)), "IncorrectVSwitchStatus")
    clock.advance(61)
    assert _vswitch_status(vpc, w) == "Available" and len(_run(ecs, w, g)) == 1
    ecs.delete_instances(m.DeleteInstancesRequest(region_id=HZ, instance_id=[_describe(ecs)[0].instance_id],
                                                  force=True))
    other = new_vswitch("10.0.2.0/24")  # Pending: its VPC is busy, no other vSwitch of it can go now
    refused(lambda: vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=w)),
            "OperationDenied.OtherSubnetProcessing")
    clock.advance(61)
    ecs.delete_security_group(m.DeleteSecurityGroupRequest(region_id=HZ, security_group_id=g))
    vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=w))
    assert _vswitch_status(vpc, w) == "Pending"  # being deleted
    refused(lambda: vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=other)),
            "OperationDenied.OtherSubnetProcessing")
    refused(lambda: vpc.delete_vpc(vm.DeleteVpcRequest(region_id=HZ, vpc_id=v)), "DependencyViolation.VSwitch")
    clock.advance(31)
    assert _vswitch_status(vpc, w) is None
    vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=HZ, v_switch_id=other))
    clock.advance(31)
    vpc.delete_vpc(vm.DeleteVpcRequest(region_id=HZ, vpc_id=v))
    assert _vpc_status(vpc, v) == "Deleting"
    refused(lambda: vpc.delete_vpc(vm.DeleteVpcRequest(region_id=HZ, vpc_id=v)), "IncorrectVpcStatus")
    clock.advance(31)
    assert _vpc_status(vpc, v) is None and not any(ali.resources(account).values())


def test_sts_assume_role_signs_with_a_temporary_key(ali: AlibabaServer, account: Account):
    from alibabacloud_sts20150401 import models as sm
    from alibabacloud_sts20150401.client import Client as Sts
    from alibabacloud_tea_openapi.utils_models import Config

    arn = f"acs:ram::{account.account_id}:role/workbench"
    account.roles[arn] = ("ecs:Describe*",)
    base = Sts(Config(access_key_id=account.access_key_id, access_key_secret=account.secret, endpoint=ali.endpoint,
                      protocol="http", no_proxy="127.0.0.1"))
    cred = base.assume_role(sm.AssumeRoleRequest(role_arn=arn, role_session_name="t1")).body.credentials
    temp = Sts(Config(access_key_id=cred.access_key_id, access_key_secret=cred.access_key_secret,
                      security_token=cred.security_token, endpoint=ali.endpoint, protocol="http",
                      no_proxy="127.0.0.1"))
    who = temp.get_caller_identity().body
    assert who.identity_type == "AssumedRoleUser" and who.arn.endswith("assumed-role/workbench/t1")
    assert who.account_id == account.account_id
