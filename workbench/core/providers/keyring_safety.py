"""Which keyring backends may hold credentials, and how keyring failures become AuthErrors.

Two rules of :mod:`workbench.core.providers.credentials` live here: a backend
that keeps secrets in plaintext (or keeps nothing) is refused
(:func:`is_insecure_backend`), and every backend failure becomes an AuthError
whose text cannot carry a secret (:func:`map_error`), with a hint that fits
the platform.  Plain Python; imports :mod:`keyring` (not Qt, not a cloud SDK).
"""

from __future__ import annotations

import json
import sys
from typing import Sequence

import keyring
import keyring.errors

from workbench.core.domain.errors import AuthError, KeyringLockedError, NoKeyringError
from workbench.core.providers.redaction import leaks_fragment, redact

NO_KEYRING_MESSAGE = "no secure keyring is available to store credentials"


def fix_hint() -> str:
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


def unlock_hint() -> str:
    """How to unlock the keyring (shown when the collection is locked)."""
    if sys.platform.startswith("linux"):
        return (
            "unlock the keyring (e.g. log in to the desktop session, or open Seahorse / "
            "KeePassXC and unlock the default collection); on a headless server unlock it "
            "with: printf %s \"$PW\" | gnome-keyring-daemon --unlock --components=secrets"
        )
    return "unlock your keychain / credential store and try again"


# --------------------------------------------------------------------------
# backend vetting
# --------------------------------------------------------------------------


def _class_path(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def is_chainer(backend: object) -> bool:
    return _class_path(backend) == "keyring.backends.chainer.ChainerBackend"


def is_stock_secret_service(backend: object) -> bool:
    """True for ``keyring``'s own Secret Service backend (exactly that class): the store swaps it for
    :class:`~workbench.core.providers.secret_service.SecretServiceBackend`, which keeps its entries."""
    return _class_path(backend) == "keyring.backends.SecretService.Keyring"


def is_insecure_backend(backend: object) -> bool:
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
    if is_chainer(backend):
        members = list(getattr(backend, "backends", ()) or ())
        return not members or any(is_insecure_backend(m) for m in members)
    return False


def backend_label(backend: object) -> str:
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


def map_error(exc: Exception, action: str, key: str, values: Sequence[str]) -> AuthError:
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
    if leaks_fragment(detail, values):
        detail = ""
    # A backend message is only worth showing if it says something; cap it so
    # a huge D-Bus body cannot flood the UI.
    detail = f"{type(exc).__name__}: {detail[:300]}" if detail else type(exc).__name__

    if isinstance(exc, keyring.errors.NoKeyringError):
        return NoKeyringError(f"{NO_KEYRING_MESSAGE} ({detail})", hint=fix_hint())
    if _looks_locked(exc):
        # gnome-keyring answers "Failed to create the collection: Prompt
        # dismissed" when there is no default collection and no prompter
        # (headless): the same fix - create/unlock it with a password.
        state = "locked (or has no default collection yet)" if "create" in detail.lower() else "locked"
        return KeyringLockedError(
            f"the keyring is {state}; could not {action} credentials for {key} ({detail})",
            hint=unlock_hint(),
        )
    if isinstance(exc, keyring.errors.InitError) or _from_module(exc, _DBUS_MODULE_PREFIXES):
        return AuthError(
            f"could not open the keyring to {action} credentials for {key} ({detail})",
            hint=fix_hint(),
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


