"""Logins to SSH servers the app did not make (a Slurm cluster's login node): jump host, key, agent, one-time codes.

A launched cloud machine trusts the app's own key (:mod:`workbench.core.providers.sshkeys`).  A login node is the
user's: its profile may say how to reach it differently, and the SSH runner (:class:`.connection.Target`) must log in
the same way as the provider does, although it has no provider at hand.  So the provider *registers* the login of
its (provider, profile) here when it is built (:func:`register`), in memory only, and
:meth:`.connection.Target.for_instance` looks it up (:func:`lookup`).  The app always builds a profile's provider
(``Accounts.provider``) before the runner, the log reader or ``collect`` connects to one of its instances: every
instance comes from a provider's listing or launch.

A :class:`Login` carries:

* ``jump``: a bastion (``user@host:port``) the connection goes through: an authenticated connection to the jump host
  (its host key checked under its own known_hosts alias, :attr:`Jump.alias`), then a ``direct-tcpip`` channel to the
  login node, over which the login node's own handshake, host-key check and login run.
* ``key``: a private key from the keyring (a paramiko key object; never written to disk or a log), used instead of the
  app's key; or ``agent``: the keys of the user's ssh-agent (``SSH_AUTH_SOCK``).
* one-time codes: a login node that asks for a code after the key (keyboard-interactive: 2FA/TOTP through PAM) gets the
  code given by :meth:`Login.give_code` (the GUI's MFA dialog, ``--mfa-code``) or, failing that, asked by the
  process's prompter (:func:`set_prompter`: the CLI on a terminal), once.  The authenticated transport is then kept
  in a process-wide pool (:func:`pooled`, :func:`keep`) and reused for every later connection to that login (the
  runner's, the provider's, telemetry) for as long as it lives, so the user is not asked again per command.
* sharing: every login node's transport is pooled the same way, so the runner's connection right after the provider's
  (a launch: offers, checks, then the job folder and ``sbatch``) costs no second handshake.  Such a transport is
  shared by at most :data:`SHARE_LIMIT` connections at once (more would open their own: OpenSSH's ``MaxSessions``)
  and closed with its last user (:func:`acquire`, :func:`release`); one that took a code, by all, for the process.

Failure rules: :class:`CodeNeeded` (an AuthError of kind ``"mfa_required"``) while a code is needed and none was
given, and when the server refused the one given; ConfigError for a jump or a key that cannot be read.

Threading: everything here is safe from any thread (one lock for the registry and pool, one per Login for its code).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Callable

from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.remote.hostkeys import host_alias

DEFAULT_PORT = 22
AUTH_CHOICES = ("app", "keyring", "agent")
_CODE = re.compile(r"[0-9A-Za-z]{4,12}")


class CodeNeeded(AuthError):
    """The login node asks for a one-time code (2FA) after the key: give one, then try again."""

    kind = "mfa_required"


@dataclass(frozen=True)
class Jump:
    """A bastion the login node is reached through."""

    host: str
    port: int
    user: str

    @property
    def alias(self) -> str:
        """The jump host's known_hosts name (its host key is learned on first use, then checked)."""
        return host_alias("jump", f"{self.host}-{self.port}")

    @property
    def spec(self) -> str:
        return f"{self.user}@{self.host}:{self.port}"


def parse_jump(text: str | None, default_user: str) -> Jump | None:
    """``user@host:port`` (user and port optional: the login's user, 22; ``[::1]:22`` for IPv6); None when empty."""
    raw = (text or "").strip()
    if not raw:
        return None
    user, at, rest = raw.rpartition("@")
    if not at:
        user, rest = default_user, raw
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d+))?|([A-Za-z0-9_.-]+)(?::(\d+))?", rest)
    port_text = (m.group(2) or m.group(4)) if m else None
    if m is None or not user or (port_text is not None and not 0 < int(port_text) < 65536):
        raise ConfigError(f"the jump host {raw!r} is not user@host:port",
                          hint="e.g. alice@bastion.hpc.example.edu:22 (user and port may be left out)")
    return Jump(host=m.group(1) or m.group(3), port=int(port_text or DEFAULT_PORT), user=user)


def _rewrap(text: str) -> str:
    """A key whose line breaks were lost (pasted into one line, joined by spaces) as the file it was."""
    m = re.fullmatch(r"(-----BEGIN [A-Z0-9 ]+-----)\s*([A-Za-z0-9+/=\s]+?)\s*(-----END [A-Z0-9 ]+-----)", text)
    if m is None:
        return text
    body = re.sub(r"\s+", "", m.group(2))
    return "\n".join([m.group(1), *(body[i:i + 70] for i in range(0, len(body), 70)), m.group(3)])


def load_private_key(text: str, what: str) -> Any:
    """A paramiko key from PEM / OpenSSH text (no passphrase); ConfigError naming ``what`` (never the text)."""
    import io

    import paramiko

    body = _rewrap(text.strip().replace("\r\n", "\n")) + "\n"
    for cls in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return cls.from_private_key(io.StringIO(body))
        except paramiko.PasswordRequiredException as exc:
            raise ConfigError(f"{what} is protected by a passphrase",
                              hint="store the key without a passphrase, or add it to ssh-agent and use auth=agent"
                              ) from exc
        except (paramiko.SSHException, ValueError, IndexError, TypeError):
            continue
    raise ConfigError(f"{what} is not a private key paramiko can read",
                      hint="paste the whole key file, from its BEGIN line to its END line (ed25519, ECDSA or RSA)")


class Login:
    """How one profile logs in to its login node (in memory only)."""

    def __init__(self, name: str, key: Any = None, agent: bool = False, jump: Jump | None = None) -> None:
        self.name = name  # "slurm/hpc": what messages call it
        self.key = key
        self.agent = agent
        self.jump = jump
        self._code: str | None = None
        self._lock = threading.Lock()
        #: held while a connection to this login is opened: a second caller then finds the transport that took
        #: the code in the pool instead of asking for another code
        self.connecting = threading.Lock()
        self._given = threading.Event()  # set while a code waits to be used

    def give_code(self, code: str) -> None:
        code = (code or "").strip()
        if not _CODE.fullmatch(code):
            raise AuthError("a one-time code is 4 to 12 letters or digits", hint="type the code your authenticator shows")
        with self._lock:
            self._code = code
            self._given.set()

    def wait_for_code(self, timeout: float) -> bool:
        """True once a code was given and not used yet (within ``timeout`` seconds)."""
        return self._given.wait(timeout)

    def take_code(self, where: str) -> str | None:
        """The code given (used once), else what the process's prompter answers, else None."""
        with self._lock:
            code, self._code = self._code, None
            self._given.clear()
        if code is None and _prompter is not None:
            answer = _prompter(where)
            code = answer.strip() if answer else None
        return code or None

    def keys(self, app_key: Callable[[], Any]) -> list[Any]:
        """The keys to offer, in order: the keyring's, else the agent's, else the app's."""
        if self.key is not None:
            return [self.key]
        if self.agent:
            import paramiko

            try:
                found = list(paramiko.Agent().get_keys())
            except (paramiko.SSHException, OSError) as exc:
                raise AuthError(f"cannot reach ssh-agent for {self.name} ({exc})",
                                hint="start ssh-agent and ssh-add your key; SSH_AUTH_SOCK must be set for the app"
                                ) from exc
            if not found:
                raise AuthError(f"ssh-agent holds no key for {self.name}",
                                hint="ssh-add the key the login node trusts (SSH_AUTH_SOCK must name that agent)")
            return found
        return [app_key()]


_lock = threading.Lock()
_logins: dict[tuple[str, str], Login] = {}
_pool: dict[tuple[Any, ...], "_Shared"] = {}
#: connections of this process sharing one login node's transport at most (each holds one or two SSH sessions:
#: a command or a log stream, and SFTP; OpenSSH allows 10 per connection by default, MaxSessions)
SHARE_LIMIT = 4
_prompter: Callable[[str], str | None] | None = None
_codes_come_later = False


def register(provider: str, profile: str, login: Login) -> Login:
    """Remember ``login`` for the instances of (provider, profile); a login given earlier keeps its pooled
    transports only when it is the same login (same key, agent and jump)."""
    with _lock:
        _logins[(provider, profile)] = login
    return login


def lookup(provider: str, profile: str) -> Login | None:
    with _lock:
        return _logins.get((provider, profile))


def ensure(accounts: Any, instance: Any) -> None:
    """Build the provider of ``instance`` (``accounts.provider``) when its login is not registered here yet: a command
    that connects to a stored instance before asking its provider anything (``workbench start`` in the background)."""
    if instance.extra.get("ssh_login") and lookup(instance.provider, instance.profile) is None:
        accounts.provider(accounts.profile(instance.profile))


def forget(provider: str, profile: str) -> None:
    """Drop the login of (provider, profile) and close its pooled transports (a removed or changed profile)."""
    with _lock:
        login = _logins.pop((provider, profile), None)
        gone = [k for k in _pool if login is not None and k[0] is login]
        transports = [_pool.pop(k).transport for k in gone]
    for t in transports:
        close_transport(t)


def set_prompter(prompter: Callable[[str], str | None] | None) -> None:
    """The process's way to ask for a one-time code (the CLI on a terminal); None: never ask."""
    global _prompter
    _prompter = prompter


def set_codes_come_later(on: bool) -> None:
    """This process gets codes from elsewhere, whenever the user types one (the app's MFA dialog): a connection that
    needs one waits for it (:func:`.connection.connect_with_backoff`) instead of failing at once."""
    global _codes_come_later
    _codes_come_later = on


def codes_come_later() -> bool:
    return _codes_come_later


@dataclass
class _Shared:
    transport: Any
    users: int
    precious: bool  # it took a one-time code: every connection of its login shares it, however many


def pooled(key: tuple[Any, ...]) -> Any | None:
    """The live authenticated transport kept for ``key`` (dropped ones are forgotten)."""
    with _lock:
        return _live(key)


def _live(key: tuple[Any, ...]) -> Any | None:
    entry = _pool.get(key)
    if entry is not None and not entry.transport.is_active():
        del _pool[key]
        entry = None
    return entry.transport if entry is not None else None


def acquire(key: tuple[Any, ...]) -> Any | None:
    """The transport kept for ``key`` for one more connection (counted until :func:`release`), or None when there is
    none or it has :data:`SHARE_LIMIT` users already (a code-taking one is shared whatever the count)."""
    with _lock:
        transport = _live(key)
        entry = _pool.get(key)
        if transport is None or (not entry.precious and entry.users >= SHARE_LIMIT):
            return None
        entry.users += 1
        return transport


def keep(key: tuple[Any, ...], transport: Any, precious: bool = True) -> bool:
    """Keep ``transport`` (authenticated, with one user: its opener) for later connections of ``key``; False when a
    live one is kept already (``transport`` then stays its opener's alone).  A code-taking transport replaces any."""
    with _lock:
        old = _pool.get(key)
        if old is not None and old.transport.is_active() and not precious:
            return False
        _pool[key] = _Shared(transport, 1, precious)
    if old is not None and old.transport is not transport and old.users <= 0:
        old.transport.close()
    return True


def release(key: tuple[Any, ...], transport: Any) -> None:
    """One user of a kept transport is done; the last one closes it, unless it took a code (kept for the process).
    A transport no longer kept (forgotten, replaced) is closed by whoever releases it."""
    with _lock:
        entry = _pool.get(key)
        if entry is not None and entry.transport is transport:
            entry.users -= 1
            if entry.users > 0 or entry.precious:
                return
            del _pool[key]
    close_transport(transport)


def close_transport(transport: Any) -> None:
    """Close ``transport`` and the jump host's connection it goes through, if any."""
    transport.close()
    via = getattr(transport, "_workbench_via", None)
    if via is not None:
        via.close()
