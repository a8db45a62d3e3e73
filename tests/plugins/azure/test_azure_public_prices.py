"""Azure's public Retail Prices API without an account: a local server of the real protocol, a recorded answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from price_lists import PriceListServer
from workbench.core.domain.errors import TransientError
from workbench.core.providers import price_snapshot
from workbench.core.providers.price_fetch import Fetcher
from workbench_azure import retail
from workbench_azure.provider import AzureProvider

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "price_lists" / "recorded"


def test_public_prices_with_reservations_and_savings_plans_over_pages():
    with PriceListServer(page_size=4) as server:
        rows = AzureProvider.public_prices(["eastus"], price_snapshot.load("azure"), Fetcher(server.url))
        asked = [h for h in server.hits if h.startswith("/api/retail/prices")]
    got = {r.instance_type: r for r in rows}
    assert set(got) == {"Standard_NC6s_v3", "Standard_NC24s_v3", "Standard_ND96asr_v4"}
    nc = got["Standard_NC24s_v3"]
    assert nc.on_demand == 12.24 and nc.spot == pytest.approx(12.24 * 0.28, abs=1e-4)  # Linux, not Windows
    assert nc.reserved_1y == pytest.approx(round(12.24 * 0.61 * 8760) / 8760, abs=1e-6)  # whole term → hourly
    assert nc.reserved_3y == pytest.approx(round(12.24 * 0.39 * 26280) / 26280, abs=1e-6)
    assert (nc.savings_plan_1y, nc.savings_plan_3y) == (round(12.24 * 0.77, 4), round(12.24 * 0.59, 4))
    assert (nc.gpu_model, nc.gpu_count, nc.region) == ("V100", 4, "eastus")  # the shape from the catalog
    assert len(asked) == 5 and all("api-version=2023-01-01-preview" in h for h in asked)  # 18 items, 4 a page


def test_an_api_that_fails_is_a_transient_error():
    with PriceListServer() as server:
        server.fail["/api/retail/prices"] = "garbage"
        with pytest.raises(TransientError, match="not JSON"):
            AzureProvider.public_prices(["eastus"], price_snapshot.load("azure"), Fetcher(server.url, retries=0))


def test_the_recorded_real_answer_parses_to_hourly_prices():
    """A real Retail Prices API answer (Standard_D8_v4, westeurope): pay-as-you-go and both reservations."""
    items = json.loads((RECORDED / "azure-retail-d8v4-westeurope.json").read_text())["Items"]
    got = retail.parse(items)[("westeurope", "Standard_D8_v4")]
    assert got.on_demand == 0.46
    assert got.reserved_1y == pytest.approx(2377.0 / 8760, abs=1e-6)
    assert got.reserved_3y == pytest.approx(4594.0 / 26280, abs=1e-6)
    assert got.savings_plan_1y is None and got.currency == "USD"
