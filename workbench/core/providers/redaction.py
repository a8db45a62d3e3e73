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
