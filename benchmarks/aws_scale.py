"""AWS at scale with injected API latency (moto server + our fault wrapper, real boto3 over HTTP).

    python -m benchmarks.aws_scale            (also part of `make bench`)

* teardown: 100 instances across 4 regions (per region 5 launches × 5 instances, each launch
  with its tagged security group and key pair), every AWS call delayed by 200 ms in the
  wrapper; :func:`workbench.core.lifecycle.teardown.teardown` of everything, from the CLI's code path,
  until verified (a teardown that is not clean raises).  Baseline, interleaved with it: the same
  teardown of one region alone (25 instances, the slowest region's share), whose calls a
  region-at-a-time teardown would make one after another.  The call counts per region are
  printed beside it.
* status: ``workbench status --json`` in a fresh process with 500 instances in the store and an
  AWS profile of 4 regions (the 100 live machines in moto), 200 ms per call (a wrong count of
  billable machines raises); vs, interleaved, a fresh process of the same Python that imports
  boto3 and makes one DescribeInstances call with the same latency (like for like: interpreter
  start, boto3 import, one client, one call).

Latency is applied by the wrapper to every request (sleep, then moto answers), so parallel
calls overlap exactly as they would against AWS; moto's own work (XML for 100 instances)
comes on top and shares this machine's CPU with the app.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.harness import check, interleave

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
    check(report.clean and len(report.terminated) == made,
          f"teardown not clean: {len(report.terminated)}/{made} terminated, {len(report.remaining)} remaining, "
          f"errors {report.errors[:3]}")
    acc.store.close()
    return wall, made, calls


def teardown_figures(n: int = 3) -> dict:
    """Interleaved samples: the teardown of 4 regions (value) and of one region alone (baseline)."""
    stack, aws_moto = _stack()
    seen: dict[str, tuple[int, Counter]] = {}
    with tempfile.TemporaryDirectory(prefix="wb-bench-scale-") as tmp:
        _client(stack, REGIONS[0]).describe_regions()  # moto loads its catalogue once: not ours to time
        runs = iter(range(1000))

        def sample(regions: tuple[str, ...], key: str) -> float:
            stack.reset()
            wall, made, calls = _timed_teardown(stack, aws_moto, Path(tmp) / f"{key}-{next(runs)}", regions)
            seen[key] = (made, calls)
            return wall

        all_s, one_s = interleave(lambda: sample(REGIONS, "all"), lambda: sample(REGIONS[:1], "one"), n)
    stack.reset()
    (all_n, all_calls), (one_n, one_calls) = seen["all"], seen["one"]
    return {"all": all_s, "one": one_s, "all_n": all_n, "one_n": one_n,
            "one_calls": sum(one_calls.values()), "slowest_calls": max(all_calls.values()),
            "calls": ", ".join(f"{r} {all_calls[r]}" for r in REGIONS)}


BOTO3_ONE_CALL = """
import os, sys, boto3
ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=sys.argv[1])
ec2.describe_instances(MaxResults=5)
"""


def status_figures(n: int = 3) -> dict:
    """`workbench status --json` (fresh processes) with 500 instances in the store, interleaved with a
    fresh process that imports boto3 and makes one describe call at the same latency."""
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
        env = dict(os.environ, WORKBENCH_HOME=str(home), **KEY)
        for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "WORKBENCH_CRASH_AT"):
            env.pop(key, None)

        def status() -> float:
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "workbench", "status", "--json"], env=env,
                                 capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            took = time.perf_counter() - t
            check(out.returncode == 0, f"status failed ({out.returncode}): {out.stderr[-500:]}")
            billable = json.loads(out.stdout)["billable"]
            check(billable == 100, f"status saw {billable} billable instances, expected 100")
            return took

        def one_call() -> float:
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", BOTO3_ONE_CALL, stack.url], env=env, capture_output=True,
                                 text=True, timeout=120, stdin=subprocess.DEVNULL)
            took = time.perf_counter() - t
            check(out.returncode == 0, f"the boto3 baseline failed ({out.returncode}): {out.stderr[-500:]}")
            return took

        status_s, describe_s = interleave(status, one_call, n)
        stack.faults.clear()
    stack.reset()
    return {"status": status_s, "describe": describe_s, "instances": count}


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


def main() -> int:
    td = teardown_figures()
    print({k: (v.show(lambda x: f"{x:.2f}s") if hasattr(v, "show") else v) for k, v in td.items()})
    st = status_figures()
    print({k: (v.show(lambda x: f"{x:.2f}s") if hasattr(v, "show") else v) for k, v in st.items()})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_HOME", tempfile.mkdtemp(prefix="wb-bench-home-"))
    sys.exit(main())
