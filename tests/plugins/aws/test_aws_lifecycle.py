"""Launch, list, stop, terminate and sweep against moto: what is sent, what is found, what is left."""

from __future__ import annotations

import base64

import pytest

from aws_moto import CHECKIP_ADDRESS
from workbench.core.domain.errors import ConfigError, SpecError
from workbench.core.domain.models import InstanceState, JobSpec, LaunchRequest, Resources
from workbench.core.providers.contract import launch_tags
from workbench.core.providers.sshkeys import ensure_keypair

from .conftest import INSTALL_ID


def _request(provider, launch_id, itype="p3.2xlarge", region="us-east-1", spot=False, **resources):
    offer = next(o for o in provider.offers(region) if o.instance_type == itype)
    spec = JobSpec(name="train-v100", run="python3 train.py", resources=Resources(**resources))
    return LaunchRequest(launch_id, spec, offer, provider.profile.name, launch_tags(launch_id, INSTALL_ID), spot=spot)


def _tag_specs(call) -> dict[str, dict[str, str]]:
    """TagSpecification.N.ResourceType → its tags, from a query-protocol request."""
    out: dict[str, dict[str, str]] = {}
    n = 1
    while (kind := call.param(f"TagSpecification.{n}.ResourceType")) is not None:
        tags, m = {}, 1
        while (key := call.param(f"TagSpecification.{n}.Tag.{m}.Key")) is not None:
            tags[key] = call.param(f"TagSpecification.{n}.Tag.{m}.Value")
            m += 1
        out[kind] = tags
        n += 1
    return out


def test_launch_sends_a_safe_tagged_machine_and_lists_it(moto, make_provider, ec2, tmp_path):
    provider = make_provider()
    launched = provider.launch(_request(provider, "job-abc123", disk_gb=120))
    assert [i.state for i in launched] == [InstanceState.PENDING]
    inst = launched[0]
    assert (inst.launch_id, inst.instance_type, inst.gpu_model, inst.gpu_count) == ("job-abc123", "p3.2xlarge",
                                                                                     "V100", 1)
    assert inst.price_per_hour == pytest.approx(3.06) and inst.host and inst.extra["ssh_user"] == "ubuntu"
    assert inst.extra["az"].startswith("us-east-1") and inst.spot is False

    run = moto.faults.find("RunInstances")[0]
    expected = {"workbench:managed": "true", "workbench:launch": "job-abc123", "workbench:owner": INSTALL_ID,
                "Name": "train-v100"}
    specs = _tag_specs(run)
    assert set(specs) == {"instance", "volume", "network-interface"}
    assert all(expected.items() <= tags.items() for tags in specs.values())
    assert run.param("InstanceInitiatedShutdownBehavior") == "terminate"
    assert run.param("MetadataOptions.HttpTokens") == "required"
    assert run.param("BlockDeviceMapping.1.Ebs.Encrypted") == "true"
    assert run.param("BlockDeviceMapping.1.Ebs.DeleteOnTermination") == "true"
    assert run.param("BlockDeviceMapping.1.Ebs.VolumeSize") == "120"
    assert run.param("ClientToken", "").startswith("job-abc123")
    script = base64.b64decode(run.param("UserData")).decode()
    assert script.startswith("#!/bin/bash") and '"launch_id": "job-abc123"' in script
    assert "/var/lib/workbench/started" in script and "SECRET" not in script

    client = ec2()
    group = client.describe_security_groups(Filters=[{"Name": "tag:workbench:launch", "Values": ["job-abc123"]}])
    rules = group["SecurityGroups"][0]["IpPermissions"]
    assert [(r["FromPort"], r["ToPort"], [x["CidrIp"] for x in r["IpRanges"]]) for r in rules] == \
        [(22, 22, ["198.51.100.23/32"])]
    keys = client.describe_key_pairs(Filters=[{"Name": "tag:workbench:owner", "Values": [INSTALL_ID]}])["KeyPairs"]
    assert [k["KeyName"] for k in keys] == ["workbench-job-abc123"]
    imported = moto.faults.find("ImportKeyPair")[0]
    public = ensure_keypair(tmp_path / "data").public_openssh
    assert base64.b64decode(imported.param("PublicKeyMaterial")).decode() == public
    volumes = client.describe_volumes(Filters=[{"Name": "tag:workbench:launch", "Values": ["job-abc123"]}])["Volumes"]
    assert len(volumes) == 1 and volumes[0]["Encrypted"]

    listed = provider.instances()
    assert [(i.instance_id, i.state) for i in listed] == [(inst.instance_id, InstanceState.RUNNING)]
    assert listed[0].price_per_hour == pytest.approx(3.06) and listed[0].gpu_model == "V100"
    assert provider.leftovers() == []  # the group and key belong to a live instance
    provider.terminate(listed)
    assert provider.instances() == [] and provider.leftovers() == []
    assert client.describe_security_groups(
        Filters=[{"Name": "tag:workbench:launch", "Values": ["job-abc123"]}])["SecurityGroups"] == []


def test_spot_launch_is_a_one_time_request_with_the_max_price(moto, make_provider):
    provider = make_provider()
    req = _request(provider, "spot-1", itype="g4dn.xlarge", spot=True, max_price=0.3)
    launched = provider.launch(req)
    run = moto.faults.find("RunInstances")[0]
    assert run.param("InstanceMarketOptions.MarketType") == "spot"
    assert run.param("InstanceMarketOptions.SpotOptions.SpotInstanceType") == "one-time"
    assert run.param("InstanceMarketOptions.SpotOptions.MaxPrice") == "0.3000"
    assert launched[0].spot and launched[0].price_per_hour == pytest.approx(req.offer.prices.spot)
    listed = provider.instances()
    assert listed[0].spot and listed[0].extra["spot"] and listed[0].price_per_hour == pytest.approx(req.offer.prices.spot)


def test_ssh_range_defaults_to_this_computers_address_and_never_opens_to_all(moto, make_provider):
    provider = make_provider(ssh_cidr="", checkip_url=moto.checkip_url)
    provider.launch(_request(provider, "cidr-1"))
    auth = moto.faults.find("AuthorizeSecurityGroupIngress")[0]
    assert auth.param("IpPermissions.1.IpRanges.1.CidrIp") == f"{CHECKIP_ADDRESS}/32"
    with pytest.raises(ConfigError, match="whole internet"):
        make_provider(ssh_cidr="0.0.0.0/0")
    opened = make_provider(ssh_cidr="0.0.0.0/0", allow_ssh_from_anywhere="true")
    assert opened.settings.ssh_cidr == "0.0.0.0/0"
    unreachable = make_provider(ssh_cidr="", checkip_url="http://127.0.0.1:9/none")
    before = len(moto.faults.calls)
    with pytest.raises(ConfigError, match="public address") as info:
        unreachable.launch(_request(unreachable, "cidr-2"))
    assert "ssh_cidr" in info.value.hint
    assert [c.operation for c in moto.faults.calls[before:] if c.operation.startswith("Create")] == []


def test_image_comes_from_the_override_or_the_image_search(moto, make_provider, ec2):
    provider = make_provider()
    provider.launch(_request(provider, "img-1"))
    ops = moto.faults.operations()
    assert "GetParameter" in ops  # the public SSM parameter first (moto has none) …
    found = moto.faults.find("RunInstances")[0].param("ImageId")
    name = ec2().describe_images(ImageIds=[found])["Images"][0]["Name"]
    assert name.startswith("Deep Learning") and "Ubuntu" in name  # … then the newest DL image
    other = ec2().describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    pinned = make_provider(ami=other)
    pinned.launch(_request(pinned, "img-2"))
    assert moto.faults.find("RunInstances")[-1].param("ImageId") == other
    missing = make_provider(ami="ami-0123456789abcdef0")
    with pytest.raises(SpecError, match="does not exist"):
        missing.launch(_request(missing, "img-3"))


def test_terminate_sweeps_the_launchs_volumes_addresses_groups_and_keys(moto, make_provider, ec2):
    provider = make_provider()
    inst = provider.launch(_request(provider, "sweep-1"))[0]
    client = ec2()
    tags = [{"Key": "workbench:managed", "Value": "true"}, {"Key": "workbench:launch", "Value": "sweep-1"},
            {"Key": "workbench:owner", "Value": INSTALL_ID}]
    # a data disk and an Elastic IP of the launch (e.g. made by a later feature) …
    client.create_volume(Size=500, AvailabilityZone=inst.extra["az"], VolumeType="gp3", Encrypted=True,
                         TagSpecifications=[{"ResourceType": "volume", "Tags": tags}])
    eip = client.allocate_address(Domain="vpc", TagSpecifications=[{"ResourceType": "elastic-ip", "Tags": tags}])
    client.associate_address(AllocationId=eip["AllocationId"], InstanceId=inst.instance_id)
    # … and someone else's disk with our managed tag but another owner: never ours to touch
    client.create_volume(Size=10, AvailabilityZone="us-east-1a", TagSpecifications=[{"ResourceType": "volume", "Tags": [
        {"Key": "workbench:managed", "Value": "true"}, {"Key": "workbench:owner", "Value": "someone-else"}]}])
    left = {r.kind: r for r in provider.leftovers()}
    assert set(left) == {"volume"}  # the EIP is on a live instance; the group and key are in use
    assert left["volume"].extra["price_per_hour"] == pytest.approx(500 * 0.08 / 730, rel=1e-4)
    assert provider.console_url(left["volume"]).endswith(f"#VolumeDetails:volumeId={left['volume'].resource_id}")
    provider.terminate(provider.instances())
    assert provider.leftovers() == []
    ops = moto.faults.operations("ec2")
    assert ops.index("DeleteSecurityGroup") > ops.index("TerminateInstances")
    assert {"DeleteVolume", "ReleaseAddress", "DeleteKeyPair"} <= set(ops)
    vols = client.describe_volumes()["Volumes"]
    assert [v["Size"] for v in vols] == [10]
    provider.terminate([inst])  # already gone: still a success


def test_stopped_instances_bill_for_their_disk_and_are_not_leftovers(moto, make_provider):
    from workbench.core.money.spend import burn_rate

    provider = make_provider()
    inst = provider.launch(_request(provider, "stop-1", disk_gb=200))[0]
    disk = 200 * 0.08 / 730
    assert inst.extra["storage_per_hour"] == pytest.approx(disk, rel=1e-4)
    provider.stop([inst])
    listed = provider.instances()
    assert [i.state for i in listed] == [InstanceState.STOPPED]
    assert listed[0].state.billable and listed[0].extra["billing_note"].startswith("stopped")
    assert listed[0].price_per_hour == pytest.approx(3.06)  # what it costs again once started
    assert burn_rate(listed) == pytest.approx(disk, rel=1e-4)  # stopped on AWS: only the disk bills
    assert provider.leftovers() == []
    provider.terminate(listed)
    assert provider.instances() == []


def test_launch_into_a_region_the_profile_does_not_list_is_refused(moto, make_provider):
    provider = make_provider(regions="us-east-1")
    other = make_provider(regions="us-west-2")
    req = _request(other, "where-1", region="us-west-2")
    with pytest.raises(ConfigError, match="not enabled"):
        provider.launch(req)
    assert moto.faults.find("RunInstances") == []


def test_console_links_name_the_region_and_the_thing(make_provider):
    from workbench.core.domain.models import Instance, Resource

    provider = make_provider()
    inst = Instance("aws", "p", "i-0abc", "l", "eu-west-1", "p3.2xlarge", InstanceState.RUNNING)
    assert provider.console_url(inst) == \
        "https://eu-west-1.console.aws.amazon.com/ec2/home?region=eu-west-1#InstanceDetails:instanceId=i-0abc"
    sg = Resource("aws", "p", "sg-1", "security-group", "us-east-1")
    assert provider.console_url(sg).endswith("#SecurityGroup:groupId=sg-1")
    key = Resource("aws", "p", "key-1", "key-pair", "us-east-1", extra={"key_name": "workbench-l"})
    assert provider.console_url(key).endswith("#KeyPairs:search=workbench-l")
    assert provider.console_url(Resource("aws", "p", "x", "mystery", "us-east-1")) is None
