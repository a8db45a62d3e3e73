"""Cost Management ``query`` in the ARM test server, over billed-cost lines a test puts in SubConfig.costs.

Each line: ``{"day": "2025-01-02", "tags": {...}, "cost": 1.23, "currency": "USD"}``.
Supports what the plugin asks: type ActualCost, a Custom time period, Daily
granularity, a Sum of Cost, grouping by one TagKey, a tag filter with operator In.
Rows come back ``[cost, yyyymmdd, tag key, tag value, currency]`` with the
column descriptions first; pages of 10 rows, the next one at ``properties.nextLink``.
"""

from __future__ import annotations

import uuid
from typing import Any

from .state import ArmError, ArmState, Ctx, Reply

PAGE = 10


def query(state: ArmState, ctx: Ctx, body: dict[str, Any], url: str) -> Reply:
    if body.get("type") not in ("ActualCost", "AmortizedCost", "Usage"):
        raise ArmError(400, "BadRequest", f"Invalid query type {body.get('type')!r}.")
    period = body.get("timePeriod") or {}
    if body.get("timeframe") != "Custom" or not period.get("from") or not period.get("to"):
        raise ArmError(400, "BadRequest", "timeframe Custom needs timePeriod.from and timePeriod.to.")
    ds = body.get("dataset") or {}
    if ds.get("granularity") != "Daily" or (ds.get("aggregation") or {}).get("totalCost", {}).get("function") != "Sum":
        raise ArmError(400, "BadRequest", "Only Daily granularity with a Sum of Cost is supported here.")
    grouping = ds.get("grouping") or []
    if len(grouping) != 1 or grouping[0].get("type") != "TagKey":
        raise ArmError(400, "BadRequest", "Group by exactly one TagKey here.")
    key = grouping[0]["name"]
    tag_filter = ((ds.get("filter") or {}).get("tags")) or {}
    if tag_filter and tag_filter.get("operator") != "In":
        raise ArmError(400, "BadRequest", "Tag filters support operator In only.")
    start, end = period["from"][:10], period["to"][:10]
    sums: dict[tuple[str, str, str], float] = {}
    for line in state.config(ctx.sub).costs:
        tags = line.get("tags") or {}
        if not start <= line["day"] <= end:
            continue
        if tag_filter and tags.get(tag_filter["name"]) not in tag_filter.get("values", []):
            continue
        k = (line["day"], tags.get(key, ""), line.get("currency", "USD"))
        sums[k] = sums.get(k, 0.0) + float(line["cost"])
    rows = [[round(v, 6), int(day.replace("-", "")), key, value, cur] for (day, value, cur), v in sorted(sums.items())]
    skip = int(ctx.query.get("$skiptoken", "0") or 0)
    page = rows[skip:skip + PAGE]
    nxt = None
    if skip + PAGE < len(rows):
        nxt = f"{url}?api-version={ctx.api_version}&$skiptoken={skip + PAGE}"
    return Reply(200, {"id": f"subscriptions/{ctx.sub}/providers/Microsoft.CostManagement/query/{uuid.uuid4()}",
                       "name": str(uuid.uuid4()), "type": "Microsoft.CostManagement/query",
                       "properties": {"nextLink": nxt, "columns": [
                           {"name": "Cost", "type": "Number"}, {"name": "UsageDate", "type": "Number"},
                           {"name": "TagKey", "type": "String"}, {"name": "TagValue", "type": "String"},
                           {"name": "Currency", "type": "String"}], "rows": page}})
