"""A Local job whose image logs in with the password saved by ``workbench registry login`` (issue 34):
``registry_auth: {username: U, password: keyring}``, the real Secret Service (scripts/with-secret-service.sh),
a real Docker daemon and a private registry with a password (tests/support/containers.py), all through the
real CLI in subprocesses (the launching process reads the keyring).

The job pulls with the saved password and runs inside the image; afterwards no file of the app's folders or
the job's holds the password.  A wrong saved password fails before setup with the login's error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from secret_service import needs_secret_service

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [needs_secret_service]

RUN = """
test -f /.dockerenv && echo yes > run.incontainer
python3 -c 'import sys; print(sys.version.split()[0])' > run.python
echo keyring-job-output
"""


class Cli:
    def __init__(self, home: Path, world) -> None:
        self.home = home
        self.env = {**os.environ, "WORKBENCH_HOME": str(home), **world.env}

    def __call__(self, *args: str, stdin: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args], input=stdin, env=self.env, cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=None if stdin is not None else subprocess.DEVNULL)

    def stop_all(self) -> None:
        for p in psutil.process_iter(["environ"]):
            try:
                env = p.info["environ"] or {}
            except (psutil.Error, OSError):
                continue
            if env.get("WORKBENCH_MANAGED") == "true" and env.get("WORKBENCH_HOME") == str(self.home):
                p.kill()
        self("down", "--all", "--yes", "--include-own", "--timeout", "10", timeout=60)


@pytest.fixture
def cli(tmp_path, world):
    c = Cli(tmp_path / "home", world)
    yield c
    c.stop_all()


def _spec(tmp_path: Path, image: str) -> Path:
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    path = tmp_path / "keyring-job.yaml"
    path.write_text(f"name: keyring-job\nrun: {json.dumps(RUN)}\nworkdir: {workdir}\n"
                    f"image:\n  name: '{image}'\n  registry_auth: {{username: wbtest, password: keyring}}\n")
    return path


def _run(cli: Cli, spec: Path) -> tuple[str, str]:
    """``workbench run`` (launch, then follow the log to the end): the launch id and the whole log."""
    done = cli("run", str(spec), "--provider", "local", "--yes", "--interval", "0.2")
    launches = json.loads(cli("status", "--json").stdout)["launches"]
    assert len(launches) == 1, done.stdout + done.stderr
    return launches[0]["launch_id"], done.stdout + done.stderr


def test_a_local_job_pulls_with_the_password_saved_in_the_keyring(cli, world, tmp_path):
    saved = cli("registry", "login", world.registry, "--username", "wbtest", "--password-stdin", "--json",
                stdin=world.password)
    assert saved.returncode == 0, saved.stderr
    world.forget(world.image)  # pulled for real, through the login
    started = time.monotonic()
    launch_id, out = _run(cli, _spec(tmp_path, world.image))
    print(f"keyring login + pull (161 MB) + job: {time.monotonic() - started:.1f}s")
    assert "exit code: 0" in out, out
    assert f"[workbench] logging in to {world.registry} as wbtest" in out
    assert "Login Succeeded" in out and f"[workbench] pulled {world.image}" in out
    assert "keyring-job-output" in out
    work = next(cli.home.rglob(f"local/{launch_id}/work"))
    assert (work / "run.incontainer").read_text().strip() == "yes"
    assert (work / "run.python").read_text().strip() == "3.11.2"  # Debian's python3 inside the image
    # the password went from the keyring into the pull's login only: no file of the app's folders (data, config,
    # logs, the job's folder and workdir) holds it afterwards; the per-job Docker config is gone
    assert not (work.parent / "docker").exists()
    for root in (cli.home, tmp_path / "project"):
        for path in root.rglob("*"):
            if path.is_file():
                assert world.password.encode() not in path.read_bytes(), path
    assert world.password not in out
    assert world.docker("ps", "-aq", "--filter", f"label=workbench.launch={launch_id}").stdout.strip() == ""


def test_a_wrong_saved_password_fails_before_setup_with_the_login_error(cli, world, tmp_path):
    wrong = "not-the-registry-password"
    assert cli("registry", "login", world.registry, "-u", "wbtest", "--password-stdin", stdin=wrong).returncode == 0
    spec = _spec(tmp_path, world.image)
    text = spec.read_text().replace("name: keyring-job\n", "name: keyring-job\nsetup: touch setup.ran\n")
    spec.write_text(text)
    launch_id, out = _run(cli, spec)
    assert "exit code: 125" in out, out
    assert "could not log in" in out and "the registry refused the login" in out and "setup was not started" in out
    work = next(cli.home.rglob(f"local/{launch_id}/work"))
    assert not (work / "setup.ran").exists() and not (work / "run.incontainer").exists()
    assert wrong not in out
    for path in cli.home.rglob("*"):
        if path.is_file():
            assert wrong.encode() not in path.read_bytes(), path
