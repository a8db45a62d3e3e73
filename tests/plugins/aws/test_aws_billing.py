"""AWS's own numbers: CloudWatch CPU samples, Cost Explorer cost per launch tag, spot price history."""

from __future__ import annotations

import datetime
import time

import pytest

from aws_moto import FaultRule, spot_history_xml
from workbench.core.domain.errors import AuthError
from workbench.core.domain.models import Instance, InstanceState


def _instance(**extra) -> Instance:
    return Instance("aws", "aws-test", "i-0123456789abcdef0", "cw-1", "us-east-1", "p3.2xlarge",
                    InstanceState.RUNNING, extra=extra)


def test_cloudwatch_cpu_points_come_back_once_as_cpu_samples(moto, make_provider):
    import boto3

    cw = boto3.client("cloudwatch", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="a",
                      aws_secret_access_key="b")
    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    for minutes_ago, value in ((3, 12.5), (2, 80.0)):
        cw.put_metric_data(Namespace="AWS/EC2", MetricData=[{
            "MetricName": "CPUUtilization", "Dimensions": [{"Name": "InstanceId", "Value": "i-0123456789abcdef0"}],
            "Timestamp": now - datetime.timedelta(minutes=minutes_ago), "Value": value, "Unit": "Percent"}])
    provider = make_provider()
    samples = provider.samples(_instance())
    assert [(s.kind, s.util_percent) for s in samples] == [("cpu", 12.5), ("cpu", 80.0)]
    assert samples[0].ts < samples[1].ts and samples[0].instance_id == "i-0123456789abcdef0"
    assert provider.samples(_instance()) == []  # asked at most once a minute
    assert len(moto.faults.find("GetMetricStatistics")) == 1


def test_cost_explorer_cost_is_grouped_by_the_launch_tag(moto, make_provider):
    moto.queue_cost_and_usage([{"ResultsByTime": [{
        "TimePeriod": {"Start": "2026-01-05", "End": "2026-01-06"}, "Estimated": False, "Total": {},
        "Groups": [
            {"Keys": ["workbench:launch$mnist-0a1b2c"], "Metrics": {"UnblendedCost": {"Amount": "7.3441", "Unit": "USD"}}},
            {"Keys": ["workbench:launch$"], "Metrics": {"UnblendedCost": {"Amount": "0.52", "Unit": "USD"}}},
        ]}]}])
    provider = make_provider()
    costs = provider.actual_costs("2026-01-05", "2026-01-05")
    assert [(c.launch_id, c.day, c.amount, c.currency, c.source) for c in costs] == [
        ("mnist-0a1b2c", "2026-01-05", 7.3441, "USD", "AWS Cost Explorer"), ("", "2026-01-05", 0.52, "USD",
                                                                               "AWS Cost Explorer")]
    call = moto.faults.find("GetCostAndUsage")[0]
    assert call.param("TimePeriod") == {"Start": "2026-01-05", "End": "2026-01-06"}  # end is exclusive at AWS
    assert call.param("GroupBy") == [{"Type": "TAG", "Key": "workbench:launch"}]
    moto.faults.add(FaultRule(operation="GetCostAndUsage", error="AccessDeniedException"))
    with pytest.raises(AuthError, match="ce:GetCostAndUsage"):
        provider.actual_costs("2026-01-05", "2026-01-05")


def test_spot_price_history_of_an_instance_is_its_zones_points_oldest_first(moto, make_provider):
    now = time.time()
    xml = spot_history_xml([("p3.2xlarge", "us-east-1b", 0.95, now - 3600), ("p3.2xlarge", "us-east-1b", 0.91, now - 7200),
                            ("p3.2xlarge", "us-east-1a", 2.00, now - 1800)])
    moto.faults.add(FaultRule(operation="DescribeSpotPriceHistory", respond=(200, "text/xml", xml)))
    points = make_provider().spot_price_history(_instance(az="us-east-1b"), now - 86400, now)
    assert [p for _, p in points] == [0.91, 0.95]
    assert points[0][0] == pytest.approx(now - 7200, abs=1)
    call = moto.faults.find("DescribeSpotPriceHistory")[0]
    assert call.param("AvailabilityZone") == "us-east-1b" and call.param("InstanceType.1") == "p3.2xlarge"
