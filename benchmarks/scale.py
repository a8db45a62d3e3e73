"""How cost grows (issue 22): the same flow at three sizes, and how its time grows with the size.

    python -m benchmarks scale               (the "How cost grows" table of `make bench`)

* status: ``workbench status --json`` in a fresh process at 50 / 500 / 5,000 instances in the store,
  of which 20 / 100 / 400 are live in moto (4 regions, 200 ms per AWS call, as the `status` target
  row) and the rest finished AWS launches (terminated rows: what a long-used install accumulates).
  All three populations live in the same moto at once (each under its own install's owner tag, so
  each status sees only its own machines; moto filters by tag on its side).  Samples interleaved
  across the sizes (50, 500, 5000, then 5000, 500, 50, …), 3 each, beside a fresh ``python -c pass``;
  a wrong billable count raises.
* monitor: benchmarks/monitor.py ``scale`` at 8 / 64 / 256 machines × 8 GPUs at 1 Hz: app CPU per
  wall second with the stream on vs the same window idle, and the plot redraw time; one fresh
  process per size (sizes in alternating order), shorter windows than the target row.
* catalog: :func:`workbench.core.offers.find.find_offers` (what ``workbench offers`` runs) with no
  account at all, so every cloud is priced from its bundled price snapshot: one cloud (AWS) vs all
  three (AWS, Azure, Alibaba Cloud); per warm call in one process, interleaved, and
  ``workbench offers --json`` in a fresh process.  Its size is the number of offers.

"How it grows": for each step between sizes, the median's growth per 10× of size, ``10 ** slope``
with ``slope = log(t1 / t0) / log(n1 / n0)``, judged on the steepest step: flat (≤ 1.6×), linear or
less (≤ 12.5×), worse.  For the monitor it is the telemetry's own cost (busy − idle).

Each function returns rows as (measure, value Stats, baseline Stats or None, unit, note); the unit is
"s" (seconds), "s.1" (seconds, shown as ms with a decimal), "ms.1" (milliseconds) or "pct" (a share
of one core).  benchmarks/__main__.py turns them into table rows.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks.harness import Stats, check

ROOT = Path(__file__).resolve().parents[1]
STATUS_SIZES = ((50, 20), (500, 100), (5000, 400))  # (instances in the store, of them live in moto)
MONITOR_SIZES = (8, 64, 256)


def growth(sizes: list[float], medians: list[float]) -> tuple[str, str]:
    """("×a (n0→n1), ×b (n1→n2) per 10×", "flat" | "linear" | "worse"): each step's growth of the
    median per 10× of size (``10 ** slope``), judged on the steepest step."""
    check(all(m > 0 for m in medians), f"cannot judge growth from {medians}")
    steps = []
    for (n0, t0), (n1, t1) in zip(zip(sizes, medians), zip(sizes[1:], medians[1:])):
        steps.append((10 ** (math.log(t1 / t0) / math.log(n1 / n0)), n0, n1))
    worst = max(f for f, _, _ in steps)
    text = ", ".join(f"×{f:.2f} ({n0:g}→{n1:g})" for f, n0, n1 in steps) + " per 10×"
    return text, "flat" if worst <= 1.6 else "linear" if worst <= 12.5 else "worse"


def _interleaved(samplers: list[Callable[[], float]], n: int) -> list[Stats]:
    """``n`` samples of each sampler, the order reversed every round (no size always first)."""
    got: list[list[float]] = [[] for _ in samplers]
    for k in range(n):
        order = range(len(samplers)) if k % 2 == 0 else reversed(range(len(samplers)))
        for i in order:
            got[i].append(float(samplers[i]()))
    return [Stats(tuple(g)) for g in got]


# -- status ----------------------------------------------------------------------------------------
def _populate_live(stack, install_id: str, live: int) -> None:
    """``live`` tagged instances over the 4 regions, 5 per launch, each launch with its group and key."""
    from benchmarks.aws_scale import REGIONS, _client
    from workbench.core.providers.contract import launch_tags

    per_region = live // len(REGIONS)
    for region in REGIONS:
        ec2 = _client(stack, region)
        image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        for n in range(0, per_region, 5):
            lid = f"scale-{install_id[:6]}-{region}-{n}"
            tags = [{"Key": k, "Value": v} for k, v in launch_tags(lid, install_id).items()]
            sg = ec2.create_security_group(GroupName=f"wb-{lid}", Description="bench",
                                           TagSpecifications=[{"ResourceType": "security-group", "Tags": tags}])
            ec2.create_key_pair(KeyName=f"wb-{lid}", TagSpecifications=[{"ResourceType": "key-pair", "Tags": tags}])
            ec2.run_instances(ImageId=image, InstanceType="g5.xlarge", MinCount=min(5, per_region - n),
                              MaxCount=min(5, per_region - n), KeyName=f"wb-{lid}", SecurityGroupIds=[sg["GroupId"]],
                              TagSpecifications=[{"ResourceType": "instance", "Tags": tags + [
                                  {"Key": "Name", "Value": lid}]}])


def status_rows(n: int = 3) -> list:
    from benchmarks import aws_scale

    stack, aws_moto = aws_scale._stack()
    homes: list[tuple[int, int, Path]] = []
    with tempfile.TemporaryDirectory(prefix="wb-bench-scale-status-") as tmp:
        aws_scale._client(stack, aws_scale.REGIONS[0]).describe_regions()  # moto's catalogue loads once
        for total, live in STATUS_SIZES:
            home = Path(tmp) / f"home-{total}"
            from workbench.core import paths
            from workbench.core.lifecycle.reconcile import reconcile

            acc = aws_scale._accounts(home, stack, aws_scale.REGIONS)
            _populate_live(stack, paths.install_id(), live)
            reconcile(acc)
            got = len(acc.store.list_instances())
            check(got == live, f"reconcile stored {got} of {live} live machines")
            aws_scale._fill_history(acc.store, total - live)  # finished launches
            check(len(acc.store.list_instances()) == total, f"the store holds {len(acc.store.list_instances())} "
                  f"instances, not {total}")
            acc.store.close()
            homes.append((total, live, home))
        stack.faults.clear()
        stack.faults.add(aws_moto.FaultRule(error=None, latency_s=aws_scale.LATENCY_S))

        def status(home: Path, live: int) -> Callable[[], float]:
            env = dict(os.environ, WORKBENCH_HOME=str(home), **aws_scale.KEY)
            for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "WORKBENCH_CRASH_AT"):
                env.pop(key, None)

            def sample() -> float:
                t = time.perf_counter()
                out = subprocess.run([sys.executable, "-m", "workbench", "status", "--json"], env=env,
                                     capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
                took = time.perf_counter() - t
                check(out.returncode == 0, f"status failed ({out.returncode}): {out.stderr[-500:]}")
                billable = json.loads(out.stdout)["billable"]
                check(billable == live, f"status saw {billable} billable instances, expected {live}")
                return took
            return sample

        def bare() -> float:
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, timeout=60)
            check(out.returncode == 0, "a bare python failed")
            return time.perf_counter() - t

        stats = _interleaved([status(h, live) for _, live, h in homes] + [bare], n)
        stack.faults.clear()
    stack.reset()
    *sizes, base = stats
    per10, kind = growth([t for t, _, _ in homes], [s.median for s in sizes])
    rows = []
    for (total, live, _), s in zip(homes, sizes):
        rows.append((f"scale: `status --json`, {total} instances ({live} live in moto, 4 regions, "
                         f"{aws_scale.LATENCY_S * 1000:.0f} ms/call) vs bare python", s, base, "s",
                         f"report; grows {per10} instances ({kind})"))
    return rows


# -- monitor ---------------------------------------------------------------------------------------
def _monitor(machines: int) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-m", "benchmarks.monitor", "scale", str(machines)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    check(out.returncode == 0, f"monitor scale {machines} exited {out.returncode}: {out.stderr.strip()[-600:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def monitor_rows() -> list:

    got = {m: _monitor(m) for m in MONITOR_SIZES}  # one process each (busy and idle interleaved inside)
    busy = {m: Stats(tuple(g["busy"])) for m, g in got.items()}
    idle = {m: Stats(tuple(g["idle"])) for m, g in got.items()}
    redraw = {m: Stats(tuple(g["redraw_ms"])) for m, g in got.items()}
    cost = [max(busy[m].median - idle[m].median, 1e-4) for m in MONITOR_SIZES]
    per10, kind = growth(list(MONITOR_SIZES), cost)
    r10, rkind = growth(list(MONITOR_SIZES), [redraw[m].median for m in MONITOR_SIZES])
    rows = []
    for m in MONITOR_SIZES:
        rows.append((f"scale: app CPU, {m} machines x 8 GPUs at 1 Hz, monitor open (24 h, 'All') vs same "
                         "window idle", busy[m], idle[m], "pct",
                         f"report; telemetry cost (busy − idle) grows {per10} machines ({kind})"))
    for m in MONITOR_SIZES:
        rows.append((f"scale: plot redraw with {m} machines streaming, {len(redraw[m].samples)} redraws",
                         redraw[m], None, "ms.1", f"report; grows {r10} machines ({rkind})"))
    return rows


# -- catalog ---------------------------------------------------------------------------------------
def catalog_rows(n: int = 7) -> list:
    from workbench.core.offers.find import find_offers
    from workbench.core.offers.query import OfferQuery
    from workbench.core.providers.accounts import Accounts
    from workbench.core.store.database import Store

    with tempfile.TemporaryDirectory(prefix="wb-bench-scale-catalog-") as home:
        os.environ["WORKBENCH_HOME"] = home
        acc = Accounts(Store.open())
        clouds = [p.provider for p in acc.profiles() if p.provider not in ("local",)]
        check(not clouds, f"the catalog row needs no cloud account, found {clouds}")
        counts: dict[str | None, int] = {}

        def call(provider: str | None) -> Callable[[], float]:
            def sample() -> float:
                t = time.perf_counter()
                got = find_offers(acc, OfferQuery(provider=provider))
                took = time.perf_counter() - t
                offered = {r.offer.provider for r in got.ranked}
                want = {provider} if provider else {"aws", "azure", "alibaba"}
                check(want <= offered and got.ranked, f"the offline catalog offered {sorted(offered)}, not {want}")
                counts[provider] = len(got.ranked)
                return took
            return sample

        call(None)()  # the snapshots' first parse: the CLI row below shows a first call
        one, three = _interleaved([call("aws"), call(None)], n)
        env = dict(os.environ, WORKBENCH_HOME=home)

        def cli(argv: list[str]) -> Callable[[], float]:
            def sample() -> float:
                t = time.perf_counter()
                out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120,
                                     stdin=subprocess.DEVNULL)
                took = time.perf_counter() - t
                check(out.returncode == 0, f"{argv[1:]} exited {out.returncode}: {out.stderr[-400:]}")
                if "offers" in argv:
                    check(len(json.loads(out.stdout)["offers"]) == counts[None], "`offers --json` listed "
                          "another number of offers than the in-process call")
                return took
            return sample

        fresh, bare = _interleaved([cli([sys.executable, "-m", "workbench", "offers", "--json"]),
                                    cli([sys.executable, "-c", "pass"])], 3)
        acc.store.close()
    per10, kind = growth([counts["aws"], counts[None]], [one.median, three.median])
    return [
        (f"scale: offline catalog, AWS only ({counts['aws']} offers), per warm call", one, None, "s.1",
             "report (the reference size)"),
        (f"scale: offline catalog, AWS + Azure + Alibaba ({counts[None]} offers), per warm call", three, None,
             "s.1", f"report; ×{three.median / one.median:.1f} for ×{counts[None] / counts['aws']:.1f} offers, "
             f"i.e. {per10} ({kind}; extrapolated from a span of 2.4×)"),
        (f"scale: `workbench offers --json`, 3 clouds offline ({counts[None]} offers), fresh process, vs bare "
             "python", fresh, bare, "s", "report"),
    ]
