"""The Secret Service backend on one registered connection (secret_service.py), against the real gnome-keyring.

Needs the private Secret Service of `make test` (the ``keyring`` marker), except the handshake test,
which feeds the backend's own handshake a service that refuses the first calls.
"""

from __future__ import annotations

import multiprocessing as mp
import uuid
from typing import Iterator

import pytest
from keyring.backends import SecretService
from keyring.errors import PasswordDeleteError
from secretstorage.exceptions import ItemNotFoundException, SecretServiceNotAvailableException

from workbench.core.providers import secret_service
from workbench.core.providers.credentials import SERVICE
from workbench.core.providers.secret_service import SecretServiceBackend


@pytest.fixture
def backend() -> Iterator[SecretServiceBackend]:
    ours = SecretServiceBackend.from_stock(SecretService.Keyring())
    yield ours
    ours.close()


@pytest.fixture
def names(backend: SecretServiceBackend) -> Iterator[list[str]]:
    used = [f"stress/{uuid.uuid4().hex[:8]}-{i}" for i in range(3)]  # the daemon is shared by xdist workers
    yield used
    for name in used:
        try:
            backend.delete_password(SERVICE, name)
        except PasswordDeleteError:
            pass


@pytest.mark.keyring
def test_entries_are_keyrings_own(backend, names):
    """Written by either backend, read by the other: an upgrade keeps every stored credential."""
    stock = SecretService.Keyring()  # keyring's own backend, as the app used it before issue 28
    ours_name, stock_name, _ = names
    backend.set_password(SERVICE, ours_name, "written-by-workbench")
    stock.set_password(SERVICE, stock_name, "written-by-keyring")
    assert stock.get_password(SERVICE, ours_name) == "written-by-workbench"
    assert backend.get_password(SERVICE, stock_name) == "written-by-keyring"
    backend.set_password(SERVICE, stock_name, "replaced")  # replaces keyring's entry, does not add one
    assert stock.get_password(SERVICE, stock_name) == "replaced"
    backend.delete_password(SERVICE, stock_name)
    assert stock.get_password(SERVICE, stock_name) is None


@pytest.mark.keyring
def test_one_connection_serves_every_call(backend, names):
    backend.set_password(SERVICE, names[0], "v0")
    link = backend._link
    assert link is not None
    for i in range(20):
        backend.set_password(SERVICE, names[1], f"v{i}")
        assert backend.get_password(SERVICE, names[1]) == f"v{i}"
    assert backend.get_password(SERVICE, names[2]) is None  # not there: said without a retry
    assert backend._link is link and backend.retries == 0


@pytest.mark.keyring
def test_missing_entry_reads_none_and_deletes_with_keyrings_error(backend, names):
    assert backend.get_password(SERVICE, names[0]) is None
    assert backend.get_credential(SERVICE, names[0]) is None
    with pytest.raises(PasswordDeleteError):
        backend.delete_password(SERVICE, names[0])


def _child_reads(backend: SecretServiceBackend, name: str, out) -> None:
    out.put((backend.get_password(SERVICE, name), backend._link.pid if backend._link else None))


@pytest.mark.keyring
def test_a_forked_child_opens_its_own_connection(backend, names):
    backend.set_password(SERVICE, names[0], "shared")
    parent_pid = backend._link.pid
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child_reads, args=(backend, names[0], out))
    child.start()
    value, child_pid = out.get(timeout=30)
    child.join(30)
    assert child.exitcode == 0
    assert value == "shared" and child_pid not in (None, parent_pid)
    assert backend.get_password(SERVICE, names[0]) == "shared"  # the parent's connection still works
    assert backend._link.pid == parent_pid


@pytest.mark.keyring
def test_a_connection_that_died_is_replaced_once(backend, names):
    backend.set_password(SERVICE, names[0], "kept")
    backend._link.connection.close()  # the socket goes away under the backend (bus or daemon gone)
    assert backend.get_password(SERVICE, names[0]) == "kept"
    assert backend.retries == 1


class _RefusingService:
    """Secret Service stand-in for the handshake: UnknownMethod (as gnome-keyring answers a caller
    it has not registered yet) for the first ``refusals`` calls, then an empty search result."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.calls: list[tuple] = []

    def __call__(self, path, interface, connection):
        return self

    def call(self, method, signature, *body):
        self.calls.append((method, body))
        if len(self.calls) <= self.refusals:
            raise ItemNotFoundException("Item does not exist!")
        return ([], [])


def test_the_handshake_waits_until_the_service_knows_the_connection(monkeypatch):
    service = _RefusingService(refusals=3)
    monkeypatch.setattr(secret_service, "DBusAddressWrapper", service)
    monkeypatch.setattr(secret_service.time, "sleep", lambda s: None)
    backend = SecretServiceBackend()
    backend._handshake(object())
    assert backend.handshake_refusals == 3
    assert [m for m, _ in service.calls] == ["SearchItems"] * 4  # no property read before it succeeded


def test_a_service_that_never_knows_the_connection_is_unavailable(monkeypatch):
    monkeypatch.setattr(secret_service, "DBusAddressWrapper", _RefusingService(refusals=10 ** 6))
    monkeypatch.setattr(secret_service.time, "sleep", lambda s: None)
    with pytest.raises(SecretServiceNotAvailableException):
        SecretServiceBackend()._handshake(object())


class _LockedCollection:
    """A locked collection whose unlock prompt nobody answers (a headless daemon's prompter cannot start)."""

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    def is_locked(self) -> bool:
        return True

    def unlock(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        raise TimeoutError


def test_an_unanswered_unlock_prompt_ends_as_locked_not_a_hang():
    from keyring.errors import KeyringLocked

    from workbench.core.providers.keyring_safety import map_error

    locked = _LockedCollection()
    with pytest.raises(KeyringLocked) as raised:
        secret_service._unlocked(locked, "collection")
    assert locked.timeouts == [secret_service.UNLOCK_PROMPT_S]
    shown = map_error(raised.value, "read", "aws/p", ())
    assert "locked" in shown.message and "120 s" in shown.message
