"""How the contract suite drives each provider.

A harness builds a provider against test doubles (a temp data dir for Local;
moto or recorded fakes for clouds), builds a launch request whose job stays
alive for the duration of a test, and cleans up whatever a failed test left
behind.  ``HARNESSES`` lists one entry per provider; later issues append AWS
and Azure entries (with ``marks`` such as a skipif when their fakes are not
installed).

A harness object is made fresh for every test (``HarnessEntry.factory``), so
it may keep state between ``make_provider``, ``make_request`` and ``cleanup``.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import psutil

from workbench.core.domain.models import JobSpec, LaunchRequest, Profile
from workbench.core.providers.contract import Provider, ProviderContext, launch_tags


class ProviderHarness(Protocol):
    """What the contract tests need from a provider's test setup."""

    #: id shown in test names
    name: str
    #: how long eventually-consistent listings may lag (instances() after launch/terminate)
    settle_s: float

    def make_provider(self, tmp_path: Path) -> Provider:
        """A provider whose state lives under ``tmp_path``; called once per test."""

    def make_request(self, launch_id: str) -> LaunchRequest:
        """A request for a job that keeps running (about 30 s) unless terminated."""

    def cleanup(self) -> None:
        """Remove everything this test may have left (best effort, never raises)."""


@dataclass(frozen=True)
class HarnessEntry:
    """One provider in the suite: ``factory`` makes a fresh harness per test."""

    id: str
    factory: Callable[[], ProviderHarness]
    marks: tuple[Any, ...] = ()  # pytest marks, e.g. skipif(no moto)


class LocalHarness:
    """Runs the contract against this computer with real processes (``sleep 30``)."""

    name = "local"
    settle_s = 8.0
    install_id = "test-install"

    def __init__(self) -> None:
        self._provider: Provider | None = None
        self._launch_ids: set[str] = set()

    def make_provider(self, tmp_path: Path) -> Provider:
        from workbench_local.provider import LocalProvider

        profile = Profile(
            name="local-contract",
            provider="local",
            settings={"grace_seconds": "2", "price_per_hour": "0.1"},
        )
        self._provider = LocalProvider(profile, {}, ProviderContext(install_id=self.install_id, data_dir=tmp_path))
        return self._provider

    def make_request(self, launch_id: str) -> LaunchRequest:
        assert self._provider is not None, "make_provider first"
        self._launch_ids.add(launch_id)
        offer = next(iter(self._provider.offers()))
        return LaunchRequest(
            launch_id=launch_id,
            spec=JobSpec(name="contract-sleep", run="sleep 30"),
            offer=offer,
            profile=self._provider.profile.name,
            tags=launch_tags(launch_id, self.install_id),
        )

    def cleanup(self) -> None:
        kill_marked(self.install_id, self._launch_ids)


def kill_marked(owner: str, launch_ids: set[str]) -> None:
    """SIGKILL the groups of every process whose environment names one of ``launch_ids`` of ``owner``.

    Independent of the plugin's own terminate, so a broken terminate cannot
    leave ``sleep 30`` processes behind on the test machine.  Rescans until
    nothing is left: a job caught mid-fork may spawn a child after a scan.
    """
    if not launch_ids:
        return
    deadline = time.monotonic() + 15  # scans read every process's environment: slow on a loaded machine
    empty = 0
    while time.monotonic() < deadline:
        victims = []
        for proc in psutil.process_iter():
            if proc.pid == os.getpid():
                continue
            try:
                env = proc.environ()
                if (
                    env.get("WORKBENCH_OWNER") == owner
                    and env.get("WORKBENCH_LAUNCH_ID") in launch_ids
                    and proc.status() != psutil.STATUS_ZOMBIE  # zombies are dead; init reaps orphans
                ):
                    victims.append(proc.pid)
            except (psutil.Error, OSError):
                continue
        if not victims:
            empty += 1
            if empty >= 2:  # twice nothing, a moment apart: no job is between fork and exec either
                return
            time.sleep(0.1)
            continue
        empty = 0
        for pid in victims:
            try:
                pgid = os.getpgid(pid)
                if pgid != os.getpgrp():
                    os.killpg(pgid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, os.WNOHANG)  # our own child (the job's leader)
            except OSError:
                pass
        time.sleep(0.02)


def _cloud_entries() -> list[HarnessEntry]:
    """Entries of the cloud plugins: each ``harness_<cloud>.py`` here defines ``ENTRIES``."""
    import importlib
    import pkgutil

    found: list[HarnessEntry] = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name.startswith("harness_"):
            found.extend(importlib.import_module(f"{__package__}.{info.name}").ENTRIES)
    return found


HARNESSES: list[HarnessEntry] = [
    HarnessEntry("local", LocalHarness),
    *_cloud_entries(),
]
