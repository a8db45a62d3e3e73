"""(issue 33) The controller: how fast it relaunches, compared with the app's ``workbench watch``, and its memory.

Relaunch latency: one launch with ``recovery`` on the file-backed fake cloud (tests/fixtures/plugins), its machine
taken back at a given moment of the poll period (the same moments for both sides); the time from then until the
new attempt is launched and recorded, the engine polling every POLL_S in a loop of its own (poll, sleep), for

* the controller: ``Controller.poll_once`` (a store of its own; the launch handed over on a board; the relaunch
  claimed on the board by a conditional write, the attempt written back there) — the board is a folder
  here (the same conditional-write rules as the bucket, without a network round trip);
* the baseline, what ``workbench watch`` runs: a guard poll (reconcile) then a recovery poll, claims in the
  local store.

Both relaunch through the same engine on the same cloud, interleaved, SAMPLES each.

Memory: ``workbench controller serve`` in a process of its own, an AWS profile on moto (its boto3 clients,
S3 board, one handed-over running spot launch it reconciles and guards every poll), RSS after RSS_POLLS polls; baseline a fresh python that imports
boto3 and makes the same kinds of calls (EC2 describe, S3 get): the floor any AWS watcher has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Stats, check, interleave

ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.5
SAMPLES = 5
RSS_POLLS = 10
SPEC = """name: bench
run: python3 train.py
resources: {gpu: V100:1, spot: true}
providers: [fakecloud]
regions: [fake-east]
guards: {max_runtime: 2h}
recovery: {max_restarts: 3, on: [preemption, failure]}
"""


def _paths() -> None:
    for p in (ROOT / "tests" / "support", ROOT / "tests" / "fixtures" / "plugins"):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))


def _world(tmp: Path, name: str):
    """(accounts, profile settings) of a fresh app home on a fake cloud of its own."""
    from workbench_testing import MemoryCredentials

    from workbench.core.domain.models import Profile
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    os.environ["WORKBENCH_HOME"] = str(tmp / name / "home")
    creds = MemoryCredentials()
    acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
    settings = {"state_dir": str(tmp / name / "cloud"), "controller_board": str(tmp / name / "board")}
    acc.save_profile(Profile("fc", "fakecloud", "fake-east", settings=settings))
    creds.set("fakecloud", "fc", {"account": "a"})
    return acc, creds


def _launch_and_take_back(acc):
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import choose_offer, execute

    (first,) = execute(acc, choose_offer(acc, parse_spec(SPEC, source="bench.yaml"), provider="fakecloud"))
    return first


def _take_back(acc, launch_id: str) -> float:
    prov = acc.provider(acc.profile("fc"))
    with prov._state() as st:
        for raw in st["instances"].values():
            if raw.get("launch_id") == launch_id:
                raw["state"] = "terminated"
    return time.perf_counter()


def _timed(poll, take_back, done, phase: float, what: str, timeout: float = 60.0) -> float:
    """Seconds from ``take_back()`` to ``done()``, while ``poll`` runs every POLL_S in a thread of its own (as the
    controller's and watch's loops do: poll, sleep); the machine is taken back ``phase`` seconds into a period."""
    import threading

    stop = threading.Event()
    failed: list[BaseException] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                poll()
            except BaseException as exc:  # noqa: BLE001 - reported by the sample
                failed.append(exc)
                return
            stop.wait(POLL_S)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        time.sleep(POLL_S + phase)
        t0 = take_back()
        deadline = t0 + timeout
        while time.perf_counter() < deadline and not failed:
            if done():
                return time.perf_counter() - t0
            time.sleep(0.005)
        check(not failed, f"{what}: {failed[0] if failed else ''}")
        raise AssertionError(f"timed out: {what}")
    finally:
        stop.set()
        t.join(30)


def _controller_sample(tmp: Path, k: int, phase: float) -> float:
    from workbench.core import paths
    from workbench.core.controller import handover
    from workbench.core.controller.claims import claim_key
    from workbench.core.controller.service import Controller, ControllerConfig
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    app, creds = _world(tmp, f"ctl{k}")
    first = _launch_and_take_back(app)
    board = handover.board_of(app, "fc")
    handover.hand_over(app.store, board, first.launch_id)
    ctl_acc = Accounts(Store.open(app.store.path.parent / "controller.db"), entries=discover(), credentials=creds)
    prof = app.profile("fc")
    ctl_acc.save_profile(prof)
    config = ControllerConfig(launch_id="workbench-controller-bench", install_id=paths.install_id(), poll_s=POLL_S,
                              profile={"name": prof.name, "provider": prof.provider, "region": prof.region,
                                       "settings": dict(prof.settings)})
    ctl = Controller(config, ctl_acc)
    ctl.poll_once()  # it has taken the launch in
    try:
        return _timed(ctl.poll_once, lambda: _take_back(app, first.launch_id),
                      lambda: (board.get(claim_key(first.launch_id, 2)) or ({},))[0].get("state") == "launched",
                      phase, "the controller relaunching")
    finally:
        ctl_acc.store.close()
        app.store.close()


def _watch_sample(tmp: Path, k: int, phase: float) -> float:
    from workbench.core.lifecycle.guards import GuardEngine
    from workbench.core.lifecycle.recovery import RecoveryEngine

    app, _ = _world(tmp, f"watch{k}")
    first = _launch_and_take_back(app)
    guards, recovery = GuardEngine(app, collect_samples=False), RecoveryEngine(app)
    got: list = []
    try:
        return _timed(lambda: (guards.poll(), got.extend(recovery.poll())), lambda: _take_back(app, first.launch_id),
                      lambda: any(e.action == "relaunched" for e in got), phase, "watch relaunching")
    finally:
        app.store.close()


def relaunch_figures(samples: int = SAMPLES) -> tuple[Stats, Stats]:
    """(controller, watch) seconds from the machine taken back to the relaunched attempt recorded."""
    _paths()
    keep = os.environ.get("WORKBENCH_HOME")
    counter = iter(range(10 * samples))
    # the same moments of the poll period for both sides (round k: k/samples of the period, both engines)
    phases = [POLL_S * k / samples for k in range(samples)]
    ctl_phase, watch_phase = iter(phases), iter(phases)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        try:
            return interleave(lambda: _controller_sample(tmp, next(counter), next(ctl_phase)),
                              lambda: _watch_sample(tmp, next(counter), next(watch_phase)), samples)
        finally:
            if keep is None:
                os.environ.pop("WORKBENCH_HOME", None)
            else:
                os.environ["WORKBENCH_HOME"] = keep


# -- memory ---------------------------------------------------------------------------------------
BASELINE = """
import boto3, sys, time
kw = dict(region_name="us-east-1", endpoint_url=sys.argv[1])
ec2, s3 = boto3.client("ec2", **kw), boto3.client("s3", **kw)
for _ in range(int(sys.argv[2])):
    ec2.describe_instances(); s3.list_objects_v2(Bucket="bench-board"); time.sleep(float(sys.argv[3]))
import psutil; print(psutil.Process().memory_info().rss)
"""


def _hand_one(tmp: Path, stack, k: int) -> str:
    """An app home with one running spot launch on moto, handed to the controller; the app's install id."""
    from workbench_testing import MemoryCredentials

    from workbench.core import paths
    from workbench.core.controller import handover
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    keep = os.environ.get("WORKBENCH_HOME")
    os.environ["WORKBENCH_HOME"] = str(tmp / f"app{k}")
    try:
        creds = MemoryCredentials()
        acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
        acc.save_profile(Profile("bench", "aws", "us-east-1", endpoint_url=stack.url, settings=_AWS))
        creds.set("aws", "bench", {"access_key_id": "AKIABENCH", "secret_access_key": "bench-not-secret"})
        spec = parse_spec("name: rss\nrun: 'true'\nresources: {gpu: 'V100:1', spot: true}\nproviders: [aws]\n"
                          "regions: [us-east-1]\nrecovery: {max_restarts: 1, on: [preemption]}\n", source="b.yaml")
        (first,) = execute(acc, choose_offer(acc, spec, provider="aws"))
        handover.hand_over(acc.store, handover.board_of(acc, "bench"), first.launch_id)
        acc.store.close()
        return paths.install_id()
    finally:
        if keep is None:
            os.environ.pop("WORKBENCH_HOME", None)
        else:
            os.environ["WORKBENCH_HOME"] = keep


_AWS = {"storage_uri": "s3://bench-board", "regions": "us-east-1", "ssh_cidr": "198.51.100.23/32", "poll_s": "0.01",
        "pricing": "snapshot"}


def _rss_of_serve(tmp: Path, stack, k: int) -> float:
    import boto3
    import psutil

    from workbench.core.controller.service import ControllerConfig

    home = tmp / f"serve{k}"
    home.mkdir()
    install = _hand_one(tmp, stack, k)
    config = ControllerConfig(launch_id=f"workbench-controller-rss{k}", install_id=install,
                              poll_s=POLL_S, idle_end_s=3600,
                              profile={"name": "bench", "provider": "aws", "region": "us-east-1",
                                       "endpoint_url": stack.url,
                                       "settings": dict(_AWS)})
    config.save(home / "controller.json")
    env = {**os.environ, "WORKBENCH_HOME": str(home / "wb"), "AWS_ACCESS_KEY_ID": "AKIABENCH",
           "AWS_SECRET_ACCESS_KEY": "bench-not-secret", "PYTHONPATH": str(ROOT)}
    errors = open(home / "serve.err", "w+b")  # noqa: SIM115 - closed below; a pipe nobody reads would block it
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "controller", "serve", "--config",
                             str(home / "controller.json")], env=env, stdout=subprocess.DEVNULL, stderr=errors)
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIABENCH",
                      aws_secret_access_key="bench-not-secret")
    key = f"workbench-controller/{install}/controller.json"
    try:
        polls = 0
        deadline = time.time() + 120
        last = None
        while polls < RSS_POLLS and time.time() < deadline:
            check(proc.poll() is None, f"serve exited {proc.returncode}: {(home / 'serve.err').read_text()[-600:]}")
            try:
                etag = s3.head_object(Bucket="bench-board", Key=key)["ETag"]
            except Exception:  # noqa: BLE001 - not written yet
                etag = None
            if etag and etag != last:
                polls, last = polls + 1, etag
            time.sleep(0.1)
        check(polls >= RSS_POLLS, "the controller did not poll")
        beat = json.loads(s3.get_object(Bucket="bench-board", Key=key)["Body"].read())
        check(beat.get("watching"), f"the controller watches nothing: {beat}")
        return float(psutil.Process(proc.pid).memory_info().rss)
    finally:
        proc.terminate()
        proc.wait(10)
        errors.close()


def _rss_baseline(stack) -> float:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIABENCH", "AWS_SECRET_ACCESS_KEY": "bench-not-secret"}
    out = subprocess.run([sys.executable, "-c", BASELINE, stack.url, str(RSS_POLLS), str(POLL_S)], env=env,
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"the baseline failed: {out.stderr[-600:]}")
    return float(out.stdout.strip().splitlines()[-1])


def rss_figures(samples: int = 3) -> tuple[Stats, Stats]:
    """(serve, bare boto3) RSS in bytes."""
    _paths()
    import aws_moto
    import boto3

    stack = aws_moto.start()
    stack.reset()
    boto3.client("s3", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIABENCH",
                 aws_secret_access_key="bench-not-secret").create_bucket(Bucket="bench-board")
    counter = iter(range(10 * samples))
    with tempfile.TemporaryDirectory() as d:
        try:
            return interleave(lambda: _rss_of_serve(Path(d), stack, next(counter)), lambda: _rss_baseline(stack),
                              samples)
        finally:
            stack.reset()
