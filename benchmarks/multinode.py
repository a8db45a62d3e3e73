"""Multi-node figures: launching 8 nodes vs 1 into moto, and setup fanned out to 4 sshd nodes vs 1.

    python -m benchmarks.multinode            (also part of `make bench`)

* launch: the AWS plugin's ``launch`` of one p4d.24xlarge vs eight (one RunInstances of 8, the
  placement group, the nodes' security-group rule, EFA, eight rank tags) into moto with every AWS
  call delayed by 200 ms in our wrapper; a fresh provider per sample (no cached image), the
  machines terminated after each sample (not timed).
* setup fan-out: :class:`workbench.core.remote.cluster.ClusterJob` ``launch`` of one node vs four,
  each node a real OpenSSH sshd on its own loopback address (tests/support/sshd.py), timed until
  every node has finished the spec's ``setup`` (50 small files uploaded, then 0.5 s of work; its
  ``phase`` moves on to ``barrier``); the same code path for both, so the ratio is the cost of the
  fan-out itself.  The barrier that follows (two inter-node SSH round trips; none for one node) is
  reported beside it.

Samples alternate (benchmarks/harness.py ``interleave``) so a busy moment of this shared machine
hits both sides; each side is min / median / max and "met" only when the median ratio clears the
target.  A flow that does not complete (wrong node count, a node that never passes the barrier)
raises BenchmarkFailed.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Stats, check, interleave

ROOT = Path(__file__).resolve().parents[1]
LATENCY_S = 0.2
FAST = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.05", "terminate_wait_s": "60", "retry_backoff_cap_s": "0.05",
        "pricing": "snapshot"}
KEY = {"AWS_ACCESS_KEY_ID": "moto-fake-key-id", "AWS_SECRET_ACCESS_KEY": "moto-fake-not-secret"}


def _support() -> None:
    path = str(ROOT / "tests" / "support")
    if path not in sys.path:
        sys.path.insert(0, path)


# -- launch -------------------------------------------------------------------------------------
def _aws_provider(stack, data_dir: Path):
    from workbench.core.domain.models import Profile
    from workbench.core.providers.contract import ProviderContext
    from workbench_aws.provider import AwsProvider

    profile = Profile("bench", "aws", "us-east-1", endpoint_url=stack.url, settings=FAST)
    return AwsProvider(profile, {"access_key_id": KEY["AWS_ACCESS_KEY_ID"],
                                 "secret_access_key": KEY["AWS_SECRET_ACCESS_KEY"]},
                       ProviderContext(install_id="bench-multinode", data_dir=data_dir))


def _one_launch(stack, aws_moto, data_dir: Path, offer, count: int, n: int) -> float:
    from workbench.core.domain.models import JobSpec, LaunchRequest
    from workbench.core.providers.contract import launch_tags

    provider = _aws_provider(stack, data_dir)
    lid = f"bench-{count}-{n}"
    req = LaunchRequest(lid, JobSpec(name="bench", run="x", num_nodes=count), offer, "bench",
                        launch_tags(lid, "bench-multinode"), count=count)
    stack.faults.clear()
    stack.faults.add(aws_moto.FaultRule(error=None, latency_s=LATENCY_S))
    t = time.perf_counter()
    nodes = provider.launch(req)
    wall = time.perf_counter() - t
    stack.faults.clear()
    ranks = sorted(i.extra.get("node_rank", 0) for i in nodes)
    check(len(nodes) == count and (count == 1 or ranks == list(range(count))),
          f"launch of {count} gave {len(nodes)} nodes with ranks {ranks}")
    provider.terminate(nodes)
    return wall


def launch_figures(samples: int = 5, nodes: int = 8) -> dict[str, object]:
    _support()
    import aws_moto

    os.environ.update(KEY)
    stack = aws_moto.start()
    stack.reset()
    with tempfile.TemporaryDirectory(prefix="wb-bench-nodes-") as tmp:
        offer = next(o for o in _aws_provider(stack, Path(tmp) / "d").offers("us-east-1")
                     if o.instance_type == "p4d.24xlarge")
        _one_launch(stack, aws_moto, Path(tmp) / "warm", offer, 1, 99)  # moto loads its catalogues once: untimed
        k = iter(range(1000))
        many, one = interleave(lambda: _one_launch(stack, aws_moto, Path(tmp) / f"d{next(k)}", offer, nodes, next(k)),
                               lambda: _one_launch(stack, aws_moto, Path(tmp) / f"d{next(k)}", offer, 1, next(k)),
                               samples)
    stack.reset()
    return {"one": one, "many": many, "nodes": nodes, "samples": samples}


# -- setup fan-out ----------------------------------------------------------------------------------
def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def setup_figures(samples: int = 5, nodes: int = 4) -> dict[str, object]:
    _support()
    import sshd as sshd_support

    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.remote.cluster import ClusterJob
    from workbench.core.remote.job import JobOptions
    from workbench.core.store.database import Store

    why = sshd_support.available()
    check(not why, f"the setup fan-out benchmark needs a real sshd: {why}")
    with tempfile.TemporaryDirectory(prefix="wb-bench-fanout-") as tmp:
        tmp_p = Path(tmp)
        os.environ["WORKBENCH_HOME"] = str(tmp_p / "home")
        acc = Accounts(Store.open(), entries=discover())
        key = ensure_keypair(acc.store.path.parent).public_openssh
        prefix = f"127.{random.randrange(100, 250)}.{random.randrange(1, 250)}."
        port = _free_port(prefix + "1")
        servers = []
        try:
            for r in range(nodes):
                s = sshd_support.Sshd.start(tmp_p / f"node{r}", prefix + str(r + 1), port)
                s.authorize(key)
                servers.append(s)
            work = tmp_p / "work"
            work.mkdir()
            for i in range(50):
                (work / f"f{i:02d}.py").write_text("x = 1\n" * 50)
            spec = parse_spec(f"name: fanout\nworkdir: {work}\nsetup: sleep 0.5\nrun: sleep 60\nnum_nodes: {nodes}\n",
                              source=str(tmp_p / "s.yaml"), base_dir=tmp_p)
            opts = JobOptions(connect_deadline_s=60, key_grace_s=10, reconnect_deadline_s=60, driver_deadline_s=1,
                              poll_s=0.05, grace_s=600, teardown_timeout_s=30, apply_on_finish=False)

            def run(count: int, n: int) -> float:
                lid = f"fanout-{count}-{n}"
                insts = [Instance("bench", "bench", f"bench-{lid}-{r}", lid, "loop", "sshd", InstanceState.RUNNING,
                                  host=prefix + str(r + 1), extra={
                                      "ssh_port": port, "ssh_user": servers[r].user, "private_ip": prefix + str(r + 1),
                                      "node_ssh_port": port, "node_rank": r}) for r in range(count)]
                t = time.perf_counter()
                job = ClusterJob(acc, insts, spec, opts)
                check(job.launch(), f"the launch of {count} nodes stopped")
                phases = [servers[r].remote_dir / "jobs" / lid / "phase" for r in range(count)]

                def wait(done: tuple[str, ...], what: str) -> float:
                    deadline = time.monotonic() + 120
                    while not all(p.exists() and p.read_text().strip() in done for p in phases):
                        check(time.monotonic() < deadline, f"not every one of {count} nodes {what}: "
                              f"{[p.read_text().strip() if p.exists() else '-' for p in phases]}")
                        time.sleep(0.02)
                    return time.perf_counter() - t

                wall = wait(("barrier", "run"), "finished setup")
                barrier[count].append(wait(("run",), "passed the barrier") - wall)
                for r in range(count):  # end the job groups (the sshd is not a cloud: nothing else would)
                    pid = servers[r].remote_dir / "jobs" / lid / "supervisor.pid"
                    try:
                        os.killpg(int(pid.read_text().strip()), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
                return wall

            barrier: dict[int, list[float]] = {1: [], nodes: []}
            k = iter(range(1000))
            many, one = interleave(lambda: run(nodes, next(k)), lambda: run(1, next(k)), samples)
        finally:
            for s in servers:
                s.stop()
            acc.store.close()
    return {"one": one, "many": many, "nodes": nodes, "samples": samples, "barrier": Stats(tuple(barrier[nodes]))}


def main() -> int:
    for name, got in (("launch", launch_figures()), ("setup", setup_figures())):
        fmt = lambda v: f"{v:.2f} s"  # noqa: E731
        print(f"{name}: {got['nodes']} nodes {got['many'].show(fmt)} vs 1 node {got['one'].show(fmt)}: "
              f"{got['many'].median / got['one'].median:.2f}x" + (f"; barrier {got['barrier'].show(fmt)}"
                                                                  if "barrier" in got else ""))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_HOME", tempfile.mkdtemp(prefix="wb-bench-home-"))
    sys.exit(main())
