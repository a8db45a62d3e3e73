"""Actual billed cost per launch from the BSS OpenAPI (DescribeInstanceBill, daily granularity).

One call (paged) per UTC day in the range: each bill item is one instance (or disk, address …) on
one day with its payable amount (``PretaxAmount``), currency and resource tags
(``key:K value:V; key:K2 value:V2``).  Items tagged with this install's owner tag are summed per
launch tag; the BSS API needs ``bssapi:DescribeInstanceBill`` and, on the international site,
answers from business.ap-southeast-1.aliyuncs.com.  Bills lag usage by hours: callers cache
(``workbench.core.money.billing_sync``).
"""

from __future__ import annotations

import datetime
import re
import time
from typing import Any

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import ActualCost
from workbench.core.providers.contract import TAG_LAUNCH, TAG_OWNER

SOURCE = "Alibaba Cloud BSS (DescribeInstanceBill)"
MAX_DAYS = 62
_PAIR = re.compile(r"key:(?P<k>.*?) value:(?P<v>.*)")


def parse_tags(text: str | None) -> dict[str, str]:
    """``key:a value:1; key:b value:2`` → {"a": "1", "b": "2"} (keys may contain ':')."""
    out: dict[str, str] = {}
    for part in (text or "").split(";"):
        m = _PAIR.fullmatch(part.strip())
        if m:
            out[m.group("k").strip()] = m.group("v").strip()
    return out


def _days(start_day: str, end_day: str) -> list[datetime.date]:
    try:
        start, end = datetime.date.fromisoformat(start_day), datetime.date.fromisoformat(end_day)
    except ValueError:
        raise ConfigError(f"days must be YYYY-MM-DD, not {start_day!r} / {end_day!r}") from None
    if end < start or (end - start).days >= MAX_DAYS:
        raise ConfigError(f"the billing range {start_day}..{end_day} must be 1 to {MAX_DAYS} days")
    return [start + datetime.timedelta(days=n) for n in range((end - start).days + 1)]


def actual_costs(api: Any, provider: str, profile: str, install_id: str, start_day: str,
                 end_day: str) -> list[ActualCost]:
    sums: dict[tuple[str, str, str], float] = {}
    for day in _days(start_day, end_day):
        token: str | None = None
        while True:
            params: dict[str, Any] = {"BillingCycle": day.strftime("%Y-%m"), "Granularity": "DAILY",
                                      "BillingDate": day.isoformat(), "MaxResults": 300}
            if token:
                params["NextToken"] = token
            data = api.bss("DescribeInstanceBill", **params).get("Data") or {}
            for item in data.get("Items") or []:
                tags = parse_tags(item.get("Tag"))
                if tags.get(TAG_OWNER) != install_id:
                    continue
                key = (tags.get(TAG_LAUNCH, ""), day.isoformat(), str(item.get("Currency") or "CNY"))
                sums[key] = sums.get(key, 0.0) + float(item.get("PretaxAmount") or 0.0)
            token = data.get("NextToken") or None
            if not token:
                break
    now = time.time()
    return [ActualCost(provider, profile, launch, day, round(amount, 6), currency, SOURCE, now)
            for (launch, day, currency), amount in sorted(sums.items())]
