"""A Local job's storage credentials reach rclone only: the job's ``setup`` and ``run`` (and everything they start)
never have them in their environment, while the mount still works (issue 30).  A real Local job, a ``copy``
mount from moto S3 through real rclone; the credentials are the ones the launch minted (captured on their way)."""

from __future__ import annotations

import json
import os
import stat

from agent_run import KEY_ID, SECRET, new_machine, wait_until

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Profile
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.teardown import teardown
from workbench.core.storage import machine
from workbench.core.storage.machine import CREDENTIALS_NAME, SECRET_PREFIX

#: the credential variables that hold a secret (the rest name the endpoint, region, provider)
SECRET_KEYS = ("_ACCESS_KEY_ID", "_SECRET_ACCESS_KEY", "_SESSION_TOKEN", "_SAS_URL")
ENV_DUMP = "env | sed 's/^/{tag}-env: /'; env | grep -c {prefix} | sed 's/^/{tag} sees credentials: /' || true"


def minted(monkeypatch) -> list[dict]:
    """Every MachineSetup's credentials the launch makes, as they leave ``machine_setup``."""
    seen: list[dict] = []
    real = machine.machine_setup

    def spy(*args, **kwargs):
        setup = real(*args, **kwargs)
        seen.append(dict(setup.secret_env))
        return setup

    monkeypatch.setattr(machine, "machine_setup", spy)
    return seen


def test_setup_and_run_of_a_local_job_never_see_the_storage_credentials(cloud, tmp_path, monkeypatch):
    acc = cloud.accounts
    cloud.bucket("data-bucket", files={"in/hello.txt": b"hello from the bucket\n"})
    secrets = minted(monkeypatch)
    spec = parse_spec(f"""name: env-probe
providers: [local]
setup: |
  {ENV_DUMP.format(tag="setup", prefix=SECRET_PREFIX)}
  sh -c 'env' | grep -c {SECRET_PREFIX} | sed 's/^/setup child sees credentials: /' || true
run: |
  {ENV_DUMP.format(tag="run", prefix=SECRET_PREFIX)}
  cat data/hello.txt
  echo probe-done
storage:
  - {{path: data, source: s3://data-bucket/in, mode: copy}}
guards: {{max_runtime: 10m}}
""", source=str(tmp_path / "probe.yaml"))
    (inst,) = execute(acc, plan(acc, spec))
    lid = inst.launch_id
    try:
        wait_until(lambda: not [i for i in reconcile(acc).instances if i.launch_id == lid and i.state.active], 60,
                   "the job to end")
        log = paths.job_log(lid).read_text()
    finally:
        report = teardown(acc, None, timeout=30, poll=0.05)
    assert report.clean
    assert "hello from the bucket\nprobe-done\n" in log, log  # the mount worked: rclone had its credentials
    (creds,) = secrets
    assert creds and f"{SECRET_PREFIX}0_SESSION_TOKEN" in creds
    assert "setup-env: " in log and "run-env: " in log  # the probes ran
    assert SECRET_PREFIX not in log, [ln for ln in log.splitlines() if SECRET_PREFIX in ln]
    leaked = [k for k, v in creds.items() if k.endswith(SECRET_KEYS) and v in log]
    assert not leaked, leaked  # not under another name either
    assert KEY_ID not in log and SECRET not in log  # nor the profile's own key
    assert "setup sees credentials: 0" in log and "run sees credentials: 0" in log
    assert "setup child sees credentials: 0" in log
    # on disk only for the job's lifetime: the 0600 file the agent read is gone once the job ended
    assert not (paths.job_dir(lid) / CREDENTIALS_NAME).exists()
    config = (paths.job_dir(lid) / machine.CONFIG_NAME).read_text()
    assert not [k for k, v in creds.items() if k.endswith(SECRET_KEYS) and v in config]


def test_local_spec_keeps_the_credentials_out_of_the_job_s_env_in_a_private_file(cloud, tmp_path, monkeypatch):
    secrets = minted(monkeypatch)
    cloud.bucket("data-bucket", files={"in/a.txt": b"a"})
    spec = parse_spec("""name: spec-only
providers: [local]
run: 'true'
env: {MINE: '1'}
storage:
  - {path: data, source: s3://data-bucket/in, mode: copy}
""", source=str(tmp_path / "s.yaml"))
    local = Profile("local", "local", None)
    out = machine.local_spec(cloud.accounts, spec, "l-env-probe-1", local)
    (creds,) = secrets
    assert dict(out.env) == {"MINE": "1"}  # nothing added to the job's environment
    path = paths.job_dir("l-env-probe-1") / CREDENTIALS_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == creds
    config = json.loads((paths.job_dir("l-env-probe-1") / machine.CONFIG_NAME).read_text())
    assert config["credentials_file"] == str(path) and config["drop_credentials"] is True


def test_a_failed_prepare_drops_the_credentials_file_it_read(cloud, tmp_path):
    """The agent reads the file (nothing in its environment) and, on this computer, deletes it when the job cannot
    start: its job folder is kept after the job, its credentials are not."""
    cloud.bucket("lab-data", files={"imagenet/a.txt": b"a"})
    spec = parse_spec("name: p\nrun: 'true'\nstorage:\n  - {path: data, source: s3://lab-data/imagenet, mode: copy}\n",
                      source="t.yaml", base_dir=tmp_path)
    root = tmp_path / "m1"
    creds = root / "state" / CREDENTIALS_NAME
    setup = machine.machine_setup(cloud.accounts, spec, "p-abc123", cloud.profile, state_dir=str(root / "state"),
                                  on_this_computer=True, credentials_file=str(creds))
    m = new_machine(root, setup)
    machine.write_private(creds, json.dumps(setup.secret_env))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", SECRET_PREFIX))}
    assert m.agent("prepare", env=env).returncode == 0 and (m.work / "data" / "a.txt").read_text() == "a"
    assert creds.exists()  # run still needs it
    (m.state / "storage.prepared").unlink()
    cloud.s3().delete_object(Bucket="lab-data", Key="imagenet/a.txt")
    cloud.s3().delete_bucket(Bucket="lab-data")
    assert m.agent("prepare", env=env).returncode == 1
    assert not creds.exists()
