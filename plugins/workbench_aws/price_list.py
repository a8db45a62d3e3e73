"""AWS's public price lists, read without an account: the EC2 offer files and the Savings Plans files.

The Price List *bulk* API serves one JSON file per service and region, with no credentials:
``https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json``
(``products``: SKU → attributes; ``terms.OnDemand`` and ``terms.Reserved``: SKU → offer terms with
``priceDimensions``).  A region's file is gigabytes, so it is streamed
(:mod:`workbench.core.providers.json_stream`) and filtered as it passes: products of a GPU family
that a Linux on-demand user pays for (shared tenancy, no pre-installed software, capacity status
"Used"; the same filters as the live query in :mod:`.pricing`), then their on-demand price and the
effective hourly price of the 1- and 3-year *standard, no upfront* reservations.

Savings Plans: ``/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json`` names
each region's file; its ``terms.savingsPlan`` list holds, per plan (1 or 3 years, purchase option),
``rates`` with the discounted hourly price of each EC2 SKU (``discountedSku``).  The Compute Savings
Plan with no upfront payment is taken (the most flexible one a researcher would buy).

No boto3 here: plain HTTPS through the core Fetcher.  Failure: TransientError (network, not JSON).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

from workbench.core.domain.errors import TransientError
from workbench.core.domain.gpus import normalize_gpu_name
from workbench.core.providers.json_stream import members
from workbench.core.providers.price_fetch import Fetcher
from workbench.core.providers.price_snapshot import PriceRow, PriceSnapshot

from . import pricing
from .settings import GPU_FAMILIES

log = logging.getLogger("workbench.aws.price_list")

BASE_URL = "https://pricing.us-east-1.amazonaws.com"
EC2_PATH = "/offers/v1.0/aws/AmazonEC2/current/{region}/index.json"
SP_INDEX_PATH = "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json"
SOURCE = "AWS Price List offer files (Linux, shared tenancy; reserved: standard, no upfront; " \
         "savings plan: Compute, no upfront)"
#: the GPU of each family (the offer file names the count, not the model)
FAMILY_GPU = {"p3": ("V100", 16.0), "p3dn": ("V100", 32.0), "p4d": ("A100", 40.0), "p4de": ("A100", 80.0),
              "p5": ("H100", 80.0), "p5e": ("H200", 141.0), "p5en": ("H200", 141.0), "g4dn": ("T4", 16.0),
              "g5": ("A10G", 24.0), "g6": ("L4", 24.0), "g6e": ("L40S", 48.0), "gr6": ("L4", 24.0)}


def _family(instance_type: str) -> str:
    return instance_type.split(".")[0]


def wanted_product(product: dict[str, Any], families: Iterable[str] = GPU_FAMILIES) -> bool:
    """True for a Linux, shared-tenancy, on-demand-usable GPU instance product of ``families``."""
    attrs = product.get("attributes") or {}
    if not str(product.get("productFamily", "")).startswith("Compute Instance"):
        return False
    if any(str(attrs.get(k, v)) != v for k, v in pricing.LINUX_FILTERS.items()):
        return False
    # on-demand Linux only: not a Capacity Block ("RunInstances:CB", marketoption CapacityBlock), not BYOL
    if attrs.get("marketoption", "OnDemand") != "OnDemand" or attrs.get("operation", "RunInstances") != "RunInstances":
        return False
    return _family(str(attrs.get("instanceType", ""))) in set(families)


def _number(text: Any) -> float | None:
    m = re.search(r"[\d.]+", str(text or "").replace(",", ""))
    return float(m.group(0)) if m else None


def _network(text: Any) -> float | None:
    m = re.search(r"(?:(\d+)x\s*)?(\d+(?:\.\d+)?)\s*Gigabit", str(text or ""))
    if not m:
        return None
    return float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1)


def _shape(attrs: dict[str, Any], region: str, known: PriceSnapshot) -> dict[str, Any]:
    """The row's shape: the snapshot's where it knows the type, else the offer file's attributes."""
    itype = str(attrs["instanceType"])
    row = known.shape(itype)
    if row is not None:
        return dict(gpu_model=row.gpu_model, gpu_count=row.gpu_count, gpu_memory_gb=row.gpu_memory_gb,
                    vcpus=row.vcpus, memory_gb=row.memory_gb, network_gbps=row.network_gbps, rdma=row.rdma)
    model, per_gpu = FAMILY_GPU.get(_family(itype), (normalize_gpu_name(str(attrs.get("gpu", ""))), 0.0))
    return dict(gpu_model=model, gpu_count=int(_number(attrs.get("gpu")) or 0), gpu_memory_gb=per_gpu,
                vcpus=int(_number(attrs.get("vcpu")) or 0), memory_gb=_number(attrs.get("memory")) or 0.0,
                network_gbps=_network(attrs.get("networkPerformance")), rdma=False)


def parse_offer_file(fp: Any, region: str, known: PriceSnapshot, families: Iterable[str] = GPU_FAMILIES) -> \
        dict[str, dict[str, Any]]:
    """Stream one region's EC2 offer file → {instance type: shape + on_demand, reserved_1y/3y, sku}."""
    skus: dict[str, dict[str, Any]] = {}
    found: dict[str, dict[str, Any]] = {}
    fams = tuple(families)
    try:
        for path, key, value in members(fp, {("products",), ("terms", "OnDemand"), ("terms", "Reserved")}):
            if path == ("products",):
                if isinstance(value, dict) and wanted_product(value, fams):
                    attrs = value["attributes"]
                    if attrs.get("regionCode", region) == region:
                        skus[str(key)] = attrs
            elif str(key) in skus and isinstance(value, dict):
                attrs = skus[str(key)]
                if attrs["instanceType"] not in found:
                    found[attrs["instanceType"]] = _shape(attrs, region, known)
                entry = found[attrs["instanceType"]]
                if path[-1] == "OnDemand":
                    price = pricing._on_demand({"OnDemand": value})
                    if price is not None and (entry.get("on_demand") is None or price < entry["on_demand"]):
                        entry["on_demand"] = price
                else:
                    for years in (1, 3):
                        got = pricing._reserved({"Reserved": value}, years)
                        if got is not None:
                            entry[f"reserved_{years}y"] = got
    except ValueError as exc:
        raise TransientError(f"the AWS offer file of {region} could not be read: {exc}",
                             hint="try again later; prices stay as they were") from None
    for sku, attrs in skus.items():  # every SKU of a type (a savings plan rate names the SKU)
        if attrs["instanceType"] in found:
            found[attrs["instanceType"]].setdefault("skus", []).append(sku)
    return found


def parse_savings_plans(fp: Any, skus: dict[str, str], purchase: str = "No Upfront") -> dict[str, dict[int, float]]:
    """Stream a region's Compute Savings Plans file → {instance type: {years: hourly}} for the given SKUs."""
    plans: dict[str, int] = {}  # plan sku → years, for the wanted purchase option
    out: dict[str, dict[int, float]] = {}
    try:
        for path, _key, value in members(fp, {("products",), ("terms", "savingsPlan")}):
            if not isinstance(value, dict):
                continue
            if path == ("products",):
                attrs = value.get("attributes") or {}
                term = str(attrs.get("purchaseTerm", "")).lower()
                if str(attrs.get("purchaseOption", "")).lower() == purchase.lower() and term in ("1yr", "3yr"):
                    plans[str(value.get("sku"))] = int(term[0])
                continue
            years = plans.get(str(value.get("sku")))
            if years is None:  # a plan of another purchase option (or term)
                continue
            for rate in value.get("rates") or []:
                itype = skus.get(str(rate.get("discountedSku")))
                price = (rate.get("discountedRate") or {}).get("price")
                if itype is None or price is None:
                    continue
                try:
                    out.setdefault(itype, {})[years] = round(float(price), 6)
                except (TypeError, ValueError):
                    continue
    except ValueError as exc:
        raise TransientError(f"the AWS Savings Plans file could not be read: {exc}") from None
    return out


def _savings_plan_url(fetch: Fetcher, region: str) -> str | None:
    index = fetch.get_json(fetch.url(BASE_URL, SP_INDEX_PATH))
    for entry in index.get("regions") or []:
        if isinstance(entry, dict) and entry.get("regionCode") == region and entry.get("versionUrl"):
            return fetch.url(BASE_URL, str(entry["versionUrl"]))
    return None


def public_prices(regions: Iterable[str], known: PriceSnapshot, fetch: Fetcher) -> list[PriceRow]:
    """Rows for ``regions`` from the offer files (and the Savings Plans files where they answer)."""
    rows: list[PriceRow] = []
    for region in regions:
        fetch.progress(f"aws: streaming the EC2 offer file of {region} (large: this takes a while)")
        with fetch.open(fetch.url(BASE_URL, EC2_PATH.format(region=region))) as fp:
            found = parse_offer_file(fp, region, known)
        by_sku = {sku: itype for itype, e in found.items() for sku in e.get("skus", [])}
        plans: dict[str, dict[int, float]] = {}
        try:
            url = _savings_plan_url(fetch, region)
            if url:
                fetch.progress(f"aws: streaming the Savings Plans file of {region}")
                with fetch.open(url) as fp:
                    plans = parse_savings_plans(fp, by_sku)
        except TransientError as exc:  # prices without savings plans are still worth having
            log.warning("AWS Savings Plans of %s unreadable: %s", region, exc.message)
        for itype, e in sorted(found.items()):
            if e.get("on_demand") is None:
                continue
            old = known.find(region, itype)
            sp = plans.get(itype, {})
            rows.append(PriceRow(
                instance_type=itype, gpu_model=e["gpu_model"], gpu_count=e["gpu_count"],
                gpu_memory_gb=e["gpu_memory_gb"], vcpus=e["vcpus"], memory_gb=e["memory_gb"],
                network_gbps=e["network_gbps"], rdma=e["rdma"], region=region, currency="USD",
                on_demand=e["on_demand"], spot=old.spot if old else None,  # spot is not in the price list
                reserved_1y=e.get("reserved_1y"), reserved_3y=e.get("reserved_3y"),
                savings_plan_1y=sp.get(1), savings_plan_3y=sp.get(3), as_of="",
                source=SOURCE + ("; spot: earlier snapshot" if old and old.spot else "")))
    return rows
