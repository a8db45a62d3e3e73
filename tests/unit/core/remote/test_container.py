"""The generated container run (workbench/core/remote/container.py) as text: the `docker run` arguments with and
without GPUs, the per-job login, the env file; and the test world's clear failure when dockerd cannot start.
(The real runs are tests/plugins/local/test_local_container.py and tests/remote/test_container_machine.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import ContainerImage, RegistryAuth
from workbench.core.remote import container

IMAGE = ContainerImage("reg.example:5000/team/train:1", RegistryAuth("bot", "REG_TOKEN"), "16g", "1000:1000")
J = "/home/u/.workbench/jobs/L1"


def _run_args(gpus: bool) -> list[str]:
    binds = container.binds(f"{J}/work", {"setup.sh": f"{J}/setup.sh", "run.sh": f"{J}/run.sh"},
                            ["/data/ckpt", "relative/out", f"{J}/work/inside"])
    return container.run_args(IMAGE, "L1", f"{J}/work", f"{J}/container.env", binds, gpus)


def test_the_run_arguments_give_every_gpu_host_network_mounts_user_shm_and_the_env_file():
    args = _run_args(gpus=True)
    joined = " ".join(args)
    assert args[:4] == ["run", "-d", "--rm", "--name"] and args[4] == "wb-L1"
    assert "--network host" in joined and "--gpus all" in joined
    assert f"--env-file {J}/container.env" in joined and "--user 1000:1000" in joined and "--shm-size 16g" in joined
    assert f"-v {J}/work:{J}/work" in joined and f"-w {J}/work" in joined
    assert f"-v {J}/setup.sh:/workbench/setup.sh:ro" in joined and f"-v {J}/run.sh:/workbench/run.sh:ro" in joined
    assert "-v /data/ckpt:/data/ckpt" in joined  # absolute storage mounts at the paths the job expects
    assert "relative/out" not in joined and f"{J}/work/inside:" not in joined  # inside the workdir mount already
    assert args[-3:] == ["sleep", IMAGE.name, "infinity"]
    assert "--gpus" not in _run_args(gpus=False)  # a machine without GPUs (or without the toolkit)


def test_the_script_logs_in_with_a_per_job_config_from_stdin_and_never_names_the_secret_value():
    text = container.script(IMAGE, "L1", J, f"{J}/work", {"run.sh": f"{J}/run.sh"})
    assert 'D="$J/docker"' in text and 'mkdir -m 700 "$D"' in text and "trap 'rm -rf \"$D\"' EXIT" in text
    assert "export DOCKER_CONFIG=\"$D\" REGISTRY_AUTH_FILE=\"$D/auth.json\"" in text
    assert "sed -n 's/^REG_TOKEN=//p' \"$J/container.env\" | \"$E\" login --username bot --password-stdin " \
           "reg.example:5000" in text
    assert ".docker/config.json" not in text.replace("never touches ~/.docker/config.json", "")
    assert "exit 125" in text and "setup was not started" in text
    assert container.GPU_CHECK in text  # --gpus all only where the toolkit and a driver are there
    subprocess.run(["sh", "-n"], input=text, text=True, check=True)  # valid POSIX sh
    plain = container.script(ContainerImage("debian:12"), "L2", J, f"{J}/work", {})
    assert "login --username" in plain and "if [ -n '' ]; then" in plain  # no login without registry_auth


def test_the_exec_arguments_pick_bash_and_pass_the_exit_code_through():
    args = container.exec_args("L1", "setup.sh", stop_on_error=True)
    assert args[:2] == ["exec", "wb-L1"] and args[-2:] == ["-e", "/workbench/setup.sh"]
    done = subprocess.run(["sh", "-c", args[4], "x", "-c", "exit 3"])  # the same picker on this computer
    assert done.returncode == 3


def test_the_env_file_carries_values_as_they_are_and_multi_line_ones_pass_by_name():
    env = {"A": "x y 'z'", "B": "$HOME", "WORKBENCH_NODE_IPS": "10.0.0.1\n10.0.0.2"}
    assert container.env_file(env) == "A=x y 'z'\nB=$HOME\n"
    assert container.multiline(env) == ["WORKBENCH_NODE_IPS"]
    text = container.script(IMAGE, "L1", J, f"{J}/work", {}, passed=container.multiline(env))
    assert "-e WORKBENCH_NODE_IPS " in text and "10.0.0.1" not in text  # the value from docker's environment
    with pytest.raises(ConfigError, match="cannot be passed"):
        container.env_file({"BAD-NAME": "1"})


def test_the_container_world_fails_clearly_when_dockerd_cannot_start(tmp_path, monkeypatch):
    """The container tests fail (never skip) with dockerd's own words when it cannot start."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "support"))
    import containers

    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("dockerd", "docker", "debootstrap", "docker-registry", "htpasswd"):
        (fake / tool).write_text("#!/bin/sh\necho 'failed to start daemon: no cgroups here' >&2\nexit 1\n")
        (fake / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    with pytest.raises(RuntimeError, match="dockerd could not start") as got:
        containers.ContainerWorld()
    assert "no cgroups here" in str(got.value)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert "docker.io" in (containers.available() or "") and "make test" in containers.available()


def test_the_cloud_boot_scripts_install_docker_and_the_nvidia_container_toolkit_only_for_an_image():
    """GPUs inside a container cannot be exercised here (no GPU, no NVIDIA repositories): the step as text."""
    from workbench.core.domain.jobspec import parse_spec
    from workbench_alibaba import userdata as ali
    from workbench_aws import userdata as aws
    from workbench_azure import customdata as azure

    gpu_image = parse_spec("name: t\nrun: x\nresources: {gpu: 'V100:1'}\nimage: nvcr.io/nvidia/pytorch:24.05-py3\n")
    cpu_image = parse_spec("name: t\nrun: x\nimage: debian:12\n")
    plain = parse_spec("name: t\nrun: x\nresources: {gpu: 'V100:1'}\n")
    scripts = {
        "aws": lambda s: aws.render("L1", "own", s, "ubuntu"),
        "alibaba": lambda s: ali.render("L1", "own", s, "ubuntu", not_after=None),
        "azure": lambda s: azure.render("L1", "own", s, "azureuser", subscription_id="sub", resource_group="rg",
                                        arm_endpoint="https://management.azure.com",
                                        arm_audience="https://management.azure.com"),
    }
    for cloud, render in scripts.items():
        text = render(gpu_image)
        assert "nvidia-ctk runtime configure --runtime=docker" in text, cloud
        assert "command -v nvidia-ctk" in text and "nvidia-container-toolkit" in text  # only where missing
        assert "apt-get install -y -q docker.io" in text and "usermod -aG docker" in text
        assert "workbench-container-runtime.log" in text
        assert "nvidia-ctk" not in render(plain), cloud  # no image: the boot script is as before
        assert '[ "no" = yes ]' in render(cpu_image).replace("\\", "")  # no GPU: Docker only
    fragment = scripts["aws"](gpu_image)
    subprocess.run(["bash", "-n"], input=fragment, text=True, check=True)


@pytest.mark.parametrize("says, reason", [
    ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
     "the Docker daemon is not running here"),
    ("permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock",
     "this user may not use Docker"),
    ("Error response from daemon: manifest for r/x:1 not found: manifest unknown", "the image was not found"),
    ("Error response from daemon: Get \"https://r/v2/\": dial tcp: lookup r: no such host",
     "the registry could not be reached (network)"),
])
def test_a_failed_pull_says_why_and_stops_before_setup(tmp_path, says, reason):
    engine = tmp_path / "engine"
    engine.write_text(f"#!/bin/sh\n[ \"$1\" = pull ] || exit 0\necho '{says}' >&2\nexit 1\n")
    engine.chmod(0o755)
    job = tmp_path / "job"
    job.mkdir()
    (job / "container.env").write_text("")
    (job / "container.sh").write_text(container.script(ContainerImage("r/x:1"), "L1", str(job), str(job / "w"), {}))
    done = subprocess.run(["sh", str(job / "container.sh"), "pull"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)})
    assert done.returncode == 125
    assert f"[workbench] could not pull r/x:1: {reason}" in done.stdout and "setup was not started" in done.stdout
    assert not (job / "docker").exists()


def test_without_an_engine_the_script_names_what_to_install(tmp_path):
    (tmp_path / "container.sh").write_text(container.script(ContainerImage("r/x:1"), "L1", str(tmp_path),
                                                            str(tmp_path / "w"), {}))
    done = subprocess.run(["/bin/sh", str(tmp_path / "container.sh"), "pull"], capture_output=True, text=True,
                          env={"PATH": str(tmp_path)})
    assert done.returncode == 127 and "neither Docker nor podman is installed" in done.stdout
    prepared = subprocess.run(["/bin/sh", str(tmp_path / "container.sh"), "prepare"], capture_output=True, text=True,
                              env={"PATH": str(tmp_path)})  # a prepare says so once: supervise.sh takes its 127
    assert prepared.returncode == 127 and (tmp_path / "container.ready").read_text().strip() == "127"


@pytest.mark.parametrize("toolkit, driver, gpus", [(True, True, True), (False, True, False), (True, False, False)])
def test_start_gives_every_gpu_only_with_the_toolkit_and_a_working_driver(tmp_path, toolkit, driver, gpus):
    """The runtime choice of `--gpus all` (a real GPU container needs a GPU machine): a recording engine, and a
    fake nvidia-ctk / nvidia-smi on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    engine = bin_dir / "engine"
    engine.write_text(f"#!/bin/sh\n[ \"$1\" = run ] && echo \"$@\" > {tmp_path}/run-args\nexit 0\n")
    (bin_dir / "nvidia-smi").write_text(f"#!/bin/sh\nexit {0 if driver else 9}\n")
    if toolkit:
        (bin_dir / "nvidia-ctk").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    (tmp_path / "container.sh").write_text(container.script(IMAGE, "L1", str(tmp_path), str(tmp_path / "w"), {}))
    done = subprocess.run(["sh", str(tmp_path / "container.sh"), "start"], capture_output=True, text=True,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)})
    assert done.returncode == 0, done.stdout + done.stderr
    args = (tmp_path / "run-args").read_text()
    assert ("--gpus all" in args) is gpus and "--network host" in args
    assert ("with every GPU of this machine" in done.stdout) is gpus


@pytest.mark.parametrize("leftover", [False, True])
def test_start_removes_a_container_of_the_same_name_only_when_the_run_meets_one(tmp_path, leftover):
    """One engine call fewer on every start (the cloud start bench): `rm -f` only after the name conflict that a
    container left by an earlier start gives, then the run again."""
    engine = tmp_path / "engine"
    stale = tmp_path / "stale"
    if leftover:
        stale.touch()
    engine.write_text(f"""#!/bin/sh
echo "$1" >> {tmp_path}/calls
case "$1" in
  run) if [ -f {stale} ]; then
         echo 'docker: Error response from daemon: Conflict. The container name "/wb-L1" is already in use' >&2
         exit 125
       fi; echo c0ffee ;;
  rm) rm -f {stale} ;;
esac
""")
    engine.chmod(0o755)
    (tmp_path / "container.sh").write_text(container.script(IMAGE, "L1", str(tmp_path), str(tmp_path / "w"), {}))
    done = subprocess.run(["sh", str(tmp_path / "container.sh"), "start"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "WORKBENCH_CONTAINER_ENGINE": str(engine)})
    assert done.returncode == 0, done.stdout + done.stderr
    calls = (tmp_path / "calls").read_text().split()
    assert calls == (["run", "rm", "run"] if leftover else ["run"])
