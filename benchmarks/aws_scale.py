"""AWS at scale with injected API latency (moto server + our fault wrapper, real boto3 over HTTP).

    python -m benchmarks.aws_scale            (also part of `make bench`)

* teardown: 100 instances across 4 regions (per region 5 launches × 5 instances, each launch
  with its tagged security group and key pair), every AWS call delayed by 200 ms in the
  wrapper; :func:`workbench.core.lifecycle.teardown.teardown` of everything, from the CLI's code path,
  until verified.  Baseline, same run: the same teardown of one region alone (25 instances,
  the slowest region's share), whose calls a region-at-a-time teardown would make one after
  another.  The call counts per region are printed beside it.
* status: ``workbench status --json`` in a fresh process with 500 instances in the store and an
  AWS profile of 4 regions (the 100 live machines in moto), 200 ms per call; vs one
  DescribeInstances round trip with the same latency.

Latency is applied by the wrapper to every request (sleep, then moto answers), so parallel
calls overlap exactly as they would against AWS; moto's own work (XML for 100 instances)
comes on top and shares this machine's CPU with the app.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1")
LATENCY_S = 0.2
LAUNCHES_PER_REGION = 5
INSTANCES_PER_LAUNCH = 5
FAST = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.05", "terminate_wait_s": "60", "retry_backoff_cap_s": "0.05"}
KEY = {"AWS_ACCESS_KEY_ID": "moto-fake-key-id", "AWS_SECRET_ACCESS_KEY": "moto-fake-not-secret"}  # moto accepts any


def _stack():
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import aws_moto

    stack = aws_moto.start()
    stack.reset()
    return stack, aws_moto


def _client(stack, region: str):
    import boto3

    return boto3.client("ec2", region_name=region, endpoint_url=stack.url, aws_access_key_id=KEY["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=KEY["AWS_SECRET_ACCESS_KEY"])


def _populate(stack, install_id: str, regions: tuple[str, ...]) -> int:
    """Per region: launches of tagged instances, each with its own tagged group and key (no latency)."""
    from workbench.core.providers.contract import launch_tags

    made = 0
    for region in regions:
        ec2 = _client(stack, region)
        image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        for n in range(LAUNCHES_PER_REGION):
            lid = f"bench-{region}-{n}"
            tags = [{"Key": k, "Value": v} for k, v in launch_tags(lid, install_id).items()]
            sg = ec2.create_security_group(GroupName=f"wb-{lid}", Description="bench",
                                           TagSpecifications=[{"ResourceType": "security-group", "Tags": tags}])
            ec2.create_key_pair(KeyName=f"wb-{lid}", TagSpecifications=[{"ResourceType": "key-pair", "Tags": tags}])
            ec2.run_instances(ImageId=image, InstanceType="g5.xlarge", MinCount=INSTANCES_PER_LAUNCH,
                              MaxCount=INSTANCES_PER_LAUNCH, KeyName=f"wb-{lid}", SecurityGroupIds=[sg["GroupId"]],
                              TagSpecifications=[{"ResourceType": "instance", "Tags": tags + [
                                  {"Key": "Name", "Value": lid}]}])
            made += INSTANCES_PER_LAUNCH
    return made


class _EnvCredentials:
    """No keyring in a benchmark: the AWS provider then uses botocore's default chain (the env keys)."""

    def get(self, provider, profile):
        return {}

    def check_backend(self):
        return None

    def backend_name(self):
        return "none"


def _accounts(home: Path, stack, regions: tuple[str, ...]):
    os.environ["WORKBENCH_HOME"] = str(home)
    os.environ.update(KEY)
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    acc = Accounts(Store.open(), entries=discover(), credentials=_EnvCredentials())
    acc.save_profile(Profile("bench", "aws", regions[0], endpoint_url=stack.url,
                             settings={**FAST, "regions": ",".join(regions)}))
    return acc


def _timed_teardown(stack, aws_moto, home: Path, regions: tuple[str, ...]) -> tuple[float, int, Counter]:
    """(wall seconds, instances torn down, calls per region) of one verified teardown of everything."""
    from workbench.core import paths
    from workbench.core.lifecycle.teardown import teardown

    acc = _accounts(home, stack, regions)
    made = _populate(stack, paths.install_id(), regions)
    stack.faults.clear()
    stack.faults.add(aws_moto.FaultRule(error=None, latency_s=LATENCY_S))
    t = time.perf_counter()
    report = teardown(acc, None, timeout=120, poll=0.05)
    wall = time.perf_counter() - t
    calls = Counter(c.region for c in stack.faults.calls)
    stack.faults.clear()
    if not report.clean or len(report.terminated) != made:
        raise RuntimeError(f"teardown not clean: {len(report.terminated)}/{made} terminated, "
                           f"{len(report.remaining)} remaining, errors {report.errors[:3]}")
    acc.store.close()
    return wall, made, calls


def teardown_figures() -> dict[str, float | str]:
    stack, aws_moto = _stack()
    with tempfile.TemporaryDirectory(prefix="wb-bench-scale-") as tmp:
        _client(stack, REGIONS[0]).describe_regions()  # moto loads its catalogue once: not ours to time
        one_s, one_n, one_calls = _timed_teardown(stack, aws_moto, Path(tmp) / "one", REGIONS[:1])
        stack.reset()
        all_s, all_n, all_calls = _timed_teardown(stack, aws_moto, Path(tmp) / "all", REGIONS)
    stack.reset()
    slowest = max(all_calls.values())
    return {"all_s": all_s, "one_s": one_s, "all_n": all_n, "one_n": one_n,
            "one_calls": sum(one_calls.values()), "slowest_calls": slowest,
            "calls": ", ".join(f"{r} {all_calls[r]}" for r in REGIONS)}


def status_figures(runs: int = 3) -> dict[str, float]:
    """`workbench status --json` (fresh processes) with 500 instances in the store, vs one describe call."""
    stack, aws_moto = _stack()
    with tempfile.TemporaryDirectory(prefix="wb-bench-status-") as tmp:
        home = Path(tmp) / "home"
        from workbench.core import paths
        acc = _accounts(home, stack, REGIONS)
        _populate(stack, paths.install_id(), REGIONS)
        from workbench.core.lifecycle.reconcile import reconcile

        reconcile(acc)  # the 100 live machines are in the store now
        _fill_history(acc.store, 500 - len(acc.store.list_instances()))
        count = len(acc.store.list_instances())
        acc.store.close()
        stack.faults.clear()
        stack.faults.add(aws_moto.FaultRule(error=None, latency_s=LATENCY_S))
        ec2 = _client(stack, REGIONS[0])
        trips = []
        for _ in range(5):
            t = time.perf_counter()
            ec2.describe_instances(MaxResults=5)
            trips.append(time.perf_counter() - t)
        env = dict(os.environ, WORKBENCH_HOME=str(home), **KEY)
        for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "WORKBENCH_CRASH_AT"):
            env.pop(key, None)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "workbench", "status", "--json"], env=env,
                                 capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
            if out.returncode != 0:
                raise RuntimeError(f"status failed ({out.returncode}): {out.stderr[-500:]}")
            billable = json.loads(out.stdout)["billable"]
            if billable != 100:
                raise RuntimeError(f"status saw {billable} billable instances, expected 100")
        stack.faults.clear()
    stack.reset()
    return {"status_s": statistics.median(times), "describe_s": statistics.median(trips), "instances": count}


def _fill_history(store, n: int) -> None:
    """Finished AWS launches (terminated instances) filling the store up to 500 instances."""
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.store.database import LaunchRecord

    for i in range(n):
        lid = f"old-{i:04d}"
        region = REGIONS[i % len(REGIONS)]
        store.add_launch(LaunchRecord(lid, "old", "aws", "bench", region, time.time() - 86400, "terminated"))
        store.upsert_instance(Instance("aws", "bench", f"i-old{i:013x}", lid, region, "g5.xlarge",
                                       InstanceState.TERMINATED, name="old", price_per_hour=1.006))


def rows() -> list[tuple]:
    """Table rows: (measure, value s, baseline s, target ratio, note)."""
    td = teardown_figures()
    st = status_figures()
    return [
        ("teardown 100 inst / 4 regions, 200 ms/call, vs 1 region alone", td["all_s"], td["one_s"], 1.2,
         f"{td['all_n']} vs {td['one_n']} instances; calls: {td['calls']} (alone: {td['one_calls']})"),
        ("`status --json`, 500 in store, 4 regions, 200 ms/call, vs 1 call", st["status_s"], st["describe_s"], 3.0,
         f"fresh process, {st['instances']} instances in the store"),
    ]


def main() -> int:
    td = teardown_figures()
    print(td)
    print(status_figures())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_HOME", tempfile.mkdtemp(prefix="wb-bench-home-"))
    sys.exit(main())
