"""Helpers for Local provider tests: polling with deadlines, process checks, one test's world.

Every test gets its own install id, so ``LocalSetup.sweep`` can SIGKILL
exactly the processes this test started (found by their environment
markers) even when the provider under test is broken.  Waits poll with
deadlines: these tests must hold up on a loaded two-core machine.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

import psutil
import pytest

from workbench.core.domain.models import Instance, InstanceState, JobSpec, LaunchRequest, Profile
from workbench.core.providers.contract import ProviderContext, launch_tags
from workbench_local.provider import LocalProvider

T = TypeVar("T")
DEADLINE_S = 8.0


def wait_for(probe: Callable[[], T], what: str, seconds: float = DEADLINE_S) -> T:
    """Poll ``probe`` every 20 ms until it returns something truthy, or fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {seconds:g}s waiting for {what}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_alive(pgid: int) -> list[int]:
    """Live (non-zombie) pids whose process group is ``pgid``."""
    found = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid and alive(pid):
                found.append(pid)
        except OSError:
            continue
    return found


@dataclass
class LocalSetup:
    """One test's world: data dir, install id, and pids to kill at the end."""

    data_dir: Path
    install_id: str
    extra: list[psutil.Process] = field(default_factory=list)

    def track(self, pid: int) -> None:
        """Kill ``pid`` at the end too; held with its start time so a reused pid is left alone."""
        self.extra.append(psutil.Process(pid))

    def provider(self, **settings: str) -> LocalProvider:
        settings.setdefault("grace_seconds", "2")
        profile = Profile(name="local-test", provider="local", settings=settings)
        return LocalProvider(profile, {}, ProviderContext(install_id=self.install_id, data_dir=self.data_dir))

    def request(self, provider: LocalProvider, spec: JobSpec, launch_id: str | None = None) -> LaunchRequest:
        launch_id = launch_id or f"t-{uuid.uuid4().hex[:10]}"
        offer = next(iter(provider.offers()))
        return LaunchRequest(launch_id, spec, offer, provider.profile.name, launch_tags(launch_id, self.install_id))

    def launch(self, provider: LocalProvider, spec: JobSpec, launch_id: str | None = None) -> Instance:
        (inst,) = provider.launch(self.request(provider, spec, launch_id))
        return inst

    def current(self, provider: LocalProvider, launch_id: str) -> Instance | None:
        return next((i for i in provider.instances() if i.launch_id == launch_id), None)

    def wait_finished(self, provider: LocalProvider, launch_id: str) -> Instance:
        def done() -> Instance | None:
            inst = self.current(provider, launch_id)
            return inst if inst is not None and inst.state is InstanceState.TERMINATED else None

        return wait_for(done, f"job {launch_id} to finish")

    def run_to_the_end(self, provider: LocalProvider, spec: JobSpec, secret_env: dict[str, str],
                       seconds: float = 90) -> tuple[str, Instance, float]:
        """Launch ``spec`` with ``secret_env`` and wait until it has ended: its exit code written AND its wrapper gone
        (a container job's wrapper still removes the container after writing the code).  (launch id, the ended
        instance, seconds taken)."""
        req = dataclasses.replace(self.request(provider, spec), secret_env=secret_env)
        started = time.monotonic()
        (inst,) = provider.launch(req)

        def ended() -> Instance | None:
            if not (self.state_dir(inst.launch_id) / "exit_code").exists():
                return None
            now = self.current(provider, inst.launch_id)
            return now if now is not None and not now.state.active else None

        done = wait_for(ended, f"job {inst.launch_id} to finish", seconds=seconds)
        return inst.launch_id, done, time.monotonic() - started

    def log(self, launch_id: str) -> str:
        path = self.data_dir / "jobs" / launch_id / "output.log"
        return path.read_text() if path.exists() else ""

    def state_dir(self, launch_id: str) -> Path:
        return self.data_dir / "local" / launch_id

    def sweep(self) -> None:
        """SIGKILL the groups of every process carrying this test's install id, plus tracked ones.

        Rescans until nothing is left: a job caught mid-fork may spawn a child
        after the first scan.
        """
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            victims = marked(lambda env: env.get("WORKBENCH_OWNER") == self.install_id)
            for proc in self.extra:
                try:
                    os.waitpid(proc.pid, os.WNOHANG)  # reap the ones that were our children
                except OSError:
                    pass
            victims += [p.pid for p in self.extra if p.is_running() and alive(p.pid)]
            if not victims:
                return
            kill_groups(victims)
            time.sleep(0.02)


def marked(match: Callable[[dict[str, str]], bool]) -> list[int]:
    """Live pids (not this one) whose environment satisfies ``match``."""
    found = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():
            continue
        try:
            if match(proc.environ()) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def kill_groups(pids: list[int]) -> None:
    """SIGKILL each pid's whole group (just the pid when it shares ours); reap our children."""
    for pid in pids:
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgrp():
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass
