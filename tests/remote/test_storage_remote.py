"""Storage on a cloud machine, through the real SSH runner: a real sshd stands in for the machine, moto for
S3, rclone is the real one.  The runner installs the storage agent, its config and the machine's
credentials (a 0600 file, STS session credentials, never the profile's key), the job's checkpoints reach
the bucket while it runs, and an interruption notice on the machine comes back to the app as the
"interrupted" phase with its record kept locally for recovery."""

from __future__ import annotations

import json
import stat
import threading
import time

import boto3

import aws_moto
from workbench_testing import ROOT

from .helpers import Events, launch, quick_options, wait_until

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Profile
from workbench.core.remote.job import RemoteJob

KEY, SECRET = "AKIAREMOTESTORAGE001", "remote/storage/secret/value"


def test_a_cloud_job_syncs_its_checkpoints_and_reports_the_interruption(remote, tmp_path, monkeypatch):
    stack = aws_moto.start()
    stack.reset()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)  # the AWS profile's own credentials (the default chain)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    acc = remote.accounts
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                             settings={"retry_backoff_cap_s": "0.02", "pricing": "snapshot"}))
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id=KEY,
                      aws_secret_access_key=SECRET)
    s3.create_bucket(Bucket="runs")
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text((ROOT / "resources" / "examples" / "spot-resume" / "train.py").read_text())
    spec = parse_spec(f"""name: remote-resume
run: python3 train.py
workdir: {work}
resources: {{gpu: 'V100:1'}}
env: {{STEPS: 100000, STEP_SECONDS: 0.2}}
storage:
  - {{path: checkpoints, source: s3://runs/r1, mode: sync, interval: 1s}}
recovery: {{max_restarts: 1, on: [preemption]}}
""", source=str(tmp_path / "spec.yaml"))
    inst = launch(acc, spec)
    events = Events()
    job = RemoteJob(acc, inst, spec, quick_options(), on_event=events)
    result: dict = {}
    t = threading.Thread(target=lambda: result.setdefault("code", job.run()), daemon=True)
    t.start()
    machine = remote.server.remote_dir / "jobs" / inst.launch_id
    try:
        def stored() -> list[str]:
            return [o["Key"] for o in s3.list_objects_v2(Bucket="runs", Prefix="r1/").get("Contents", [])]

        wait_until(lambda: len(stored()) >= 3, 60, "three checkpoints in the bucket")
        creds = machine / "storage-credentials.json"
        assert stat.S_IMODE(creds.stat().st_mode) == 0o600
        secrets = json.loads(creds.read_text())
        assert secrets["RCLONE_CONFIG_WB0_SESSION_TOKEN"] and KEY not in secrets.values()
        assert SECRET not in (machine / "storage.json").read_text() and SECRET not in creds.read_text()
        assert "SESSION_TOKEN" not in (machine / "env.sh").read_text()  # the job's environment has no credential

        notice = {"source": "a test notice", "not_after": time.time() + 1}
        (machine / "interrupt-notice").write_text(json.dumps(notice))
        t.join(60)
        assert not t.is_alive() and result.get("code") is None  # following ended: the machine is going
    finally:
        job.stop()
    assert "interrupted" in events.phases()
    (warning,) = [e for e in events.items if e.phase == "interrupted" and e.kind == "warning"]
    assert "interruption notice (a test notice): the job was stopped and its sync mounts were saved" in warning.message
    record = json.loads((paths.job_dir(inst.launch_id) / "interrupted").read_text())
    assert record["saved"] is True and record["source"] == "a test notice"
    log = paths.job_log(inst.launch_id).read_text()
    assert "got SIGTERM: stopping after checkpoint step" in log and "[workbench]" in log
    last = int(log.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
    assert f"r1/step-{last:06d}.txt" in stored()
