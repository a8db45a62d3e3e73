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

This module is plain Python: it may import :mod:`keyring`, never Qt and never a
cloud SDK.  It is safe to use from worker threads (every keyring call opens its
own D-Bus connection; the lazy backend lookup is guarded by a lock).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

import keyring
import keyring.errors

from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.providers.redaction import REDACT_MIN_LEN, REDACTED, redact  # noqa: F401 - re-exported

if TYPE_CHECKING:  # pragma: no cover - typing only
    from keyring.backend import KeyringBackend

    from workbench.core.providers.contract import CredentialField

__all__ = [
    "SERVICE",
    "CredentialStore",
    "credential_key",
    "parse_credentials_json",
    "redact",
]

SERVICE = "cloud-gpu-workbench"

log = logging.getLogger("workbench.credentials")

_T = TypeVar("_T")

# redaction lives in one place (plugins use it without loading the keyring); re-exported here
_REDACT_MIN_LEN = REDACT_MIN_LEN
_REDACTED = REDACTED

#: Unknown JSON keys longer than this are not echoed back: a user who pasted
#: a secret where a key belongs must not see it printed in the error.
_MAX_ECHOED_KEY_LEN = 32

_NO_KEYRING_MESSAGE = "no secure keyring is available to store credentials"


def _fix_hint() -> str:
    """How to get a usable keyring on this platform (shown as the error hint)."""
    if sys.platform == "darwin":
        return (
            "the macOS Keychain normally works out of the box; check that the login "
            "keychain exists and is unlocked (Keychain Access), and that no "
            "PYTHON_KEYRING_BACKEND or keyringrc.cfg selects another backend"
        )
    if sys.platform.startswith("win"):
        return (
            "Windows Credential Manager normally works out of the box; check that no "
            "PYTHON_KEYRING_BACKEND or keyringrc.cfg selects another backend"
        )
    return (
        "install and unlock a Secret Service keyring (gnome-keyring or KeePassXC with "
        "Secret Service enabled) in your desktop session; on a headless server run e.g. "
        "dbus-run-session -- sh -c 'printf %s \"$PW\" | gnome-keyring-daemon --unlock "
        "--components=secrets; workbench ...'. Plaintext keyrings (keyrings.alt) are "
        "refused on purpose"
    )


def _unlock_hint() -> str:
    """How to unlock the keyring (shown when the collection is locked)."""
    if sys.platform.startswith("linux"):
        return (
            "unlock the keyring (e.g. log in to the desktop session, or open Seahorse / "
            "KeePassXC and unlock the default collection); on a headless server unlock it "
            "with: printf %s \"$PW\" | gnome-keyring-daemon --unlock --components=secrets"
        )
    return "unlock your keychain / credential store and try again"


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------


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


#: Window length for :func:`_leaks_fragment`: a run this long of a secret
#: value in an error text counts as a leak even if the text re-encoded the
#: rest of the value (repr doubling backslashes, JSON escaping, ...).
_FRAGMENT_LEN = 8


def _leaks_fragment(text: str, values: Iterable[str]) -> bool:
    """True if ``text`` still contains a value or an 8-character run of one."""
    for value in values:
        if not isinstance(value, str) or len(value) < _REDACT_MIN_LEN:
            continue
        if len(value) <= _FRAGMENT_LEN:
            if value in text:
                return True
            continue
        if any(value[i : i + _FRAGMENT_LEN] in text for i in range(len(value) - _FRAGMENT_LEN + 1)):
            return True
    return False


def _describe_key(key: str) -> str:
    """A JSON key for an error message, or a placeholder if it may be a pasted secret."""
    if len(key) > _MAX_ECHOED_KEY_LEN or not key.isprintable():
        return f"<a {len(key)}-character key>"
    return repr(key)


def parse_credentials_json(text: str, fields: Sequence[CredentialField]) -> dict[str, str]:
    """Parse credentials given as a JSON object (``workbench credentials set ... --stdin``).

    Returns ``{field.key: value}`` in the order of ``fields``; optional fields
    that are absent or empty are left out.

    Failure rules (all ConfigError; no message ever contains ``text`` or a
    value from it, and the error carries no exception chain):

    * not valid JSON -> "credentials on stdin are not valid JSON (line L, column C)"
    * not an object -> names the JSON type it got and the expected keys
    * unknown keys -> names them (long/unprintable ones as a placeholder) and
      lists the expected keys
    * missing required fields (absent, or empty/blank string) -> names their keys
    * a value that is not a string or a number -> names its key and JSON type;
      numbers are kept as written in the JSON text (``"0123"`` stays a string,
      ``12.50`` becomes ``"12.50"``)
    """
    expected = [f.key for f in fields]
    expected_text = ", ".join(expected) if expected else "(none)"

    error: ConfigError | None = None
    try:
        # parse_int/parse_float=str keep numbers exactly as typed, so an
        # account id like 123456789012 or a number with trailing zeros survives.
        data: Any = json.loads(text, parse_int=str, parse_float=str)
    except json.JSONDecodeError as exc:
        # The JSONDecodeError holds the whole text in .doc: keep only the position.
        error = ConfigError(
            f"credentials on stdin are not valid JSON (line {exc.lineno}, column {exc.colno})",
            hint=f"give a JSON object with the keys: {expected_text}",
        )
    except (ValueError, RecursionError):
        # e.g. absurdly deep nesting; never include the text.
        error = ConfigError(
            "credentials on stdin are not valid JSON",
            hint=f"give a JSON object with the keys: {expected_text}",
        )
    if error is not None:
        # Raised outside the except block: no __context__ holding the text.
        raise error

    if not isinstance(data, dict):
        raise ConfigError(
            f"credentials on stdin must be a JSON object, got {_json_type(data)}",
            hint=f"give a JSON object with the keys: {expected_text}",
        )

    known = {f.key: f for f in fields}
    unknown = [k for k in data if k not in known]
    missing = [
        f.key
        for f in fields
        if not f.optional and (f.key not in data or _is_blank(data[f.key]))
    ]
    if unknown:
        message = "unknown credential key(s): " + ", ".join(_describe_key(k) for k in unknown)
        if missing:
            message += "; missing required key(s): " + ", ".join(missing)
        raise ConfigError(message, hint=f"expected keys: {expected_text}")
    if missing:
        raise ConfigError(
            "missing required credential key(s): " + ", ".join(missing),
            hint=f"expected keys: {expected_text}",
        )

    result: dict[str, str] = {}
    for f in fields:
        if f.key not in data:
            continue
        value = data[f.key]
        if not isinstance(value, str):
            # Numbers already arrive as str (parse_int/parse_float); whatever is
            # left (bool, null, list, object, NaN/Infinity) is a mistake.
            raise ConfigError(
                f"credential key {f.key!r} must be a string, got {_json_type(value)}",
                hint=f"expected keys: {expected_text}",
            )
        if _is_blank(value):
            continue  # an empty optional field is the same as an omitted one
        result[f.key] = value
    return result


def _is_blank(value: object) -> bool:
    return isinstance(value, str) and not value.strip()


def _json_type(value: object) -> str:
    """The JSON name of a parsed value's type (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, float):
        return "a non-finite number"  # NaN/Infinity: the only floats left
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


# --------------------------------------------------------------------------
# backend vetting
# --------------------------------------------------------------------------


def _class_path(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_chainer(backend: object) -> bool:
    return _class_path(backend) == "keyring.backends.chainer.ChainerBackend"


def _is_insecure_backend(backend: object) -> bool:
    """True if ``backend`` must never hold credentials.

    Judged by the class's module/name only (keyrings.alt is not imported, it
    may well not be installed):

    * ``keyring.backends.fail.Keyring`` - no backend at all;
    * ``keyring.backends.null.Keyring`` - silently forgets everything;
    * anything from ``keyrings.alt`` that keeps secrets in a file
      (``keyrings.alt.file``, ``keyrings.alt.pyfs``, ``keyrings.alt._file_base``)
      or whose class name says plaintext/file;
    * any other backend whose class name contains "Plaintext";
    * a ChainerBackend with no members, or with any insecure member (the
      chainer falls through to later members on reads, so a plaintext member
      would be used).  :class:`CredentialStore` unwraps chainers first, so this
      branch only matters for direct callers.
    """
    cls = type(backend)
    module = cls.__module__ or ""
    name = cls.__name__
    path = f"{module}.{name}"
    if path in ("keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"):
        return True
    if module == "keyrings.alt" or module.startswith("keyrings.alt."):
        leaf = module.rsplit(".", 1)[-1].lower()
        if leaf in ("file", "_file_base", "pyfs") or "plaintext" in name.lower() or "file" in name.lower():
            return True
    if "plaintext" in name.lower():
        return True
    if _is_chainer(backend):
        members = list(getattr(backend, "backends", ()) or ())
        return not members or any(_is_insecure_backend(m) for m in members)
    return False


def _backend_label(backend: object) -> str:
    """``"<keyring name> (<module>.<class>)"``, e.g. ``SecretService Keyring (keyring.backends.SecretService.Keyring)``."""
    try:
        name = str(getattr(backend, "name", "") or type(backend).__name__)
    except Exception:  # a broken classproperty must not break an error message
        name = type(backend).__name__
    return f"{name} ({_class_path(backend)})"


# --------------------------------------------------------------------------
# error mapping
# --------------------------------------------------------------------------

_DBUS_MODULE_PREFIXES = ("secretstorage", "jeepney", "dbus", "dbus_next", "gi")


def _from_module(exc: BaseException, prefixes: tuple[str, ...]) -> bool:
    for klass in type(exc).__mro__:
        module = getattr(klass, "__module__", "") or ""
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return True
    return False


def _looks_locked(exc: BaseException) -> bool:
    if isinstance(exc, keyring.errors.KeyringLocked):
        return True
    name = type(exc).__name__
    if name in ("LockedException", "PromptDismissedException"):
        return True
    try:
        text = str(exc).lower()  # only inspected, never shown
    except Exception:
        return False
    return "dismissed" in text or "locked" in text or "unlock" in text


def _map_error(exc: Exception, action: str, key: str, values: Sequence[str]) -> AuthError:
    """Turn a keyring/D-Bus failure into an AuthError whose text cannot hold a secret.

    The original message is shown only after :func:`redact` with every value
    involved in the call (as given and JSON-escaped); if any 8-character run
    of a value survives that (the backend re-encoded it some other way), the
    message is dropped and only the exception type is shown.  The caller
    raises the result outside its ``except`` block so no chain leads back to
    ``exc``.
    """
    scrub = [*values, *(json.dumps(v, ensure_ascii=False)[1:-1] for v in values)]
    try:
        detail = redact(str(exc), scrub).strip()
    except Exception:  # a broken __str__ must not mask the real failure
        detail = ""
    if _leaks_fragment(detail, values):
        detail = ""
    # A backend message is only worth showing if it says something; cap it so
    # a huge D-Bus body cannot flood the UI.
    detail = f"{type(exc).__name__}: {detail[:300]}" if detail else type(exc).__name__

    if isinstance(exc, keyring.errors.NoKeyringError):
        return AuthError(f"{_NO_KEYRING_MESSAGE} ({detail})", hint=_fix_hint())
    if _looks_locked(exc):
        # gnome-keyring answers "Failed to create the collection: Prompt
        # dismissed" when there is no default collection and no prompter
        # (headless): the same fix - create/unlock it with a password.
        state = "locked (or has no default collection yet)" if "create" in detail.lower() else "locked"
        return AuthError(
            f"the keyring is {state}; could not {action} credentials for {key} ({detail})",
            hint=_unlock_hint(),
        )
    if isinstance(exc, keyring.errors.InitError) or _from_module(exc, _DBUS_MODULE_PREFIXES):
        return AuthError(
            f"could not open the keyring to {action} credentials for {key} ({detail})",
            hint=_fix_hint(),
        )
    if isinstance(exc, keyring.errors.PasswordSetError):
        return AuthError(f"the keyring refused to store credentials for {key} ({detail})")
    if isinstance(exc, keyring.errors.PasswordDeleteError):
        return AuthError(f"the keyring refused to delete credentials for {key} ({detail})")
    if isinstance(exc, (keyring.errors.KeyringError, OSError, RuntimeError)):
        return AuthError(f"keyring error while trying to {action} credentials for {key} ({detail})")
    # Anything else is unexpected; still never let it leave this module raw,
    # because its text or traceback locals may hold the value.
    return AuthError(f"unexpected keyring failure while trying to {action} credentials for {key} ({detail})")


# --------------------------------------------------------------------------
# the store
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
        shown = _backend_label(backend) if backend is not None else "default, not looked up yet"
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
                    error = AuthError(
                        f"{_NO_KEYRING_MESSAGE} (keyring backend could not be loaded: "
                        f"{type(exc).__name__})",
                        hint=_fix_hint(),
                    )
                if error is not None:
                    raise error
            assert backend is not None
            if _is_chainer(backend):
                secure = [m for m in (getattr(backend, "backends", ()) or ()) if not _is_insecure_backend(m)]
                if secure:
                    # Use one store consistently: writes and reads must hit the
                    # same backend, and never fall through to a plaintext one.
                    backend = secure[0]
            self._backend = backend
            return backend

    def _secure_backend(self) -> "KeyringBackend":
        backend = self._raw_backend()
        if _is_insecure_backend(backend):
            log.info("refusing insecure keyring backend %s", _backend_label(backend))
            raise AuthError(
                f"{_NO_KEYRING_MESSAGE} (selected backend: {_backend_label(backend)})",
                hint=_fix_hint(),
            )
        return backend

    def backend_name(self) -> str:
        """Human-readable backend, e.g. ``SecretService Keyring (keyring.backends.SecretService.Keyring)``.

        Never raises: if the backend cannot even be loaded it says so.
        """
        try:
            return _backend_label(self._raw_backend())
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
            error = _map_error(exc, action, key, values)
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
                + ", ".join(_describe_key(str(k)) for k in bad)
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
