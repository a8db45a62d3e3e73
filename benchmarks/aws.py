"""AWS plugin figures against moto in server mode (tests/support/aws_moto.py), real boto3 over HTTP.

    python -m benchmarks.aws            (also part of `make bench`)

* launch: a p3.2xlarge launch until run_instances answered (key pair, security group, image,
  zones, instance: ~12 calls), interleaved with one DescribeInstances round trip (the baseline).
* teardown: terminate, wait for "terminated", sweep and verify the launch's leftovers,
  interleaved with the same round trip.
* faults: a launch + teardown with 30 % of EC2 calls throttled and 10 % answered 500, with
  botocore's standard retry as shipped (1 s base backoff for throttling), interleaved with the
  same cycle without faults.  A storm cycle may end in the plugin's clear TransientError when one
  call stays throttled through every retry: it is counted (and its rollback must leave nothing),
  not timed; a row where no storm cycle completed fails.

Every launch must return one running p3.2xlarge and every teardown must leave nothing of the
launch (raises otherwise: a broken flow is never timed as if it worked).

moto answers in milliseconds and changes state at once: real EC2 takes seconds per call and a
minute or more for a GPU instance to reach running/terminated.  These figures are the plugin's
own overhead (calls, parsing, threads), not AWS's.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Stats, check, interleave

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


def _cycle(provider, launch_id: str) -> tuple[float, float]:
    """(launch s, teardown s) of one launch; raises unless it made a machine and left nothing."""
    req = _request(provider, launch_id)
    t = time.perf_counter()
    made = provider.launch(req)
    launched = time.perf_counter() - t
    check(len(made) == 1 and made[0].instance_type == "p3.2xlarge" and made[0].state.active,
          f"launch {launch_id} returned {made!r}")
    t = time.perf_counter()
    provider.terminate(made)
    torn = time.perf_counter() - t
    left = [r for r in provider.leftovers() if r.launch_id == launch_id]
    check(not left, f"teardown of {launch_id} left {left!r}")
    gone = [i for i in provider.instances() if i.launch_id == launch_id and i.state.active]
    check(not gone, f"teardown of {launch_id} left running {gone!r}")
    return launched, torn


def measure(n: int = 5, storms: int = 3) -> dict[str, Stats | float]:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import aws_moto

    stack = aws_moto.start()
    stack.reset()
    out: dict[str, Stats | float] = {}
    ids = (f"bench-{i}" for i in itertools.count())
    with tempfile.TemporaryDirectory(prefix="wb-bench-aws-") as tmp:
        provider = _provider(stack, Path(tmp))
        provider.offers("us-east-1")  # moto loads its catalogue on the first call: not ours to time
        ec2 = provider._clients.client("ec2", "us-east-1")

        def trip() -> float:
            t = time.perf_counter()
            ec2.describe_instances(MaxResults=5)
            return time.perf_counter() - t

        teardowns: list[float] = []

        def launch() -> float:
            launched, torn = _cycle(provider, next(ids))
            teardowns.append(torn)
            return launched

        out["launch"], out["round_trip"] = interleave(launch, trip, n)
        out["teardown"] = Stats(tuple(teardowns))
        faults = stack.faults
        fired = [0]

        gave_up: list[str] = []

        def storm() -> float:
            from workbench.core.domain.errors import TransientError

            launch_id = next(ids)
            faults.clear()
            faults.add(aws_moto.FaultRule(service="ec2", error="RequestLimitExceeded", rate=0.30))
            faults.add(aws_moto.FaultRule(service="ec2", error="InternalError", status=500, rate=0.10 / 0.70))
            try:
                return sum(_cycle(provider, launch_id))
            except TransientError as exc:  # retries exhausted: the plugin's clear answer, not a broken flow
                gave_up.append(exc.message)
                return float("nan")
            finally:
                fired[0] += sum(r.fired for r in faults.rules)
                faults.clear()
                left = [r for r in provider.leftovers() if r.launch_id == launch_id]
                left += [i for i in provider.instances() if i.launch_id == launch_id and i.state.active]
                check(not left, f"the storm's launch {launch_id} left {left!r}")  # a failed launch rolls back

        def clean() -> float:
            return sum(_cycle(provider, next(ids)))

        storm_s, out["clean_cycle"] = interleave(storm, clean, storms)
        done = tuple(x for x in storm_s.samples if x == x)  # NaN: gave up after retries
        check(done, f"no storm cycle completed: {gave_up[:1]}")
        out["storm_cycle"] = Stats(done)
        out["storm_faults"] = fired[0] / storms
        out["storm_gave_up"] = float(len(gave_up))
    stack.reset()
    return out


def rows() -> list[tuple[str, Stats, Stats, str]]:
    m = measure()
    return [
        ("aws: launch p3.2xlarge into moto vs 1 EC2 call", m["launch"], m["round_trip"], "report"),
        ("aws: terminate+sweep+verify vs 1 EC2 call", m["teardown"], m["round_trip"], "report"),
        ("aws: launch+teardown, 30% throttle+10% 5xx vs clean", m["storm_cycle"], m["clean_cycle"],
         f"report ({m['storm_faults']:.0f} faults injected per cycle; {m['storm_gave_up']:.0f} of "
         f"{len(m['storm_cycle'].samples) + int(m['storm_gave_up'])} storm cycles ended in TransientError after "
         "retries, rolled back clean, not timed)"),
    ]


def main() -> int:
    for name, value, baseline, note in rows():
        ms = lambda x: f"{x * 1000:.1f} ms"  # noqa: E731
        print(f"{name}: {value.show(ms)} vs {baseline.show(ms)} ({value.median / baseline.median:.2f}x) {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
