"""Local jobs in a container image with podman as the engine (``WORKBENCH_CONTAINER_ENGINE=podman``): the real
podman (Debian 12: 4.3.1, rootful), pulling from the real private registry with a password that
tests/support/containers.py starts (its dockerd only builds and pushes the image).

podman keeps its images, containers and state in a scratch folder of this test (a ``storage.conf`` and a
``containers.conf`` named by CONTAINERS_STORAGE_CONF / CONTAINERS_CONF): overlay storage, the cgroupfs manager
and a file events log (no systemd here), its locks in files there (not /dev/shm).  The ``containers.conf`` also
sets the containers' open-files and process limits to what this process may set: rootful podman's defaults
(1048576 open files, more processes than podman's own 32768) need CAP_SYS_RESOURCE, which this test machine's
root lacks (runc: "error setting rlimit type 7: operation not permitted"); a root with every capability needs no
such line.

Marker files prove that setup and run happened inside a podman container (``/run/.containerenv`` there, no
``/.dockerenv``, pid 1 the container's ``sleep infinity``), in one container, as the spec's user, with the
workdir mounted and the spec's env; exit code 3 comes back as 3; a wrong password fails before setup with the
login's reason; the per-job auth file is gone after the pull and no file outside the job folder — podman's own
database included — holds the password."""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from containers import _unmount_under

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec

from .helpers import LocalSetup, wait_for

SETUP = """
cat /run/.containerenv > setup.containerenv
if [ -f /.dockerenv ]; then echo docker > setup.docker; fi
id -u > setup.uid
echo from-setup > /tmp/setup-was-here
"""
RUN = """
id -u > run.uid
id -g > run.gid
echo "$GREETING" > run.env
printf '%s' "$TRICKY" > run.tricky
printf '%s' "$MULTI" > run.multi
tr '\\0' ' ' < /proc/1/cmdline > run.pid1
cat /tmp/setup-was-here > run.samecontainer
cat data.txt > run.data
pwd > run.pwd
[ -n "$REGISTRY_PW" ] && echo secret-present > run.secret
echo run-output-line
exit 3
"""
TRICKY = "it's \"quoted\" $HOME `x` \\n"  # reaches the job as it is (the env goes through a shell's quoting)
MULTI = "line one\nline 'two'\n"  # a multi-line value (an env file cannot carry it)
# podman's own places for a login when none is named: a per-job login must never write there
DEFAULT_AUTH = [Path("/run/containers/0/auth.json"), Path(os.path.expanduser("~/.config/containers/auth.json")),
                Path(os.path.expanduser("~/.docker/config.json"))]


@pytest.fixture(scope="module")
def podman_home():
    """podman's storage and state under a scratch folder; everything it made is removed afterwards."""
    if shutil.which("podman") is None:
        pytest.fail("podman is not installed (`make test` installs the Debian package podman)")
    d = Path(tempfile.mkdtemp(prefix="wbp-", dir="/tmp"))  # short: conmon's sockets live under the run root
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 32768)  # podman lowers its own to 32768
    (d / "storage.conf").write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{d}/root"\nrunroot = "{d}/run"\n')
    (d / "containers.conf").write_text(
        f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        f'[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nevents_logfile_path = "{d}/events.log"\n'
        f'tmp_dir = "{d}/tmp"\nlock_type = "file"\n')  # its locks in tmp_dir, not /dev/shm/libpod_lock
    env = {"CONTAINERS_STORAGE_CONF": str(d / "storage.conf"), "CONTAINERS_CONF": str(d / "containers.conf"),
           "WORKBENCH_CONTAINER_ENGINE": "podman"}

    def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(["podman", *args], capture_output=True, text=True, env={**os.environ, **env},
                              timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(f"podman {' '.join(args)} failed ({done.returncode}): {done.stderr[-1500:]}")
        return done

    try:
        yield d, env, podman
    finally:
        podman("rm", "-a", "-f", "-t", "0", check=False)
        podman("rmi", "-a", "-f", check=False)
        _unmount_under(d)
        shutil.rmtree(d, ignore_errors=True)


def _spec(tmp_path: Path, image: str, user: str = "1000:1000"):
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    (workdir / "data.txt").write_text("from the workdir\n")
    workdir.chmod(0o777)  # the job's user (1000) writes its markers there
    text = ("name: in-podman\nrun: \"true\"\nsecrets: [REGISTRY_PW]\n"
            f"env: {{GREETING: hello-from-env, TRICKY: {json.dumps(TRICKY)}, MULTI: {json.dumps(MULTI)}}}\n"
            f"workdir: {workdir}\n"
            f"image: {{name: '{image}', registry_auth: {{username: wbtest, password: REGISTRY_PW}}, user: '{user}'}}\n")
    return dataclasses.replace(parse_spec(text, base_dir=tmp_path), setup=SETUP, run=RUN)


def _run(local: LocalSetup, spec, password: str, monkeypatch, env: dict[str, str]):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DOCKER_HOST", raising=False)  # nothing of this job goes through the test's dockerd
    return local.run_to_the_end(local.provider(), spec, {"REGISTRY_PW": password})


def _files_holding(root: Path, secret: bytes) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and secret in path.read_bytes():
                found.append(path)
        except OSError:  # a socket or a file gone while walking
            continue
    return found


def test_a_local_job_runs_in_the_image_with_podman_as_its_user_with_workdir_and_env(local, world, podman_home,
                                                                                    tmp_path, monkeypatch):
    home, env, podman = podman_home
    before = {p: (p.read_bytes() if p.exists() else None) for p in DEFAULT_AUTH}
    assert podman("images", "-q").stdout.strip() == ""  # pulled for real, through the login
    launch_id, inst, took = _run(local, _spec(tmp_path, world.image), world.password, monkeypatch, env)
    print(f"podman: pull (161 MB) + container job end to end: {took:.1f}s")
    state, work = local.state_dir(launch_id), local.state_dir(launch_id) / "work"
    log = local.log(launch_id)
    print(log)
    assert (state / "exit_code").read_text().split() == ["3", "run"], log
    assert inst.exit_code == 3
    assert (work / "setup.containerenv").exists(), log  # podman's marker inside its containers
    assert (work / "run.pid1").read_text().strip() == "sleep infinity"  # the container's own pid namespace
    assert not (work / "setup.docker").exists()
    assert (work / "setup.uid").read_text().strip() == "1000" and (work / "run.uid").read_text().strip() == "1000"
    assert (work / "run.gid").read_text().strip() == "1000"
    assert (work / "run.env").read_text().strip() == "hello-from-env"
    assert (work / "run.tricky").read_text() == TRICKY and (work / "run.multi").read_text() == MULTI
    assert (work / "run.samecontainer").read_text().strip() == "from-setup"
    assert (work / "run.data").read_text().strip() == "from the workdir"
    assert (work / "run.pwd").read_text().strip() == str(work)
    assert (work / "run.secret").read_text().strip() == "secret-present"
    assert "run-output-line" in log and "[workbench] pulled" in log and world.password not in log
    assert world.image in podman("images", "--format", "{{.Repository}}:{{.Tag}}").stdout  # podman's pull
    # the per-job auth file went with the pull; podman's and Docker's own login files are untouched
    assert not (state / "docker").exists() and not (state / "container.env").exists()
    assert {p: (p.read_bytes() if p.exists() else None) for p in DEFAULT_AUTH} == before
    secret = world.password.encode()
    assert _files_holding(local.data_dir, secret) == [] and _files_holding(home, secret) == []
    assert _files_holding(Path("/var/lib/containers/cache"), secret) == []  # podman's blob cache, outside home
    # the container is gone
    assert podman("ps", "-aq", "--filter", f"label=workbench.launch={launch_id}").stdout.strip() == ""


def test_a_wrong_registry_password_fails_before_setup_with_podman(local, world, podman_home, tmp_path, monkeypatch):
    home, env, podman = podman_home
    launch_id, inst, _ = _run(local, _spec(tmp_path, world.image), "not-the-password", monkeypatch, env)
    state, log = local.state_dir(launch_id), local.log(launch_id)
    assert (state / "exit_code").read_text().split() == ["125", "setup"], log
    assert "could not log in to" in log and "the registry refused the login" in log, log
    assert "setup was not started" in log and not (state / "work" / "setup.uid").exists()
    assert "not-the-password" not in log and not (state / "docker").exists()
    assert _files_holding(home, b"not-the-password") == []


def test_a_signal_reaches_the_job_inside_and_stop_removes_the_podman_container(local, world, podman_home, tmp_path,
                                                                                monkeypatch):
    """``container.sh signal TERM`` (the storage agent's, on an interruption notice) through ``podman exec``; then
    the app's Stop of a second job: its container goes (``rm -f -t 0``: no 10 s wait for the sleeping pid 1)."""
    home, env, podman = podman_home
    run = "trap 'echo got-term > run.term; exit 7' TERM\ntouch run.started\nwhile :; do sleep 0.2; done\n"
    spec = dataclasses.replace(_spec(tmp_path, world.image, user="0:0"), setup=None, run=run)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    provider = local.provider(grace_seconds="5")
    req = dataclasses.replace(local.request(provider, spec), secret_env={"REGISTRY_PW": world.password})
    (inst,) = provider.launch(req)
    state = local.state_dir(inst.launch_id)
    wait_for(lambda: (state / "work" / "run.started").exists(), "the run to start in its container", seconds=60)
    sent = subprocess.run(["sh", str(state / "container.sh"), "signal", "TERM"], capture_output=True, text=True,
                          timeout=30)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    wait_for(lambda: (state / "exit_code").exists(), "the job to end on its TERM", seconds=30)
    assert (state / "exit_code").read_text().split() == ["7", "run"], local.log(inst.launch_id)
    assert (state / "work" / "run.term").read_text().strip() == "got-term"
    label = f"label=workbench.launch={inst.launch_id}"
    assert podman("ps", "-aq", "--filter", label).stdout.strip() == ""

    second = dataclasses.replace(spec, name="stopped")
    req = dataclasses.replace(local.request(provider, second), secret_env={"REGISTRY_PW": world.password})
    (inst,) = provider.launch(req)
    state = local.state_dir(inst.launch_id)
    wait_for(lambda: (state / "work" / "run.started").exists(), "the run to start in its container", seconds=60)
    label = f"label=workbench.launch={inst.launch_id}"
    assert podman("ps", "-q", "--filter", label).stdout.strip() != ""
    started = time.monotonic()
    provider.terminate([inst])
    wait_for(lambda: podman("ps", "-aq", "--filter", label).stdout.strip() == "",
             "the job's container to be removed", seconds=20)
    print(f"podman: stop of a container job: {time.monotonic() - started:.1f}s")


def test_an_engine_named_but_not_installed_stops_the_launch_with_what_to_do(local, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").symlink_to(shutil.which("docker"))  # Docker is there, podman is not
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("WORKBENCH_CONTAINER_ENGINE", "podman")
    provider = local.provider()
    with pytest.raises(ConfigError, match="WORKBENCH_CONTAINER_ENGINE names 'podman', which is not installed") as got:
        provider.launch(local.request(provider, _spec(tmp_path, "127.0.0.1:5000/wb/job:1")))
    assert "unset the variable" in (got.value.hint or "")


def test_an_image_without_registry_auth_is_pulled_without_a_login_by_podman(local, world, podman_home, tmp_path,
                                                                           monkeypatch):
    """No ``registry_auth`` (a public image): podman pulls with the empty per-job auth file (it refuses a missing
    one); this registry wants a login, so the pull itself is refused — by the registry, before setup."""
    home, env, podman = podman_home
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    workdir = tmp_path / "project"
    workdir.mkdir()
    spec = parse_spec(f"name: public\nrun: \"true\"\nworkdir: {workdir}\nimage: '{world.registry}/wb/job:1'\n",
                      base_dir=tmp_path)
    provider = local.provider()
    (inst,) = provider.launch(local.request(provider, spec))
    state = local.state_dir(inst.launch_id)
    wait_for(lambda: (state / "exit_code").exists(), "the job to end", seconds=60)
    log = local.log(inst.launch_id)
    assert (state / "exit_code").read_text().split() == ["125", "setup"], log
    assert "logging in" not in log and "auth.json" not in log, log  # no login, and no complaint about the file
    assert "could not pull" in log and "the registry refused the login" in log, log
