"""``container.sh prepare``: the job's image pulled and its container started while the app uploads the workdir,
against the tests' real Docker daemon and password registry (tests/support/containers.py).  The job folder is
the one the runner installs (``supervisor.render``), written here; ``supervise.sh`` and the prepare run as they
do on a machine, without the SSH in between (tests/remote/test_container_machine.py has the whole launch).

* a cached image is started while the registry is asked whether its tag moved: when it moved, the container
  runs from the new image; when it did not, from the one it had;
* a pull that fails leaves no container behind, also when the image was cached;
* ``container.sh stop`` during a prepare ends the prepare (its whole process group) before it removes the
  container, so nothing starts one afterwards;
* ``supervise.sh`` waits for a prepare and uses its container; a prepare that died without a result (its SSH
  session was torn down) is done again by ``supervise.sh`` itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from workbench.core.domain.jobspec import parse_spec
from workbench.core.remote import container, supervisor

from .helpers import wait_until

pytestmark = pytest.mark.timeout(180)


def _job(tmp_path: Path, world, image: str, run: str = "echo run-in-container; exit 4",
         password: str | None = None) -> Path:
    """A job folder as the runner installs it (0700; env files 0600); its launch id is the folder's name."""
    job = tmp_path / f"prep-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    (job / "work").mkdir(parents=True)
    job.chmod(0o700)
    spec = parse_spec(f"name: p\nrun: {run!r}\non_finish: keep\nsecrets: [REG_PW]\n"
                      f"image: {{name: '{image}', registry_auth: {{username: {world.user}, password: REG_PW}}}}\n")
    env = {"GREETING": "hi", "REG_PW": world.password if password is None else password}
    files = supervisor.render(spec, job.name, env, "setsid", job_dir=str(job)).files
    for name, text in files.items():
        (job / name).write_text(text)
        (job / name).chmod(0o755 if name.endswith(".sh") and name not in ("env.sh", container.ENV_FILE) else 0o600)
    return job


def _env(world) -> dict[str, str]:
    return {**os.environ, **world.env}


def _sh(world, job: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["sh", str(job / container.SCRIPT), *args], env=_env(world), capture_output=True, text=True,
                          timeout=120)
    assert not check or done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _begin(world, job: Path) -> int:
    """What the runner sends over SSH: the detached prepare; its pid."""
    out = subprocess.run(["sh", "-c", container.prepare_command(str(job))], env=_env(world), capture_output=True,
                         text=True, timeout=30)
    assert out.stdout.strip() == "begun", out
    return int((job / "container.prepare").read_text())


def _ready(job: Path) -> int:
    wait_until(lambda: (job / "container.ready").exists(), 120, "the prepare's result")
    return int((job / "container.ready").read_text())


def _containers(world, job: Path) -> list[str]:
    return world.docker("ps", "-aq", "--filter", f"label=workbench.launch={job.name}").stdout.split()


def _image_of(world, job: Path) -> str:
    return world.docker("inspect", "-f", "{{.Image}}", container.container_name(job.name)).stdout.strip()


def _push(world, note: str) -> str:
    """The base image pushed again as ``wb/moving:1`` with another config (``note``): the tag moves; its id."""
    import containers
    from oci_push import push_rootfs

    ref = push_rootfs(containers.base_tarball(), world.registry, "wb/moving:1", world.user, world.password, note=note)
    return ref


def test_a_cached_image_starts_during_the_registry_check_and_again_from_the_new_image_when_its_tag_moved(
        tmp_path, world):
    ref = _push(world, "first")
    world.forget(ref)
    first = _job(tmp_path, world, ref)
    _begin(world, first)
    assert _ready(first) == 0  # not cached: pulled, then started
    log = (first / "output.log").read_text()
    assert "Downloaded newer image" in log and "changed in the registry" not in log, log
    wait_until(lambda: not (first / "container.prepare").exists(), 10, "the prepare's pid file removed as it ends")
    old_id = _image_of(world, first)
    _sh(world, first, "stop")

    _push(world, "second")  # the tag moves in the registry; this daemon still has the first image under it
    moved = _job(tmp_path, world, ref)
    _begin(world, moved)
    assert _ready(moved) == 0
    log = (moved / "output.log").read_text()
    assert "changed in the registry: starting the container again from the new image" in log, log
    new_id = _image_of(world, moved)
    assert new_id != old_id and new_id == world.docker("image", "inspect", "-f", "{{.Id}}", ref).stdout.strip()
    assert len(_containers(world, moved)) == 1
    _sh(world, moved, "stop")

    same = _job(tmp_path, world, ref)  # the tag did not move: the container started during the check is the one
    _begin(world, same)
    assert _ready(same) == 0
    log = (same / "output.log").read_text()
    assert "Image is up to date" in log and "changed in the registry" not in log, log
    assert _image_of(world, same) == new_id
    _sh(world, same, "stop")
    assert _containers(world, same) == []


def test_a_failed_pull_of_a_cached_image_leaves_no_container(tmp_path, world):
    world.docker("pull", world.image, env={"DOCKER_CONFIG": str(_login(tmp_path, world))})  # cached here
    job = _job(tmp_path, world, world.image, password="wrong-password")
    _begin(world, job)
    assert _ready(job) == container.PULL_FAILED
    log = (job / "output.log").read_text()
    assert "the registry refused the login" in log and "wrong-password" not in log, log
    assert _containers(world, job) == []  # the one started during the check is gone
    assert not (job / "docker").exists()


def _login(tmp_path: Path, world) -> Path:
    config = tmp_path / "docker-config"
    config.mkdir(exist_ok=True)
    world.docker("login", "-u", world.user, "--password-stdin", world.registry, input=world.password,
                 env={"DOCKER_CONFIG": str(config)})
    return config


def test_stop_during_a_prepare_ends_it_first_and_leaves_no_container(tmp_path, world):
    _uncached(world)  # a real download: seconds to stop it in
    job = _job(tmp_path, world, world.image)
    pid = _begin(world, job)
    wait_until(lambda: _under_way(job), 60, "the pull under way")
    _sh(world, job, "stop")
    assert not _alive_group(pid), "the prepare's process group outlived stop"
    assert not (job / "container.prepare").exists() and not (job / "container.ready").exists()
    assert _containers(world, job) == []


def _under_way(job: Path) -> bool:
    log = (job / "output.log").read_text(errors="replace") if (job / "output.log").exists() else ""
    return "Pulling fs layer" in log or "Downloading" in log


def _uncached(world) -> None:
    """Neither the job image nor the moved one nor the one it moved from (they share their layer) on the daemon:
    the next pull downloads."""
    world.forget(world.image)
    world.forget(f"{world.registry}/wb/moving:1")
    world.docker("image", "prune", "-f")


def _alive_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_supervise_uses_the_prepares_container_and_does_a_dead_prepares_work_itself(tmp_path, world):
    waited = _job(tmp_path, world, world.image)
    _begin(world, waited)
    supervise = subprocess.run(["sh", str(waited / "supervise.sh")], env=_env(world), capture_output=True, text=True,
                               timeout=120)  # started at once: it waits for the prepare's result
    assert supervise.returncode == 0, supervise
    assert (waited / "exit_code").read_text().strip() == "4"
    log = (waited / "output.log").read_text()
    assert log.count("[workbench] pulling") == 1 and "run-in-container" in log, log  # one pull: the prepare's
    assert not (waited / "container.ready").exists() and _containers(world, waited) == []

    _uncached(world)
    orphan = _job(tmp_path, world, world.image)
    pid = _begin(world, orphan)
    wait_until(lambda: "[workbench] pulling" in (orphan / "output.log").read_text(errors="replace"), 60,
               "the prepare's pull under way")
    os.killpg(pid, signal.SIGKILL)  # its session torn down mid-pull: no result will come
    wait_until(lambda: not _alive_group(pid), 30, "the killed prepare gone")
    subprocess.run(["sh", str(orphan / "supervise.sh")], env=_env(world), capture_output=True, timeout=180)
    assert (orphan / "exit_code").read_text().strip() == "4"
    log = (orphan / "output.log").read_text()
    assert log.count("[workbench] pulling") == 2 and "run-in-container" in log, log
    assert _containers(world, orphan) == []
