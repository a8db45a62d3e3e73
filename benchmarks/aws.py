"""AWS plugin figures against moto in server mode (tests/support/aws_moto.py), real boto3 over HTTP.

    python -m benchmarks.aws            (also part of `make bench`)

* launch: a p3.2xlarge launch until run_instances answered (key pair, security group, image,
  zones, instance: ~12 calls), median of 5, vs one DescribeInstances round trip (median of 20).
* teardown: terminate, wait for "terminated", sweep and verify the launch's leftovers, median of 5.
* faults: one launch + teardown with 30 % of EC2 calls throttled and 10 % answered 500, with
  botocore's standard retry as shipped (1 s base backoff for throttling), vs the same without faults.

moto answers in milliseconds and changes state at once: real EC2 takes seconds per call and a
minute or more for a GPU instance to reach running/terminated.  These figures are the plugin's
own overhead (calls, parsing, threads), not AWS's.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"regions": "us-east-1", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "30"}


def _provider(stack, data: Path, **more: str):
    from workbench.core.domain.models import Profile
    from workbench.core.providers.contract import ProviderContext
    from workbench_aws.provider import AwsProvider

    profile = Profile("bench", "aws", "us-east-1", endpoint_url=stack.url, settings={**SETTINGS, **more})
    return AwsProvider(profile, {"access_key_id": "moto-fake-key-id", "secret_access_key": "moto-fake-not-secret"},
                       ProviderContext(install_id="benchinstall", data_dir=data))


def _request(provider, launch_id: str):
    from workbench.core.domain.models import JobSpec, LaunchRequest
    from workbench.core.providers.contract import launch_tags

    offer = next(o for o in provider.offers("us-east-1") if o.instance_type == "p3.2xlarge")
    return LaunchRequest(launch_id, JobSpec(name="bench", run="true"), offer, "bench",
                         launch_tags(launch_id, "benchinstall"))


def measure(n: int = 5) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import aws_moto

    stack = aws_moto.start()
    stack.reset()
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="wb-bench-aws-") as tmp:
        provider = _provider(stack, Path(tmp))
        provider.offers("us-east-1")  # moto loads its catalogue on the first call: not ours to time
        ec2 = provider._clients.client("ec2", "us-east-1")
        trips = []
        for _ in range(20):
            t = time.perf_counter()
            ec2.describe_instances(MaxResults=5)
            trips.append(time.perf_counter() - t)
        out["round_trip"] = statistics.median(trips)
        launches, teardowns = [], []
        for i in range(n):
            req = _request(provider, f"bench-{i}")
            t = time.perf_counter()
            made = provider.launch(req)
            launches.append(time.perf_counter() - t)
            t = time.perf_counter()
            provider.terminate(made)
            teardowns.append(time.perf_counter() - t)
            assert not [r for r in provider.leftovers() if r.launch_id == req.launch_id]
        out["launch"], out["teardown"] = statistics.median(launches), statistics.median(teardowns)
        out["clean_cycle"] = out["launch"] + out["teardown"]
        faults = stack.faults
        faults.add(aws_moto.FaultRule(service="ec2", error="RequestLimitExceeded", rate=0.30))
        faults.add(aws_moto.FaultRule(service="ec2", error="InternalError", status=500, rate=0.10 / 0.70))
        t = time.perf_counter()
        made = provider.launch(_request(provider, "bench-storm"))
        provider.terminate(made)
        out["storm_cycle"] = time.perf_counter() - t
        out["storm_faults"] = float(sum(r.fired for r in faults.rules))
    stack.reset()
    return out


def rows() -> list[tuple[str, float, float, str]]:
    m = measure()
    return [
        ("aws: launch p3.2xlarge into moto vs 1 EC2 call", m["launch"], m["round_trip"], "report"),
        ("aws: terminate+sweep+verify vs 1 EC2 call", m["teardown"], m["round_trip"], "report"),
        ("aws: launch+teardown, 30% throttle+10% 5xx vs clean", m["storm_cycle"], m["clean_cycle"],
         f"report ({m['storm_faults']:.0f} faults retried)"),
    ]


def main() -> int:
    print(f"{'measure':52} {'value':>10} {'baseline':>10} {'ratio':>7}  target")
    for name, value, baseline, target in rows():
        print(f"{name:52} {value * 1000:8.1f}ms {baseline * 1000:8.1f}ms {value / baseline:6.2f}x  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
