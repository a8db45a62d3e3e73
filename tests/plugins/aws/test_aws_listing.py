"""Listing at scale: one shared client per (service, region), one fan-out for instances and leftovers."""

from __future__ import annotations

import threading

from aws_moto import FaultRule
from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.contract import launch_tags

from .conftest import INSTALL_ID

REGIONS = ("us-east-1", "us-west-2")
LISTINGS = {"DescribeInstances", "DescribeVolumes", "DescribeAddresses", "DescribeSecurityGroups",
            "DescribeKeyPairs", "DescribePlacementGroups"}  # the last: multi-node launches


def _arrange(ec2) -> dict[str, str]:
    """Per region one tagged machine of launch ``lst-<region>``; in the first region also a detached
    tagged disk (a leftover).  Returns region → instance id."""
    made = {}
    for region in REGIONS:
        client = ec2(region)
        tags = [{"Key": k, "Value": v} for k, v in launch_tags(f"lst-{region}", INSTALL_ID).items()]
        image = client.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        run = client.run_instances(ImageId=image, InstanceType="g5.xlarge", MinCount=1, MaxCount=1,
                                   TagSpecifications=[{"ResourceType": "instance", "Tags": tags}])
        made[region] = run["Instances"][0]["InstanceId"]
    ec2(REGIONS[0]).create_volume(Size=40, AvailabilityZone=f"{REGIONS[0]}a", TagSpecifications=[
        {"ResourceType": "volume", "Tags": [{"Key": k, "Value": v}
                                            for k, v in launch_tags("lst-old", INSTALL_ID).items()]}])
    return made


def test_listing_asks_each_thing_once_per_region_and_agrees_with_the_separate_calls(moto, make_provider, ec2):
    made = _arrange(ec2)
    provider = make_provider(regions=",".join(REGIONS))
    moto.faults.calls.clear()
    found = provider.listing()
    calls = [c for c in moto.faults.calls if c.service == "ec2"]
    for region in REGIONS:  # the leftovers need the live instances: asked once, not once more for them
        ops = sorted(c.operation for c in calls if c.region == region)
        assert ops == sorted(LISTINGS), (region, ops)
    assert found.leftovers_error is None
    assert {i.instance_id for i in found.instances} == set(made.values())
    assert {i.instance_id for i in found.instances} == {i.instance_id for i in provider.instances()}
    assert [(r.kind, r.launch_id) for r in found.leftovers] == [("volume", "lst-old")]
    assert [r.resource_id for r in found.leftovers] == [r.resource_id for r in provider.leftovers()]


def test_launch_times_read_by_the_fast_parser_match_what_ec2_sent(moto, make_provider, ec2):
    made = _arrange(ec2)
    provider = make_provider(regions=",".join(REGIONS))
    listed = {i.instance_id: i.launched_at for i in provider.listing().instances}
    for region, iid in made.items():
        raw = ec2(region).describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
        assert listed[iid] == raw["LaunchTime"].timestamp()


def test_a_leftover_listing_that_fails_keeps_the_instances(moto, make_provider, ec2):
    made = _arrange(ec2)
    provider = make_provider(regions=",".join(REGIONS))
    moto.faults.add(FaultRule(operation="DescribeVolumes", error="UnauthorizedOperation", status=403,
                              message="You are not authorized to perform this operation."))
    found = provider.listing()
    assert {i.instance_id for i in found.instances} == set(made.values())
    assert isinstance(found.leftovers_error, WorkbenchError) and found.leftovers == []
    assert "DescribeVolumes" in str(found.leftovers_error) or "leftovers" in str(found.leftovers_error)


def test_one_client_per_service_and_region_shared_by_every_thread(moto, make_provider):
    provider = make_provider(regions=",".join(REGIONS))
    got: list[object] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        client = provider._clients.client("ec2", REGIONS[0])
        with lock:
            got.append(client)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(got) == 8 and all(c is got[0] for c in got)  # made once, under the lock, then shared
    other = provider._clients.client("ec2", REGIONS[1])
    assert other is not got[0] and other.meta.region_name == REGIONS[1]
    assert provider._clients.client("ec2", REGIONS[1]) is other
    assert len(provider._clients._sessions) == 1  # one Session (one parse of the EC2 model) for all of them
    provider.instances()  # and the clients work from the provider's own pool threads
    assert {c.region for c in moto.faults.calls if c.operation == "DescribeInstances"} == set(REGIONS)
