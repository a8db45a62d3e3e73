"""Crash mid-launch on AWS: the real `workbench launch` (a subprocess) is SIGKILLed at 20 points.

The points: right after each of the 17 AWS calls of a launch against moto (planning: instance
types, prices, quota; launching: the tag lookup, key pair, VPC, subnets, security group and its
rule, the image look-ups, the AZ offerings and run_instances itself, whose answer is lost) — the
test's kill rule in our fault wrapper lets moto carry out the call and kills the process before the
answer reaches it — plus the launcher's own crash points (``WORKBENCH_CRASH_AT``: launch recorded,
provider returned, instances stored).  After the crashes a fresh `workbench status` must show every
instance that exists in moto under its launch, and `workbench down --all` must leave nothing of ours
(instances, unattached volumes, addresses, security groups, key pairs), checked in moto directly.

The launches of a batch run at once on one store (each with its own access key, so each process's
calls are counted apart), which also exercises concurrent CLI processes on one SQLite store.
"""

from __future__ import annotations

import pytest

from crash_harness import CORE_POINTS, Crash, sigkill_launches, status_then_down_all
from reltools import Killer, aws_instances_by_launch, aws_kill_rule, aws_remains

#: (operation, which occurrence) — the AWS calls of one CLI launch, in order
API_POINTS = [
    ("DescribeInstanceTypes", 1), ("GetProducts", 1), ("DescribeSpotPriceHistory", 1), ("GetServiceQuota", 1),
    ("DescribeInstances", 1), ("DescribeKeyPairs", 1), ("ImportKeyPair", 1), ("DescribeVpcs", 1),
    ("DescribeSubnets", 1), ("DescribeSecurityGroups", 1), ("CreateSecurityGroup", 1),
    ("AuthorizeSecurityGroupIngress", 1), ("GetParameter", 1), ("DescribeImages", 1), ("DescribeImages", 2),
    ("DescribeInstanceTypeOfferings", 1), ("RunInstances", 1),
]
ALL_POINTS = [f"{op}#{n}" for op, n in API_POINTS] + CORE_POINTS
BATCHES = [ALL_POINTS[i::4] for i in range(4)]


class OpKiller(Killer):
    """Counts only the calls of one operation."""

    def __init__(self, operation: str, n: int) -> None:
        super().__init__(n)
        self.operation = operation


def _crash(moto, wbhome, point: str, key: str) -> Crash:
    env = dict(wbhome.env, AWS_ACCESS_KEY_ID=key)
    if "#" not in point:
        return Crash(point, env, ["--provider", "aws"])
    op, n = point.split("#")
    killer = OpKiller(op, int(n))
    rule = aws_kill_rule(killer, key, after=op != "GetProducts")
    inner = rule.when
    rule.when = lambda call: call.operation == op and inner(call)  # type: ignore[misc]
    moto.faults.add(rule)
    return Crash(point, env, ["--provider", "aws"], killer)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("batch", range(len(BATCHES)), ids=lambda b: f"batch{b}")
def test_sigkill_at_each_point_then_status_shows_all_and_down_all_leaves_nothing(wbhome, moto, batch):
    wbhome.add_aws(moto)
    crashes = [_crash(moto, wbhome, point, f"AKIACRASH{batch}{i:02d}00000001")
               for i, point in enumerate(BATCHES[batch])]
    sigkill_launches(wbhome, wbhome.spec("crashy"), crashes)

    install_id = wbhome.install_id()
    existing = aws_instances_by_launch(moto, install_id)
    # the points after run_instances have a machine; earlier ones must not have made one
    made = {p for p in BATCHES[batch] if p in ("RunInstances#1", *CORE_POINTS[1:])}
    assert len(existing) == len(made), (existing, made)
    status_then_down_all(wbhome, existing, sum(len(ids) for ids in existing.values()),
                         lambda: aws_remains(moto, install_id))
