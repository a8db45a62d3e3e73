"""What a botocore error says: its AWS error code, HTTP status and message (no other AWS module needed).

Split from :mod:`.errors` so that modules the error table itself uses (:mod:`.quotas`) can read
codes without importing the table (no import cycle).
"""

from __future__ import annotations

import re

_NOT_FOUND = re.compile(r"(\.NotFound|NotFound|\.Malformed|NoSuchEntity|NotFoundException)$")


def error_code(exc: BaseException) -> str:
    """The AWS error code of a botocore ClientError ('' for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", "") or response.get("ResponseMetadata", {})
                   .get("HTTPStatusCode", ""))
    return ""


def http_status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return 0


def aws_message(exc: BaseException) -> str:
    """AWS's own message text of a ClientError ('' for anything else); redact it before showing it."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Message", "") or "")
    return ""


def is_not_found(exc: BaseException) -> bool:
    """True for "that thing does not exist" answers (which delete/terminate treat as success)."""
    code = error_code(exc)
    return bool(code) and bool(_NOT_FOUND.search(code))
