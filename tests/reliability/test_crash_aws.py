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

import signal
import time

import pytest

from reltools import Killer, aws_instances_by_launch, aws_kill_rule, aws_remains

#: (operation, which occurrence) — the AWS calls of one CLI launch, in order
API_POINTS = [
    ("DescribeInstanceTypes", 1), ("GetProducts", 1), ("DescribeSpotPriceHistory", 1), ("GetServiceQuota", 1),
    ("DescribeInstances", 1), ("DescribeKeyPairs", 1), ("ImportKeyPair", 1), ("DescribeVpcs", 1),
    ("DescribeSubnets", 1), ("DescribeSecurityGroups", 1), ("CreateSecurityGroup", 1),
    ("AuthorizeSecurityGroupIngress", 1), ("GetParameter", 1), ("DescribeImages", 1), ("DescribeImages", 2),
    ("DescribeInstanceTypeOfferings", 1), ("RunInstances", 1),
]
CORE_POINTS = ["launch:recorded", "launch:provider-returned", "launch:instances-stored"]
ALL_POINTS = [f"{op}#{n}" for op, n in API_POINTS] + CORE_POINTS
BATCHES = [ALL_POINTS[i::4] for i in range(4)]


class OpKiller(Killer):
    """Counts only the calls of one operation."""

    def __init__(self, operation: str, n: int) -> None:
        super().__init__(n)
        self.operation = operation


def _rule(killer: OpKiller, key: str):
    rule = aws_kill_rule(killer, key, after=killer.operation != "GetProducts")
    inner = rule.when
    rule.when = lambda call: call.operation == killer.operation and inner(call)  # type: ignore[misc]
    return rule


@pytest.mark.timeout(150)
@pytest.mark.parametrize("batch", range(len(BATCHES)), ids=lambda b: f"batch{b}")
def test_sigkill_at_each_point_then_status_shows_all_and_down_all_leaves_nothing(wbhome, moto, batch):
    wbhome.add_aws(moto)
    spec = wbhome.spec("crashy")
    procs = []
    for i, point in enumerate(BATCHES[batch]):
        env = dict(wbhome.env, AWS_ACCESS_KEY_ID=f"AKIACRASH{batch}{i:02d}00000001")
        killer: OpKiller | None = None
        if "#" in point:
            op, n = point.split("#")
            killer = OpKiller(op, int(n))
            moto.faults.add(_rule(killer, env["AWS_ACCESS_KEY_ID"]))
        else:
            env["WORKBENCH_CRASH_AT"] = point
        proc = wbhome.popen("launch", str(spec), "--provider", "aws", "--yes", "--json", env=env)
        if killer is not None:
            killer.pid = proc.pid
        procs.append((point, proc, killer))
        time.sleep(0.3)  # stagger the interpreter start-ups a little on a busy machine
    try:
        for point, proc, killer in procs:
            try:
                rc = proc.wait(60)
            except Exception:  # noqa: BLE001
                proc.kill()
                proc.wait(10)
                raise AssertionError(f"{point}: the launch never reached its crash point") from None
            out, err = proc.communicate()
            assert rc == -signal.SIGKILL, f"{point}: rc {rc}\n{out}\n{err[-2000:]}"
            assert killer is None or killer.fired.wait(10), point  # set just after its kill: wait, not peek
    finally:
        for _point, proc, _killer in procs:  # a failed check above must not leave the others running
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)

    install_id = wbhome.install_id()
    existing = aws_instances_by_launch(moto, install_id)
    status = wbhome.json("status")
    shown = {launch["launch_id"]: {i["instance_id"] for i in launch["instances"] if i["billable"]}
             for launch in status["launches"]}
    for lid, ids in existing.items():
        assert ids <= shown.get(lid, set()), f"status misses {lid}: {ids} (shows {shown.get(lid)})"
    assert status["billable"] == sum(len(ids) for ids in existing.values())
    # the points after run_instances have a machine; earlier ones must not have made one
    made = {p for p in BATCHES[batch] if p in ("RunInstances#1", *CORE_POINTS[1:])}
    assert len(existing) == len(made), (existing, made)

    report = wbhome.json("down", "--all", "--yes")
    assert report["clean"], report
    assert aws_remains(moto, install_id) == {"instances": [], "volumes": [], "addresses": [], "groups": [],
                                             "keys": []}
    assert wbhome.json("status")["billable"] == 0
