"""One SSH connection to a launched machine, with the app's key and known_hosts (paramiko).

:class:`Target` says where and as whom (built from an Instance: ``host``,
``extra["ssh_user"]``, ``extra["ssh_port"]``, ``extra["host_keys"]``).
:func:`connect` opens a paramiko Transport, checks the host key (see
:mod:`.hostkeys`) *before* authenticating, then authenticates with the install's
ed25519 key (:func:`workbench.core.providers.sshkeys.ensure_keypair`).

Failure rules (what callers rely on to show "booting" instead of an error storm):

* nothing listening, timeouts, resets, a banner that never comes → :class:`NotReadyError`
  (a TransientError: retry with :class:`Backoff`);
* the key is refused → :class:`KeyRefusedError` (an AuthError; during boot, cloud-init
  may not have installed the key yet, so the job keeps retrying for a while);
* a changed host key → :class:`~.hostkeys.HostKeyError` (never retried);
* a connection that drops later → :class:`ConnectionLost` (TransientError);
* a login node that asks for a one-time code none was given for → :class:`.logins.CodeNeeded` (an AuthError of kind
  ``"mfa_required"``).

A Target with a :class:`.logins.Login` (a Slurm login node's profile) may go through a jump host, log in with a key
from the keyring or ssh-agent, and answer a keyboard-interactive prompt with a one-time code.  Its transport is kept (:func:`.logins.keep`) and shared
by the process's later connections to the same login (at most :data:`.logins.SHARE_LIMIT` at once; one that took a
code, by every one, for the process).

Threading: a Connection may be used by one thread at a time (paramiko itself runs a
reader thread per Transport).  ``close`` may be called from any thread.
"""

from __future__ import annotations

import logging
import select
import shlex
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from workbench.core.domain.errors import AuthError, NotFoundError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance
from workbench.core.providers.sshkeys import keypair_for
from workbench.core.remote import logins
from workbench.core.remote.hostkeys import HostKey, KnownHosts, host_alias, known_hosts_path, parse_pins

log = logging.getLogger("workbench.remote")

DEFAULT_USER = "ubuntu"
CONNECT_TIMEOUT_S = 10.0
KEEPALIVE_S = 15


class NotReadyError(TransientError):
    """The machine does not answer on SSH (yet): booting, or the network dropped."""

    kind = "not_ready"


class ConnectionLost(TransientError):
    """An open SSH connection broke; reconnect with backoff."""

    kind = "connection_lost"


class KeyRefusedError(AuthError):
    """The machine refused the app's key (still booting, or the key was never installed)."""

    kind = "key_refused"


@dataclass(frozen=True)
class Target:
    """Where to connect and how to check it is the right machine."""

    host: str
    port: int
    user: str
    alias: str  # known_hosts name / HostKeyAlias
    name: str  # what the user calls it (messages, ssh config Host)
    key_path: Path
    known_hosts: Path
    pins: tuple[HostKey, ...] = ()
    login: logins.Login | None = None  # a login node's own way in (jump, keyring key, agent, codes)

    @property
    def where(self) -> str:
        return f"{self.name} ({self.host}:{self.port})"

    @property
    def pool_key(self) -> tuple[Any, ...]:
        """Which pooled transport this target may share: the same login, user and address (the provider's name for
        the login node and an instance's differ; both check the same host keys)."""
        return (self.login, self.user, self.host, self.port)

    @classmethod
    def for_instance(cls, inst: Instance, data_dir: Path) -> "Target":
        """The target of ``inst``; NotFoundError while it has no address."""
        if not inst.host:
            raise NotFoundError(f"{inst.name or inst.instance_id} has no address yet",
                                hint="wait until the machine is running")
        keys = keypair_for(data_dir, inst.extra)
        port = int(inst.extra.get("ssh_port") or 22)
        login = logins.lookup(inst.provider, inst.profile)
        if login is None and inst.extra.get("ssh_login"):
            raise AuthError(f"the SSH login of profile {inst.profile!r} is not set up in this process",
                            hint="the profile's provider registers it when it is built (Accounts.provider)")
        return cls(host=inst.host, port=port, user=str(inst.extra.get("ssh_user") or DEFAULT_USER),
                   alias=host_alias(inst.provider, inst.instance_id), name=inst.name or inst.launch_id,
                   key_path=keys.private_path, known_hosts=known_hosts_path(data_dir),
                   pins=tuple(parse_pins(inst.extra.get("host_keys"))), login=login)


@dataclass(frozen=True)
class Result:
    rc: int
    out: str
    err: str


class Backoff:
    """Delays of 1, 2, 4 … up to ``cap`` seconds; ``reset`` after a success."""

    def __init__(self, first: float = 1.0, cap: float = 30.0) -> None:
        self.first, self.cap, self.current = first, cap, 0.0

    def next(self) -> float:
        self.current = self.first if not self.current else min(self.cap, self.current * 2)
        return self.current

    def reset(self) -> None:
        self.current = 0.0


_keys: dict[Path, Any] = {}
_keys_lock = threading.Lock()


def _private_key(path: Path) -> Any:
    import paramiko

    with _keys_lock:
        key = _keys.get(path)
        if key is None:
            try:
                key = _keys[path] = paramiko.PKey.from_path(str(path))  # ed25519, or RSA for some clouds
            except (OSError, paramiko.SSHException) as exc:
                raise AuthError(f"cannot read the app's SSH key {path}: {exc}",
                                hint="move it away; a new one is made on the next launch") from exc
        return key


class _QuickAckSocket:
    """A TCP socket that acknowledges what it receives at once (Linux ``TCP_QUICKACK``, re-armed after every read:
    the kernel drops it again by itself).  sshd sends a session's small packets with Nagle's algorithm on, so a packet
    waits while the one before is unacknowledged — and a client that has nothing to send delays its ACK by 40 ms.
    Measured on a loopback sshd: the first command on a new connection took 48 ms instead of 5."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def recv(self, size: int) -> bytes:
        data = self._sock.recv(size)
        try:
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        except OSError:
            pass  # a closed socket: the next read says so
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def tune_socket(sock: socket.socket) -> Any:
    """``sock`` tuned for SSH's request/answer traffic: ``TCP_NODELAY`` (our small packets leave at once: without
    it every command waited ~40 ms for the server's delayed ACK, 48 ms instead of 4 on a loopback sshd; OpenSSH's
    own client sets it too) and, where the system has it, immediate ACKs (:class:`_QuickAckSocket`)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return _QuickAckSocket(sock) if hasattr(socket, "TCP_QUICKACK") else sock


def _socket(target: Target, timeout: float) -> tuple[Any, "Connection | None"]:
    """A socket to ``target``: direct, or a channel through its login's jump host (returned too, to close)."""
    jump = target.login.jump if target.login is not None else None
    if jump is None:
        try:
            sock = socket.create_connection((target.host, target.port), timeout=timeout)
        except OSError as exc:
            raise NotReadyError(f"{target.where} does not answer on SSH yet ({exc.strerror or exc})",
                                hint="a machine that is booting answers within a few minutes") from exc
        return tune_socket(sock), None
    import paramiko

    hop = Target(host=jump.host, port=jump.port, user=jump.user, alias=jump.alias, name=f"the jump host {jump.host}",
                 key_path=target.key_path, known_hosts=target.known_hosts,
                 login=logins.Login(f"the jump host of {target.login.name}", key=target.login.key,  # type: ignore
                                    agent=target.login.agent))  # type: ignore[union-attr]
    via = connect(hop, timeout)
    try:
        return via.transport.open_channel("direct-tcpip", (target.host, target.port), ("127.0.0.1", 0),
                                          timeout=timeout), via
    except (paramiko.SSHException, EOFError, OSError) as exc:
        via.close()
        raise NotReadyError(f"{target.where} does not answer through the jump host {jump.spec} ({exc})",
                            hint="check the login node's address as the jump host sees it") from exc


def _authenticate(transport: Any, target: Target) -> bool:
    """Log in with the target's keys, then answer a keyboard-interactive prompt with a one-time code when the server
    asks for one after the key (True then: the transport is worth keeping)."""
    import paramiko

    login = target.login
    keys = login.keys(lambda: _private_key(target.key_path)) if login is not None else [_private_key(target.key_path)]
    whose = "the app's SSH key" if login is None or (login.key is None and not login.agent) else (
        "the keyring's private key" if login.key is not None else "ssh-agent's keys")
    remaining: list[str] | None = None
    try:
        for key in keys:
            try:
                remaining = list(transport.auth_publickey(target.user, key) or [])
                break
            except paramiko.BadAuthenticationType as exc:
                remaining = list(exc.allowed_types or [])
                if "keyboard-interactive" not in remaining:
                    raise KeyRefusedError(f"{target.where} takes no SSH key (only {', '.join(remaining)})") from exc
                break
            except paramiko.AuthenticationException:
                continue
        else:
            raise KeyRefusedError(f"{target.where} refused {whose} for user {target.user!r}",
                                  hint="a new machine installs the key while it boots; if this lasts, check "
                                       "the ssh_user of the image")
        if transport.is_authenticated():
            return False
        if "keyboard-interactive" not in (remaining or []):
            raise KeyRefusedError(f"{target.where} asks for more than {whose} ({', '.join(remaining or [])})")
        code = login.take_code(target.where) if login is not None else None
        if not code:
            raise logins.CodeNeeded(f"{target.where} asks for a one-time code (2FA) after the key",
                                    hint="enter the code your authenticator app shows now")
        try:
            transport.auth_interactive(target.user, lambda _t, _i, prompts: [code for _ in prompts])
        except paramiko.AuthenticationException as exc:
            raise logins.CodeNeeded(f"{target.where} refused the one-time code",
                                    hint="enter the code your authenticator app shows now (each works once)") from exc
        return True
    except (paramiko.SSHException, EOFError, OSError) as exc:
        if isinstance(exc, paramiko.AuthenticationException):
            raise KeyRefusedError(f"{target.where} refused the login for user {target.user!r} ({exc})") from exc
        raise NotReadyError(f"{target.where} dropped the connection while logging in ({exc})") from exc


def connect(target: Target, timeout: float = CONNECT_TIMEOUT_S) -> "Connection":
    """Open, verify the host key, authenticate.  Raises as the module docstring says."""
    if target.login is None:
        return _open(target, timeout)
    with target.login.connecting:
        shared = logins.acquire(target.pool_key)
        if shared is not None:
            return Connection(shared, target, shared=True)
        return _open(target, timeout)


def _open(target: Target, timeout: float) -> "Connection":
    import paramiko

    sock, via = _socket(target, timeout)
    transport = paramiko.Transport(sock)
    try:
        transport.banner_timeout = timeout
        transport.handshake_timeout = timeout
        known = KnownHosts(target.known_hosts)
        opts = transport.get_security_options()
        wanted = [t for t in known.key_types_for(target.alias, list(target.pins)) if t in opts.key_types]
        if wanted:
            opts.key_types = tuple(wanted)
        try:
            transport.start_client(timeout=timeout)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise NotReadyError(f"{target.where} is not ready for SSH yet ({exc or type(exc).__name__})",
                                hint="a machine that is booting answers within a few minutes") from exc
        server_key = transport.get_remote_server_key()
        how = known.verify(target.alias, (server_key.get_name(), server_key.get_base64()), list(target.pins),
                           target.where)
        if how == "new":
            log.info("recorded the host key of %s on first use", target.where)
        took_code = _authenticate(transport, target)
        transport.set_keepalive(KEEPALIVE_S)
        if target.login is not None:  # a login node: kept for this process's other connections to it
            if via is not None:
                transport._workbench_via = via  # noqa: SLF001 - the jump connection lives as long as the pooled one
            if logins.keep(target.pool_key, transport, precious=took_code):
                return Connection(transport, target, shared=True)
        return Connection(transport, target, via=via)
    except BaseException:
        transport.close()
        if via is not None:
            via.close()
        raise


def _lost(target: Target, exc: BaseException) -> ConnectionLost:
    return ConnectionLost(f"the SSH connection to {target.where} was lost ({exc or type(exc).__name__})",
                          hint="reconnecting with backoff")


class Connection:
    """An authenticated SSH connection: run commands, open streams, SFTP."""

    def __init__(self, transport: Any, target: Target, via: "Connection | None" = None, shared: bool = False) -> None:
        self.transport = transport
        self.target = target
        self._sftp: Any = None
        self._via = via  # the jump host's connection this one goes through (closed with it)
        self._shared = shared  # a pooled transport (a login node's): close releases it (logins.release)

    @property
    def alive(self) -> bool:
        return bool(self.transport.is_active())

    def run(self, command: str, timeout: float = 60.0, stdin: bytes | None = None) -> Result:
        """Run ``command`` (a shell line) to completion; ConnectionLost if the connection breaks."""
        import paramiko

        try:
            chan = self.transport.open_session(timeout=timeout)
            chan.settimeout(timeout)
            chan.exec_command(command)
            if stdin is not None:
                chan.sendall(stdin)
            chan.shutdown_write()
            out, err = bytearray(), bytearray()
            deadline = time.monotonic() + timeout
            # read until EOF, not until the exit status: sshd may send the status before the last output.  Waiting
            # is select() on the channel (paramiko sets its pipe when output, error output or EOF arrives): woken at
            # once, where naps of up to 20 ms added ~10 ms to every command
            while True:
                if chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                elif chan.recv_ready():
                    out += chan.recv(65536)
                elif chan.eof_received or chan.closed:
                    break
                elif time.monotonic() > deadline:
                    chan.close()
                    raise TransientError(f"{shlex.split(command)[0] if command else 'command'} on "
                                         f"{self.target.where} did not finish within {timeout:g} s")
                elif not self.alive:
                    raise _lost(self.target, EOFError("connection closed"))
                elif select.select([chan], [], [], min(0.5, max(0.0, deadline - time.monotonic())))[0] \
                        and not (chan.recv_ready() or chan.recv_stderr_ready() or chan.eof_received or chan.closed):
                    time.sleep(0.001)  # woken with nothing to read (a set pipe before its data): never a busy loop
            while chan.recv_ready():
                out += chan.recv(65536)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(65536)
            if not chan.status_event.wait(max(0.0, deadline - time.monotonic())):
                raise _lost(self.target, EOFError("no exit status"))
            rc = chan.recv_exit_status()
            chan.close()
            if rc == -1 and not self.alive:  # closed without a status: the connection dropped
                raise _lost(self.target, EOFError("connection closed"))
            return Result(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
        except WorkbenchError:
            raise
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise _lost(self.target, exc) from exc

    def check(self, command: str, what: str, timeout: float = 60.0) -> str:
        """``run`` and return stdout; a non-zero exit raises WorkbenchError naming ``what``."""
        res = self.run(command, timeout)
        if res.rc != 0:
            detail = (res.err or res.out).strip().splitlines()
            raise WorkbenchError(f"{what} failed on {self.target.where} (exit {res.rc})"
                                 + (f": {detail[-1]}" if detail else ""))
        return res.out

    def stream(self, command: str, timeout: float = 30.0) -> Any:
        """A channel running ``command``; read it with ``recv``; close it to stop (the command gets EOF/SIGPIPE)."""
        import paramiko

        try:
            chan = self.transport.open_session(timeout=timeout)
            chan.exec_command(command)
            return chan
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise _lost(self.target, exc) from exc

    def sftp(self) -> Any:
        """The connection's SFTP client (opened on first use)."""
        import paramiko

        if self._sftp is None:
            try:
                self._sftp = paramiko.SFTPClient.from_transport(self.transport)
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise _lost(self.target, exc) from exc
        return self._sftp

    def close(self) -> None:
        """Close; safe from any thread, also on a transport that already died (closing is never an error)."""
        try:
            if self._sftp is not None:
                self._sftp.close()
        except Exception:  # noqa: BLE001 - paramiko raises EOFError closing SFTP on a transport that died
            log.debug("closing the SFTP session of %s failed", self.target.where, exc_info=True)
        finally:
            if self._shared:
                logins.release(self.target.pool_key, self.transport)
            else:
                self.transport.close()
                if self._via is not None:
                    self._via.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sftp_error(exc: BaseException, what: str, where: str) -> WorkbenchError:
    """An SFTP call's failure as ours: a broken connection is ConnectionLost (retry), a missing file NotFound."""
    import paramiko

    if isinstance(exc, (paramiko.SSHException, EOFError)) or (isinstance(exc, OSError) and exc.errno is None
                                                             and not isinstance(exc, FileNotFoundError)):
        return ConnectionLost(f"the connection to {where} was lost during {what} ({exc})")
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(f"{what}: no such file or folder on {where}")
    return WorkbenchError(f"{what} failed on {where}: {exc}")


def connect_with_backoff(target: Target, deadline_s: float, should_stop: Callable[[], bool],
                         on_wait: Callable[[WorkbenchError, float], None] | None = None,
                         key_grace_s: float = 300.0, sleep: Callable[[float], None] = time.sleep,
                         backoff: Backoff | None = None) -> Connection | None:
    """Connect, retrying NotReadyError (and a refused key for ``key_grace_s``) with backoff.

    ``on_wait(error, delay)`` is told each retry (for a "booting…" state).  Returns None
    when ``should_stop()``; raises the last error when ``deadline_s`` passes, and a
    HostKeyError at once.  A login node that asks for a one-time code (:class:`.logins.CodeNeeded`) fails at once,
    unless codes come later in this process (the app's MFA dialog): then it waits, without connecting again, until a
    code is given or another connection took one.
    """
    start = time.monotonic()
    backoff = backoff or Backoff()
    while True:
        if should_stop():
            return None
        try:
            return connect(target)
        except logins.CodeNeeded as exc:
            if target.login is None or not logins.codes_come_later():
                raise
            if on_wait is not None:
                on_wait(exc, 0.0)
            while not (target.login.wait_for_code(0.5) or logins.pooled(target.pool_key) is not None):
                if should_stop():
                    return None
                if time.monotonic() - start >= deadline_s:
                    raise
        except (NotReadyError, KeyRefusedError) as exc:
            elapsed = time.monotonic() - start
            if elapsed >= deadline_s or (isinstance(exc, KeyRefusedError) and elapsed >= key_grace_s):
                raise
            delay = min(backoff.next(), max(0.05, deadline_s - elapsed))
            if on_wait is not None:
                on_wait(exc, delay)
            sleep(delay)
