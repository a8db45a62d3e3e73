"""The Secret Service (Linux keyring) on one D-Bus connection per process, that a busy daemon cannot drop.

Why this exists instead of ``keyring``'s own Secret Service backend: that backend opens a new
D-Bus connection for every read and write and addresses the collection through
``/org/freedesktop/secrets/aliases/default``.  gnome-keyring-daemon (42.1 on Debian 12, still so in
50.0) registers each connection as a client *lazily*, from an idle callback scheduled by a message
filter on its D-Bus worker thread, and rewrites alias paths on that thread from a table that its
main thread replaces whenever a new client is registered.  Under load (several processes, each
opening connections back to back) a call can therefore arrive before the daemon knows its
caller, or with its alias rewritten from a string just freed.  Measured here (issue 28, eight
processes reading and rewriting entries for 20 s; the daemon's own stderr):

* a method call on the alias path answers ``org.freedesktop.DBus.Error.UnknownMethod`` (about one
  call in 2,000); ``keyring`` takes that for "there is no default collection", tries to create
  one, and without a desktop prompter fails with ``Prompt dismissed``: a secret that exists reads
  as a keyring error (and, through the optional-field path of ``accounts``, was taken for "no
  secret stored");
* a property read in that window aborts the daemon (``gkd_secret_service_get_pkcs11_session:
  assertion 'client' failed`` then GLib's ``invoke_get_property_in_idle_cb: assertion failed:
  (error != NULL)``, exit 134; 3 runs in 6 with one more process).  D-Bus then starts a new daemon
  whose keyring is locked: every later call waits on an unlock prompt.  This is the upstream bug
  reported as Debian #1147303 / GNOME gnome-keyring #144.

So :class:`SecretServiceBackend` keeps ``keyring``'s entries exactly (same attributes, label and
collection: entries written by either backend are read by the other) and changes only how it talks:

1. **one connection per process**, reused by every call (a lock serialises them; a forked child
   opens its own), so the daemon registers this process once instead of once per call;
2. **a handshake before anything else**: ``Service.SearchItems`` for an attribute that matches
   nothing, repeated until it succeeds.  A method call needs no client record to fail safely (the
   daemon answers UnknownMethod, it does not abort), and every incoming message schedules the
   record, so once it succeeds the daemon knows this connection for as long as it stays open;
   only then are properties read or a session opened;
3. **the collection's real path**, read once per connection with ``ReadAlias("default")``, never
   the alias path that the daemon rewrites on its worker thread;
4. **a retry on a new connection** (at most :data:`ATTEMPTS` tries) when the service answers as if
   an object vanished or went away, so one odd answer is never reported as "not there".  A read
   returns None only after a search that succeeded on an unlocked collection found nothing;
5. **no call waits for ever**: the session bus never times a call out (its ``reply_timeout`` is
   unlimited: measured here, a call to a name that reads it and never answers was still waiting
   after 90 s), and jeepney waits as long as it is told.  So a daemon that lost a call, or hangs,
   held the app, the CLI or a launch for good.  Each call now gives up after
   :data:`CALL_TIMEOUT_S` (libdbus's and GDBus's own default, which the desktop's own keyring clients
   live with); the first time it is tried again on a new connection, the second time it is an error
   saying the Secret Service did not answer.

Thread safety: every public method may be called from any thread; calls are serialised.  Errors
leave as ``keyring``/``secretstorage`` exceptions, mapped by :mod:`.keyring_safety` like the stock
backend's.  Plain Python: no Qt, no cloud SDK.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import secretstorage
from keyring.backends import SecretService
from keyring.credentials import SimpleCredential
from keyring.errors import KeyringLocked, PasswordDeleteError
from secretstorage.collection import Collection, create_collection
from secretstorage.defines import SS_PATH
from secretstorage.dhcrypto import Session
from secretstorage.exceptions import ItemNotFoundException, SecretServiceNotAvailableException
from secretstorage.util import SERVICE_IFACE, DBusAddressWrapper, open_session

__all__ = ["ATTEMPTS", "SecretServiceBackend"]

log = logging.getLogger("workbench.credentials")

_T = TypeVar("_T")

#: tries of one operation, each on a new connection after the first
ATTEMPTS = 4
#: tries of the handshake on one connection (each failed try is one message the daemon then knows)
HANDSHAKE_TRIES = 50
#: an attribute no entry carries: the handshake's search matches nothing
_HANDSHAKE_QUERY = {"xdg:schema": "org.cloud-gpu-workbench.handshake"}
#: how long an unlock prompt may wait for the user (a desktop asks for the keyring's password; a
#: headless daemon whose prompter cannot start never answers, and the call must not hang for ever)
UNLOCK_PROMPT_S = 120.0
#: how long one D-Bus call may wait for the service's answer (libdbus's and GDBus's default)
CALL_TIMEOUT_S = 25.0
#: calls that may time out in one operation before it fails (each then tried on a new connection)
TIMEOUTS = 2
#: how a stored entry is labelled (keyring's own wording, so both backends label alike)
_LABEL = "Password for '{username}' on '{service}'"

# What a service that lost track of us (or restarted) answers: worth one more try on a new connection.
# OSError and EOFError: the socket under us closed (the bus or the daemon went away).
_RETRYABLE: tuple[type[BaseException], ...] = (ItemNotFoundException, SecretServiceNotAvailableException,
                                               OSError, EOFError)


@dataclass
class _Link:
    """One open connection, known to the daemon, with the collection it resolved and its session."""

    connection: Any
    pid: int
    collection_path: str | None  # None: the service has no default collection (yet)
    session: Session | None = None

    def close(self) -> None:
        try:
            self.connection.close()
        except Exception:  # noqa: BLE001 - a dead socket is what we are dropping
            pass


class _TimedConnection:
    """A jeepney blocking connection whose calls give up after ``timeout`` s (TimeoutError, an OSError).

    secretstorage calls ``send_and_get_reply(message)`` with no timeout; everything else (signals,
    prompts with their own timeout, close) goes to the connection as it is.
    """

    def __init__(self, connection: Any, timeout: float) -> None:
        self._connection = connection
        self._timeout = timeout

    def send_and_get_reply(self, message: Any, *, timeout: float | None = None) -> Any:
        return self._connection.send_and_get_reply(message, timeout=self._timeout if timeout is None else timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class SecretServiceBackend(SecretService.Keyring):
    """``keyring``'s Secret Service backend over one known connection (see the module docstring)."""

    name = "SecretService Keyring"  # keyring's own name for the keyring it reaches: the same one

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._link_lock = threading.RLock()
        self._link: _Link | None = None
        #: handshake tries that the daemon refused, and operations retried (evidence for tests and logs)
        self.handshake_refusals = 0
        self.retries = 0

    @classmethod
    def from_stock(cls, stock: SecretService.Keyring) -> "SecretServiceBackend":
        """The same keyring (preferred collection, scheme) as ``stock``, spoken to our way."""
        backend = cls()
        for name in ("preferred_collection", "scheme", "appid"):
            if name in vars(stock):
                setattr(backend, name, vars(stock)[name])
        return backend

    # -- connection ----------------------------------------------------------------------

    def _open(self) -> _Link:
        connection = _TimedConnection(secretstorage.dbus_init(), CALL_TIMEOUT_S)
        try:
            self._handshake(connection)
            path = getattr(self, "preferred_collection", None) or self._default_path(connection)
            return _Link(connection, os.getpid(), path)
        except BaseException:
            connection.close()
            raise

    def _handshake(self, connection: Any) -> None:
        service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, connection)
        for attempt in range(HANDSHAKE_TRIES):
            try:
                service.call("SearchItems", "a{ss}", _HANDSHAKE_QUERY)
                return
            except ItemNotFoundException:  # UnknownMethod: the daemon has not registered us yet
                self.handshake_refusals += 1
                time.sleep(min(0.002 * (attempt + 1), 0.05))
        raise SecretServiceNotAvailableException("the Secret Service never registered this connection")

    @staticmethod
    def _default_path(connection: Any) -> str | None:
        service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, connection)
        path, = service.call("ReadAlias", "s", "default")
        return path if len(path) > 1 else None

    def _current(self) -> _Link:
        link = self._link
        if link is None or link.pid != os.getpid():  # a forked child never shares its parent's socket
            self._link = link = self._open()
        return link

    def _drop(self) -> None:
        link, self._link = self._link, None
        if link is not None and link.pid == os.getpid():
            link.close()

    def close(self) -> None:
        """Close the connection (the next call opens a new one)."""
        with self._link_lock:
            self._drop()

    def _run(self, what: str, op: Callable[[_Link], _T]) -> _T:
        """``op`` on the current connection; on a vanished object or service, again on a new one."""
        with self._link_lock:
            timeouts = 0
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    return op(self._current())
                except _RETRYABLE as exc:
                    self._drop()
                    timeouts += isinstance(exc, TimeoutError)
                    if timeouts >= TIMEOUTS:
                        raise SecretServiceNotAvailableException(
                            f"the Secret Service did not answer ({timeouts} calls waited {CALL_TIMEOUT_S:g} s each)"
                        ) from None
                    if attempt == ATTEMPTS:
                        raise
                    self.retries += 1
                    log.info("keyring %s: %s from the Secret Service, trying again on a new connection (%d/%d)",
                             what, type(exc).__name__, attempt + 1, ATTEMPTS)
                    time.sleep(0.05 * attempt)
            raise AssertionError("unreachable")  # pragma: no cover

    # -- collection ----------------------------------------------------------------------

    def _session(self, link: _Link) -> Session:
        if link.session is None:
            link.session = open_session(link.connection)
        return link.session

    def _collection(self, link: _Link, create: bool) -> Collection | None:
        """The unlocked collection, or None when there is none and ``create`` is False."""
        if link.collection_path is None:
            if not create:
                return None
            # As keyring does: a service without a default collection gets one (the desktop prompts).
            collection = create_collection(link.connection, "Default", "default", self._session(link))
            link.collection_path = collection.collection_path
        return _unlocked(Collection(link.connection, link.collection_path, self._session(link)), "collection")

    # -- keyring's API -------------------------------------------------------------------

    def get_password(self, service: str, username: str) -> str | None:
        def read(link: _Link) -> str | None:
            collection = self._collection(link, create=False)
            if collection is None:
                return None
            for item in collection.search_items(self._query(service, username)):
                return _unlocked(item, "item").get_secret().decode("utf-8")
            return None

        return self._run("read", read)

    def set_password(self, service: str, username: str, password: str) -> None:
        def write(link: _Link) -> None:
            collection = self._collection(link, create=True)
            assert collection is not None
            attributes = self._query(service, username, application=self.appid)
            label = _LABEL.format(username=username, service=service)
            collection.create_item(label, attributes, password.encode("utf-8"), replace=True)

        self._run("store", write)

    def delete_password(self, service: str, username: str) -> None:
        def delete(link: _Link) -> None:
            collection = self._collection(link, create=False)
            if collection is not None:
                for item in collection.search_items(self._query(service, username)):
                    item.delete()
                    return
            raise PasswordDeleteError("No such password!")

        self._run("delete", delete)

    def get_credential(self, service: str, username: str | None) -> Any:
        if username is None:
            raise NotImplementedError("the workbench always names the entry it reads")
        password = self.get_password(service, username)
        return None if password is None else SimpleCredential(username, password)

    def get_preferred_collection(self) -> Collection:
        """keyring's API; the workbench never calls it (it would hand out the shared connection)."""
        raise NotImplementedError("use get_password / set_password / delete_password")


def _unlocked(thing: Any, what: str) -> Any:
    """``thing`` (a collection or an item), unlocked through the desktop's prompt if it is locked."""
    if thing.is_locked():
        try:
            thing.unlock(timeout=UNLOCK_PROMPT_S)
        except TimeoutError:
            raise KeyringLocked(f"the keyring stayed locked: its unlock prompt was not answered "
                                f"within {UNLOCK_PROMPT_S:.0f} s") from None
        if thing.is_locked():  # the user dismissed the prompt
            raise KeyringLocked(f"Failed to unlock the {what}!")
    return thing
