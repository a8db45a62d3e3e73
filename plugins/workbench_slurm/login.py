"""The cluster's login node over SSH (the provider's side: offers, submit checks, the queue, scancel, telemetry).

The job itself is driven by the app's SSH runner (:mod:`workbench.core.remote.job`), which connects to the same
login node from the Instance (``host``, ``extra["ssh_user"]``, ``extra["ssh_port"]``, ``extra["host_keys"]``): the
host key this module learns on first use (known_hosts alias ``login-<profile>.slurm.workbench``) is pinned into every
Instance, so the runner checks it too.  The login authenticates with the app's own key (the user adds its public line
to ``~/.ssh/authorized_keys`` on the login node, as for any SSH server), or as the profile says
(:func:`profile_login`): ``auth`` = ``keyring`` (the ``private_key`` credential, kept in the keyring and in memory,
never on disk) or ``agent`` (ssh-agent's keys), ``jump`` = a bastion to go through (``user@host:port``); a login node
that asks for a one-time code after the key gets the one the user gave (``SupportsMfa``), once: the authenticated
connection is then shared by everything this process does there (:mod:`workbench.core.remote.logins`).  The login is
registered for the profile, so the app's SSH runner logs in the same way.

Threading: one connection per provider object, used by one thread at a time (a lock), opened again once when it
dropped.  Every call blocks on the network.
"""

from __future__ import annotations

import logging
import shlex
import threading
from pathlib import Path

from typing import Mapping

from workbench.core.domain.errors import AuthError, ConfigError, TransientError, WorkbenchError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import CredentialField, SettingField
from workbench.core.providers.sshkeys import ensure_keypair, keypair_for
from workbench.core.remote.connection import (ConnectionLost, KeyRefusedError, NotReadyError, Result, Target,
                                              connect)
from workbench.core.remote.hostkeys import KnownHosts, host_alias, known_hosts_path
from workbench.core.remote.logins import AUTH_CHOICES, Login, load_private_key, parse_jump, register

log = logging.getLogger(__name__)

DEFAULT_PORT = 22


LOGIN_CREDENTIALS = (
    CredentialField("private_key", "Private key", secret=True, optional=True,
                    help="the whole key file, no passphrase; kept in the keyring (empty: the app's own key)"),
)
LOGIN_SETTINGS = (
    SettingField("auth", "Log in with",
                 help="app (its own key), keyring (the stored private key) or agent (ssh-agent); "
                      "empty: keyring if a key is stored"),
    SettingField("jump", "Jump host", help="a bastion to go through, user@host:port (empty: connect directly)"),
)


def login_alias(profile: str) -> str:
    return host_alias("slurm", f"login-{profile}")


def profile_login(profile: Profile, user: str, secrets: Mapping[str, str]) -> Login:
    """How ``profile`` logs in (settings ``auth`` and ``jump``, the ``private_key`` credential), registered for the
    profile's instances.  The key is read into memory only."""
    s = profile.settings
    key_text = str(secrets.get("private_key") or "").strip()
    auth = str(s.get("auth") or "").strip().lower() or ("keyring" if key_text else "app")
    if auth not in AUTH_CHOICES:
        raise ConfigError(f"profile {profile.name!r}: auth must be one of {', '.join(AUTH_CHOICES)}, not {auth!r}")
    if auth == "keyring" and not key_text:
        raise ConfigError(f"profile {profile.name!r} logs in with a private key from the keyring, but none is stored",
                          hint=f"echo '{{\"private_key\": \"…\"}}' | workbench credentials set slurm {profile.name} "
                               "--stdin, or set auth=app")
    key = load_private_key(key_text, f"the private key of profile {profile.name!r}") if auth == "keyring" else None
    login = Login(f"slurm/{profile.name}", key=key, agent=auth == "agent",
                  jump=parse_jump(str(s.get("jump") or ""), user))
    return register("slurm", profile.name, login)


def is_default(login: Login) -> bool:
    """The login is the app's key, directly (nothing an Instance must say about it)."""
    return login.key is None and not login.agent and login.jump is None


class LoginNode:
    """Run commands on the login node of one profile."""

    def __init__(self, profile: str, host: str, port: int, user: str, data_dir: Path,
                 login: Login | None = None) -> None:
        if not host:
            raise ConfigError(f"profile {profile!r}: the login node's host is not set",
                              hint="edit the profile: host = the address you ssh to (e.g. login.hpc.example.edu)")
        if not user:
            raise ConfigError(f"profile {profile!r}: the user on the login node is not set",
                              hint="edit the profile: user = your account name on the cluster")
        self.profile, self.host, self.port, self.user = profile, host, port, user
        self.data_dir = data_dir
        self.login = login
        self._lock = threading.Lock()
        self._conn = None

    @property
    def target(self) -> Target:
        keys = keypair_for(self.data_dir)
        return Target(host=self.host, port=self.port, user=self.user, alias=login_alias(self.profile),
                      name=f"the login node {self.host}", key_path=keys.private_path,
                      known_hosts=known_hosts_path(self.data_dir), login=self.login)

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
            if self.login is not None and not is_default(self.login) and (self.login.key or self.login.agent):
                raise AuthError(f"the login node {self.host} refused the login for user {self.user!r}: {exc.message}",
                                hint="check that the login node trusts the profile's key (auth setting)") from exc
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
