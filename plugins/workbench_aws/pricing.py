"""Live EC2 prices: the AWS Price List API (on-demand + reserved) and the spot price history.

The Price List API (``pricing`` client, us-east-1) answers ``get_products`` with
``PriceList``: one JSON *string* per product, each holding the product's
attributes and its ``terms`` — ``OnDemand`` and ``Reserved`` offer terms whose
``priceDimensions`` carry ``pricePerUnit`` in USD per ``Hrs`` (plus an
"Upfront Fee" ``Quantity`` dimension on upfront reserved terms).  The parsers
here are pure functions (tested on recorded responses of that shape); the
fetcher asks once per region for every product of the "GPU instance" family
with the filters that pick the price a Linux on-demand user pays (shared
tenancy, no pre-installed software, capacity status "Used") and pages through
the answer.

Spot: ``describe_spot_price_history`` with ``StartTime`` now answers the current
price per availability zone; entries older than :data:`SPOT_MAX_AGE_S` are
ignored (a price that old is not today's).

Threading: fetchers use the client they are given (the caller's thread's).
Failure rules: fetchers let botocore errors through (the caller falls back to
the snapshot and says so); parsers skip malformed products.
"""

from __future__ import annotations

import datetime
import json
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

log = logging.getLogger("workbench.aws.pricing")

LIVE_SOURCE = "live: AWS Price List API"
SPOT_SOURCE = "live spot price history"
SNAPSHOT_SOURCE = "snapshot"
PRICING_REGION = "us-east-1"
SPOT_MAX_AGE_S = 7 * 86400
HOURS_PER_YEAR = 8760.0
#: what a Linux on-demand user pays (the Price List API's attribute names and values)
LINUX_FILTERS = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
#: the Price List's ``instanceFamily`` of every NVIDIA GPU type (p3 … p5, g4dn … g6e)
GPU_FAMILY = "GPU instance"


@dataclass(frozen=True)
class ListPrice:
    """Hourly USD prices of one instance type in one region from the Price List API."""

    instance_type: str
    region: str
    on_demand: float | None
    reserved_1y: float | None = None  # standard, no upfront: effective hourly
    reserved_3y: float | None = None
    currency: str = "USD"
    sku: str = ""


def product_filters(region: str, instance_family: str = GPU_FAMILY) -> list[dict[str, str]]:
    """The ``Filters`` argument of get_products: every Linux on-demand GPU product of one region."""
    wanted = {"regionCode": region, "instanceFamily": instance_family, **LINUX_FILTERS}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in wanted.items()]


def _usd(dimension: Mapping[str, Any]) -> float | None:
    try:
        return float(dimension.get("pricePerUnit", {}).get("USD"))
    except (TypeError, ValueError):
        return None


def _on_demand(terms: Mapping[str, Any]) -> float | None:
    prices = []
    for term in (terms.get("OnDemand") or {}).values():
        for dim in (term.get("priceDimensions") or {}).values():
            if str(dim.get("unit", "")).lower() in ("hrs", "hours"):
                value = _usd(dim)
                if value is not None:
                    prices.append(value)
    positive = [p for p in prices if p > 0]
    return min(positive) if positive else None


def effective_hourly(term: Mapping[str, Any]) -> float | None:
    """A reserved term's cost per hour: the hourly fee plus the upfront fee spread over the lease."""
    attrs = term.get("termAttributes") or {}
    years = {"1yr": 1, "3yr": 3}.get(str(attrs.get("LeaseContractLength", "")).lower())
    if years is None:
        return None
    hourly, upfront = 0.0, 0.0
    seen = False
    for dim in (term.get("priceDimensions") or {}).values():
        value = _usd(dim)
        if value is None:
            continue
        seen = True
        if str(dim.get("unit", "")).lower() in ("hrs", "hours"):
            hourly += value
        elif str(dim.get("unit", "")).lower() == "quantity":
            upfront += value
    if not seen:
        return None
    return round(hourly + upfront / (years * HOURS_PER_YEAR), 6)


def _reserved(terms: Mapping[str, Any], years: int, purchase: str = "No Upfront") -> float | None:
    wanted = f"{years}yr"
    for term in (terms.get("Reserved") or {}).values():
        attrs = term.get("termAttributes") or {}
        if (str(attrs.get("LeaseContractLength", "")).lower() == wanted
                and str(attrs.get("OfferingClass", "")).lower() == "standard"
                and str(attrs.get("PurchaseOption", "")).lower() == purchase.lower()):
            return effective_hourly(term)
    return None


def parse_product(raw: str | Mapping[str, Any]) -> ListPrice | None:
    """One PriceList entry → ListPrice; None when it is not a plain Linux shared on-demand instance."""
    try:
        item = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
        attrs = item["product"]["attributes"]
        terms = item.get("terms") or {}
    except (ValueError, KeyError, TypeError):
        log.warning("skipping a malformed Price List product")
        return None
    if any(str(attrs.get(k, v)) != v for k, v in LINUX_FILTERS.items()):
        return None
    if attrs.get("instanceType") is None:
        return None
    return ListPrice(
        instance_type=attrs["instanceType"],
        region=attrs.get("regionCode", ""),
        on_demand=_on_demand(terms),
        reserved_1y=_reserved(terms, 1),
        reserved_3y=_reserved(terms, 3),
        sku=str(item["product"].get("sku", "")),
    )


def parse_price_list(entries: Iterable[str | Mapping[str, Any]]) -> dict[str, ListPrice]:
    """PriceList entries → the best (lowest positive on-demand) price per instance type."""
    best: dict[str, ListPrice] = {}
    for raw in entries:
        price = parse_product(raw)
        if price is None or price.on_demand is None:
            continue
        have = best.get(price.instance_type)
        if have is None or (price.on_demand < (have.on_demand or float("inf"))):
            best[price.instance_type] = price
    return best


def fetch_list_prices(client: Any, region: str) -> dict[str, ListPrice]:
    """Price List prices of every GPU type in ``region``: one query, paged (100 products a page)."""
    entries: list[str] = []
    kwargs: dict[str, Any] = {"ServiceCode": "AmazonEC2", "Filters": product_filters(region),
                              "FormatVersion": "aws_v1", "MaxResults": 100}
    while True:
        answer = client.get_products(**kwargs)
        entries.extend(answer.get("PriceList") or [])
        token = answer.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    return {t: p for t, p in parse_price_list(entries).items() if not p.region or p.region == region}


# -- spot -----------------------------------------------------------------------------------
def _ts(value: Any) -> float | None:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.timestamp()
    return None


def parse_spot_history(entries: Iterable[Mapping[str, Any]], now: float,
                       max_age_s: float = SPOT_MAX_AGE_S) -> dict[str, dict[str, float]]:
    """SpotPriceHistory entries → {instance type: {availability zone: latest price}}, stale ones dropped."""
    latest: dict[tuple[str, str], tuple[float, float]] = {}
    for e in entries:
        if not str(e.get("ProductDescription", "")).startswith("Linux/UNIX"):
            continue
        ts = _ts(e.get("Timestamp"))
        try:
            price = float(e["SpotPrice"])
        except (KeyError, TypeError, ValueError):
            continue
        if ts is None or now - ts > max_age_s or price <= 0:
            continue
        key = (e["InstanceType"], e["AvailabilityZone"])
        if key not in latest or latest[key][0] < ts:
            latest[key] = (ts, price)
    out: dict[str, dict[str, float]] = {}
    for (itype, az), (_, price) in sorted(latest.items()):
        out.setdefault(itype, {})[az] = price
    return out


def fetch_spot_prices(ec2: Any, instance_types: list[str], now: float | None = None) -> dict[str, dict[str, float]]:
    """Current spot price per type and AZ in the client's region (types without a fresh price omitted)."""
    if not instance_types:
        return {}
    now = now if now is not None else datetime.datetime.now(datetime.timezone.utc).timestamp()
    start = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
    entries: list[Mapping[str, Any]] = []
    paginator = ec2.get_paginator("describe_spot_price_history")
    for page in paginator.paginate(InstanceTypes=instance_types, ProductDescriptions=["Linux/UNIX"],
                                   StartTime=start):
        entries.extend(page.get("SpotPriceHistory") or [])
    return parse_spot_history(entries, now)


def spot_series(ec2: Any, instance_type: str, az: str | None, start: float, end: float) -> list[tuple[float, float]]:
    """(POSIX seconds, USD/h) spot prices of one type (and AZ) between ``start`` and ``end``, oldest first."""
    kwargs: dict[str, Any] = {
        "InstanceTypes": [instance_type], "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": datetime.datetime.fromtimestamp(start, datetime.timezone.utc),
        "EndTime": datetime.datetime.fromtimestamp(end, datetime.timezone.utc)}
    if az:
        kwargs["AvailabilityZone"] = az
    points: dict[float, float] = {}
    for page in ec2.get_paginator("describe_spot_price_history").paginate(**kwargs):
        for e in page.get("SpotPriceHistory") or []:
            ts = _ts(e.get("Timestamp"))
            if ts is None or (az and e.get("AvailabilityZone") != az):
                continue
            try:
                points[ts] = float(e["SpotPrice"])
            except (KeyError, TypeError, ValueError):
                continue
    return sorted(points.items())
