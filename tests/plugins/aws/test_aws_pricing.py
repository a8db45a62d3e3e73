"""Pure parts of the AWS plugin: Price List parsing (synthetic pages and a captured one), spot history, snapshot,
quotas, settings."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from workbench.core.domain.errors import AuthError, CapacityError, ConfigError, PluginError, QuotaError, SpecError, \
    TransientError
from workbench.core.domain.models import Guards, JobSpec, Profile
from workbench.core.providers import price_snapshot
from workbench_aws import errors, inventory, pricing, quotas, settings, userdata
from workbench_aws.offers import nominal_gpu_memory, shape_from_type

SYNTHETIC = Path(__file__).parent / "synthetic" / "pricing"  # hand-written (see the README there)
RECORDED = Path(__file__).parent / "recorded"  # captured from AWS (see the README there)


def _entries(region: str) -> list[str]:
    out = []
    for page in sorted((SYNTHETIC / region).glob("page*.json")):
        out.extend(json.loads(page.read_text())["PriceList"])
    return out


def test_synthetic_price_list_gives_on_demand_and_reserved_no_upfront():
    prices = pricing.parse_price_list(_entries("us-east-1"))
    assert set(prices) == {"p3.2xlarge", "p3.8xlarge", "g4dn.xlarge", "g5.xlarge"}
    p3 = prices["p3.2xlarge"]
    assert (p3.on_demand, p3.reserved_1y, p3.reserved_3y, p3.region) == (3.06, 2.142, 1.469, "us-east-1")
    assert prices["p3.8xlarge"].on_demand == 12.24
    assert prices["g5.xlarge"].reserved_1y < prices["g5.xlarge"].on_demand


def test_a_real_price_list_page_is_parsed_and_its_real_next_token_followed(caplog):
    """A page AWS answered (tests/plugins/aws/recorded): an io1 volume, with AWS's own opaque NextToken."""
    page = json.loads((RECORDED / "get-products-ebs-piops-ap-southeast-1.json").read_text())
    asked: list[dict] = []

    class Client:  # the real page first, then the end of the list
        def get_products(self, **kwargs):
            asked.append(kwargs)
            return page if "NextToken" not in kwargs else {"FormatVersion": "aws_v1", "PriceList": []}

    with caplog.at_level("WARNING", logger="workbench"):
        assert pricing.fetch_list_prices(Client(), "ap-southeast-1") == {}  # a volume has no instance price
    assert [a.get("NextToken") for a in asked] == [None, page["NextToken"]]  # the token went back verbatim
    entry = json.loads(page["PriceList"][0])
    assert entry["product"]["attributes"]["location"] == "Asia Pacific (Singapore)" and "version" in entry
    assert pricing.parse_product(page["PriceList"][0]) is None
    assert "malformed" not in caplog.text  # well-formed: skipped for what it is, not as garbage


def test_effective_hourly_spreads_the_upfront_fee_over_the_lease():
    item = json.loads(_entries("us-east-1")[0])
    partial = next(t for t in item["terms"]["Reserved"].values()
                   if t["termAttributes"] == {"LeaseContractLength": "1yr", "OfferingClass": "standard",
                                              "PurchaseOption": "Partial Upfront"})
    hourly = next(float(d["pricePerUnit"]["USD"]) for d in partial["priceDimensions"].values() if d["unit"] == "Hrs")
    upfront = next(float(d["pricePerUnit"]["USD"]) for d in partial["priceDimensions"].values()
                   if d["unit"] == "Quantity")
    assert upfront > 0
    assert pricing.effective_hourly(partial) == pytest.approx(hourly + upfront / 8760)


def test_products_that_are_not_plain_linux_on_demand_are_ignored():
    item = json.loads(_entries("us-east-1")[0])
    windows = json.loads(json.dumps(item))
    windows["product"]["attributes"]["operatingSystem"] = "Windows"
    reserved_capacity = json.loads(json.dumps(item))
    reserved_capacity["product"]["attributes"]["capacitystatus"] = "UnusedCapacityReservation"
    assert pricing.parse_product(json.dumps(windows)) is None
    assert pricing.parse_product(reserved_capacity) is None
    assert pricing.parse_product("{not json") is None
    cheaper = json.loads(json.dumps(item))
    for term in cheaper["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            dim["pricePerUnit"]["USD"] = "0.0000000000"  # a zero-priced duplicate never wins
    assert pricing.parse_price_list([json.dumps(cheaper), json.dumps(item)])["p3.2xlarge"].on_demand == 3.06


def test_the_filters_ask_for_what_a_linux_user_pays():
    got = {f["Field"]: f["Value"] for f in pricing.product_filters("eu-west-1")}
    assert got == {"regionCode": "eu-west-1", "instanceFamily": "GPU instance", "operatingSystem": "Linux",
                   "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
    assert all(f["Type"] == "TERM_MATCH" for f in pricing.product_filters("eu-west-1"))


def test_spot_history_keeps_the_latest_fresh_price_per_zone():
    now = datetime.datetime(2026, 1, 10, 12, tzinfo=datetime.timezone.utc)
    entry = lambda az, price, hours_ago, desc="Linux/UNIX": {  # noqa: E731
        "AvailabilityZone": az, "InstanceType": "p3.2xlarge", "ProductDescription": desc, "SpotPrice": price,
        "Timestamp": now - datetime.timedelta(hours=hours_ago)}
    got = pricing.parse_spot_history([
        entry("us-east-1a", "0.95", 3), entry("us-east-1a", "0.91", 1), entry("us-east-1b", "1.10", 2),
        entry("us-east-1c", "0.00001", 24 * 365 * 20),  # moto's stub: 20 years old
        entry("us-east-1d", "0.50", 1, "Windows"),
    ], now.timestamp())
    assert got == {"p3.2xlarge": {"us-east-1a": 0.91, "us-east-1b": 1.10}}


def test_bundled_snapshot_has_the_seed_types_in_three_regions_with_dates():
    snap = price_snapshot.load("aws")
    assert {"us-east-1", "us-west-2", "eu-west-1"} <= set(snap.regions())
    for region in ("us-east-1", "us-west-2", "eu-west-1"):
        for itype in ("p3.2xlarge", "p3.8xlarge", "g4dn.xlarge", "g5.xlarge"):
            row = snap.find(region, itype)
            assert row is not None and row.on_demand and row.spot and row.as_of, (region, itype)
    p3 = snap.find("us-east-1", "p3.2xlarge")
    assert (p3.gpu_model, p3.gpu_count, p3.gpu_memory_gb, p3.vcpus, p3.memory_gb, p3.on_demand) == \
        ("V100", 1, 16.0, 8, 61.0, 3.06)
    p38 = snap.find("us-east-1", "p3.8xlarge")
    assert (p38.gpu_count, p38.on_demand) == (4, 12.24)
    for family in ("g4dn", "g5", "g6", "p4d", "p5"):
        assert any(r.instance_type.startswith(family + ".") for r in snap.region("us-east-1")), family
    assert price_snapshot.date_of(snap.as_of) and snap.as_of.startswith("<=")  # an upper bound: "on or before"


def test_a_broken_snapshot_names_file_and_line(tmp_path):
    bad = tmp_path / "aws.csv"
    bad.write_text("# comment\n" + ",".join(price_snapshot.COLUMNS) + "\np3.2xlarge,V100,one,16,8,61,10,false,3.06,,us-east-1,"
                   "2024-11-01\n")
    with pytest.raises(PluginError, match=r"aws.csv:3"):
        price_snapshot.parse(bad.read_text(), bad, "aws")
    with pytest.raises(PluginError, match="lacks the column"):
        price_snapshot.parse("instance_type,region\n", bad, "aws")


def test_gpu_shapes_from_describe_instance_types():
    entry = {"InstanceType": "g5.12xlarge", "VCpuInfo": {"DefaultVCpus": 48}, "MemoryInfo": {"SizeInMiB": 196608},
             "GpuInfo": {"Gpus": [{"Name": "A10G", "Manufacturer": "NVIDIA", "Count": 4,
                                   "MemoryInfo": {"SizeInMiB": 22888}}]},
             "NetworkInfo": {"NetworkPerformance": "40 Gigabit", "EfaSupported": True,
                             "NetworkCards": [{"PeakBandwidthInGbps": 40.0}]}}
    shape = shape_from_type(entry)
    assert (shape.gpu_model, shape.gpu_count, shape.gpu_memory_gb, shape.vcpus, shape.memory_gb) == \
        ("A10G", 4, 24.0, 48, 192.0)
    assert (shape.network_gbps, shape.efa) == (40.0, True)
    assert shape_from_type({"InstanceType": "c5.large", "VCpuInfo": {"DefaultVCpus": 2}}) is None
    p4 = dict(entry, InstanceType="p4d.24xlarge", NetworkInfo={"NetworkPerformance": "4x 100 Gigabit"},
              GpuInfo={"Gpus": [{"Name": "A100", "Count": 8, "MemoryInfo": {"SizeInMiB": 40960}}]})
    assert shape_from_type(p4).network_gbps == 400
    assert nominal_gpu_memory("H200", 144384) == 141 and nominal_gpu_memory("Mystery", 1000) == 1.0


def test_quotas_name_the_family_group():
    assert quotas.quota_for("p3.2xlarge") == quotas.Quota("L-417A185B", "Running On-Demand P instances")
    assert quotas.quota_for("p5.48xlarge", spot=True).code == "L-7212CCBC"
    assert quotas.quota_for("g4dn.xlarge").name == "Running On-Demand G and VT instances"
    assert quotas.quota_for("dl1.24xlarge").code == "L-6E869C2A"
    assert quotas.quota_for("m5.large").code == "L-1216C47A"
    od, sp = quotas.quota_for("p3.2xlarge"), quotas.quota_for("p3.2xlarge", spot=True)
    assert quotas.availability(8, None, None, od, sp) == (True, None)
    assert quotas.availability(8, 0.0, 0.0, od, sp)[0] is False
    ok, note = quotas.availability(8, 0.0, 64.0, od, sp)
    assert ok and note.startswith("spot only")


def _client_error(code: str, message: str = "m", status: int = 400):
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "RunInstances")


@pytest.mark.parametrize("code, kind, words", [
    ("InvalidClientTokenId", AuthError, "access key id is not valid"),
    ("SignatureDoesNotMatch", AuthError, "secret access key does not match"),
    ("ExpiredToken", AuthError, "session token has expired"),
    ("UnauthorizedOperation", AuthError, "ec2:RunInstances"),
    ("InsufficientInstanceCapacity", CapacityError, "no capacity for p3.2xlarge"),
    ("VcpuLimitExceeded", QuotaError, "Running On-Demand P instances"),
    ("InvalidParameterValue", SpecError, "refused"),
    ("RequestLimitExceeded", TransientError, "busy"),
    ("SomethingNew", PluginError, "SomethingNew"),
])
def test_aws_errors_become_workbench_errors_with_hints(code, kind, words):
    err = errors.translate(_client_error(code), "launching", operation="RunInstances", region="us-east-1",
                           instance_type="p3.2xlarge")
    assert isinstance(err, kind) and words in err.message
    assert kind is PluginError or err.hint


def test_error_messages_never_carry_a_secret():
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    err = errors.translate(_client_error("SomethingNew", f"bad request with {secret} inside"), "x",
                           secrets=[secret])
    assert secret not in str(err) and "***" in err.message
    from botocore.exceptions import EndpointConnectionError

    assert isinstance(errors.translate(EndpointConnectionError(endpoint_url="http://x"), "listing"), TransientError)
    assert errors.is_not_found(_client_error("InvalidVolume.NotFound"))
    assert not errors.is_not_found(_client_error("DependencyViolation"))


def test_settings_are_checked_with_the_key_named():
    p = lambda **s: Profile("acct", "aws", "us-east-1", settings=s)  # noqa: E731
    assert settings.parse(p()).regions == ("us-east-1",)
    assert settings.parse(p(regions="us-west-2, eu-west-1")).regions == ("us-west-2", "eu-west-1")
    for bad, key in ({"regions": "mars-1"}, "regions"), ({"pricing": "cheap"}, "pricing"), \
            ({"poll_s": "soon"}, "poll_s"), ({"ami": "img-1"}, "AMI"), ({"ssh_cidr": "nowhere"}, "ssh_cidr"):
        with pytest.raises(ConfigError, match=key):
            settings.parse(p(**bad))
    got = settings.parse(p(**{"endpoint_url.pricing": "http://prices", "ami.eu-west-1": "ami-0123456789abcdef0"}))
    assert got.endpoint("pricing") == "http://prices" and got.endpoint("ec2") is None
    assert got.ami_for("eu-west-1") == "ami-0123456789abcdef0" and got.ami_for("us-east-1") is None


def test_user_data_records_the_start_and_carries_no_secret():
    spec = JobSpec(name="mnist", run="python3 main.py", guards=Guards(max_runtime_minutes=90))
    script = userdata.render("mnist-0a1b2c", "install1", spec, "ubuntu")
    assert script.startswith("#!/bin/bash\n")
    assert "/var/lib/workbench/started" in script and '"max_runtime_minutes": 90' in script
    assert '"launch_id": "mnist-0a1b2c"' in script and "python3 main.py" not in script


def test_user_data_installs_the_instance_guard_within_the_16_kib_limit(tmp_path):
    import base64
    import gzip
    import json
    import re
    import subprocess
    import time

    spec = JobSpec(name="mnist", run="python3 main.py", guards=Guards(max_runtime_minutes=90))
    script = userdata.render("mnist-0a1b2c", "install1", spec, "ubuntu")
    assert len(script.encode()) <= userdata.MAX_BYTES
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)  # the whole script parses
    fragment = script.split("<<'WORKBENCH_GUARD_EOF'\n", 1)[1].split("WORKBENCH_GUARD_EOF", 1)[0]
    assert "systemctl enable --now workbench-guard.timer" in fragment
    packed = {path: data for data, path in re.findall(r"printf '%s' '?([A-Za-z0-9+/=]+)'? \| base64 -d \| gzip -dc > (\S+)",
                                                       fragment)}
    assert len(packed) == fragment.count("base64 -d") >= 3
    config = next(json.loads(gzip.decompress(base64.b64decode(v))) for k, v in packed.items() if k.endswith(".json"))
    assert config["cloud"] == "aws" and config["launch_id"] == "mnist-0a1b2c" and config["max_runtime_s"] == 5400
    assert abs(config["not_after"] - (time.time() + 5400)) < 60


def test_instances_are_read_back_from_tags_alone():
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    raw = {"InstanceId": "i-1", "InstanceType": "p3.2xlarge", "State": {"Name": "terminated"}, "LaunchTime": now,
           "InstanceLifecycle": "spot", "StateReason": {"Code": "Server.SpotInstanceTermination"},
           "Placement": {"AvailabilityZone": "us-east-1b"}, "PublicIpAddress": "203.0.113.9",
           "Tags": [{"Key": "workbench:launch", "Value": "l-1"}, {"Key": "workbench:price", "Value": "0.918"},
                    {"Key": "workbench:gpu", "Value": "V100:1"}, {"Key": "Name", "Value": "job"}]}
    inst = inventory.to_instance(raw, "aws", "p", "us-east-1")
    assert (inst.launch_id, inst.price_per_hour, inst.gpu_model, inst.gpu_count, inst.spot, inst.name) == \
        ("l-1", 0.918, "V100", 1, True, "job")
    assert inst.extra["spot_interrupted"] and inst.extra["status_label"] == "spot interrupted"
    assert inst.launched_at == now.timestamp() and inst.host == "203.0.113.9"
