"""Container figures (issue 34) against the tests' real Docker daemon and password registry
(tests/support/containers.py; the image, 161 MB, is built from Debian packages and cached):

* pull: the app's ``container.sh pull`` (a per-job Docker config, ``docker login --password-stdin``, the
  pull with its progress lines, the config removed) vs ``docker pull`` alone with a login already made,
  interleaved; the image is removed from the daemon before every sample, so each downloads every layer.
* start: a Local job that only runs ``true`` in the cached image (pull check, ``docker run``, ``docker exec``,
  ``docker rm``) vs the same job without a container — what a container adds to a job's start.
* cloud start (:func:`cloud_start_figures`): an AWS launch (moto) whose "machine" is a real sshd whose sessions
  use the test daemon, as tests/remote/test_container_machine.py: from the launch (``execute``) to the job's
  first log line in the app's copy of its log, with the image already cached on the machine (the login and
  ``docker pull`` still ask the registry: "Image is up to date"), vs the same job without ``image:``; the workdir
  one file or a project, the machine next to the app or 50 ms round trip away (its SSH through
  :mod:`benchmarks.slow_link`).
* far registry (:func:`far_registry_figures`): a cached image's ``container.sh prepare`` (the container started
  while the login and the pull ask the registry whether the tag moved) vs the same script's ``pull`` then
  ``start`` one after the other (what prepare did before), with the registry 50 ms round trip away
  (:mod:`benchmarks.slow_link`), as a cloud's registry is from its machines.

    python -m benchmarks.containers          (prints all three as JSON)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.harness import Stats, check, interleave
from benchmarks.slow_link import SlowLink

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 3
PULL_SAMPLES = 7  # a pull here takes 2.5-7 s (the daemon unpacking on 2 shared cores): 3 samples a side could not
# tell 1.0x from 1.3x (1.28x and 0.97x in two runs of the same code, 2026-12-05)


def _world():
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import containers

    return containers


def pull_figures(samples: int = PULL_SAMPLES) -> dict[str, Stats]:
    """{"ours": the app's pull, "baseline": docker pull alone} in seconds."""
    from workbench.core.domain.models import ContainerImage, RegistryAuth
    from workbench.core.remote import container

    support = _world()
    world = support.start()
    tmp = Path(tempfile.mkdtemp(prefix="bench-pull-"))
    try:
        job = tmp / "job"
        job.mkdir(mode=0o700)
        image = ContainerImage(world.image, RegistryAuth(world.user, "REG_PW"))
        (job / "container.env").write_text(container.env_file({"REG_PW": world.password}))
        (job / "container.sh").write_text(container.script(image, "bench", str(job), str(job / "work"), {}))
        logged = tmp / "logged-in"
        world.docker("login", "-u", world.user, "--password-stdin", world.registry, input=world.password,
                     env={"DOCKER_CONFIG": str(logged)})
        env = {**os.environ, **world.env}

        def ours() -> float:
            world.forget(world.image)
            t0 = time.perf_counter()
            done = subprocess.run(["sh", str(job / "container.sh"), "pull"], env=env, capture_output=True, text=True)
            took = time.perf_counter() - t0
            check(done.returncode == 0 and "Pull complete" in done.stdout, f"the app's pull failed: {done.stdout}")
            return took

        def alone() -> float:
            world.forget(world.image)
            t0 = time.perf_counter()
            done = subprocess.run(["docker", "pull", world.image], env={**env, "DOCKER_CONFIG": str(logged)},
                                  capture_output=True, text=True)
            took = time.perf_counter() - t0
            check(done.returncode == 0, f"docker pull failed: {done.stderr}")
            return took

        a, b = interleave(ours, alone, samples)
        return {"ours": a, "baseline": b}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        support.stop()


def start_figures(samples: int = SAMPLES) -> dict[str, Stats]:
    """{"ours": a Local job of `true` in the cached image, "baseline": the same job without it}, launch to exit."""
    import dataclasses

    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.providers.contract import ProviderContext, launch_tags
    from workbench_local.provider import LocalProvider

    support = _world()
    world = support.start()
    tmp = Path(tempfile.mkdtemp(prefix="bench-start-"))
    os.environ["DOCKER_HOST"] = world.env["DOCKER_HOST"]
    try:
        provider = LocalProvider(Profile("bench", "local"), {}, ProviderContext("bench", tmp / "data"))
        offer = next(iter(provider.offers()))
        boxed = parse_spec(f"name: b\nrun: 'true'\nsecrets: [REG_PW]\nimage: {{name: '{world.image}', "
                           f"registry_auth: {{username: {world.user}, password: REG_PW}}}}\n")
        plain = dataclasses.replace(boxed, image=None, secrets=())

        def one(spec) -> float:
            from workbench.core.domain.models import LaunchRequest

            lid = f"b-{uuid.uuid4().hex[:8]}"
            req = LaunchRequest(lid, spec, offer, "bench", launch_tags(lid, "bench"), secret_env={"REG_PW": world.password})
            t0 = time.perf_counter()
            provider.launch(req)
            code = tmp / "data" / "local" / lid / "exit_code"
            while not code.exists():
                time.sleep(0.005)
                check(time.perf_counter() - t0 < 120, "the job did not end within 120 s")
            took = time.perf_counter() - t0
            check(code.read_text().split()[0] == "0", f"the job failed: {code.read_text()}")
            return took

        one(boxed)  # pulled once: the samples measure a cached image
        a, b = interleave(lambda: one(boxed), lambda: one(plain), samples)
        return {"ours": a, "baseline": b}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        support.stop()


CLOUD = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
         "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}
FIRST_LINE = "first-line-of-the-job"
CLOUD_SAMPLES = 7  # a sample is about a second: more of them than of the pulls


def cloud_start_figures(samples: int = CLOUD_SAMPLES, project: Path | None = None,
                        rtt_s: float = 0.0) -> dict[str, Stats]:
    """{"ours": launch to first log line of a job in a cached image on an sshd "machine" (AWS via moto),
    "baseline": the same job without a container}, in seconds.  The workdir is one small file, or a copy of the
    folder ``project``; ``rtt_s``: the machine that far from the app (its SSH through :mod:`benchmarks.slow_link`;
    the registry stays next to the machine, as a cloud region's is)."""
    import dataclasses
    import importlib
    import threading

    support = _world()
    import aws_moto
    import sshd as sshd_support
    from workbench_testing import MemoryCredentials

    from workbench.core import paths
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.lifecycle import launch_secrets
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.remote.job import JobOptions, RemoteJob
    from workbench.core.store.database import Store

    why = sshd_support.available()
    check(not why, f"the cloud container start needs a real sshd: {why}")
    world = support.start()
    tmp = Path(tempfile.mkdtemp(prefix="bench-cstart-"))
    os.environ["WORKBENCH_HOME"] = str(tmp / "home")
    stack = aws_moto.start()
    stack.reset()
    machine = sshd_support.Sshd.start(tmp / "machine", env=world.env)
    link = SlowLink(("127.0.0.1", machine.port), rtt_s) if rtt_s else None
    creds = MemoryCredentials()
    importlib.invalidate_caches()
    acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
    try:
        acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                                 settings={**CLOUD, "ssh_address": f"{machine.user}@127.0.0.1:"
                                                                   f"{link.port if link else machine.port}"}))
        creds.set("aws", "moto", {"access_key_id": "AKIAWORKBENCHTEST01", "secret_access_key": "not-a-real-secret"})
        machine.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
        work = tmp / "work"
        if project is not None:
            shutil.copytree(project, work, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            work.mkdir()
        (work / "data.txt").write_text("uploaded-data\n")
        boxed = parse_spec(f"name: cstart\nrun: 'echo {FIRST_LINE}'\nsecrets: [REG_PW]\nworkdir: {work}\n"
                           "resources: {gpu: 'V100:1'}\n"
                           f"image: {{name: '{world.image}', registry_auth: {{username: {world.user}, "
                           "password: REG_PW}}\n")
        plain = dataclasses.replace(boxed, image=None, secrets=())
        opts = JobOptions(connect_deadline_s=20, key_grace_s=5, reconnect_deadline_s=20, driver_deadline_s=5,
                          grace_s=600, teardown_timeout_s=10)  # poll_s: the app's own (JobOptions' default)

        def one(spec, cached: bool = True) -> float:
            secret_env = {"REG_PW": world.password} if spec.image is not None else {}
            t0 = time.perf_counter()
            (inst,) = execute(acc, choose_offer(acc, spec, provider="aws"), secret_env=secret_env)
            codes: list[object] = []

            def follow() -> None:
                try:
                    codes.append(RemoteJob(acc, inst, spec, opts).run())
                except Exception as exc:  # reported below
                    codes.append(exc)

            runner = threading.Thread(target=follow, daemon=True)
            runner.start()
            log = paths.job_log(inst.launch_id)

            def text() -> str:
                return log.read_text(errors="replace") if log.exists() else ""

            while FIRST_LINE not in text():
                check(runner.is_alive() or FIRST_LINE in text(),
                      f"the job ended ({codes}) without its first line: {text()[-800:]}")
                check(time.perf_counter() - t0 < 120, "no first log line within 120 s")
                time.sleep(0.005)
            took = time.perf_counter() - t0
            runner.join(60)
            check(codes == [0], f"the job exited {codes}: {text()[-800:]}")
            if spec.image is not None and cached:
                check("Image is up to date" in text(), f"the image was not cached on the machine: {text()[-800:]}")
            machine.end_jobs(inst.launch_id)
            launch_secrets.forget(inst.launch_id)
            return took

        world.forget(world.image)
        one(boxed, cached=False)  # pulled once (untimed): the samples start a cached image
        one(plain)  # and the first plain job warms what both share
        a, b = interleave(lambda: one(boxed), lambda: one(plain), samples)
        return {"ours": a, "baseline": b}
    finally:
        if link is not None:
            link.close()
        machine.end_jobs()
        machine.stop()
        acc.store.close()
        stack.reset()
        shutil.rmtree(tmp, ignore_errors=True)
        support.stop()


FAR_RTT_S = 0.05


def tree_facts(folder: Path) -> str:
    """"N files, M MB" of a workdir as the upload sees it (without __pycache__)."""
    files = [f for f in folder.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    return f"{len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB"


def far_registry_figures(samples: int = CLOUD_SAMPLES, rtt_s: float = FAR_RTT_S) -> dict[str, Stats]:
    """{"ours": container.sh prepare of a cached image, "baseline": pull, then start}, to a started container, in
    seconds, the registry ``rtt_s`` away."""
    from workbench.core.domain.models import ContainerImage, RegistryAuth
    from workbench.core.remote import container

    support = _world()
    world = support.start()
    tmp = Path(tempfile.mkdtemp(prefix="bench-far-"))
    host, port = world.registry.rsplit(":", 1)
    link = SlowLink((host, int(port)), rtt_s)
    try:
        far = f"127.0.0.1:{link.port}" + world.image[len(world.registry):]
        job = tmp / "job"
        (job / "work").mkdir(parents=True, mode=0o700)
        image = ContainerImage(far, RegistryAuth(world.user, "REG_PW"))
        (job / "container.env").write_text(container.env_file({"REG_PW": world.password}))
        (job / "container.sh").write_text(container.script(image, "far", str(job), str(job / "work"), {}))
        env = {**os.environ, **world.env}

        def sh(*args: str) -> str:
            done = subprocess.run(["sh", str(job / "container.sh"), *args], env=env, capture_output=True, text=True)
            check(done.returncode == 0, f"container.sh {' '.join(args)} failed: {done.stdout} {done.stderr}")
            return done.stdout

        def timed(*steps: str) -> float:
            t0 = time.perf_counter()
            out = "".join(sh(step) for step in steps)
            took = time.perf_counter() - t0
            check("Image is up to date" in out, f"the image was not cached: {out}")
            sh("stop")
            (job / "container.ready").unlink(missing_ok=True)
            return took

        sh("pull")  # cached (untimed)
        a, b = interleave(lambda: timed("prepare"), lambda: timed("pull", "start"), samples)
        return {"ours": a, "baseline": b}
    finally:
        link.close()
        shutil.rmtree(tmp, ignore_errors=True)
        support.stop()


if __name__ == "__main__":
    pull = pull_figures()
    start = start_figures()
    cloud = cloud_start_figures()
    print(json.dumps({k: list(v.samples) for k, v in {**{f"pull_{k}": v for k, v in pull.items()},
                                                      **{f"start_{k}": v for k, v in start.items()},
                                                      **{f"cloud_start_{k}": v for k, v in cloud.items()}}.items()}))
