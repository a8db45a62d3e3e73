"""AWS's own numbers: CloudWatch CPU metrics and Cost Explorer's billed cost per launch tag.

Cost Explorer groups cost by the ``workbench:launch`` tag only once that tag
has been *activated as a cost allocation tag* (Billing console → Cost
allocation tags), and only for usage after the activation; until then every
dollar comes back under the empty tag value (launch id '').  Its data lags by
up to a day, it lives in us-east-1, and each request costs USD 0.01, so callers
cache the answer.

CloudWatch gives CPU utilisation only (GPU metrics need the CloudWatch agent on
the machine): samples come back with ``kind="cpu"``.

Threading: functions over a client the caller owns.  Failure rules: botocore
errors propagate; the provider translates them.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from workbench.core.domain.models import GpuSample
from workbench.core.providers.contract import TAG_LAUNCH

COST_EXPLORER_REGION = "us-east-1"
COST_EXPLORER_SOURCE = "AWS Cost Explorer"


def _day(value: str) -> datetime.date:
    return datetime.date.fromisoformat(value)


def cost_by_launch(ce: Any, start_day: str, end_day: str) -> list[tuple[str, str, float, str]]:
    """(launch id, day, amount, currency) per tag value and UTC day, ``start_day``..``end_day`` inclusive.

    Untagged (or not yet activated) cost comes back with launch id ''.
    """
    end_exclusive = (_day(end_day) + datetime.timedelta(days=1)).isoformat()
    kwargs: dict[str, Any] = {
        "TimePeriod": {"Start": start_day, "End": end_exclusive}, "Granularity": "DAILY",
        "Metrics": ["UnblendedCost"], "GroupBy": [{"Type": "TAG", "Key": TAG_LAUNCH}],
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [
            "Amazon Elastic Compute Cloud - Compute", "EC2 - Other"]}},
    }
    out: list[tuple[str, str, float, str]] = []
    while True:
        answer = ce.get_cost_and_usage(**kwargs)
        for period in answer.get("ResultsByTime") or []:
            day = (period.get("TimePeriod") or {}).get("Start", "")
            for group in period.get("Groups") or []:
                key = (group.get("Keys") or [""])[0]
                launch = key.split("$", 1)[1] if "$" in key else ""
                metric = (group.get("Metrics") or {}).get("UnblendedCost") or {}
                out.append((launch, day, float(metric.get("Amount") or 0.0), metric.get("Unit") or "USD"))
            if not period.get("Groups"):
                total = (period.get("Total") or {}).get("UnblendedCost")
                if total and float(total.get("Amount") or 0):
                    out.append(("", day, float(total["Amount"]), total.get("Unit") or "USD"))
        token = answer.get("NextPageToken")
        if not token:
            return out
        kwargs["NextPageToken"] = token


def cpu_samples(cloudwatch: Any, instance_id: str, minutes: int = 15,
                now: float | None = None) -> list[GpuSample]:
    """CPU utilisation points of the last ``minutes`` (5-minute basic monitoring, 1-minute if detailed)."""
    end = datetime.datetime.fromtimestamp(now if now is not None else time.time(), datetime.timezone.utc)
    answer = cloudwatch.get_metric_statistics(
        Namespace="AWS/EC2", MetricName="CPUUtilization",
        Dimensions=[{"Name": "InstanceId", "Value": instance_id}],
        StartTime=end - datetime.timedelta(minutes=minutes), EndTime=end, Period=60, Statistics=["Average"])
    points = sorted(answer.get("Datapoints") or [], key=lambda p: p["Timestamp"])
    return [GpuSample(instance_id=instance_id, ts=p["Timestamp"].timestamp(), index=0,
                      util_percent=round(float(p.get("Average") or 0.0), 1), mem_used_mb=0.0, mem_total_mb=0.0,
                      name="CPU (CloudWatch)", kind="cpu") for p in points]
