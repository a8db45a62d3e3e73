"""Container figures (issue 34) against the tests' real Docker daemon and password registry
(tests/support/containers.py; the image, 161 MB, is built from Debian packages and cached):

* pull: the app's ``container.sh pull`` (a per-job Docker config, ``docker login --password-stdin``, the
  pull with its progress lines, the config removed) vs ``docker pull`` alone with a login already made,
  interleaved; the image is removed from the daemon before every sample, so each downloads every layer.
* start: a Local job that only runs ``true`` in the cached image (pull check, ``docker run``, ``docker exec``,
  ``docker rm``) vs the same job without a container — what a container adds to a job's start.

    python -m benchmarks.containers          (prints both as JSON)
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

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 3


def _world():
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import containers

    return containers


def pull_figures(samples: int = SAMPLES) -> dict[str, Stats]:
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


if __name__ == "__main__":
    pull = pull_figures()
    start = start_figures()
    print(json.dumps({k: list(v.samples) for k, v in {**{f"pull_{k}": v for k, v in pull.items()},
                                                      **{f"start_{k}": v for k, v in start.items()}}.items()}))
