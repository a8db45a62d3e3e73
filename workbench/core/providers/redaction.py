"""Scrubbing secret values out of text (an SDK's error message, a backend's complaint).

Plain Python, no imports beyond the standard library: cheap to use from any
module (the keyring store, a cloud plugin's error table, the credentials form).
"""

from __future__ import annotations

from typing import Iterable

#: Secrets shorter than this are not scrubbed by :func:`redact`: replacing
#: every "a" or "12" in an error text would destroy it and protect nothing.
_REDACT_MIN_LEN = 4
_REDACTED = "****"


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret in ``text`` with ``****``.

    For scrubbing provider/SDK error text before it is shown or logged.
    Secrets shorter than 4 characters, empty strings and non-strings are
    ignored (scrubbing them would mangle the text without protecting
    anything).  Longer secrets are replaced first so that a secret containing
    another one is removed whole.
    """
    candidates = {s for s in secrets if isinstance(s, str) and len(s) >= _REDACT_MIN_LEN}
    for secret in sorted(candidates, key=len, reverse=True):
        text = text.replace(secret, _REDACTED)
    return text


#: Window length for :func:`leaks_fragment`: a run this long of a secret
#: value in an error text counts as a leak even if the text re-encoded the
#: rest of the value (repr doubling backslashes, JSON escaping, ...).
_FRAGMENT_LEN = 8


def leaks_fragment(text: str, values: Iterable[str]) -> bool:
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
