"""The public Azure Retail Prices API: query, follow ``NextPageLink``, parse VM meters.

    items = fetch(url, build_filter("eastus", ["Standard_NC4as_T4_v3"]), "USD", verify=True)
    prices = parse(items)    # {(region, arm sku name): MeterPrices}

Rules of :func:`parse` (the API returns every meter of a size):

* Linux only: meters whose productName says "Windows" are skipped.
* ``type`` "Consumption": a skuName ending in "Spot" is the spot price, "Low Priority"
  is skipped (the retired low-priority offer), anything else is pay-as-you-go.
* ``type`` "Reservation": ``reservationTerm`` "1 Year" / "3 Years"; the API gives the
  price of the whole term, divided here into an effective hourly price.
* "DevTestConsumption" and other types, tiered meters and units other than "1 Hour"
  are skipped.  When a meter appears twice the newest ``effectiveStartDate`` wins.
* Prices are in the item's ``currencyCode`` (the request's ``currencyCode``: USD by
  default; Azure converts for reference, e.g. CNY).
* Savings plan: with ``api-version=2023-01-01-preview`` a pay-as-you-go item carries
  ``savingsPlan``: ``[{"term": "1 Year"|"3 Years", "retailPrice": hourly}, …]``.

No SDK: plain HTTPS through ``requests`` (installed with azure-core), imported lazily.
Failure rules: :func:`fetch` raises TransientError (network, 429/5xx after two
retries, a page that is not the API's JSON); parse never raises on odd items.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from workbench.core.domain.errors import TransientError

HOURS = {"1 Year": 365 * 24, "3 Years": 3 * 365 * 24}
MAX_PAGES = 50
GetJson = Callable[[str, dict[str, str] | None], dict[str, Any]]


@dataclass
class MeterPrices:
    on_demand: float | None = None
    spot: float | None = None
    reserved_1y: float | None = None
    reserved_3y: float | None = None
    currency: str = "USD"
    savings_plan_1y: float | None = None
    savings_plan_3y: float | None = None
    _dates: dict[str, str] = field(default_factory=dict, repr=False)

    def offer(self, kind: str, price: float, date: str) -> None:
        if date >= self._dates.get(kind, ""):
            self._dates[kind] = date
            setattr(self, kind, price)


def build_filter(region: str, sizes: Iterable[str]) -> str:
    """OData filter for the VM meters of ``sizes`` in ``region``."""
    names = " or ".join(f"armSkuName eq '{s}'" for s in sorted(set(sizes)))
    return f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and ({names})"


#: the API version whose items carry savings plan prices
SAVINGS_PLAN_API = "2023-01-01-preview"


def fetch(url: str, filter_: str, currency: str = "USD", *, verify: bool | str = True, timeout: float = 30.0,
          get_json: GetJson | None = None, api_version: str | None = None) -> list[dict[str, Any]]:
    """Every item of the query, following ``NextPageLink`` (at most 50 pages)."""
    if get_json is not None:
        return _pages(get_json, url, filter_, currency, api_version)
    import requests

    with requests.Session() as session:
        return _pages(_requests_getter(session, verify, timeout), url, filter_, currency, api_version)


def _pages(get: GetJson, url: str, filter_: str, currency: str, api_version: str | None = None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params = {"$filter": filter_, "currencyCode": f"'{currency}'"}
    if api_version:
        params["api-version"] = api_version
    page = get(url, params)
    for _ in range(MAX_PAGES):
        if not isinstance(page, dict) or not isinstance(page.get("Items"), list):
            raise TransientError("the Retail Prices API answered with something that is not a price page")
        items.extend(i for i in page["Items"] if isinstance(i, dict))
        nxt = page.get("NextPageLink")
        if not nxt:
            return items
        page = get(nxt, None)
    raise TransientError(f"the Retail Prices API returned more than {MAX_PAGES} pages; narrow the query")


def parse(items: Iterable[dict[str, Any]]) -> dict[tuple[str, str], MeterPrices]:
    """Prices per (armRegionName, armSkuName) following the module's rules."""
    out: dict[tuple[str, str], MeterPrices] = {}
    for it in items:
        try:
            if it.get("serviceName") != "Virtual Machines" or "windows" in str(it.get("productName", "")).lower():
                continue
            if it.get("unitOfMeasure") != "1 Hour" or float(it.get("tierMinimumUnits") or 0) > 0:
                continue
            sku_name = str(it.get("skuName", ""))
            price = float(it["retailPrice"])
            kind = it.get("type")
            plans: list[tuple[str, float]] = []
            if kind == "Consumption":
                if sku_name.endswith("Low Priority"):
                    continue
                slot = "spot" if sku_name.endswith("Spot") else "on_demand"
                if slot == "on_demand":
                    plans = _savings_plans(it.get("savingsPlan"))
            elif kind == "Reservation" and it.get("reservationTerm") in HOURS:
                slot = "reserved_1y" if it["reservationTerm"] == "1 Year" else "reserved_3y"
                price = price / HOURS[it["reservationTerm"]]
            else:
                continue
            key = (str(it["armRegionName"]).lower(), str(it["armSkuName"]))
        except (KeyError, TypeError, ValueError):
            continue
        entry = out.setdefault(key, MeterPrices(currency=str(it.get("currencyCode") or "USD")))
        date = str(it.get("effectiveStartDate") or "")
        entry.offer(slot, round(price, 6), date)
        for plan_slot, plan_price in plans:
            entry.offer(plan_slot, round(plan_price, 6), date)
    return out


def _savings_plans(raw: Any) -> list[tuple[str, float]]:
    """(slot, hourly) of a pay-as-you-go item's savings plan prices; odd entries are skipped."""
    out = []
    for p in raw if isinstance(raw, list) else []:
        try:
            if isinstance(p, dict) and p.get("term") in HOURS:
                out.append(("savings_plan_1y" if p["term"] == "1 Year" else "savings_plan_3y", float(p["retailPrice"])))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _requests_getter(session: Any, verify: bool | str, timeout: float) -> GetJson:
    import requests

    def get(url: str, params: dict[str, str] | None) -> dict[str, Any]:
        for attempt in range(3):
            try:
                resp = session.get(url, params=params, timeout=timeout, verify=verify)
            except requests.RequestException as exc:
                raise TransientError(f"cannot reach the Azure Retail Prices API: {type(exc).__name__}",
                                     hint="prices fall back to the bundled snapshot") from None
            if resp.status_code == 429 or resp.status_code >= 500:
                if attempt < 2:
                    time.sleep(min(float(resp.headers.get("Retry-After") or 1), 5.0))
                    continue
            if resp.status_code != 200:
                raise TransientError(f"the Azure Retail Prices API answered HTTP {resp.status_code}")
            try:
                return resp.json()
            except ValueError:
                raise TransientError("the Azure Retail Prices API answered with invalid JSON") from None
        raise TransientError("the Azure Retail Prices API kept failing")  # pragma: no cover - loop returns or raises

    return get
