"""Azure Cost Management: what Azure billed per launch and UTC day (the SupportsBilling capability).

One ``query`` (POST ``/subscriptions/{id}/providers/Microsoft.CostManagement/query``)
for the ``ActualCost`` of the resources tagged with this install's owner tag, daily,
grouped by the launch tag; pages follow ``properties.nextLink``.  Cost that carries
the owner tag but no launch tag comes back with launch id "".  Cost Management lags
by hours and is throttled hard: callers cache (``workbench.core.money.billing_sync``);
429s are retried by the SDK's policy, which honours Retry-After.

Blocks on the network; failures leave as workbench errors (mapped like every ARM call).
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from workbench.core.domain.errors import PluginError
from workbench.core.domain.models import ActualCost
from workbench.core.providers.contract import TAG_LAUNCH, TAG_OWNER

from .clients import AzureClients

COST_API = "2023-03-01"
SOURCE = "Azure Cost Management"
MAX_PAGES = 20


def query_body(owner: str, start_day: str, end_day: str) -> dict[str, Any]:
    return {
        "type": "ActualCost", "timeframe": "Custom",
        "timePeriod": {"from": f"{start_day}T00:00:00Z", "to": f"{end_day}T23:59:59Z"},
        "dataset": {
            "granularity": "Daily",
            "aggregation": {"totalCost": {"name": "Cost", "function": "Sum"}},
            "grouping": [{"type": "TagKey", "name": TAG_LAUNCH}],
            "filter": {"tags": {"name": TAG_OWNER, "operator": "In", "values": [owner]}},
        },
    }


def parse_rows(doc: dict[str, Any], provider: str, profile: str, fetched_at: float) -> list[ActualCost]:
    """ActualCost values from one query page (columns located by name, as Azure may reorder them)."""
    props = doc.get("properties") or {}
    names = [str(c.get("name", "")) for c in props.get("columns") or []]

    def col(*choices: str) -> int:
        for c in choices:
            if c in names:
                return names.index(c)
        raise PluginError(f"Azure Cost Management answered without a {choices[0]} column (columns: {names})")

    cost, date, tag, cur = col("Cost", "PreTaxCost", "CostUSD"), col("UsageDate"), col("TagValue"), col("Currency")
    out = []
    for row in props.get("rows") or []:
        day = str(int(row[date]))
        out.append(ActualCost(provider=provider, profile=profile, launch_id=str(row[tag] or ""),
                              day=f"{day[:4]}-{day[4:6]}-{day[6:8]}", amount=float(row[cost]),
                              currency=str(row[cur] or "USD"), source=SOURCE, fetched_at=fetched_at))
    return out


def actual_costs(clients: AzureClients, provider: str, profile: str, owner: str, start_day: str,
                 end_day: str) -> list[ActualCost]:
    from azure.core.exceptions import HttpResponseError
    from azure.core.rest import HttpRequest
    from azure.mgmt.core.exceptions import ARMErrorFormat

    for d in (start_day, end_day):
        datetime.date.fromisoformat(d)  # ValueError for a malformed day: a caller bug, not Azure's
    url = f"/subscriptions/{clients.subscription_id()}/providers/Microsoft.CostManagement/query?api-version={COST_API}"
    body = query_body(owner, start_day, end_day)
    now = time.time()
    out: list[ActualCost] = []
    try:
        for _ in range(MAX_PAGES):
            resp = clients.resources.send_request(HttpRequest("POST", url, json=body))
            if resp.status_code != 200:
                raise HttpResponseError(response=resp, error_format=ARMErrorFormat)
            doc = resp.json()
            out.extend(parse_rows(doc, provider, profile, now))
            url = (doc.get("properties") or {}).get("nextLink")
            if not url:
                return out
    except PluginError:
        raise
    except Exception as exc:  # noqa: BLE001 - mapped
        raise clients.error(exc, "asking Azure Cost Management for the billed cost") from None
    raise PluginError(f"Azure Cost Management returned more than {MAX_PAGES} pages")
