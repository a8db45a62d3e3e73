"""The machine side against moto S3 with the real rclone: a dataset copied in, checkpoints synced out
every interval and at the end, restored on a resumed attempt, and the interruption notice (SIGTERM to
the job, last sync, the ``interrupted`` record).  Credentials are the ones a launch mints: STS session
credentials from moto (never the profile's own key), passed to the agent alone (here in its environment)."""

from __future__ import annotations

import json
import sys
import time

from agent_run import new_machine, wait_until
from agent_run import KEY_ID, SECRET

from workbench.core.domain.jobspec import parse_spec
from workbench.core.storage.machine import SECRET_PREFIX, machine_setup

LID = "resume-abc123"


def spec_for(tmp_path, mounts: str, extra: str = ""):
    return parse_spec(f"name: resume\nrun: python3 train.py\nstorage:\n{mounts}{extra}", source="t.yaml",
                      base_dir=tmp_path)


def setup_for(cloud, tmp_path, spec, name="m1"):
    return machine_setup(cloud.accounts, spec, LID, cloud.profile, state_dir=str(tmp_path / name / "state"),
                         on_this_computer=True, notice={"poll_s": 0.1})


MOUNTS = ("  - {path: data, source: s3://lab-data/imagenet, mode: copy}\n"
          "  - {path: checkpoints, source: s3://lab-data/runs/r1, mode: sync, interval: 1s}\n")


def test_credentials_are_session_credentials_scoped_to_each_mount(cloud, tmp_path):
    cloud.bucket("lab-data")
    setup = setup_for(cloud, tmp_path, spec_for(tmp_path, MOUNTS))
    env = setup.secret_env
    assert env[f"{SECRET_PREFIX}0_TYPE"] == "s3" and env[f"{SECRET_PREFIX}0_SESSION_TOKEN"]
    assert KEY_ID not in env.values() and SECRET not in env.values()  # never the user's own key
    assert env[f"{SECRET_PREFIX}0_PROVIDER"] == "Other" and env[f"{SECRET_PREFIX}0_ENDPOINT"] == cloud.moto.url
    assert [m["remote"] for m in setup.config["mounts"]] == ["wb0:lab-data/imagenet", "wb1:lab-data/runs/r1"]
    assert not any(SECRET_PREFIX in json.dumps(setup.config) or v in json.dumps(setup.config)
                   for v in env.values() if len(v) > 8)  # the config holds no secret
    calls = cloud.moto.faults.find("GetFederationToken")
    policies = [json.loads(c.param("Policy")) for c in calls]
    assert len(policies) == 2
    read, write = policies
    assert read["Statement"][1] == {"Effect": "Allow", "Action": ["s3:GetObject"],
                                    "Resource": "arn:aws:s3:::lab-data/imagenet/*"}
    assert read["Statement"][0]["Condition"]["StringLike"]["s3:prefix"] == ["imagenet", "imagenet/", "imagenet/*"]
    assert write["Statement"][1]["Action"] == ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"]
    assert write["Statement"][1]["Resource"] == "arn:aws:s3:::lab-data/runs/r1/*"
    assert all(int(c.param("DurationSeconds")) == 25 * 3600 for c in calls)  # 24 h max runtime + 1 h


def test_copy_in_sync_out_and_restore_on_resume(cloud, tmp_path):
    cloud.bucket("lab-data", files={"imagenet/train/a.bin": b"A" * 1000, "imagenet/labels.txt": b"cat\ndog\n"})
    spec = spec_for(tmp_path, MOUNTS)
    m = new_machine(tmp_path / "m1", setup_for(cloud, tmp_path, spec, "m1"))

    prep = m.agent("prepare")
    assert prep.returncode == 0, prep.stdout + prep.stderr
    assert (m.work / "data" / "train" / "a.bin").read_bytes() == b"A" * 1000
    assert (m.work / "data" / "labels.txt").read_text() == "cat\ndog\n"
    assert "restore" not in prep.stdout  # attempt 1: nothing to resume
    assert (m.state / "storage.prepared").exists()

    proc = m.start([sys.executable, "train.py"], STEPS="12", STEP_SECONDS="0.25")
    # the periodic sync (every 1 s) has put checkpoints in the bucket while the job still runs
    wait_until(lambda: any(k.startswith("runs/r1/step-") for k in cloud.keys("lab-data", "runs/r1/"))
               and proc.poll() is None, 20, "a checkpoint in the bucket during the run")
    assert proc.wait(60) == 0
    out = m.output()
    assert "done: 12 steps" in out and "job ended (exit 0): save checkpoints" in out
    stored = cloud.keys("lab-data", "runs/r1/")
    assert sorted(stored) == [f"runs/r1/step-{i:06d}.txt" for i in range(1, 13)]  # the final sync has them all
    assert not any("train.py" in k for k in stored)  # only the mount folder goes up

    # attempt 2 on a fresh machine: the sync mount is restored before the job starts
    m2 = new_machine(tmp_path / "m2", setup_for(cloud, tmp_path, spec, "m2"))
    prep2 = m2.agent("prepare", env=m2.env(WORKBENCH_RESUME="1", WORKBENCH_ATTEMPT="2"))
    assert prep2.returncode == 0, prep2.stdout + prep2.stderr
    assert "resume: restore s3://lab-data/runs/r1 -> checkpoints (attempt 2)" in prep2.stdout
    proc2 = m2.start([sys.executable, "train.py"], STEPS="14", STEP_SECONDS="0.05", WORKBENCH_RESUME="1",
                     WORKBENCH_ATTEMPT="2")
    assert proc2.wait(60) == 0
    out2 = m2.output()
    assert "attempt 2: resumed from checkpoint step 12" in out2 and "checkpoint step 13" in out2
    assert "checkpoint step 1\n" not in out2


def test_interruption_notice_stops_the_job_saves_and_records_it(cloud, tmp_path):
    cloud.bucket("lab-data", files={"imagenet/x": b"x"})
    m = new_machine(tmp_path / "m1", setup_for(cloud, tmp_path, spec_for(tmp_path, MOUNTS)))
    m.write_config(reclaim_wait_s=0.5)
    proc = m.start([sys.executable, "train.py"], STEPS="100000", STEP_SECONDS="0.2")
    wait_until(lambda: "checkpoint step 3" in m.output(), 30, "three checkpoints")
    before = time.time()
    (m.state / "interrupt-notice").write_text(json.dumps({"source": "test notice", "not_after": before + 2}))
    assert proc.wait(60) == 143  # the machine was not taken: the agent ends the job itself
    out = m.output()
    assert "interruption notice: test notice" in out and "stopping the job (SIGTERM) and saving checkpoints" in out
    assert "got SIGTERM: stopping after checkpoint step" in out  # the job's own handler ran
    last = int(out.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
    record = json.loads((m.state / "interrupted").read_text())
    assert record["saved"] is True and record["reason"] == "preemption" and record["job_exit"] == 143
    assert (m.state / "phase").read_text() == "interrupted\n"
    stored = cloud.keys("lab-data", "runs/r1/")
    assert f"runs/r1/step-{last:06d}.txt" in stored  # the last checkpoint reached the bucket
    assert "waiting for the machine to be taken" in out


def test_a_missing_bucket_stops_before_the_job_with_rclone_s_reason(cloud, tmp_path):
    cloud.bucket("lab-data")
    spec = spec_for(tmp_path, MOUNTS)
    m = new_machine(tmp_path / "m1", setup_for(cloud, tmp_path, spec))
    cloud.s3().delete_bucket(Bucket="lab-data")
    prep = m.agent("prepare")
    assert prep.returncode == 1
    assert "copy s3://lab-data/imagenet -> data failed (rclone exit" in prep.stdout
    assert not (m.state / "storage.prepared").exists()


def test_a_resume_before_any_checkpoint_was_saved_starts_from_scratch(cloud, tmp_path):
    cloud.bucket("lab-data", files={"imagenet/x": b"x"})
    m = new_machine(tmp_path / "m1", setup_for(cloud, tmp_path, spec_for(tmp_path, MOUNTS)))
    prep = m.agent("prepare", env=m.env(WORKBENCH_RESUME="1", WORKBENCH_ATTEMPT="2"))
    assert prep.returncode == 0, prep.stdout + prep.stderr
    assert (m.work / "checkpoints").is_dir() and not list((m.work / "checkpoints").iterdir())
