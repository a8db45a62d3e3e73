"""container.sh with podman as the engine, as text and against a recording engine named ``podman`` (the real podman
runs in tests/plugins/local/test_local_container_podman.py; GPUs need a GPU machine): CDI's
``--device nvidia.com/gpu=all`` instead of ``--gpus all``, ``--tls-verify=false`` only for a registry on this
computer, the per-job ``--authfile``, ``rm -f -t 0``, and no env value on podman's command line or in its run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workbench.core.domain.models import ContainerImage, RegistryAuth
from workbench.core.remote import container

AUTH = RegistryAuth("bot", "REG_TOKEN")


def _engine(tmp_path: Path, name: str = "podman") -> tuple[Path, Path]:
    """A recording engine on PATH: each call's arguments a line in ``calls``, stdin of ``exec`` in ``stdin``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    engine = bin_dir / name
    engine.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\n"
                      f"[ \"$1\" = exec ] && cat > {tmp_path}/stdin\nexit 0\n")
    engine.chmod(0o755)
    return engine, calls


def _job(tmp_path: Path, image: ContainerImage, env: str = "", passed: tuple[str, ...] = ()) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    (job / container.ENV_FILE).write_text(env)
    (job / container.SCRIPT).write_text(container.script(image, "L1", str(job), str(job / "work"),
                                                         {"run.sh": str(job / "run.sh")}, passed=passed))
    return job


def _sh(job: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(job / container.SCRIPT), *args], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("ctk_lists_gpus, flag", [(True, "--device nvidia.com/gpu=all"), (False, None)])
def test_podman_gets_every_gpu_through_cdi_only_when_a_cdi_spec_names_them(tmp_path, ctk_lists_gpus, flag):
    engine, calls = _engine(tmp_path)
    bin_dir = engine.parent
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\nexit 0\n")
    listed = "nvidia.com/gpu=0\nnvidia.com/gpu=all" if ctk_lists_gpus else ""
    (bin_dir / "nvidia-ctk").write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'cdi list' ] && printf '{listed}\\n'\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    job = _job(tmp_path, ContainerImage("reg.example/x:1", user="1000:1000"), env="A=1\n")
    done = _sh(job, "start", env={"PATH": f"{bin_dir}:/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)})
    assert done.returncode == 0, done.stdout + done.stderr
    run = [line for line in calls.read_text().splitlines() if line.startswith("run ")][0]
    assert "--gpus" not in run and "--network host" in run and "--user 1000:1000" in run
    if flag:
        assert flag in run and "with every GPU of this machine" in done.stdout
    else:
        assert "nvidia.com/gpu" not in run and "no CDI spec for the GPUs" in done.stdout
        assert "nvidia-ctk cdi generate" in done.stdout
    assert not [c for c in calls.read_text().splitlines() if c.startswith("rm ")]  # no leftover: no rm (a call fewer)
    assert (job / "container.names").read_text() == "A\n"  # names only: exec takes the values from its caller


def test_docker_keeps_gpus_all_and_its_env_file(tmp_path):
    args = container.run_args(ContainerImage("r/x:1"), "L1", "/w", "/j/container.env", [], True, ["M"])
    joined = " ".join(args)
    assert "--gpus all" in joined and "--env-file /j/container.env" in joined and "-e M" in joined
    podman = container.run_args(ContainerImage("r/x:1"), "L1", "/w", "/j/container.env", [], True, ["M"],
                                engine="podman")
    assert "--device nvidia.com/gpu=all" in " ".join(podman) and "--gpus" not in podman
    assert "--env-file" not in podman and "-e" not in podman  # podman would keep the values in its database


@pytest.mark.parametrize("registry, insecure", [("127.0.0.1:5000", True), ("localhost:5000", True),
                                                ("[::1]:5000", True), ("localhost", True),
                                                ("reg.example:5000", False), ("10.0.0.5:5000", False),
                                                ("127.0.0.1.nip.io:5000", False)])
def test_podman_logs_in_and_pulls_with_the_per_job_auth_file_and_no_tls_only_on_this_computer(tmp_path, registry,
                                                                                           insecure):
    engine, calls = _engine(tmp_path)
    job = _job(tmp_path, ContainerImage(f"{registry}/team/x:1", AUTH), env="REG_TOKEN=tok-value\n")
    done = _sh(job, "pull", env={"PATH": "/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)})
    assert done.returncode == 0, done.stdout + done.stderr
    login, pull = calls.read_text().splitlines()
    auth = f"--authfile {job}/docker/auth.json"
    assert login.startswith(f"login --username bot --password-stdin {registry} {auth}")
    assert pull.startswith(f"pull {registry}/team/x:1 {auth}")
    assert ("--tls-verify=false" in login) is insecure and ("--tls-verify=false" in pull) is insecure
    assert "tok-value" not in calls.read_text() and not (job / "docker").exists()


def test_docker_gets_no_podman_flag(tmp_path):
    engine, calls = _engine(tmp_path, "docker")
    job = _job(tmp_path, ContainerImage("127.0.0.1:5000/x:1", AUTH), env="REG_TOKEN=t\n")
    env = {"PATH": "/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)}
    assert _sh(job, "pull", env=env).returncode == 0 and _sh(job, "stop", env=env).returncode == 0
    text = calls.read_text()
    assert "--authfile" not in text and "--tls-verify" not in text and "rm -f wb-L1" in text and "-t 0" not in text


def test_podman_exec_takes_the_env_on_stdin_with_quotes_and_lines_intact(tmp_path):
    """The values come from the caller's environment (the Local wrapper and supervise.sh export the job's env):
    never on podman's command line nor in its database; a real sh evaluates what podman would pass on."""
    engine, calls = _engine(tmp_path)
    job = _job(tmp_path, ContainerImage("r/x:1"), env="A=1\nB=2\n", passed=("MULTI",))
    env = {"PATH": "/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)}
    assert _sh(job, "start", env=env).returncode == 0
    values = {"A": "it's \"q\" $HOME `x` \\n", "MULTI": "one\ntwo 'three'\n"}  # B unset here: not passed at all
    done = _sh(job, "exec", "-e", "run.sh", env={**env, **values})
    assert done.returncode == 0, done.stderr
    exec_line = calls.read_text().splitlines()[-1]
    assert exec_line.startswith("exec -i wb-L1 sh -c eval \"$(cat)\"; ") and exec_line.endswith("-e /workbench/run.sh")
    assert "it's" not in calls.read_text() and "three" not in calls.read_text()
    shown = subprocess.run(["sh", "-c", 'eval "$(cat)"; printf "[%s]" "$A" "${B-unset}" "$MULTI"'],
                           input=(tmp_path / "stdin").read_text(), capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout == f"[{values['A']}][unset][{values['MULTI']}]"
