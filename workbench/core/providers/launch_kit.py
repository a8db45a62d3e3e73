"""What a cloud plugin's launch does the same way on every cloud, around its own calls.

A plugin writes its cloud's steps (network, key, firewall, image, the create call, rollback);
this module gives it the rest:

* :class:`LaunchTracker` — one launch per launch id at a time in this process (a retried or resumed
  launch waits for the first instead of racing it to a second machine), and the set of launches in
  flight, which the plugin's leftovers listing skips: the group or key a running launch has just
  made is not a leftover, and a teardown that deleted it would break that launch.
* :func:`check_launch` — the checks before anything is made: the region is one the profile
  enables (instances are only looked for there, so a machine elsewhere would be lost to
  reconcile and teardown), and a multi-node launch can reach each node (an ``ssh_address`` that
  names one fixed host cannot).

Usage in a plugin's launcher::

    with self._launches.running(req.launch_id):
        return self._launch(req)

and in its leftovers listing ``busy = self._launches.in_flight()``.

Threading: a LaunchTracker is shared by one provider's launcher and listings, from any thread;
``running`` blocks while another thread runs the same launch id.  Plain Python, no SDK.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import LaunchRequest
from workbench.core.providers.profile_settings import per_machine


class LaunchTracker:
    """Per-launch-id locks and the launches in flight, for one provider (see the module doc)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._running: set[str] = set()

    @contextmanager
    def running(self, launch_id: str) -> Iterator[None]:
        """Hold ``launch_id``'s lock (waiting for another thread's launch of it) and mark it in flight."""
        with self._guard:
            lock = self._locks.setdefault(launch_id, threading.Lock())
        with lock:
            with self._guard:
                self._running.add(launch_id)
            try:
                yield
            finally:
                with self._guard:
                    self._running.discard(launch_id)

    def in_flight(self) -> set[str]:
        """The launch ids running now (a copy)."""
        with self._guard:
            return set(self._running)


def check_launch(profile: str, req: LaunchRequest, regions: Iterable[str],
                 ssh_address: tuple[str, int, str | None] | None) -> None:
    """ConfigError when ``req`` asks for a region outside ``regions`` (the profile's enabled ones) or for
    several nodes that ``ssh_address`` (the profile's setting, see :mod:`.profile_settings`) cannot reach."""
    if req.region not in regions:
        raise ConfigError(f"region {req.region} is not enabled in profile {profile!r}",
                          hint="add it to the profile's regions setting (instances are only looked for there)")
    if req.count > 1 and not per_machine(ssh_address):
        raise ConfigError(f"profile {profile!r} reaches its machines through one ssh_address "
                          f"({ssh_address[0] if ssh_address else ''}), which cannot reach {req.count} nodes",
                          hint="set ssh_address=private (a VPN or inside the VPC) or remove it for public addresses")
