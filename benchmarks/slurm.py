"""(issue 35) A Slurm job from submit to RUNNING: through the app vs bare ``sbatch`` + ``squeue`` polling.

The cluster is the tests' real Slurm (tests/support/slurm.py: munge, slurmctld, three slurmd with stand-in V100s)
and its login node a real loopback sshd (``login_node``), both started here once for the row.  Both sides run in
this process, against the same login sshd, with the same key (the app's), polling every POLL_S:

* the app (what ``workbench launch`` then repeated ``workbench status`` do, without the CLI's process start): a fresh
  :class:`Accounts` per sample (so the Slurm provider opens its login connection anew, as a new CLI process would),
  ``choose_offer`` (the cluster's offers: ``sinfo``/``scontrol``), ``execute`` (the request checked against the
  cluster and by ``sbatch --test-only``; the launch recorded), ``RemoteJob.launch`` (the runner's own SSH
  connection, the job folder made and its scripts written over SFTP, ``start.sh`` → ``sbatch``), then ``reconcile``
  of the profile until the store's instance says ``slurm_state`` RUNNING;
* the baseline: a fresh paramiko connection, ``sbatch --parsable`` of an equivalent script (the same partition,
  GRES, time limit and job size) on stdin, then ``squeue -j ID -h -o %T`` over the same connection until RUNNING.

The spec: ``resources: {gpu: V100:1}``, ``guards: {max_runtime: 10m}``, ``run: sleep 30``.  Every sample's job is
cancelled after it was timed (the app's through ``teardown``, the baseline's by ``scancel``) and the queue waited
empty, so each sample finds every GPU free.  Samples interleave (app first on even rounds), SAMPLES each.

Slurm itself starts a queued job at its next scheduling pass (``bf_interval=1``: 0.02-1 s after ``sbatch``), so
part of both sides is the scheduler's timing: before each sample an untimed pause of 0-1 s (a seeded random) lets
the submission land anywhere in that cycle, so that neither side locks onto one phase of it (samples of a fixed
length otherwise would); the medians over the samples compare them.

    python -m benchmarks.slurm          (prints both sides' samples and each step's as JSON)
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Stats, check, interleave, verdict

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 11
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

        def app() -> float:
            time.sleep(jitter.uniform(0, 1))  # untimed: the launch lands anywhere in the scheduler's 1 s cycle
            acc = Accounts(store, entries=entries, credentials=creds)  # type: ignore[arg-type]
            t0 = time.perf_counter()
            plan = choose_offer(acc, spec, profile="hpc")
            t1 = time.perf_counter()
            (inst,) = execute(acc, plan)
            t2 = time.perf_counter()
            check(RemoteJob(acc, inst, spec, opts).launch(), f"the app did not start {inst.launch_id}")
            t3 = time.perf_counter()
            seen: list[object] = []
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
                time.sleep(POLL_S)
            took = time.perf_counter() - t0
            for name, value in (("offers", t1 - t0), ("check", t2 - t1), ("submit", t3 - t2),
                                ("to_running", t0 + took - t3), ("polls", len(seen))):
                phases.setdefault(name, []).append(value)
            report = teardown(acc, [inst.launch_id], timeout=60)
            check(not report.errors and not report.remaining,
                  f"`down` left {report.remaining} ({report.errors})")
            ours = [j for j in cluster.queue() if j["NAME"] == inst.instance_id and j["STATE"] != "COMPLETING"]
            check(not ours, f"the app's job is still queued after down: {ours}")
            acc.provider(acc.profile("hpc")).login.close()  # type: ignore[attr-defined]
            queue_empty()
            return took

        def bare() -> float:
            time.sleep(jitter.uniform(0, 1))  # untimed, as for the app
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            t0 = time.perf_counter()
            client.connect("127.0.0.1", port=login.port, username=login.user, key_filename=str(key.private_path),
                           look_for_keys=False, allow_agent=False, timeout=10)
            try:
                t1 = time.perf_counter()
                job = _remote(client, f"sbatch {BARE_OPTIONS}", stdin=BARE_SCRIPT).strip().split(";")[0]
                check(job.isdigit(), f"sbatch answered {job!r}")
                t2 = time.perf_counter()
                seen: list[str] = []
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
                    time.sleep(POLL_S)
                took = time.perf_counter() - t0
                for name, value in (("bare_connect", t1 - t0), ("bare_sbatch", t2 - t1),
                                    ("bare_to_running", t0 + took - t2), ("bare_polls", len(seen))):
                    phases.setdefault(name, []).append(value)
                _remote(client, f"scancel {job}")
            finally:
                client.close()
            queue_empty()
            return took

        phases: dict[str, list[float]] = {}
        jitter = random.Random(35)
        app(), bare()  # the cluster's and the connections' first use: not timed
        phases.clear()
        ours, base = interleave(app, bare, samples)
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
             f"login connection {_ms(med['offers'])}, the request checked: the cluster read again and sbatch "
             f"--test-only {_ms(med['check'])}, a second SSH connection writing the job folder over SFTP, then "
             f"start.sh's sbatch {_ms(med['submit'])}) vs {_ms(bare_pre)} for the bare connect + sbatch; from there "
             f"to RUNNING {_ms(med['to_running'])} vs {_ms(med['bare_to_running'])} (the scheduler's next pass, then "
             f"polls: a status {_ms(med['status_call'])}, a squeue {_ms(med['squeue_call'])}; medians)")
    measure = (f"Slurm job submit to RUNNING through the app (launch, then status every {POLL_S:g} s) vs bare sbatch + "
               f"squeue polling every {POLL_S:g} s, same login sshd, real slurmctld (interleaved, {SAMPLES} each)")
    judge = verdict(got["ours"].median / got["baseline"].median, 1.2, steps)
    return measure, got["ours"], got["baseline"], "<= 1.2x", judge + (f"; {steps}" if judge == "met" else "")


def main() -> None:
    got = submit_figures()
    print(json.dumps({k: list(v.samples) for k, v in got.items()}))


if __name__ == "__main__":
    main()
