"""Azure's public prices, read without an account: the Retail Prices API for the catalog's GPU sizes.

``https://prices.azure.com/api/retail/prices`` answers anyone (no sign-in); it is asked per region
for the VM sizes the price catalog knows (the API has prices, not shapes: GPU model, count and
memory come from the catalog), with ``api-version=2023-01-01-preview`` so pay-as-you-go items also
carry their savings plan prices.  Parsing is :func:`.retail.parse` (Linux; pay-as-you-go, Spot,
1- and 3-year reservations as effective hourly prices, savings plans).

No Azure SDK: plain HTTPS through the core Fetcher.  Failure: TransientError.
"""

from __future__ import annotations

from typing import Iterable

from workbench.core.providers.price_fetch import Fetcher
from workbench.core.providers.price_snapshot import PriceRow, PriceSnapshot

from . import retail

BASE_URL = "https://prices.azure.com"
PATH = "/api/retail/prices"
SOURCE = "Azure Retail Prices API (Linux; reservations and savings plans as effective hourly prices)"


def public_prices(regions: Iterable[str], known: PriceSnapshot, fetch: Fetcher, currency: str = "USD") -> list[PriceRow]:
    """Rows for ``regions`` and every size the catalog knows (any region), priced by the Retail Prices API."""
    sizes = sorted({r.instance_type for r in known.rows})
    rows: list[PriceRow] = []
    for region in regions:
        fetch.check()
        fetch.progress(f"azure: asking the Retail Prices API for {len(sizes)} GPU sizes in {region}")
        items = retail.fetch(fetch.url(BASE_URL, PATH), retail.build_filter(region, sizes), currency,
                             get_json=fetch.get_json, api_version=retail.SAVINGS_PLAN_API)
        prices = retail.parse(items)
        for size in sizes:
            found = prices.get((region.lower(), size))
            shape = known.find(region, size) or known.shape(size)
            if found is None or found.on_demand is None or shape is None:
                continue
            rows.append(PriceRow(
                instance_type=shape.instance_type, gpu_model=shape.gpu_model, gpu_count=shape.gpu_count,
                gpu_memory_gb=shape.gpu_memory_gb, vcpus=shape.vcpus, memory_gb=shape.memory_gb,
                network_gbps=shape.network_gbps, rdma=shape.rdma, region=region, currency=found.currency,
                on_demand=found.on_demand, spot=found.spot, reserved_1y=found.reserved_1y,
                reserved_3y=found.reserved_3y, savings_plan_1y=found.savings_plan_1y,
                savings_plan_3y=found.savings_plan_3y, as_of="", source=SOURCE))
    return rows
