"""core/money/controller_cost: the controller machine's all-in hourly cost per cloud, from the bundled catalog
(the machine) and resources/catalog/controller.json (its disk and public address, each with a source)."""

from __future__ import annotations

import json

import pytest

from workbench.core.domain.errors import NotFoundError
from workbench.core.money.controller_cost import (TARGET_USD_PER_H, controller_cost, controller_instance_type,
                                                  parts_path, targets)
from workbench.core.providers import price_snapshot


@pytest.fixture(autouse=True)
def no_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))  # the bundled catalog only


def test_aws_is_the_cheapest_nano_with_an_8_gb_gp3_disk_and_a_public_ipv4_under_the_target():
    c = controller_cost("aws")
    assert (c.region, c.instance_type, c.currency) == ("us-east-1", "t3a.nano", "USD")
    assert c.machine_per_h == price_snapshot.load("aws").find("us-east-1", "t3a.nano").on_demand == 0.0047
    assert c.disk_gb == 8 and c.disk_per_h == round(8 * 0.08 / 730, 6)
    assert c.address_per_h == 0.005
    assert c.total_per_h == pytest.approx(c.machine_per_h + c.disk_per_h + c.address_per_h)
    assert c.total_per_h <= TARGET_USD_PER_H and c.meets_target()
    assert [p.part for p in c.parts()] == ["machine", "disk", "address"]
    assert all(p.source and p.as_of for p in c.parts()) and len(c.sources) == 3
    assert c.as_of == "2020-12-01"  # the oldest part: the gp3 price
    assert json.loads(json.dumps(c.to_json()))["total_per_h"] == c.total_per_h


def test_azure_b1ls_with_a_standard_hdd_s4_and_a_standard_ip():
    c = controller_cost("azure")
    assert (c.region, c.instance_type, c.disk_gb) == ("eastus", "Standard_B1ls", 32)
    assert c.machine_per_h == 0.0052 and c.disk_per_h == round(1.54 / 730, 6) and c.address_per_h == 0.005
    assert c.meets_target() and c.as_of == price_snapshot.UNKNOWN_DATE  # the Azure prices carry no date


def test_alibaba_stays_in_cny_and_is_not_judged_without_a_rate():
    c = controller_cost("alibaba")
    assert (c.region, c.instance_type, c.currency) == ("cn-shanghai", "ecs.t6-c4m1.large", "CNY")
    assert (c.machine_per_h, c.disk_per_h, c.address_per_h, c.total_per_h) == (0.03, 0.01, 0.0, 0.04)
    assert c.meets_target() is None


def test_the_cheapest_type_of_the_region_wins_and_another_type_stands_in_where_it_is_missing():
    assert controller_instance_type("aws") == "t3a.nano"
    assert controller_instance_type("alibaba", "cn-qingdao") == "ecs.t5-lc2m1.nano"  # no t6 there
    assert controller_cost("alibaba", "cn-qingdao").total_per_h == pytest.approx(0.063 + 0.01)


def test_an_unknown_cloud_or_a_region_without_a_price_says_where_there_is_one():
    with pytest.raises(NotFoundError, match="no controller machine is known for cloud 'gcp'") as e:
        controller_cost("gcp")
    assert "aws" in e.value.hint
    with pytest.raises(NotFoundError, match="disk") as e:
        controller_cost("aws", "eu-central-1")  # the machine is priced there, its gp3 disk is not
    assert "us-east-1" in e.value.hint
    with pytest.raises(NotFoundError, match="no controller machine"):
        controller_instance_type("azure", "mars-1")


def test_every_figure_of_the_parts_file_names_its_source_and_date():
    data = json.loads(parts_path().read_text(encoding="utf-8"))
    assert data["hours_per_month"] == 730 and data["hours_per_month_source"]
    for name, cloud in data["clouds"].items():
        assert cloud["types"] and cloud["types_why"] and cloud["default_region_why"], name
        for part in (cloud["disk"], cloud["address"]):
            assert part["source"] and part["as_of"] and part["currency"], (name, part)
            price_snapshot.date_rank(part["as_of"])  # a form the catalog knows
        assert cloud["disk"]["gb"] and cloud["disk"]["gb_why"], name
    assert [c.provider for c in targets()] == ["aws", "azure", "alibaba"]
