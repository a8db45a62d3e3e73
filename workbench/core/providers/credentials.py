"""Credentials in the operating system's keyring, and nowhere else.

Every profile's credential fields are stored as ONE keyring entry:

* service  ``cloud-gpu-workbench`` (:data:`SERVICE`)
* username ``<provider>/<profile>`` (:func:`credential_key`)
* password a JSON object ``{"field_key": "value", ...}``

Failure rules (callers rely on them):

* Only :class:`~workbench.core.domain.errors.AuthError` (keyring trouble) and
  :class:`~workbench.core.domain.errors.ConfigError` (bad input) leave this module.
* There is no plaintext fallback, ever.  If keyring's selected backend is the
  ``fail`` or ``null`` backend, or a file/plaintext backend from
  ``keyrings.alt``, every operation raises AuthError saying no secure keyring
  is available, with a hint how to get one.
* A locked collection ("Prompt dismissed", :class:`keyring.errors.KeyringLocked`)
  raises AuthError telling the user to unlock it.
* No message, log line, ``repr`` or exception chain produced here contains a
  credential value: messages are built from field *names*; any backend error
  text that is shown is first passed through :func:`redact`; and errors are
  raised outside the ``except`` block so they carry neither ``__cause__`` nor
  ``__context__`` pointing at an exception that might hold the value.

The rules are kept in three small modules beside this one: which backends are
refused and how their failures are mapped (:mod:`.keyring_safety`), scrubbing
values out of text (:mod:`.redaction`) and reading credentials given as JSON
(:mod:`.credentials_json`).  This module is plain Python: it may import
:mod:`keyring`, never Qt and never a cloud SDK.  It is safe to use from worker
threads (the lazy backend lookup is guarded by a lock; on Linux the Secret
Service is spoken to over one D-Bus connection per process, its calls serialised:
:mod:`.secret_service`).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

import keyring

from workbench.core.domain.errors import AuthError, ConfigError, NoKeyringError
from workbench.core.providers.credentials_json import describe_key, parse_credentials_json
from workbench.core.providers.keyring_safety import (NO_KEYRING_MESSAGE, backend_label, fix_hint, is_chainer,
                                                     is_insecure_backend, is_stock_secret_service, map_error)
from workbench.core.providers.redaction import redact

if TYPE_CHECKING:  # pragma: no cover - typing only
    from keyring.backend import KeyringBackend

__all__ = [
    "SERVICE",
    "CredentialStore",
    "credential_key",
    "parse_credentials_json",  # re-exported from credentials_json
    "redact",  # re-exported from redaction
]

SERVICE = "cloud-gpu-workbench"

log = logging.getLogger("workbench.credentials")

_T = TypeVar("_T")


def credential_key(provider: str, profile: str) -> str:
    """The keyring username for a profile: ``"<provider>/<profile>"``.

    Raises ConfigError if ``provider`` is empty or contains ``/`` (the key
    would then be ambiguous), or if ``profile`` is empty.
    """
    if not provider or "/" in provider:
        raise ConfigError(f"invalid provider id {provider!r} for a credential key")
    if not profile:
        raise ConfigError("a profile name is required to store credentials")
    return f"{provider}/{profile}"


# --------------------------------------------------------------------------


class CredentialStore:
    """Profile credentials in the OS keyring (see the module docstring for the rules).

    ``backend`` None means ``keyring.get_keyring()``, looked up lazily on
    first use so that building a store (e.g. at GUI start) costs nothing.  A
    ChainerBackend is unwrapped to its highest-priority secure member, so an
    installed ``keyrings.alt`` can never receive or serve credentials.
    """

    def __init__(self, backend: "KeyringBackend | None" = None) -> None:
        self._given = backend
        self._backend: KeyringBackend | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        # No lazy lookup here: repr must stay cheap and side-effect free.
        backend = self._backend if self._backend is not None else self._given
        shown = backend_label(backend) if backend is not None else "default, not looked up yet"
        return f"CredentialStore(backend={shown!r})"

    # -- backend ---------------------------------------------------------

    def _raw_backend(self) -> "KeyringBackend":
        """The configured backend (chainers unwrapped); AuthError if it cannot be had."""
        with self._lock:
            if self._backend is not None:
                return self._backend
            backend = self._given
            if backend is None:
                error: AuthError | None = None
                try:
                    backend = keyring.get_keyring()
                except Exception as exc:  # broken keyringrc / env var naming a missing class
                    error = NoKeyringError(
                        f"{NO_KEYRING_MESSAGE} (keyring backend could not be loaded: "
                        f"{type(exc).__name__})",
                        hint=fix_hint(),
                    )
                if error is not None:
                    raise error
            assert backend is not None
            if is_chainer(backend):
                secure = [m for m in (getattr(backend, "backends", ()) or ()) if not is_insecure_backend(m)]
                if secure:
                    # Use one store consistently: writes and reads must hit the
                    # same backend, and never fall through to a plaintext one.
                    backend = secure[0]
            if is_stock_secret_service(backend):
                # keyring's own Secret Service backend opens a connection per call, which a busy
                # gnome-keyring can answer as if the collection were gone, or abort on: the same
                # entries over one registered connection (secret_service.py says why).
                from workbench.core.providers.secret_service import SecretServiceBackend

                backend = SecretServiceBackend.from_stock(backend)
            self._backend = backend
            return backend

    def _secure_backend(self) -> "KeyringBackend":
        backend = self._raw_backend()
        if is_insecure_backend(backend):
            log.info("refusing insecure keyring backend %s", backend_label(backend))
            raise NoKeyringError(
                f"{NO_KEYRING_MESSAGE} (selected backend: {backend_label(backend)})",
                hint=fix_hint(),
            )
        return backend

    def backend_name(self) -> str:
        """Human-readable backend, e.g. ``SecretService Keyring (keyring.backends.SecretService.Keyring)``.

        Never raises: if the backend cannot even be loaded it says so.
        """
        try:
            return backend_label(self._raw_backend())
        except AuthError:
            return "no keyring backend (could not be loaded)"

    def check_backend(self) -> None:
        """Raise AuthError unless the keyring can be used right now.

        Fails if the backend is fail/null/plaintext, or if a probe read (of
        an entry that normally does not exist) fails because the keyring is
        locked, not running or otherwise unavailable.
        """
        backend = self._secure_backend()
        self._call("access", f"{SERVICE} (probe)", (), backend.get_password, SERVICE, "__workbench_probe__")

    # -- operations ------------------------------------------------------

    def _call(
        self,
        action: str,
        key: str,
        values: Sequence[str],
        fn: Callable[..., _T],
        *args: Any,
    ) -> _T:
        """Run one backend call, mapping every failure to a scrubbed, chain-free AuthError.

        ``values`` are the secret values involved (for a write), scrubbed
        from any backend message that is shown.
        """
        error: AuthError | None = None
        try:
            return fn(*args)
        except Exception as exc:
            error = map_error(exc, action, key, values)
            # Only the exception type goes to the log: its text may contain
            # what the backend was handed.
            log.info("keyring %s failed for %s: %s", action, key, type(exc).__name__)
        # Raised outside the except block so the AuthError has no __context__.
        assert error is not None
        raise error

    def set(self, provider: str, profile: str, values: Mapping[str, str]) -> None:
        """Store ``values`` (field key -> value) for the profile, replacing what was there.

        Raises ConfigError if ``values`` is empty or has non-string keys or
        values (messages name the keys only); AuthError if the keyring is
        insecure, locked or refuses the write.
        """
        key = credential_key(provider, profile)
        if not values:
            raise ConfigError(f"no credential values given for {key}")
        bad = [k for k, v in values.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise ConfigError(
                f"credential values for {key} must be strings; check key(s): "
                + ", ".join(describe_key(str(k)) for k in bad)
            )
        backend = self._secure_backend()
        payload = json.dumps(dict(values), sort_keys=True, ensure_ascii=False)
        # A backend error may quote the payload: _call scrubs every value from it.
        self._call("store", key, list(values.values()), backend.set_password, SERVICE, key, payload)
        log.info("stored credentials for %s (fields: %s)", key, ", ".join(sorted(values)))

    def get(self, provider: str, profile: str) -> dict[str, str]:
        """The stored field values for the profile, or ``{}`` when nothing is stored.

        Raises AuthError if the keyring is insecure/locked/unavailable, or if
        the stored entry is not a JSON object of strings (it says to set the
        credentials again; the entry's content is never shown).
        """
        key = credential_key(provider, profile)
        backend = self._secure_backend()
        raw = self._call("read", key, (), backend.get_password, SERVICE, key)
        if raw is None:
            return {}
        data: Any = None
        try:
            data = json.loads(raw)
        except ValueError:
            data = None  # reported below, outside the except block
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            log.warning("stored credentials for %s are not a JSON object of strings", key)
            raise AuthError(
                f"the stored credentials for {key} are unreadable",
                hint=f"set them again: workbench credentials set {provider} {profile}",
            )
        return data

    def has(self, provider: str, profile: str) -> bool:
        """True if an entry is stored for the profile (its content is not checked).

        Raises AuthError like :meth:`get`.
        """
        key = credential_key(provider, profile)
        backend = self._secure_backend()
        return self._call("read", key, (), backend.get_password, SERVICE, key) is not None

    def delete(self, provider: str, profile: str) -> bool:
        """Remove the profile's entry; False if nothing was stored.

        Raises AuthError if the keyring is insecure/locked/unavailable or
        refuses the delete.
        """
        key = credential_key(provider, profile)
        backend = self._secure_backend()
        # Look first: backends signal "not there" inconsistently (SecretService
        # raises PasswordDeleteError, others return silently).
        if self._call("read", key, (), backend.get_password, SERVICE, key) is None:
            return False
        self._call("delete", key, (), backend.delete_password, SERVICE, key)
        log.info("deleted credentials for %s", key)
        return True
