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
* a connection that drops later → :class:`ConnectionLost` (TransientError).

Threading: a Connection may be used by one thread at a time (paramiko itself runs a
reader thread per Transport).  ``close`` may be called from any thread.
"""

from __future__ import annotations

import logging
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

    @property
    def where(self) -> str:
        return f"{self.name} ({self.host}:{self.port})"

    @classmethod
    def for_instance(cls, inst: Instance, data_dir: Path) -> "Target":
        """The target of ``inst``; NotFoundError while it has no address."""
        if not inst.host:
            raise NotFoundError(f"{inst.name or inst.instance_id} has no address yet",
                                hint="wait until the machine is running")
        keys = keypair_for(data_dir, inst.extra)
        port = int(inst.extra.get("ssh_port") or 22)
        return cls(host=inst.host, port=port, user=str(inst.extra.get("ssh_user") or DEFAULT_USER),
                   alias=host_alias(inst.provider, inst.instance_id), name=inst.name or inst.launch_id,
                   key_path=keys.private_path, known_hosts=known_hosts_path(data_dir),
                   pins=tuple(parse_pins(inst.extra.get("host_keys"))))


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


def connect(target: Target, timeout: float = CONNECT_TIMEOUT_S) -> "Connection":
    """Open, verify the host key, authenticate.  Raises as the module docstring says."""
    import paramiko

    try:
        sock = socket.create_connection((target.host, target.port), timeout=timeout)
    except OSError as exc:
        raise NotReadyError(f"{target.where} does not answer on SSH yet ({exc.strerror or exc})",
                            hint="a machine that is booting answers within a few minutes") from exc
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
        try:
            transport.auth_publickey(target.user, _private_key(target.key_path))
        except paramiko.AuthenticationException as exc:
            raise KeyRefusedError(f"{target.where} refused the app's SSH key for user {target.user!r}",
                                  hint="a new machine installs the key while it boots; if this lasts, check "
                                       "the ssh_user of the image") from exc
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise NotReadyError(f"{target.where} dropped the connection while logging in ({exc})") from exc
        transport.set_keepalive(KEEPALIVE_S)
        return Connection(transport, target)
    except BaseException:
        transport.close()
        raise


def _lost(target: Target, exc: BaseException) -> ConnectionLost:
    return ConnectionLost(f"the SSH connection to {target.where} was lost ({exc or type(exc).__name__})",
                          hint="reconnecting with backoff")


class Connection:
    """An authenticated SSH connection: run commands, open streams, SFTP."""

    def __init__(self, transport: Any, target: Target) -> None:
        self.transport = transport
        self.target = target
        self._sftp: Any = None

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
            nap = 0.001
            # read until EOF, not until the exit status: sshd may send the status before the last output
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
                else:
                    time.sleep(nap)
                    nap = min(0.02, nap * 2)
                    continue
                nap = 0.001
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
        try:
            if self._sftp is not None:
                self._sftp.close()
        finally:
            self.transport.close()

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
    HostKeyError at once.
    """
    start = time.monotonic()
    backoff = backoff or Backoff()
    while True:
        if should_stop():
            return None
        try:
            return connect(target)
        except (NotReadyError, KeyRefusedError) as exc:
            elapsed = time.monotonic() - start
            if elapsed >= deadline_s or (isinstance(exc, KeyRefusedError) and elapsed >= key_grace_s):
                raise
            delay = min(backoff.next(), max(0.05, deadline_s - elapsed))
            if on_wait is not None:
                on_wait(exc, delay)
            sleep(delay)
