"""The cluster's login node over SSH (the provider's side: offers, submit checks, the queue, scancel, telemetry).

The job itself is driven by the app's SSH runner (:mod:`workbench.core.remote.job`), which connects to the same
login node from the Instance (``host``, ``extra["ssh_user"]``, ``extra["ssh_port"]``, ``extra["host_keys"]``): the
host key this module learns on first use (known_hosts alias ``login-<profile>.slurm.workbench``) is pinned into every
Instance, so the runner checks it too.  The login authenticates with the app's own key (the user adds its public line
to ``~/.ssh/authorized_keys`` on the login node, as for any SSH server).

Threading: one connection per provider object, used by one thread at a time (a lock), opened again once when it
dropped.  Every call blocks on the network.
"""

from __future__ import annotations

import logging
import shlex
import threading
from pathlib import Path

from workbench.core.domain.errors import AuthError, ConfigError, TransientError, WorkbenchError
from workbench.core.providers.sshkeys import ensure_keypair, keypair_for
from workbench.core.remote.connection import (ConnectionLost, KeyRefusedError, NotReadyError, Result, Target,
                                              connect)
from workbench.core.remote.hostkeys import KnownHosts, host_alias, known_hosts_path

log = logging.getLogger(__name__)

DEFAULT_PORT = 22


def login_alias(profile: str) -> str:
    return host_alias("slurm", f"login-{profile}")


class LoginNode:
    """Run commands on the login node of one profile."""

    def __init__(self, profile: str, host: str, port: int, user: str, data_dir: Path) -> None:
        if not host:
            raise ConfigError(f"profile {profile!r}: the login node's host is not set",
                              hint="edit the profile: host = the address you ssh to (e.g. login.hpc.example.edu)")
        if not user:
            raise ConfigError(f"profile {profile!r}: the user on the login node is not set",
                              hint="edit the profile: user = your account name on the cluster")
        self.profile, self.host, self.port, self.user = profile, host, port, user
        self.data_dir = data_dir
        self._lock = threading.Lock()
        self._conn = None

    @property
    def target(self) -> Target:
        keys = keypair_for(self.data_dir)
        return Target(host=self.host, port=self.port, user=self.user, alias=login_alias(self.profile),
                      name=f"the login node {self.host}", key_path=keys.private_path,
                      known_hosts=known_hosts_path(self.data_dir))

    def public_key(self) -> str:
        """The app's public key line (what the user adds to ``~/.ssh/authorized_keys`` on the login node)."""
        return ensure_keypair(self.data_dir).public_openssh

    def host_keys(self) -> list[str]:
        """The login node's host keys as known here ("type base64" lines; pinned into every Instance)."""
        return [f"{t} {b}" for t, b in KnownHosts(known_hosts_path(self.data_dir)).keys(login_alias(self.profile))]

    def _open(self):  # noqa: ANN202 - a Connection
        ensure_keypair(self.data_dir)
        try:
            return connect(self.target)
        except KeyRefusedError as exc:
            raise AuthError(
                f"the login node {self.host} refused this app's SSH key for user {self.user!r}",
                hint=f"add this line to ~/.ssh/authorized_keys on the login node: {self.public_key()}") from exc
        except NotReadyError as exc:
            raise TransientError(f"the login node {self.host}:{self.port} does not answer ({exc.message})",
                                 hint="check the host and port, your network or VPN") from exc

    def run(self, command: str, timeout: float = 60.0) -> Result:
        """``command`` on the login node; a dropped connection is opened again once."""
        with self._lock:
            for attempt in (0, 1):
                if self._conn is None or not self._conn.alive:
                    self._conn = self._open()
                try:
                    return self._conn.run(command, timeout=timeout)
                except ConnectionLost:
                    self._conn.close()
                    self._conn = None
                    if attempt:
                        raise
        raise AssertionError("unreachable")

    def check(self, command: str, what: str, timeout: float = 60.0) -> str:
        res = self.run(command, timeout)
        if res.rc != 0:
            detail = (res.err or res.out).strip().splitlines()
            raise WorkbenchError(f"{what} failed on the login node {self.host} (exit {res.rc})"
                                 + (f": {detail[-1]}" if detail else ""))
        return res.out

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def quote_all(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)
