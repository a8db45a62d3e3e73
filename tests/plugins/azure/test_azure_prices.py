"""Retail Prices API parsing on synthetic pages of the real shape and on items Microsoft published from the real
API, live paging over HTTPS, the snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.domain.errors import PluginError, TransientError
from workbench.core.providers import price_snapshot
from workbench_azure import retail

SYNTHETIC = Path(__file__).parent / "synthetic"  # hand-written pages (see the README there)
RECORDED = Path(__file__).parent / "recorded"  # items Microsoft published from the real API (README there)
PAGE1 = "retail-virtual-machines-p1.json"


def _synthetic_getter(calls: list[str]):
    """Serves the synthetic pages: the first request gets page 1, a NextPageLink the page it names."""

    def get(url: str, params):
        calls.append(url)
        if params is not None:
            assert params["$filter"].startswith("serviceName eq 'Virtual Machines'")
            return json.loads((SYNTHETIC / PAGE1).read_text())
        n = int(url.rsplit("$skip=", 1)[1]) // 100 + 1
        return json.loads((SYNTHETIC / f"retail-virtual-machines-p{n}.json").read_text())

    return get


def test_items_answered_by_the_real_api_follow_the_parse_rules():
    items = json.loads((RECORDED / "retail-items-microsoft-docs.json").read_text())
    prices = retail.parse(items)
    # the F16s meters are Windows (one DevTest, one in EUR): skipped; the E64 v4 reservation is kept
    assert list(prices) == [("southcentralus", "Standard_E64_v4")]
    e64 = prices[("southcentralus", "Standard_E64_v4")]
    assert e64.reserved_1y == round(25007.0 / (365 * 24), 6) and e64.on_demand is None and e64.spot is None
    assert e64.currency == "USD"


def test_synthetic_pages_follow_next_page_link_and_parse_linux_meters_only():
    calls: list[str] = []
    items = retail.fetch("https://prices.azure.com/api/retail/prices", "serviceName eq 'Virtual Machines'",
                         get_json=_synthetic_getter(calls))
    assert len(calls) == 2 and "$skip=100" in calls[1]
    raw = [i for p in sorted(SYNTHETIC.glob("retail-*.json")) for i in json.loads(p.read_text())["Items"]]
    assert len(items) == len(raw)
    prices = retail.parse(items)
    nd = prices[("eastus", "Standard_ND96asr_v4")]
    # the Linux pay-as-you-go meter, not the Windows one (productName "… Windows") nor "Low Priority"
    windows = next(i for i in raw if i["armSkuName"] == "Standard_ND96asr_v4" and i["armRegionName"] == "eastus"
                   and i["productName"].endswith("Windows") and i["type"] == "Consumption" and "Spot" not in i["skuName"])
    low = next(i for i in raw if i["armSkuName"] == "Standard_ND96asr_v4" and i["armRegionName"] == "eastus"
               and i["skuName"].endswith("Low Priority"))
    assert nd.on_demand == 27.197 and nd.on_demand not in (windows["retailPrice"], low["retailPrice"])
    spot = next(i for i in raw if i["armSkuName"] == "Standard_ND96asr_v4" and i["armRegionName"] == "eastus"
                and i["skuName"].endswith("Spot") and "Windows" not in i["productName"])
    assert nd.spot == spot["retailPrice"]
    # reservations: the API gives the whole term's price; the plan needs an hourly one
    one = next(i for i in raw if i["armSkuName"] == "Standard_ND96asr_v4" and i["armRegionName"] == "eastus"
               and i.get("reservationTerm") == "1 Year")
    three = next(i for i in raw if i["armSkuName"] == "Standard_ND96asr_v4" and i["armRegionName"] == "eastus"
                 and i.get("reservationTerm") == "3 Years")
    assert nd.reserved_1y == pytest.approx(one["retailPrice"] / 8760, rel=1e-6)
    assert nd.reserved_3y == pytest.approx(three["retailPrice"] / 26280, rel=1e-6)
    assert nd.reserved_3y < nd.reserved_1y < nd.on_demand and nd.currency == "USD"
    # DevTestConsumption is not a price anyone pays for a workbench VM
    a100 = prices[("eastus", "Standard_NC24ads_A100_v4")]
    assert a100.on_demand == 3.673
    assert {r for r, _ in prices} == {"eastus", "westus2", "westeurope"}


def test_parse_skips_odd_items_and_keeps_the_newest_meter():
    base = {"serviceName": "Virtual Machines", "unitOfMeasure": "1 Hour", "armRegionName": "eastus",
            "armSkuName": "Standard_NC6s_v3", "productName": "NCv3 Series", "skuName": "NC6s v3",
            "type": "Consumption", "currencyCode": "CNY", "tierMinimumUnits": 0.0}
    items = [
        {**base, "retailPrice": 20.0, "effectiveStartDate": "2023-01-01T00:00:00Z"},
        {**base, "retailPrice": 22.0, "effectiveStartDate": "2024-01-01T00:00:00Z"},
        {**base, "retailPrice": 99.0, "unitOfMeasure": "1/Month"},
        {**base, "retailPrice": "not a number"},
        {**base, "retailPrice": 1.0, "serviceName": "Storage"},
        {**base, "retailPrice": 1.0, "type": "Reservation", "reservationTerm": "5 Years"},
        {"unrelated": True},
    ]
    got = retail.parse(items)[("eastus", "Standard_NC6s_v3")]
    assert (got.on_demand, got.spot, got.reserved_1y, got.currency) == (22.0, None, None, "CNY")


def test_live_api_over_https_pages_with_next_page_link_and_converts_currency(arm):
    arm.price_page_size = 3  # force several pages
    try:
        sizes = ["Standard_NC4as_T4_v3", "Standard_ND96asr_v4"]
        items = retail.fetch(arm.prices_url, retail.build_filter("westus2", sizes), verify=arm.ca_file)
        cny = retail.fetch(arm.prices_url, retail.build_filter("westus2", sizes), "CNY", verify=arm.ca_file)
    finally:
        arm.price_page_size = 100
    assert {i["armRegionName"] for i in items} == {"westus2"}
    assert {i["armSkuName"] for i in items} == set(sizes) and len(items) == 14  # 7 meters each
    usd = retail.parse(items)[("westus2", "Standard_ND96asr_v4")]
    yuan = retail.parse(cny)[("westus2", "Standard_ND96asr_v4")]
    assert yuan.currency == "CNY" and yuan.on_demand == pytest.approx(usd.on_demand * 7.2, rel=1e-3)


def test_live_api_failure_is_transient(arm):
    fault = arm.add_fault(r"^/api/retail/prices", status=503, code="ServiceUnavailable", times=-1,
                          headers={"Retry-After": "0"})
    try:
        with pytest.raises(TransientError, match="HTTP 503"):
            retail.fetch(arm.prices_url, retail.build_filter("eastus", ["Standard_NC6s_v3"]), verify=arm.ca_file)
    finally:
        arm.faults.remove(fault)
    assert fault.hits == 3  # tried, then twice more after the server's Retry-After


def test_bundled_snapshot_has_the_seed_sizes_with_prices_and_a_date():
    snap = price_snapshot.load("azure")
    nd = snap.find("eastus", "Standard_ND96asr_v4")
    assert nd and (nd.gpu_model, nd.gpu_count, nd.gpu_memory_gb, nd.rdma) == ("A100", 8, 40.0, True)
    assert nd.on_demand == 27.197 and nd.currency == "USD" and nd.as_of == "2025-06-01"
    for size in ("Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_ND96amsr_A100_v4",
                 "Standard_ND96isr_H100_v5", "Standard_NC6s_v3"):
        assert snap.find("eastus", size).on_demand > 0
    # US regions (the westeurope figures were East US × 1.1, not prices: gone, issue 32)
    assert {r.region for r in snap.rows} >= {"eastus", "westus2"} and "westeurope" not in {r.region for r in snap.rows}
    assert all(r.on_demand and r.on_demand > 0 for r in snap.rows)


def test_malformed_snapshot_names_file_and_line(tmp_path):
    bad = tmp_path / "azure.csv"
    bad.write_text("# c\n" + ",".join(price_snapshot.COLUMNS) + "\nStandard_X,A100,eight,40,96,900,true,eastus,USD,1,,,,2025\n")
    with pytest.raises(PluginError, match=r"azure.csv:3"):
        price_snapshot.read(bad, "azure")
    with pytest.raises(PluginError, match="cannot be read"):
        price_snapshot.read(tmp_path / "missing.csv", "azure")
