"""A Secret Service that does not answer is an error, not a hang (secret_service.py, point 5).

A real private ``dbus-daemon`` (the session bus, whose calls never time out on their own) and, owning
``org.freedesktop.secrets`` on it, a stand-in that reads every call and answers only those it is told
to: the backend's calls must give up, be tried again on a new connection, and end with a clear error.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from typing import Iterator

import pytest
from jeepney import HeaderFields, MessageType, new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
from secretstorage.exceptions import SecretServiceNotAvailableException

from workbench.core.providers import secret_service
from workbench.core.providers.credentials import SERVICE, CredentialStore
from workbench.core.providers.secret_service import SecretServiceBackend
from workbench.core.domain.errors import AuthError


class _Service:
    """Owns org.freedesktop.secrets on ``address``; answers a search (nothing found) and ReadAlias (no
    default collection) except to the callers in ``deaf_to`` (a set of how-many-th callers, from 1)."""

    def __init__(self, address: str, deaf_to: set[int]) -> None:
        self.deaf_to = deaf_to
        self.calls: list[tuple[int, str]] = []  # (which caller, method)
        self._callers: dict[str, int] = {}
        self._conn = open_dbus_connection(bus=address)
        self._conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.secrets"))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                msg = self._conn.receive()
            except Exception:  # noqa: BLE001 - closed by close(): the stand-in ends
                return
            if msg.header.message_type != MessageType.method_call:
                continue
            sender = msg.header.fields.get(HeaderFields.sender, "")
            caller = self._callers.setdefault(sender, len(self._callers) + 1)
            method = msg.header.fields.get(HeaderFields.member, "")
            self.calls.append((caller, method))
            if caller in self.deaf_to:
                continue
            if method == "SearchItems":
                self._conn.send_message(new_method_return(msg, "aoao", ([], [])))
            elif method == "ReadAlias":
                self._conn.send_message(new_method_return(msg, "o", ("/",)))

    def close(self) -> None:
        self._conn.sock.shutdown(socket.SHUT_RDWR)  # wakes the reading thread (a close alone does not)
        self._thread.join(5)
        self._conn.close()
        assert not self._thread.is_alive()


@pytest.fixture
def bus() -> Iterator[str]:
    """The address of a private session bus of this test's own."""
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = proc.stdout.readline().strip()
        assert address.startswith("unix:"), address
        yield address
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


@pytest.fixture
def fast_timeout(monkeypatch, bus) -> float:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus)
    monkeypatch.setattr(secret_service, "CALL_TIMEOUT_S", 0.5)
    return 0.5


def test_a_call_that_is_never_answered_is_tried_on_a_new_connection(bus, fast_timeout):
    service = _Service(bus, deaf_to={1})  # the first connection's call is lost
    backend = SecretServiceBackend()
    try:
        started = time.monotonic()
        assert backend.get_password(SERVICE, "aws/p") is None  # the second connection was answered
        took = time.monotonic() - started
    finally:
        backend.close()
        service.close()
    assert fast_timeout <= took < fast_timeout + 3
    assert service.calls[0] == (1, "SearchItems")
    assert (2, "SearchItems") in service.calls and (2, "ReadAlias") in service.calls
    assert backend.retries == 1


def test_a_service_that_never_answers_is_an_error_in_bounded_time(bus, fast_timeout):
    service = _Service(bus, deaf_to={1, 2, 3, 4})
    store = CredentialStore(SecretServiceBackend())
    try:
        started = time.monotonic()
        with pytest.raises(AuthError) as raised:
            store.get("aws", "p")
        took = time.monotonic() - started
    finally:
        service.close()
    # two calls waited (the handshake of the first and of the second connection), then it said so
    assert [method for _caller, method in service.calls] == ["SearchItems", "SearchItems"]
    assert 2 * fast_timeout <= took < 2 * fast_timeout + 3
    message = raised.value.message
    assert "could not open the keyring" in message and "did not answer" in message, message


def test_the_timeout_error_is_the_backends_own(bus, fast_timeout):
    """Through the backend alone (no CredentialStore mapping): secretstorage's own exception type."""
    service = _Service(bus, deaf_to={1, 2})
    try:
        with pytest.raises(SecretServiceNotAvailableException, match="did not answer"):
            SecretServiceBackend().get_password(SERVICE, "aws/p")
    finally:
        service.close()
