"""Local jobs in a container image, against a real Docker daemon and a private registry with a password
(tests/support/containers.py: dockerd, docker-registry and an image built here from Debian packages).

Marker files prove that setup and run happened inside the container (``/.dockerenv``, the image's own
python3), in one container (what setup left in its /tmp is there for run), as the spec's user, with the
workdir mounted and the spec's env; exit code 3 comes back as 3; a wrong password and a missing image end
before setup with their reason."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec

from .helpers import LocalSetup, wait_for

SETUP = """
test -f /.dockerenv && echo yes > setup.incontainer
id -u > setup.uid
echo from-setup > /tmp/setup-was-here
"""
RUN = """
id -u > run.uid
id -g > run.gid
echo "$GREETING" > run.env
cat /tmp/setup-was-here > run.samecontainer
python3 -c 'import sys; print(sys.version.split()[0])' > run.python
df -k /dev/shm | tail -n 1 | awk '{print $2}' > run.shm
pwd > run.pwd
[ -n "$REGISTRY_PW" ] && echo secret-present > run.secret
echo run-output-line
exit 3
"""


def _spec(tmp_path: Path, image: str, password_secret: str = "REGISTRY_PW", user: str = "1000:1000"):
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    (workdir / "data.txt").write_text("from the workdir\n")
    workdir.chmod(0o777)  # the job's user (1000) writes its markers there; on a desktop it is the user's own folder
    text = (f"name: in-container\nrun: \"true\"\nsecrets: [{password_secret}]\nenv: {{GREETING: hello-from-env}}\n"
            f"workdir: {workdir}\n"
            f"image: {{name: '{image}', registry_auth: {{username: wbtest, password: {password_secret}}}, "
            f"user: '{user}', shm_size: 256m}}\n")
    spec = parse_spec(text, base_dir=tmp_path)
    return dataclasses.replace(spec, setup=SETUP, run=RUN)


def _run(local: LocalSetup, world, spec, password: str, monkeypatch, secret: str = "REGISTRY_PW"):
    monkeypatch.setenv("DOCKER_HOST", world.env["DOCKER_HOST"])
    return local.run_to_the_end(local.provider(), spec, {secret: password})


def test_a_local_job_runs_in_the_pulled_image_as_its_user_with_workdir_and_env(local, world, tmp_path,
                                                                                monkeypatch):
    home_config = Path(os.path.expanduser("~/.docker/config.json"))
    before = home_config.read_bytes() if home_config.exists() else None
    world.forget(world.image)  # pulled for real, through the login
    spec = _spec(tmp_path, world.image)
    launch_id, inst, took = _run(local, world, spec, world.password, monkeypatch)
    print(f"pull (161 MB) + container job end to end: {took:.1f}s")
    state, work = local.state_dir(launch_id), local.state_dir(launch_id) / "work"
    log = local.log(launch_id)
    print(log)
    assert (state / "exit_code").read_text().split() == ["3", "run"], log
    assert inst.exit_code == 3
    assert (work / "setup.incontainer").read_text().strip() == "yes"
    assert (work / "setup.uid").read_text().strip() == "1000" and (work / "run.uid").read_text().strip() == "1000"
    assert (work / "run.gid").read_text().strip() == "1000"
    assert (work / "run.env").read_text().strip() == "hello-from-env"
    assert (work / "run.samecontainer").read_text().strip() == "from-setup"
    assert (work / "run.python").read_text().strip() == "3.11.2"  # Debian's python3 in the image
    assert (work / "run.shm").read_text().strip() == str(256 * 1024)
    assert (work / "run.pwd").read_text().strip() == str(work)
    assert (work / "run.secret").read_text().strip() == "secret-present"
    assert "run-output-line" in log and "[workbench] pulling" in log and "[workbench] pulled" in log
    assert world.password not in log
    # the per-job login is gone after the pull; the user's own Docker config is untouched
    assert not (state / "docker").exists()
    assert (home_config.read_bytes() if home_config.exists() else None) == before
    # the env file (0600) held the secret until the container started: nothing on this computer keeps it
    assert not (state / "container.env").exists()
    for path in local.data_dir.rglob("*"):
        if path.is_file():
            assert world.password.encode() not in path.read_bytes(), path
    # the container is gone
    assert world.docker("ps", "-aq", "--filter", f"label=workbench.launch={launch_id}").stdout.strip() == ""


def test_a_wrong_registry_password_fails_before_setup(local, world, tmp_path, monkeypatch):
    spec = _spec(tmp_path, world.image)
    launch_id, inst, _ = _run(local, world, spec, "not-the-password", monkeypatch)
    work, log = local.state_dir(launch_id) / "work", local.log(launch_id)
    assert (local.state_dir(launch_id) / "exit_code").read_text().split() == ["125", "setup"], log
    assert "the registry refused the login" in log and "setup was not started" in log
    assert not (work / "setup.uid").exists() and not (work / "run.uid").exists()
    assert "not-the-password" not in log
    assert not (local.state_dir(launch_id) / "docker").exists()


def test_a_missing_image_fails_before_setup(local, world, tmp_path, monkeypatch):
    spec = _spec(tmp_path, f"{world.registry}/wb/no-such-image:1")
    launch_id, inst, _ = _run(local, world, spec, world.password, monkeypatch)
    work, log = local.state_dir(launch_id) / "work", local.log(launch_id)
    assert (local.state_dir(launch_id) / "exit_code").read_text().split() == ["125", "setup"], log
    assert "could not pull" in log and "the image was not found" in log
    assert not (work / "setup.uid").exists()


def test_without_docker_or_podman_the_launch_names_what_to_install(local, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    spec = _spec(tmp_path, "127.0.0.1:5000/wb/job:1")
    provider = local.provider()
    with pytest.raises(ConfigError, match="neither Docker nor podman") as got:
        provider.launch(local.request(provider, spec))
    assert "docker.io" in (got.value.hint or "")


def test_stopping_a_local_container_job_removes_its_container(local, world, tmp_path, monkeypatch):
    spec = dataclasses.replace(_spec(tmp_path, world.image, user="0:0"), setup=None,
                               run="touch run.started; sleep 300")
    monkeypatch.setenv("DOCKER_HOST", world.env["DOCKER_HOST"])
    provider = local.provider(grace_seconds="5")
    req = dataclasses.replace(local.request(provider, spec), secret_env={"REGISTRY_PW": world.password})
    (inst,) = provider.launch(req)
    work = local.state_dir(inst.launch_id) / "work"
    wait_for(lambda: (work / "run.started").exists(), "the run to start in its container", seconds=60)
    label = f"label=workbench.launch={inst.launch_id}"
    assert world.docker("ps", "-q", "--filter", label).stdout.strip() != ""
    started = time.monotonic()
    provider.terminate([inst])
    print(f"stop of a container job: {time.monotonic() - started:.1f}s")
    wait_for(lambda: world.docker("ps", "-aq", "--filter", label).stdout.strip() == "",
             "the job's container to be removed", seconds=20)
