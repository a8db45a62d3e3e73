"""Launch, list, stop, extend and tear down against the test server: what the cloud holds afterwards."""

from __future__ import annotations

import base64
import calendar
import time

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import CapacityError, QuotaError
from workbench.core.domain.models import Guards, InstanceState
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER

from .conftest import offer_of, request_for


def _ts(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))


def _nothing_left(ali: AlibabaServer, account: Account) -> None:
    left = {k: v for k, v in ali.resources(account).items() if v}
    assert left == {}, f"left behind: {left}"


def test_launch_makes_its_own_network_and_a_tagged_encrypted_machine(ali, account, make_provider, install_id):
    p = make_provider()
    req = request_for(offer_of(p), install_id, guards=Guards(max_runtime_minutes=120))
    before = time.time()
    got = p.launch(req)
    assert len(got) == 1 and got[0].launch_id == req.launch_id and got[0].state.active
    inst = got[0]
    assert inst.currency == "CNY" and inst.price_per_hour == pytest.approx(req.offer.hourly())
    assert inst.host and inst.extra["ssh_key_type"] == "rsa" and inst.extra["ssh_user"] == "root"
    res = ali.resources(account)
    assert len(res["vpcs"]) == len(res["groups"]) == len(res["keys"]) == len(res["instances"]) == 1
    raw = res["instances"][0]
    tags = raw["_tags"]
    assert tags[TAG_MANAGED] == "true" and tags[TAG_LAUNCH] == req.launch_id and tags[TAG_OWNER] == install_id
    assert tags["workbench:currency"] == "CNY" and tags["workbench:gpu"] == "T4:1"
    assert raw["InstanceChargeType"] == "PostPaid" and raw["InternetMaxBandwidthOut"] == 100
    assert raw["_system_disk"] == {"Category": "cloud_essd", "Size": 100, "Encrypted": True}
    assert raw["VpcAttributes"]["VpcId"] == res["vpcs"][0]["VpcId"]
    assert all(r["_tags"][TAG_LAUNCH] == req.launch_id for kind in ("vpcs", "vswitches", "groups", "keys", "disks")
               for r in res[kind])
    rules = res["groups"][0]["_rules"]
    assert [(r["IpProtocol"], r["PortRange"], r["SourceCidrIp"]) for r in rules] == [("TCP", "22/22", "203.0.113.7/32")]
    assert res["keys"][0]["_public"].startswith("ssh-rsa ")
    script = base64.b64decode(raw["_user_data"]).decode()
    assert f'"launch_id": "{req.launch_id}"' in script and "workbench-guard.timer" in script
    assert '"provider": "alibaba"' in script and "ubuntu-drivers install" in script
    # the cloud itself releases it at launch + max runtime + margin (60 min), whole minutes
    release = _ts(raw["AutoReleaseTime"])
    assert before + 180 * 60 - 60 <= release <= time.time() + 180 * 60 + 120
    assert inst.extra["auto_release_time"] == raw["AutoReleaseTime"]


def test_spot_strategies(ali, account, make_provider, install_id):
    p = make_provider()
    offer = offer_of(p)
    p.launch(request_for(offer, install_id, spot=True))
    limit = offer.hourly(spot=True) * 1.5
    p.launch(request_for(offer, install_id, spot=True, max_price=limit))
    runs = sorted(ali.resources(account)["instances"], key=lambda i: i["SpotStrategy"])
    assert [(i["SpotStrategy"], i["SpotPriceLimit"]) for i in runs] == [("SpotAsPriceGo", 0.0),
                                                                        ("SpotWithPriceLimit", pytest.approx(limit))]
    assert all(i.spot for i in p.instances())


def test_no_stock_in_a_zone_moves_on_to_the_next(ali, account, make_provider, install_id):
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    ali.knobs(account).no_stock.add(("cn-hangzhou-h", "*", "*"))
    got = p.launch(request_for(offer_of(p), install_id))
    assert got[0].extra["zone"] == "cn-hangzhou-i"
    assert [c.code for c in ali.calls(account, "ecs:RunInstances")] == ["OperationDenied.NoStock", None]


@pytest.mark.parametrize("knob, error, words", [
    ("stock", CapacityError, "no stock for ecs.gn6i-c4g1.xlarge in any zone"),
    ("quota", QuotaError, "quota"),
])
def test_a_failed_launch_leaves_nothing(ali, account, make_provider, install_id, knob, error, words):
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    offer = offer_of(p)
    if knob == "stock":
        ali.knobs(account).no_stock.add(("*", "*", "*"))
    else:
        ali.knobs(account).vcpu_quota = 2
    with pytest.raises(error) as err:
        p.launch(request_for(offer, install_id))
    assert words in err.value.message and err.value.hint
    _nothing_left(ali, account)
    assert p.instances() == [] and p.leftovers() == []


def test_a_lost_answer_is_retried_with_the_same_client_token(ali, account, make_provider, install_id):
    p = make_provider()
    ali.add_fault("ecs:RunInstances", after=True, account=account.account_id)  # runs, then the answer is lost
    got = p.launch(request_for(offer_of(p), install_id))
    assert len(ali.resources(account)["instances"]) == 1
    assert [i.instance_id for i in got] == [ali.resources(account)["instances"][0]["InstanceId"]]
    assert len(ali.calls(account, "ecs:RunInstances")) == 2


@pytest.mark.parametrize("action", ["vpc:CreateVpc", "ecs:ImportKeyPair", "ecs:CreateSecurityGroup",
                                    "vpc:CreateVSwitch"])
def test_a_lost_answer_on_any_create_makes_nothing_twice(ali, account, make_provider, install_id, action):
    p = make_provider()
    ali.add_fault(action, after=True, account=account.account_id)
    p.launch(request_for(offer_of(p), install_id))
    res = ali.resources(account)
    assert [len(res[k]) for k in ("vpcs", "keys", "groups", "vswitches", "instances")] == [1, 1, 1, 1, 1]


def test_launch_status_down_leaves_nothing(ali, account, make_provider, install_id):
    p = make_provider()
    ali.knobs(account).release_s = 0.3  # a released instance lingers, its group and vSwitch are still in use
    req = request_for(offer_of(p), install_id)
    launched = p.launch(req)
    listed = [i for i in p.instances() if i.launch_id == req.launch_id]
    assert [i.instance_id for i in listed] == [i.instance_id for i in launched]
    p.terminate(listed)
    _nothing_left(ali, account)
    assert p.instances() == [] and p.leftovers() == []
    p.terminate(listed)  # gone already: still fine


def test_auto_release_is_honoured_and_the_rest_is_swept_by_tag(ali, account, make_provider, install_id):
    p = make_provider()
    req = request_for(offer_of(p), install_id, guards=Guards(max_runtime_minutes=30))
    p.launch(req)
    ali.clock(account).advance(30 * 60 + 3600 + 120)  # past max runtime + margin: the app, laptop and guard all failed
    assert p.instances() == []
    assert [r["reason"] for r in ali.released(account)] == ["AutoRelease"]
    left = p.leftovers()
    assert {r.kind for r in left} == {"vpc", "vswitch", "security-group", "key-pair"}
    assert {r.launch_id for r in left} == {req.launch_id}
    p.delete(left)
    _nothing_left(ali, account)


def test_extend_moves_the_auto_release_time(ali, account, make_provider, install_id):
    p = make_provider(release_margin_minutes="10")
    got = p.launch(request_for(offer_of(p), install_id, guards=Guards(max_runtime_minutes=60)))
    later = time.time() + 5 * 3600
    p.extend(got, later)
    release = _ts(ali.resources(account)["instances"][0]["AutoReleaseTime"])
    assert later + 600 <= release <= later + 600 + 60


def test_stop_is_economical_and_said_so(ali, account, make_provider, install_id):
    p = make_provider()
    got = p.launch(request_for(offer_of(p), install_id))
    p.stop(got)
    inst, = p.instances()
    assert inst.state == InstanceState.DEALLOCATED
    assert inst.extra["billing_note"] == "stopped, no compute charge (disks still bill)"
    assert inst.extra["storage_per_hour"] > 0
    # not billable as a machine, but its disk is: a leftover that `down` releases (with the launch's network)
    left = p.leftovers()
    assert [(r.kind, r.resource_id) for r in left] == [("stopped-instance", inst.instance_id)]
    assert left[0].extra["price_per_hour"] == inst.extra["storage_per_hour"]
    p.delete(left)
    assert not any(ali.resources(account).values())


def test_a_shutdown_from_inside_is_shown_by_its_stop_mode(ali, account, make_provider, install_id):
    p = make_provider()
    got = p.launch(request_for(offer_of(p), install_id))
    ali.shut_down_inside(account, got[0].instance_id)  # standard mode: KeepCharging
    inst, = p.instances()
    assert inst.state == InstanceState.STOPPED and inst.state.billable
    assert inst.extra["billing_note"] == "stopped in standard mode: the instance still bills"
    ali.shut_down_inside(account, got[0].instance_id, economical=True)
    inst, = p.instances()
    assert inst.state == InstanceState.DEALLOCATED and inst.extra["economical_stop"]
    p.terminate([inst])
    assert not any(ali.resources(account).values())


def test_a_reclaimed_spot_instance_says_so(ali, account, make_provider, install_id):
    p = make_provider()
    got = p.launch(request_for(offer_of(p), install_id, spot=True))
    ali.preempt(account, got[0].instance_id)
    inst, = p.instances()
    assert inst.extra["status_label"] == "Spot interrupted" and inst.extra["spot_interrupted"]


def test_release_time_rules():
    from workbench_alibaba.launch import release_time

    now = 1_800_000_000.0
    assert release_time(None, 3600, now) is None
    early = _ts(release_time(now + 60, 0, now))  # too soon for ECS: at least 31 minutes ahead
    assert early >= now + 31 * 60 and early % 60 == 0
    assert _ts(release_time(now + 7200, 3600, now)) == pytest.approx(now + 3 * 3600, abs=60)
