"""AWS's public price lists without an account: offer files streamed from a local server, the recorded excerpt."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from price_lists import PriceListServer
from workbench.core.domain.errors import TransientError
from workbench.core.providers import price_snapshot
from workbench.core.providers.price_fetch import Fetcher
from workbench_aws import price_list
from workbench_aws.provider import AwsProvider

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "price_lists" / "recorded"


@pytest.fixture
def server():
    with PriceListServer(chunk=512) as srv:
        yield srv


def test_offer_and_savings_plan_files_give_on_demand_reserved_and_savings_plan(server):
    known = price_snapshot.load("aws")
    rows = {r.instance_type: r for r in AwsProvider.public_prices(["us-east-1"], known, Fetcher(server.url))}
    assert set(rows) == {"p3.2xlarge", "p3.16xlarge", "p5e.48xlarge"}  # Windows, Dedicated, CR, m5, storage: out
    p3 = rows["p3.16xlarge"]
    assert (p3.on_demand, p3.reserved_1y, p3.reserved_3y) == (24.48, 15.51, 9.93)  # standard, no upfront
    assert (p3.savings_plan_1y, p3.savings_plan_3y) == (17.626, 12.73)  # Compute SP, no upfront (not all upfront)
    assert (p3.gpu_model, p3.gpu_count, p3.vcpus, p3.memory_gb) == ("V100", 8, 64, 488.0)  # the catalog's shape
    assert p3.spot == known.find("us-east-1", "p3.16xlarge").spot and "spot: earlier snapshot" in p3.source
    new = rows["p5e.48xlarge"]  # not in the catalog: its shape from the offer file and the family table
    assert (new.gpu_model, new.gpu_count, new.gpu_memory_gb, new.vcpus, new.memory_gb, new.network_gbps) == \
        ("H200", 8, 141.0, 192, 2048.0, 3200.0)
    assert new.reserved_1y is None and new.savings_plan_1y is None and new.spot is None
    assert [h for h in server.hits if "savingsPlan" in h] == [
        "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json",
        "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/20261101000000/us-east-1/index.json"]


def test_savings_plans_failing_still_gives_the_offer_file_prices(server):
    server.fail["/savingsPlan/"] = 503
    rows = {r.instance_type: r for r in AwsProvider.public_prices(["us-east-1"], price_snapshot.load("aws"),
                                                                  Fetcher(server.url, retries=0))}
    assert rows["p3.2xlarge"].on_demand == 3.06 and rows["p3.2xlarge"].savings_plan_1y is None


@pytest.mark.parametrize("fault", [500, "garbage"])
def test_an_offer_file_that_cannot_be_read_is_a_transient_error(server, fault):
    server.fail["/offers/"] = fault
    with pytest.raises(TransientError) as info:
        AwsProvider.public_prices(["us-east-1"], price_snapshot.load("aws"), Fetcher(server.url, retries=0))
    assert "127.0.0.1" in info.value.message or "offer file" in info.value.message


def test_the_recorded_excerpt_of_the_real_offer_file():
    """Real data (opencost's excerpt of the us-east-1 file): the on-demand p4d, not its Capacity Block twin."""
    with open(RECORDED / "aws-offer-us-east-1-p4d-excerpt.json", "rb") as fp:
        found = price_list.parse_offer_file(fp, "us-east-1", price_snapshot.load("aws"))
    assert set(found) == {"p4d.24xlarge"}
    p4d = found["p4d.24xlarge"]
    assert p4d["on_demand"] == 32.7726 and p4d["skus"] == ["H7NGEAC6UEHNTKSJ"]
    assert (p4d["gpu_model"], p4d["gpu_count"]) == ("A100", 8)


def test_a_region_not_in_the_file_is_skipped():
    doc = b'{"products": {"X": {"sku": "X", "productFamily": "Compute Instance", "attributes": ' \
          b'{"instanceType": "p3.2xlarge", "regionCode": "eu-west-1", "operatingSystem": "Linux", "tenancy": ' \
          b'"Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}}}, "terms": {"OnDemand": {}}}'
    assert price_list.parse_offer_file(io.BytesIO(doc), "us-east-1", price_snapshot.load("aws")) == {}
