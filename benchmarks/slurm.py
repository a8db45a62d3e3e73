"""(issue 35) A Slurm job from submit to RUNNING: through the app vs bare ``sbatch`` + ``squeue`` polling.

The cluster is the tests' real Slurm (tests/support/slurm.py: munge, slurmctld, three slurmd with stand-in V100s)
and its login node a real loopback sshd (``login_node``), both started here once for the row.  Both sides run in
this process, against the same login sshd, with the same key (the app's), polling every POLL_S:

* the app (what ``workbench launch`` then repeated ``workbench status`` do, without the CLI's process start): a fresh
  :class:`Accounts` per sample (so the Slurm provider opens its login connection anew, as a new CLI process would),
  ``choose_offer`` (the cluster's offers: ``sinfo``/``scontrol``), ``execute`` (the request checked against the
  cluster and by ``sbatch --test-only``; the launch recorded), ``RemoteJob.launch`` (the runner shares the
  provider's login connection: a short probe, the job folder's scripts in one ``tar`` stream, ``start.sh`` →
  ``sbatch``), then ``reconcile`` of the profile until the store's instance says ``slurm_state`` RUNNING;
* the baseline: a fresh paramiko connection on a socket tuned as the app's are (``tune_socket``: TCP_NODELAY and
  immediate ACKs — like for like, so that only the work differs), ``sbatch --parsable`` of an equivalent script
  (the same partition, GRES, time limit and job size) on stdin, then ``squeue -j ID -h -o %T`` over the same
  connection until RUNNING.

The spec: ``resources: {gpu: V100:1}``, ``guards: {max_runtime: 10m}``, ``run: sleep 30``.

Slurm starts a queued job at its next scheduling pass (``bf_interval=1``: 0.01-1 s after ``sbatch``, measured), so
most of either side is the scheduler's timing.  Taken one after the other, samples varied by a second with the
phase of that cycle, and medians of 11, 25 and even 41 interleaved samples moved between 0.84x and 1.57x from run to
run.  So each round runs **both sides at once** (two threads released by one barrier, after an untimed seeded pause
of 0-1 s that puts the round anywhere in the cycle): both submit in the same phase, their jobs (one V100 each; the
partition has four) start in the same pass, and the difference between them is the tools' own.  Each round's jobs
are then cancelled (the app's through ``teardown``, verified; the baseline's by ``scancel``) and the queue waited
empty, so every round finds every GPU free.  SAMPLES rounds.  Both sides share this process's two cores (the app's
Python work may delay the bare client's by a few ms: charged to the baseline, not the app).

Both poll on a fixed clock, every POLL_S from their first poll (as the app's window does with a timer): a poll that
sleeps POLL_S *after* each call drifts by the call's own time every cycle, which counted the slower status call once
per poll (the app's status is one round trip of squeue and its job folder, ~20 ms, a bare squeue ~11 ms).

    python -m benchmarks.slurm          (prints both sides' samples and each step's as JSON)
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from benchmarks.harness import Stats, check, verdict

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 21
POLL_S = 0.25
RUNNING_WITHIN_S = 60.0
SPEC = "name: benchslurm\nresources: {gpu: 'V100:1'}\nguards: {max_runtime: 10m}\nrun: sleep 30\n"
#: what the app asks sbatch for this spec (its offer: the gpu partition's V100s), written by hand
BARE_OPTIONS = "--parsable -p gpu -N 1 --gres=gpu:v100:1 --time=10 -J bench-bare -o bench-bare-%j.out"
BARE_SCRIPT = "#!/bin/sh\nsleep 30\n"


def _support():
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import slurm as slurm_support
    import sshd as sshd_support

    why = slurm_support.available() or sshd_support.available()
    check(not why, f"the Slurm row needs a real cluster and sshd: {why}")
    return slurm_support


def _remote(client, command: str, stdin: str | None = None, timeout: float = 30) -> str:
    """``command`` over a paramiko client; its stdout (raises when it exits non-zero)."""
    chan_in, chan_out, chan_err = client.exec_command(command, timeout=timeout)
    if stdin is not None:
        chan_in.write(stdin)
        chan_in.channel.shutdown_write()
    out = chan_out.read().decode(errors="replace")
    rc = chan_out.channel.recv_exit_status()
    check(rc == 0, f"`{command}` on the login node exited {rc}: {chan_err.read().decode(errors='replace')[-400:]}")
    return out


def _next_tick(tick: float) -> float:
    """Sleep until the next poll of a fixed POLL_S clock (a timer, as the app's window polls): a slow call does not
    push every later poll back."""
    tick += POLL_S
    time.sleep(max(0.0, tick - time.perf_counter()))
    return tick


def submit_figures(samples: int = SAMPLES) -> dict[str, Stats]:
    """{"ours": launch to RUNNING through the app, "baseline": sbatch + squeue polling}, in seconds."""
    import paramiko

    slurm_support = _support()
    from workbench_testing import MemoryCredentials

    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.lifecycle.reconcile import reconcile
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover, get
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.remote.connection import tune_socket
    from workbench.core.remote.job import JobOptions, RemoteJob
    from workbench.core.store.database import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-slurm-"))
    root = Path(tempfile.mkdtemp(prefix="bench-slurm-cluster-", dir="/tmp"))  # other users must reach it (the docs)
    home = tmp / "home"
    (home / "data").mkdir(parents=True)
    os.environ["WORKBENCH_HOME"] = str(home)
    key = ensure_keypair(home / "data")
    cluster = login = None
    try:
        cluster = slurm_support.start_cluster(root)
        login = cluster.login_node(tmp / "login", key.public_openssh)
        store, entries, creds = Store.open(), discover(), MemoryCredentials()
        profile = Profile("hpc", "slurm", get(entries, "slurm").default_region(),
                          settings={"host": "127.0.0.1", "port": str(login.port), "user": login.user})
        Accounts(store, entries=entries, credentials=creds).save_profile(profile)  # type: ignore[arg-type]
        spec = parse_spec(SPEC)
        opts = JobOptions(connect_deadline_s=30, key_grace_s=5, reconnect_deadline_s=30, driver_deadline_s=5)

        def queue_empty() -> None:
            cluster.cancel_all()  # waits until no job is pending, running or completing: every GPU free again
            check(not cluster.queue(), f"jobs left in the queue: {cluster.queue()}")

        def app(start: threading.Barrier) -> tuple[float, Callable[[], None]]:
            acc = Accounts(store, entries=entries, credentials=creds)  # type: ignore[arg-type]
            start.wait()
            t0 = time.perf_counter()
            plan = choose_offer(acc, spec, profile="hpc")
            t1 = time.perf_counter()
            (inst,) = execute(acc, plan)
            t2 = time.perf_counter()
            check(RemoteJob(acc, inst, spec, opts).launch(), f"the app did not start {inst.launch_id}")
            t3 = time.perf_counter()
            seen: list[object] = []
            tick = time.perf_counter()
            while True:
                tp = time.perf_counter()
                got = reconcile(acc, [acc.profile("hpc")])
                phases.setdefault("status_call", []).append(time.perf_counter() - tp)
                check(not got.errors, f"status failed: {got.errors}")
                now = acc.store.get_instance(inst.provider, inst.profile, inst.instance_id)
                state = now.extra.get("slurm_state") if now is not None else None
                seen.append(state)
                if state == "RUNNING":
                    break
                check(state in ("SUBMITTING", "PENDING", "CONFIGURING"), f"the app's job went {state}: {seen}")
                check(time.perf_counter() - t0 < RUNNING_WITHIN_S, f"not RUNNING within {RUNNING_WITHIN_S:.0f} s: "
                      f"{seen[-5:]}; queue {cluster.queue()}")
                tick = _next_tick(tick)
            took = time.perf_counter() - t0
            for name, value in (("offers", t1 - t0), ("check", t2 - t1), ("submit", t3 - t2),
                                ("to_running", t0 + took - t3), ("polls", len(seen))):
                phases.setdefault(name, []).append(value)

            def end() -> None:
                report = teardown(acc, [inst.launch_id], timeout=60)
                check(not report.errors and not report.remaining,
                      f"`down` left {report.remaining} ({report.errors})")
                ours = [j for j in cluster.queue() if j["NAME"] == inst.instance_id and j["STATE"] != "COMPLETING"]
                check(not ours, f"the app's job is still queued after down: {ours}")
                acc.provider(acc.profile("hpc")).login.close()  # type: ignore[attr-defined]
            return took, end

        def bare(start: threading.Barrier) -> tuple[float, Callable[[], None]]:
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            start.wait()
            t0 = time.perf_counter()
            # the app's own socket tuning (TCP_NODELAY, immediate ACKs): like for like, so only the work differs
            sock = tune_socket(socket.create_connection(("127.0.0.1", login.port), timeout=10))
            client.connect("127.0.0.1", port=login.port, username=login.user, key_filename=str(key.private_path),
                           look_for_keys=False, allow_agent=False, timeout=10, sock=sock)
            try:
                t1 = time.perf_counter()
                job = _remote(client, f"sbatch {BARE_OPTIONS}", stdin=BARE_SCRIPT).strip().split(";")[0]
                check(job.isdigit(), f"sbatch answered {job!r}")
                t2 = time.perf_counter()
                seen: list[str] = []
                tick = time.perf_counter()
                while True:
                    tp = time.perf_counter()
                    state = _remote(client, f"squeue -j {job} -h -o %T").strip()
                    phases.setdefault("squeue_call", []).append(time.perf_counter() - tp)
                    seen.append(state)
                    if state == "RUNNING":
                        break
                    check(state in ("PENDING", "CONFIGURING"), f"job {job} went {state!r}: {seen}")
                    check(time.perf_counter() - t0 < RUNNING_WITHIN_S, f"job {job} not RUNNING within "
                          f"{RUNNING_WITHIN_S:.0f} s: {seen[-5:]}")
                    tick = _next_tick(tick)
                took = time.perf_counter() - t0
                for name, value in (("bare_connect", t1 - t0), ("bare_sbatch", t2 - t1),
                                    ("bare_to_running", t0 + took - t2), ("bare_polls", len(seen))):
                    phases.setdefault(name, []).append(value)
            except BaseException:
                client.close()
                raise

            def end() -> None:
                try:
                    _remote(client, f"scancel {job}")
                finally:
                    client.close()
            return took, end

        def pair() -> tuple[float, float]:
            """One round: the app and the bare client start together (two threads, one barrier), so both submit
            in the same phase of the scheduler's cycle; then both jobs are ended and the queue waited empty."""
            time.sleep(jitter.uniform(0, 1))  # untimed: the round lands anywhere in the scheduler's 1 s cycle
            start = threading.Barrier(2)
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                sides = [pool.submit(app, start), pool.submit(bare, start)]
                done = [f.exception() or f.result() for f in sides]  # both finish before either raises
            for got in done:
                if isinstance(got, BaseException):
                    raise got
            for _, end in done:
                end()
            queue_empty()
            return done[0][0], done[1][0]

        phases: dict[str, list[float]] = {}
        jitter = random.Random(35)
        pair()  # the cluster's and the connections' first use: not timed
        phases.clear()
        rounds = [pair() for _ in range(samples)]
        ours, base = Stats(tuple(a for a, _ in rounds)), Stats(tuple(b for _, b in rounds))
        return {"ours": ours, "baseline": base, **{k: Stats(tuple(v)) for k, v in phases.items()}}
    finally:
        if login is not None:
            login.stop()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def _ms(s: float) -> str:
    return f"{s * 1000:.0f} ms"


def row() -> tuple[str, Stats, Stats, str, str]:
    """(measure, the app, the baseline, target, verdict) of the `make bench` row ``slurm-submit``."""
    got = submit_figures()
    med = {k: v.median for k, v in got.items()}
    app_pre, bare_pre = med["offers"] + med["check"] + med["submit"], med["bare_connect"] + med["bare_sbatch"]
    steps = (f"until its launch has returned (sbatch answered) the app takes {_ms(app_pre)} (offers over a fresh "
             f"login connection {_ms(med['offers'])}, the request checked by sbatch --test-only "
             f"{_ms(med['check'])}, on the same connection the probe, the job folder in one tar stream and "
             f"start.sh's sbatch {_ms(med['submit'])}) vs {_ms(bare_pre)} for the bare connect + sbatch; from there "
             f"to RUNNING {_ms(med['to_running'])} vs {_ms(med['bare_to_running'])} (the scheduler's next pass, then "
             f"polls: a status {_ms(med['status_call'])}, a squeue {_ms(med['squeue_call'])}; medians)")
    measure = (f"Slurm job submit to RUNNING through the app (launch, then status every {POLL_S:g} s) vs bare sbatch + "
               f"squeue polling every {POLL_S:g} s (fixed clocks), same login sshd, real slurmctld ({SAMPLES} rounds of both at once)")
    judge = verdict(got["ours"].median / got["baseline"].median, 1.2, steps)
    return measure, got["ours"], got["baseline"], "<= 1.2x", judge + (f"; {steps}" if judge == "met" else "")


def main() -> None:
    got = submit_figures()
    print(json.dumps({k: list(v.samples) for k, v in got.items()}))


if __name__ == "__main__":
    main()
