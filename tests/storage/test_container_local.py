"""A Local job in a container image with a ``sync`` mount and spot recovery: the storage agent runs on this
computer around the container (a real Docker daemon and private registry, tests/support/containers.py), the
mount's folder is bind-mounted into it and open to the container's user (1000 here), the rehearsal notice's
TERM reaches the training loop inside the container, which checkpoints, the agent saves it to the store, and
the recovery engine's attempt 2 resumes from it in a container again."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest


from agent_run import wait_until
from workbench_testing import ROOT

from workbench.core import paths
from workbench.core.domain.jobspec import load_spec
from workbench.core.domain.models import ContainerImage, RegistryAuth
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine
from workbench.core.lifecycle.teardown import teardown


def _spec(world, store):
    example = load_spec(ROOT / "resources" / "examples" / "spot-resume-local.yaml")
    mount = dataclasses.replace(example.storage[0], source=str(store), interval_s=1)
    image = ContainerImage(world.image, RegistryAuth(world.user, "REG_PW"), None, "1000:1000")
    return dataclasses.replace(example, storage=(mount,), env={"STEPS": "100000", "STEP_SECONDS": "0.2"},
                               image=image, secrets=("REG_PW",))


def test_a_local_container_job_checkpoints_on_the_notice_and_resumes_in_a_container(cloud, world, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", world.env["DOCKER_HOST"])
    acc = cloud.accounts
    store = tmp_path / "store"
    store.mkdir()
    spec = _spec(world, store)
    started = time.monotonic()
    (first,) = execute(acc, plan(acc, spec), secret_env={"REG_PW": world.password})
    ev = None
    try:
        wait_until(lambda: len(list(store.glob("step-*.txt"))) >= 3, 60, "three checkpoints in the store")
        notice = {"source": "a rehearsal", "not_after": time.time() + 1}
        (paths.job_dir(first.launch_id) / "interrupt-notice").write_text(json.dumps(notice))
        wait_until(lambda: "the machine was not taken" in paths.job_log(first.launch_id).read_text(), 60,
                   "the pretend reclaim")
        log = paths.job_log(first.launch_id).read_text()
        assert "[workbench] pulled" in log and "got SIGTERM: stopping after checkpoint step" in log, log
        last = int(log.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
        assert (store / f"step-{last:06d}.txt").exists()  # written by uid 1000 in the container, saved here
        assert max(int(p.stem.split("-")[1]) for p in store.glob("step-*.txt")) == last
        wait_until(lambda: not [i for i in reconcile(acc).instances if i.launch_id == first.launch_id
                                and i.state.active], 30, "the first attempt to end")
        print(f"attempt 1 interrupted after step {last}: {time.monotonic() - started:.1f}s")
        (ev,) = RecoveryEngine(acc, teardown_poll_s=0.05).poll()
        assert ev.action == "relaunched" and "interruption notice: a rehearsal" in ev.message
        wait_until(lambda: f"checkpoint step {last + 1}\n" in paths.job_log(ev.launch_id).read_text(), 60,
                   "attempt 2's first step")
        text = paths.job_log(ev.launch_id).read_text()
        assert f"attempt 2: resumed from checkpoint step {last}\n" in text and "[workbench] pulled" in text, text
        box = world.docker("ps", "-q", "--filter", f"label=workbench.launch={ev.launch_id}").stdout.split()
        assert len(box) == 1  # attempt 2 runs in its container
        print(f"interrupted, relaunched and resumed in a container: {time.monotonic() - started:.1f}s")
    finally:
        report = teardown(acc, None, timeout=30, poll=0.05)
        for lid in (first.launch_id, *([ev.launch_id] if ev else [])):
            launch_secrets.forget(lid)
    assert report.clean
    assert world.docker("ps", "-aq", "--filter", "label=workbench.launch").stdout.strip() == ""


def test_stopping_a_local_container_job_saves_the_checkpoint_its_term_made_inside(cloud, world, tmp_path,
                                                                                  monkeypatch):
    """The app's Stop TERMs the job's process group: the ``docker exec`` client dies of it at once, the agent sends
    TERM into the container and waits for the loop there to checkpoint before its last save."""
    monkeypatch.setenv("DOCKER_HOST", world.env["DOCKER_HOST"])
    acc = cloud.accounts
    store = tmp_path / "store"
    store.mkdir()
    (inst,) = execute(acc, plan(acc, _spec(world, store)), secret_env={"REG_PW": world.password})
    try:
        wait_until(lambda: len(list(store.glob("step-*.txt"))) >= 2, 60, "two checkpoints in the store")
        started = time.monotonic()
        report = teardown(acc, None, timeout=30, poll=0.05)
        print(f"Stop of a container job with a sync mount: {time.monotonic() - started:.1f}s")
        assert report.clean
        log = paths.job_log(inst.launch_id).read_text()
        assert "got SIGTERM: stopping after checkpoint step" in log, log
        last = int(log.split("got SIGTERM: stopping after checkpoint step ")[1].split()[0])
        assert (store / f"step-{last:06d}.txt").exists() and "job ended (exit 143)" in log
        assert world.docker("ps", "-aq", "--filter", f"label=workbench.launch={inst.launch_id}").stdout.strip() == ""
    finally:
        teardown(acc, None, timeout=30, poll=0.05)
        launch_secrets.forget(inst.launch_id)
