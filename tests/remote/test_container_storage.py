"""A job in a container image with storage mounts and spot recovery on a cloud machine: AWS (moto, also the
bucket), the machine a real sshd whose sessions use a real Docker daemon, the image from the private registry
(tests/support/containers.py), rclone the real one.  The storage agent runs on the machine; setup and run run in
the container, the mounts bind-mounted at the spec's paths: a dataset copied in is read there, what the
container's user writes to a ``sync`` mount lands in the bucket, an interruption notice's TERM reaches the
training loop inside the container, which checkpoints, and attempt 2 resumes from it in a container again."""

from __future__ import annotations

import importlib
import json
import threading
import time

import boto3
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.instances import StateReason

import aws_moto
from workbench_testing import ROOT, fake_cloud_accounts

from .helpers import Events, quick_options, wait_until
from .test_container_machine import SETTINGS, machine  # noqa: F401  (the module's fixture; world: tests/conftest.py)

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec, spec_from_dict
from workbench.core.domain.models import Profile
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.core.remote.job import RemoteJob, recorded_exit_code

KEY, SECRET = "AKIACONTAINERSTORE01", "container/storage/secret/value"


def _world(tmp_path, monkeypatch, machine, world):  # noqa: F811
    stack = aws_moto.start()
    stack.reset()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch)
    importlib.invalidate_caches()
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                             settings={**SETTINGS, "ssh_address": f"{machine.user}@127.0.0.1:{machine.port}"}))
    creds.set("aws", "moto", {"access_key_id": KEY, "secret_access_key": SECRET})
    machine.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id=KEY,
                      aws_secret_access_key=SECRET)
    s3.create_bucket(Bucket="runs")
    return acc, stack, s3


def _spec(tmp_path, world, body: str):  # noqa: F811
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "train.py").write_text((ROOT / "resources" / "examples" / "spot-resume" / "train.py").read_text())
    return parse_spec(f"name: boxed-storage\nsecrets: [REG_PW]\nworkdir: {work}\n"
                      f"image: {{name: '{world.image}', registry_auth: {{username: {world.user}, password: REG_PW}},"
                      " user: '1000:1000'}\n" + body, source=str(tmp_path / "spec.yaml"))


def _keys(s3, prefix: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket="runs", Prefix=prefix).get("Contents", [])]


def _clean(machine, world, acc, stack, *launch_ids):  # noqa: F811
    machine.end_jobs()
    for lid in launch_ids:
        for cid in world.docker("ps", "-aq", "--filter", f"label=workbench.launch={lid}").stdout.split():
            world.docker("rm", "-f", cid, check=False)
        launch_secrets.forget(lid)
    acc.store.close()
    stack.reset()


def test_a_container_reads_a_copied_dataset_and_its_sync_mount_lands_in_the_bucket(tmp_path, monkeypatch, machine,
                                                                                  world):  # noqa: F811
    acc, stack, s3 = _world(tmp_path, monkeypatch, machine, world)
    s3.put_object(Bucket="runs", Key="data/shard-0.txt", Body=b"dataset-line\n")
    dataset = tmp_path / "machine-datasets" / "d1"  # an absolute path on the machine, outside the workdir
    spec = _spec(tmp_path, world, f"""run: |
  test -f /.dockerenv && echo run-in-container
  echo "read $(cat {dataset}/shard-0.txt) as uid $(id -u)" | tee out/result.txt
  env | grep -c RCLONE_CONFIG > out/credentials-seen.txt || true
  exit 3
resources: {{gpu: 'V100:1'}}
storage:
  - {{path: {dataset}, source: s3://runs/data, mode: copy}}
  - {{path: out, source: s3://runs/out, mode: sync, interval: 60s}}
""")
    (inst,) = execute(acc, choose_offer(acc, spec, provider="aws"), secret_env={"REG_PW": world.password})
    try:
        started = time.monotonic()
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=Events()).run()
        print(f"container job with a copy and a sync mount (pull, copy in, run, save): {time.monotonic() - started:.1f}s")
        log = paths.job_log(inst.launch_id).read_text()
        print(log)
        assert code == 3 and recorded_exit_code(inst.launch_id) == 3, log  # the job's own code, after the last save
        assert "run-in-container" in log and "copy s3://runs/data" in log and "job ended (exit 3)" in log
        result = s3.get_object(Bucket="runs", Key="out/result.txt")["Body"].read().decode()
        assert result == "read dataset-line as uid 1000\n"  # read inside the container, written by its user
        assert s3.get_object(Bucket="runs", Key="out/credentials-seen.txt")["Body"].read() == b"0\n"
        job_dir = machine.remote_dir / "jobs" / inst.launch_id
        assert "RCLONE_CONFIG" not in (job_dir / "container.env").read_text()  # the agent's alone
        assert (dataset / "shard-0.txt").read_text() == "dataset-line\n"  # the machine's folder, bind-mounted
    finally:
        _clean(machine, world, acc, stack, inst.launch_id)


def _reclaim_spot(instance_id: str) -> None:
    """What AWS does to an interrupted spot instance: terminated, reason Server.SpotInstanceTermination."""
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    inst = backend.get_instance(instance_id)
    backend.terminate_instances([instance_id])
    inst.state_reason = StateReason("Server.SpotInstanceTermination: Spot instance termination",
                                    "Server.SpotInstanceTermination")


def test_a_spot_job_in_a_container_checkpoints_on_the_notice_and_resumes_in_a_container(tmp_path, monkeypatch,
                                                                                         machine, world):  # noqa: F811
    acc, stack, s3 = _world(tmp_path, monkeypatch, machine, world)
    spec = _spec(tmp_path, world, """run: python3 train.py
resources: {gpu: 'V100:1', spot: true}
providers: [aws]
regions: [us-east-1]
env: {STEPS: 100000, STEP_SECONDS: 0.2}
storage:
  - {path: checkpoints, source: s3://runs/r1, mode: sync, interval: 1s}
recovery: {max_restarts: 1, on: [preemption]}
""")
    (inst,) = execute(acc, choose_offer(acc, spec, provider="aws"), secret_env={"REG_PW": world.password})
    second = None
    started = time.monotonic()
    try:
        job = RemoteJob(acc, inst, spec, quick_options(), on_event=Events())
        done: dict = {}
        t = threading.Thread(target=lambda: done.setdefault("code", job.run()), daemon=True)
        t.start()
        wait_until(lambda: len(_keys(s3, "r1/")) >= 3, 60, "three checkpoints in the bucket")
        notice = {"source": "a test notice", "not_after": time.time() + 1}
        (machine.remote_dir / "jobs" / inst.launch_id / "interrupt-notice").write_text(json.dumps(notice))
        t.join(60)
        assert not t.is_alive() and done.get("code") is None  # following ended: the machine is going
        log = paths.job_log(inst.launch_id).read_text()
        assert "attempt 1: starting at step 0" in log and "got SIGTERM: stopping after checkpoint step" in log, log
        last = int(log.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
        assert f"r1/step-{last:06d}.txt" in _keys(s3, "r1/")  # the TERM's checkpoint, saved after the loop ended
        record = json.loads((paths.job_dir(inst.launch_id) / "interrupted").read_text())
        assert record["saved"] is True and record["job_exit"] == 143
        print(f"attempt 1 interrupted after step {last}: {time.monotonic() - started:.1f}s")

        _reclaim_spot(inst.instance_id)
        reconcile(acc)
        (ev,) = RecoveryEngine(acc, teardown_timeout_s=30, teardown_poll_s=0.05).poll()
        assert ev.action == "relaunched" and ev.attempt == 2, ev
        (second,) = acc.store.list_instances(launch_id=ev.launch_id)
        spec2 = spec_from_dict(acc.store.get_launch(ev.launch_id).spec)
        assert spec2.image is not None and spec2.env["WORKBENCH_RESUME"] == "1"
        job2 = RemoteJob(acc, second, spec2, quick_options(), on_event=Events())
        t2 = threading.Thread(target=lambda: done.setdefault("code2", job2.run()), daemon=True)
        t2.start()
        log2 = paths.job_log(second.launch_id)
        wait_until(lambda: log2.exists() and f"checkpoint step {last + 1}\n" in log2.read_text(), 60,
                   "attempt 2's first step")
        text = log2.read_text()
        assert f"attempt 2: resumed from checkpoint step {last}\n" in text, text
        assert f"resume: restore s3://runs/r1 -> checkpoints (attempt 2)" in text
        box = world.docker("ps", "-q", "--filter", f"label=workbench.launch={second.launch_id}").stdout.split()
        assert len(box) == 1  # attempt 2 runs in its container
        notice = {"source": "a second test notice", "not_after": time.time() + 1}  # the end of attempt 2, as 1's
        (machine.remote_dir / "jobs" / second.launch_id / "interrupt-notice").write_text(json.dumps(notice))
        t2.join(60)
        assert not t2.is_alive() and done.get("code2") is None
        print(f"interrupted, relaunched and resumed in a container: {time.monotonic() - started:.1f}s")
    finally:
        _clean(machine, world, acc, stack, inst.launch_id, *([second.launch_id] if second else []))
