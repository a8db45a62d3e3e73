"""A job with ``image:`` on a cloud machine: AWS (moto) launches it, the machine is a real sshd whose sessions
talk to a real Docker daemon (DOCKER_HOST), the image comes from a private registry with a password
(tests/support/containers.py).  The job's setup and run happen inside the container: the log shows the
image's own python3, ``/.dockerenv``, the spec's user and env, the workdir mounted at the job's path; exit
code 3 comes back as 3; a wrong password ends before setup with its reason."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import time

import pytest

import aws_moto
import sshd as sshd_support
from workbench_testing import fake_cloud_accounts

from .helpers import Events, quick_options

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Profile
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.core.remote.job import RemoteJob, recorded_exit_code

SETTINGS = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
            "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}
SETUP = "test -f /.dockerenv && echo setup-in-container\necho from-setup > /tmp/setup-was-here\n"
RUN = """echo "run uid=$(id -u) gid=$(id -g)"
echo "python $(python3 -c 'import sys; print(sys.version.split()[0])')"
echo "greeting=$GREETING rank=$NODE_RANK nodes=$NNODES"
echo "same container: $(cat /tmp/setup-was-here)"
echo "workdir $(pwd) holds: $(cat data.txt)"
test -f /.dockerenv && echo run-in-container
exit 3
"""


@pytest.fixture(scope="module")
def machine(world, tmp_path_factory):
    """An sshd "machine" whose sessions use the test's Docker daemon."""
    why = sshd_support.available()
    if why:
        pytest.fail(f"the remote tests need a real sshd: {why}")
    server = sshd_support.Sshd.start(tmp_path_factory.mktemp("container-machine"), env=world.env)
    yield server
    server.stop()


@contextlib.contextmanager
def _launched(tmp_path, monkeypatch, machine, world, password: str):
    """(accounts, spec, instance) of a launch on the machine; its jobs, secrets, store and moto end after."""
    acc, stack, spec, inst = _launch(tmp_path, monkeypatch, machine, world, password)
    try:
        yield acc, spec, inst
    finally:
        machine.end_jobs()
        launch_secrets.forget(inst.launch_id)
        acc.store.close()
        stack.reset()


def _containers_left(world, inst) -> str:
    return world.docker("ps", "-aq", "--filter", f"label=workbench.launch={inst.launch_id}").stdout.strip()


def _launch(tmp_path, monkeypatch, machine, world, password: str):
    stack = aws_moto.start()
    stack.reset()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch)
    importlib.invalidate_caches()
    address = f"{machine.user}@127.0.0.1:{machine.port}"
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                             settings={**SETTINGS, "ssh_address": address}))
    creds.set("aws", "moto", {"access_key_id": "AKIAWORKBENCHTEST01", "secret_access_key": "not-a-real-secret"})
    machine.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.txt").write_text("uploaded-data\n")
    spec = parse_spec(f"name: boxed\nrun: 'true'\nsecrets: [REG_PW]\nworkdir: {work}\n"
                      "resources: {gpu: 'V100:1'}\nenv: {GREETING: hello-machine}\n"
                      f"image: {{name: '{world.image}', registry_auth: {{username: {world.user}, password: REG_PW}},"
                      " user: '1000:1000', shm_size: 128m}\n")
    spec = dataclasses.replace(spec, setup=SETUP, run=RUN)
    (inst,) = execute(acc, choose_offer(acc, spec, provider="aws"), secret_env={"REG_PW": password})
    return acc, stack, spec, inst


def test_a_cloud_job_runs_in_its_pulled_image_with_user_env_workdir_and_its_exit_code(tmp_path, monkeypatch,
                                                                                      machine, world):
    world.forget(world.image)
    with _launched(tmp_path, monkeypatch, machine, world, world.password) as (acc, spec, inst):
        started = time.monotonic()
        events = Events()
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=events).run()
        print(f"cloud container job (upload, pull 161 MB, setup, run): {time.monotonic() - started:.1f}s")
        log = paths.job_log(inst.launch_id).read_text()
        print(log)
        assert code == 3 and recorded_exit_code(inst.launch_id) == 3, log
        phases = events.phases()  # the pull (seconds: every layer is downloaded) is a phase of its own
        assert "pulling" in phases and "running" in phases[phases.index("pulling"):], phases
        assert "[workbench] logging in to" in log and "Login Succeeded" in log and "Pull complete" in log
        assert "setup-in-container" in log and "run-in-container" in log
        assert "run uid=1000 gid=1000" in log and "python 3.11.2" in log
        assert "greeting=hello-machine rank=0 nodes=1" in log and "same container: from-setup" in log
        job_dir = machine.remote_dir / "jobs" / inst.launch_id
        assert f"workdir {job_dir}/work holds: uploaded-data" in log
        assert world.password not in log
        assert not (job_dir / "docker").exists()  # the per-job login is gone after the pull
        assert oct((job_dir / "container.env").stat().st_mode & 0o777) == "0o600"
        assert _containers_left(world, inst) == ""


def test_a_wrong_password_on_the_machine_fails_before_setup_with_the_reason(tmp_path, monkeypatch, machine, world):
    with _launched(tmp_path, monkeypatch, machine, world, "wrong-password") as (acc, spec, inst):
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=Events()).run()
        log = paths.job_log(inst.launch_id).read_text()
        assert code == 125, log
        assert "the registry refused the login" in log and "setup was not started" in log
        assert "setup-in-container" not in log and "wrong-password" not in log


def test_a_launch_stopped_while_its_workdir_uploads_goes_on_later_with_the_container_it_prepared(
        tmp_path, monkeypatch, machine, world):
    """The image is pulled and its container started while the workdir uploads; the app stops (closed) mid-upload
    and a later app goes on: the upload resumes, and supervise.sh uses the prepared container (one pull)."""
    import threading

    with _launched(tmp_path, monkeypatch, machine, world, world.password) as (acc, spec, inst):
        for i in range(400):  # an upload long enough to stop in
            (tmp_path / "work" / f"part-{i:03d}.txt").write_text(f"{i}\n" * 200)
        uploading = threading.Event()
        seen: list[str] = []

        def watch(ev) -> None:
            seen.append(ev.phase)
            if ev.kind == "upload" and not uploading.is_set():
                uploading.set()
                first.stop()  # what closing the app does to its jobs

        first = RemoteJob(acc, inst, spec, quick_options(), on_event=watch)
        try:
            first.launch()
        except Exception:  # the closed connection, as when the app closes mid-upload
            pass
        assert uploading.is_set() and seen.index("pulling") < seen.index("uploading"), seen
        job_dir = machine.remote_dir / "jobs" / inst.launch_id
        assert not (job_dir / "started").exists()  # supervise.sh never began
        events = Events()
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=events).run()
        log = paths.job_log(inst.launch_id).read_text()
        assert code == 3, log
        assert log.count("[workbench] pulling") == 1 and "run-in-container" in log, log  # the prepared one
        assert "workdir" in log and "holds: uploaded-data" in log
        assert (job_dir / "work" / "part-399.txt").read_text() == "399\n" * 200  # the upload went on to the end
        assert _containers_left(world, inst) == ""
