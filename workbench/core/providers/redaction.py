"""Secret redaction: the one function that scrubs secret values out of text before it is shown or logged.

Used by the credential store (keyring backend errors) and by every cloud plugin's error mapping
(:mod:`workbench.core.providers.sdk_errors`) as a second line of defence: messages are built from
error codes and our own words, and whatever SDK text they quote is passed through :func:`redact`
with the profile's secret values.  Plain Python without imports, so a plugin can use it without
loading the keyring.
"""

from __future__ import annotations

from typing import Iterable

#: Secrets shorter than this are not scrubbed: replacing every "a" or "12" in an error text would
#: destroy it and protect nothing.
REDACT_MIN_LEN = 4
REDACTED = "****"


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret in ``text`` with ``****``.

    Secrets shorter than 4 characters, empty strings and non-strings are ignored (scrubbing them
    would mangle the text without protecting anything).  Longer secrets are replaced first so that a
    secret containing another one is removed whole.
    """
    candidates = {s for s in secrets if isinstance(s, str) and len(s) >= REDACT_MIN_LEN}
    for secret in sorted(candidates, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


#: Window length for :func:`leaks_fragment`: a run this long of a secret
#: value in an error text counts as a leak even if the text re-encoded the
#: rest of the value (repr doubling backslashes, JSON escaping, ...).
_FRAGMENT_LEN = 8


def leaks_fragment(text: str, values: Iterable[str]) -> bool:
    """True if ``text`` still contains a value or an 8-character run of one (after :func:`redact`)."""
    for value in values:
        if not isinstance(value, str) or len(value) < REDACT_MIN_LEN:
            continue
        if len(value) <= _FRAGMENT_LEN:
            if value in text:
                return True
            continue
        if any(value[i : i + _FRAGMENT_LEN] in text for i in range(len(value) - _FRAGMENT_LEN + 1)):
            return True
    return False
