"""Credentials given as a JSON object (``workbench credentials set PROVIDER PROFILE --stdin``).

Bad input is a ConfigError whose message names keys and JSON types, never a
value (a user may have pasted a secret where a key belongs).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from workbench.core.domain.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from workbench.core.providers.contract import CredentialField

#: Unknown JSON keys longer than this are not echoed back: a user who pasted
#: a secret where a key belongs must not see it printed in the error.
_MAX_ECHOED_KEY_LEN = 32


def describe_key(key: str) -> str:
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
        message = "unknown credential key(s): " + ", ".join(describe_key(k) for k in unknown)
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

