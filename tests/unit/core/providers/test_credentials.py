"""Tests for workbench.core.providers.credentials (the keyring wrapper) and keyring_safety.

Reading credentials from JSON and redaction: test_credentials_json.py.

Two kinds of tests live here:

* Real Secret Service tests (class TestRealSecretService) talk to a
  gnome-keyring started by scripts/with-secret-service.sh.  They run when
  WORKBENCH_SECRET_SERVICE=1 (set by `make test`) and then FAIL if the
  backend is not working; without it the ``keyring`` marker skips them
  (and under CI=true that skip fails the run).
* Everything else uses fake backends or a subprocess and runs anywhere.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
import uuid
from typing import Any, Iterator

import keyring.backend
import keyring.backends.fail
import keyring.backends.null
import keyring.errors
import pytest
from keyring.compat import properties

from workbench.core.providers import credentials as cred
from workbench.core.providers.credentials import SERVICE, CredentialStore, credential_key
from workbench.core.providers.keyring_safety import is_insecure_backend
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.providers.contract import CredentialField

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRET2 = "Zz9-another-Very-Secret-Value-0042"

AWS_FIELDS = (
    CredentialField("access_key_id", "Access key ID"),
    CredentialField("secret_access_key", "Secret access key", secret=True),
    CredentialField("session_token", "Session token", secret=True, optional=True),
)


# --------------------------------------------------------------------------
# fake backends
# --------------------------------------------------------------------------


class _FakeBackend(keyring.backend.KeyringBackend):
    """Base of the test backends.

    keyring registers every KeyringBackend subclass globally; a priority that
    raises makes them "not viable", so keyring.get_keyring() in this process
    can never pick a fake.
    """

    @properties.classproperty
    def priority(cls) -> float:
        raise RuntimeError("test-only backend")

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}
        self.calls: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.calls.append("get")
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls.append("set")
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.calls.append("delete")
        if self.data.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("No such password!")


class MemoryKeyring(_FakeBackend):
    """A secure-looking in-memory backend."""


class PlaintextKeyring(_FakeBackend):
    """Looks like keyrings.alt's plaintext file backend (without importing it)."""

    __module__ = "keyrings.alt.file"


class EncryptedKeyring(_FakeBackend):
    """keyrings.alt's password-file backend: also refused (file based, prompts on a tty)."""

    __module__ = "keyrings.alt.file"


class RaisingKeyring(_FakeBackend):
    """Raises ``exc`` from every operation."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def get_password(self, service: str, username: str) -> str | None:
        raise self.exc

    def set_password(self, service: str, username: str, password: str) -> None:
        raise self.exc

    def delete_password(self, service: str, username: str) -> None:
        raise self.exc


class LeakyKeyring(_FakeBackend):
    """A backend whose errors quote what it was given (the worst case)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"cannot store {password!r} for {username}")


def _fake_chainer(members: list[Any]) -> Any:
    """An object that looks like keyring.backends.chainer.ChainerBackend with ``members``."""

    class ChainerBackend(_FakeBackend):
        __module__ = "keyring.backends.chainer"
        __qualname__ = "ChainerBackend"

    chainer = ChainerBackend()
    chainer.backends = members  # type: ignore[attr-defined]
    return chainer


def _exc_with_module(module: str, name: str, text: str) -> Exception:
    """An exception whose class appears to come from ``module`` (secretstorage, jeepney...)."""
    klass = type(name, (Exception,), {"__module__": module})
    return klass(text)


def _all_text(err: BaseException) -> str:
    """Everything a user or a log could ever see of an exception, chain included."""
    parts = [str(err), repr(err), "".join(traceback.format_exception(err))]
    if isinstance(err, (AuthError, ConfigError)):
        parts += [err.message, err.hint or "", json.dumps(err.to_json())]
    return "\n".join(parts)


def _assert_no_secret(err: BaseException, *secrets: str) -> None:
    text = _all_text(err)
    for secret in secrets:
        assert secret not in text
    # Raised outside the except block: nothing chains back to an exception
    # that might hold the value.
    assert err.__cause__ is None
    assert err.__context__ is None


# --------------------------------------------------------------------------
# real Secret Service (needs scripts/with-secret-service.sh)
# --------------------------------------------------------------------------


@pytest.fixture
def real_store() -> Iterator[CredentialStore]:
    # only used by tests marked ``keyring`` (the class below): without the private Secret
    # Service they are skipped by that marker (tests/support/secret_service.py)
    store = CredentialStore()
    # Under the script these must work; anything else is a real failure
    # (check_backend's AuthError says why, with a hint).
    store.check_backend()
    assert "secret_service.SecretServiceBackend" in store.backend_name(), store.backend_name()
    yield store


@pytest.fixture
def profiles(real_store: CredentialStore) -> Iterator[list[tuple[str, str]]]:
    """Unique profile names (the daemon is shared by xdist workers); removed afterwards."""
    tag = uuid.uuid4().hex[:8]
    used = [("aws", f"default-{tag}"), ("azure", f"work-{tag}")]
    yield used
    for provider, profile in used:
        real_store.delete(provider, profile)


@pytest.mark.keyring
class TestRealSecretService:
    def test_backend_is_secret_service(self, real_store: CredentialStore) -> None:
        # keyring chose its Secret Service backend; the store speaks to it over one registered
        # connection (secret_service.py), under the same name
        assert real_store.backend_name() == (
            "SecretService Keyring (workbench.core.providers.secret_service.SecretServiceBackend)"
        )

    def test_round_trip_two_providers(
        self, real_store: CredentialStore, profiles: list[tuple[str, str]]
    ) -> None:
        (aws, aws_prof), (az, az_prof) = profiles
        aws_values = {"access_key_id": "AKIAEXAMPLE", "secret_access_key": SECRET}
        az_values = {"tenant_id": "t-1", "client_id": "c-1", "client_secret": SECRET2}

        assert not real_store.has(aws, aws_prof)
        assert real_store.get(aws, aws_prof) == {}

        real_store.set(aws, aws_prof, aws_values)
        real_store.set(az, az_prof, az_values)

        assert real_store.has(aws, aws_prof) and real_store.has(az, az_prof)
        assert real_store.get(aws, aws_prof) == aws_values
        assert real_store.get(az, az_prof) == az_values
        # Another profile of the same provider is unaffected.
        assert real_store.get(aws, az_prof) == {}

        assert real_store.delete(aws, aws_prof) is True
        assert real_store.get(aws, aws_prof) == {}
        assert not real_store.has(aws, aws_prof)
        assert real_store.delete(aws, aws_prof) is False
        # Deleting one profile leaves the other.
        assert real_store.get(az, az_prof) == az_values

    def test_stored_as_one_json_entry(
        self, real_store: CredentialStore, profiles: list[tuple[str, str]]
    ) -> None:
        provider, profile = profiles[0]
        real_store.set(provider, profile, {"access_key_id": "AKIA1", "secret_access_key": SECRET})
        raw = keyring.get_keyring().get_password(SERVICE, f"{provider}/{profile}")
        assert raw is not None
        assert json.loads(raw) == {"access_key_id": "AKIA1", "secret_access_key": SECRET}

    def test_overwrite_replaces_all_fields(
        self, real_store: CredentialStore, profiles: list[tuple[str, str]]
    ) -> None:
        provider, profile = profiles[0]
        real_store.set(provider, profile, {"a": "first-value", "b": "only-in-first"})
        real_store.set(provider, profile, {"a": "second-value"})
        assert real_store.get(provider, profile) == {"a": "second-value"}

    def test_unicode_values(
        self, real_store: CredentialStore, profiles: list[tuple[str, str]]
    ) -> None:
        provider, profile = profiles[1]
        values = {
            "client_secret": "pä$$wörd—密码🔑\"quoted\"\\back",
            "note": "line1\nline2\ttab",
        }
        real_store.set(provider, profile, values)
        assert real_store.get(provider, profile) == values


# --------------------------------------------------------------------------
# no backend / insecure backends
# --------------------------------------------------------------------------

_SUBPROCESS_CODE = r"""
import json, sys
from workbench.core.providers.credentials import CredentialStore
from workbench.core.domain.errors import AuthError
store = CredentialStore()
out = {"backend": store.backend_name()}
for name, op in [
    ("check", lambda: store.check_backend()),
    ("set", lambda: store.set("aws", "default", {"secret_access_key": sys.argv[1]})),
    ("get", lambda: store.get("aws", "default")),
    ("has", lambda: store.has("aws", "default")),
    ("delete", lambda: store.delete("aws", "default")),
]:
    try:
        op()
        out[name] = None
    except AuthError as exc:
        out[name] = {"message": exc.message, "hint": exc.hint, "str": str(exc), "repr": repr(exc)}
print(json.dumps(out))
"""


def test_no_keyring_backend_subprocess(tmp_path: Any) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no user keyringrc.cfg
    proc = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS_CODE, SECRET],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["backend"] == "fail Keyring (keyring.backends.fail.Keyring)"
    for op in ("check", "set", "get", "has", "delete"):
        err = out[op]
        assert err is not None, f"{op} did not raise"
        assert "no secure keyring" in err["message"]
        assert err["hint"]
        if sys.platform.startswith("linux"):
            assert "gnome-keyring-daemon --unlock" in err["hint"]
            assert "dbus-run-session" in err["hint"]


@pytest.mark.parametrize(
    "backend",
    [
        keyring.backends.fail.Keyring(),
        keyring.backends.null.Keyring(),
        PlaintextKeyring(),
        EncryptedKeyring(),
    ],
    ids=["fail", "null", "keyrings.alt.file.PlaintextKeyring", "keyrings.alt.file.EncryptedKeyring"],
)
def test_insecure_backends_are_refused(backend: Any) -> None:
    assert is_insecure_backend(backend)
    store = CredentialStore(backend)
    with pytest.raises(AuthError, match="no secure keyring") as info:
        store.check_backend()
    assert info.value.hint
    for op in (
        lambda: store.set("aws", "p", {"secret_access_key": SECRET}),
        lambda: store.get("aws", "p"),
        lambda: store.has("aws", "p"),
        lambda: store.delete("aws", "p"),
    ):
        with pytest.raises(AuthError, match="no secure keyring") as info:
            op()
        _assert_no_secret(info.value, SECRET)
    # Nothing ever reached the insecure backend.
    assert getattr(backend, "calls", []) == []


def test_is_insecure_backend_judges_by_module_and_name() -> None:
    assert not is_insecure_backend(MemoryKeyring())

    class Keyring(_FakeBackend):  # e.g. keyrings.alt.Gnome: not file based
        __module__ = "keyrings.alt.Gnome"

    assert not is_insecure_backend(Keyring())

    class PyFilesystemKeyring(_FakeBackend):
        __module__ = "keyrings.alt.pyfs"

    assert is_insecure_backend(PyFilesystemKeyring())

    class SomePlaintextKeyring(_FakeBackend):
        __module__ = "somebody.elses"

    assert is_insecure_backend(SomePlaintextKeyring())

    assert is_insecure_backend(_fake_chainer([MemoryKeyring(), PlaintextKeyring()]))
    assert is_insecure_backend(_fake_chainer([]))
    assert not is_insecure_backend(_fake_chainer([MemoryKeyring()]))


def test_chainer_is_unwrapped_to_secure_member() -> None:
    secure, plain = MemoryKeyring(), PlaintextKeyring()
    plain.data[(SERVICE, "aws/p")] = json.dumps({"secret_access_key": "from-plaintext"})
    store = CredentialStore(_fake_chainer([plain, secure]))
    # Reads never fall through to the plaintext member...
    assert store.get("aws", "p") == {}
    # ...and writes go to the secure one only.
    store.set("aws", "p", {"secret_access_key": SECRET})
    assert json.loads(secure.data[(SERVICE, "aws/p")]) == {"secret_access_key": SECRET}
    assert plain.calls == []
    assert "MemoryKeyring" in store.backend_name()


def test_chainer_with_only_insecure_members_is_refused() -> None:
    store = CredentialStore(_fake_chainer([PlaintextKeyring()]))
    with pytest.raises(AuthError, match="no secure keyring"):
        store.check_backend()


def test_unloadable_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> None:
        raise RuntimeError(f"bad config {SECRET}")

    monkeypatch.setattr(cred.keyring, "get_keyring", boom)
    store = CredentialStore()
    assert "could not be loaded" in store.backend_name()
    with pytest.raises(AuthError, match="no secure keyring") as info:
        store.check_backend()
    _assert_no_secret(info.value, SECRET)


# --------------------------------------------------------------------------
# locked / unavailable keyrings
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exc",
    [
        keyring.errors.KeyringLocked("Failed to unlock the collection!"),
        keyring.errors.InitError("Failed to create the collection: Prompt dismissed.."),
        _exc_with_module("secretstorage.exceptions", "LockedException", "Collection is locked!"),
        _exc_with_module("secretstorage.exceptions", "PromptDismissedException", "Prompt dismissed."),
    ],
    ids=["KeyringLocked", "InitError-dismissed", "LockedException", "PromptDismissed"],
)
def test_locked_keyring(exc: Exception) -> None:
    store = CredentialStore(RaisingKeyring(exc))
    with pytest.raises(AuthError) as info:
        store.check_backend()
    assert "locked" in info.value.message
    assert "unlock" in (info.value.hint or "")
    for op in (
        lambda: store.set("aws", "p", {"secret_access_key": SECRET}),
        lambda: store.get("aws", "p"),
        lambda: store.has("aws", "p"),
        lambda: store.delete("aws", "p"),
    ):
        with pytest.raises(AuthError, match="locked") as info:
            op()
        assert "aws/p" in info.value.message
        _assert_no_secret(info.value, SECRET)


@pytest.mark.parametrize(
    "exc, expected",
    [
        (keyring.errors.NoKeyringError("No recommended backend"), "no secure keyring"),
        (keyring.errors.InitError("Failed to create the collection: boom"), "could not open the keyring"),
        (
            _exc_with_module(
                "secretstorage.exceptions",
                "SecretServiceNotAvailableException",
                "The name org.freedesktop.secrets was not provided by any .service files",
            ),
            "could not open the keyring",
        ),
        (
            _exc_with_module("jeepney.wrappers", "DBusErrorResponse", "[org.freedesktop.DBus.Error.NoReply]"),
            "could not open the keyring",
        ),
        (_exc_with_module("dbus.exceptions", "DBusException", "no bus"), "could not open the keyring"),
        (keyring.errors.PasswordSetError("refused"), "refused to store"),
        (keyring.errors.PasswordDeleteError("refused"), "refused to delete"),
        (ConnectionRefusedError("socket"), "keyring error"),
        (ValueError("weird"), "unexpected keyring failure"),
    ],
)
def test_backend_errors_become_auth_errors(exc: Exception, expected: str) -> None:
    store = CredentialStore(RaisingKeyring(exc))
    with pytest.raises(AuthError, match=expected) as info:
        store.set("aws", "p", {"secret_access_key": SECRET})
    _assert_no_secret(info.value, SECRET)
    assert type(exc).__name__ in info.value.message


# --------------------------------------------------------------------------
# the store with a working (fake) backend
# --------------------------------------------------------------------------


def test_fake_round_trip_and_key_format() -> None:
    backend = MemoryKeyring()
    store = CredentialStore(backend)
    store.check_backend()
    assert "MemoryKeyring" in store.backend_name()
    assert store.get("aws", "default") == {}
    assert store.delete("aws", "default") is False
    store.set("aws", "default", {"access_key_id": "AKIA", "secret_access_key": SECRET})
    assert list(backend.data) == [(SERVICE, "aws/default")]
    assert store.has("aws", "default")
    assert store.get("aws", "default") == {"access_key_id": "AKIA", "secret_access_key": SECRET}
    assert store.delete("aws", "default") is True
    assert backend.data == {}


def test_corrupted_entry() -> None:
    backend = MemoryKeyring()
    backend.data[(SERVICE, "aws/p")] = f"not json {SECRET}"
    store = CredentialStore(backend)
    with pytest.raises(AuthError, match="unreadable") as info:
        store.get("aws", "p")
    assert "workbench credentials set aws p" in (info.value.hint or "")
    _assert_no_secret(info.value, SECRET)
    backend.data[(SERVICE, "aws/p")] = json.dumps({"secret_access_key": 12})
    with pytest.raises(AuthError, match="unreadable"):
        store.get("aws", "p")


def test_set_validates_values() -> None:
    store = CredentialStore(MemoryKeyring())
    with pytest.raises(ConfigError, match="no credential values"):
        store.set("aws", "p", {})
    number = 7654321 * 3
    with pytest.raises(ConfigError, match="secret_access_key") as info:
        store.set("aws", "p", {"secret_access_key": number})  # type: ignore[dict-item]
    assert str(number) not in _all_text(info.value)


def test_credential_key() -> None:
    assert credential_key("aws", "default") == "aws/default"
    assert credential_key("azure", "team/a") == "azure/team/a"
    for provider, profile in [("", "p"), ("a/b", "p"), ("aws", "")]:
        with pytest.raises(ConfigError):
            credential_key(provider, profile)


def test_repr_does_not_look_up_or_leak() -> None:
    backend = MemoryKeyring()
    store = CredentialStore(backend)
    store.set("aws", "p", {"secret_access_key": SECRET})
    assert SECRET not in repr(store) and SECRET not in str(store)
    assert "MemoryKeyring" in repr(store)


# --------------------------------------------------------------------------
# secrets never leak: messages, chains, logs
# --------------------------------------------------------------------------


def test_leaky_backend_error_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    store = CredentialStore(LeakyKeyring())
    tricky = 'ab"cd\\ef-' + SECRET  # JSON escaping changes how it appears in the payload
    with pytest.raises(AuthError, match="refused to store") as info:
        store.set("aws", "p", {"secret_access_key": tricky, "access_key_id": SECRET2})
    _assert_no_secret(info.value, SECRET, SECRET2, tricky, 'cd\\\\ef')
    # repr() re-encoded the value: scrubbing cannot be trusted, so the backend
    # text is dropped and only the exception type is shown.
    assert info.value.message == "the keyring refused to store credentials for aws/p (PasswordSetError)"
    # A value quoted as-is is scrubbed and the rest of the text kept.
    with pytest.raises(AuthError) as info:
        store.set("aws", "p", {"secret_access_key": SECRET})
    _assert_no_secret(info.value, SECRET)
    assert "cannot store" in info.value.message and "****" in info.value.message
    assert SECRET not in caplog.text and SECRET2 not in caplog.text


def test_logs_name_fields_never_values(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="workbench.credentials")
    backend = MemoryKeyring()
    store = CredentialStore(backend)
    store.set("aws", "p", {"access_key_id": SECRET2, "secret_access_key": SECRET})
    store.get("aws", "p")
    store.delete("aws", "p")
    for exc in (keyring.errors.KeyringLocked(SECRET), ValueError(SECRET)):
        with pytest.raises(AuthError):
            CredentialStore(RaisingKeyring(exc)).set("aws", "p", {"secret_access_key": SECRET})
    assert "secret_access_key" in caplog.text  # field names are logged...
    assert caplog.records
    for record in caplog.records:
        assert record.name == "workbench.credentials"
        text = record.getMessage() + repr(record.args)
        assert SECRET not in text and SECRET2 not in text  # ...values never
