"""Server-side check of the ACS3-HMAC-SHA256 request signature the Alibaba Cloud SDKs send.

The SDK (``alibabacloud_tea_openapi`` 0.4) signs every RPC call so:

    CanonicalRequest = METHOD \\n PATH \\n CanonicalQuery \\n CanonicalHeaders \\n SignedHeaders \\n HashedPayload
    StringToSign     = "ACS3-HMAC-SHA256" \\n hex(sha256(CanonicalRequest))
    Authorization    = "ACS3-HMAC-SHA256 Credential=<AK id>,SignedHeaders=<a;b;c>,Signature=<hex hmac>"

with the query sorted by name and each value percent-encoded except ``~`` (a space is ``%20``), the
signed headers lower-cased, sorted, ``name:value\\n`` each, and ``x-acs-content-sha256`` the
hex SHA-256 of the body.  Described in the "Request syntax and signature method V3" page of the
Alibaba Cloud SDK reference (https://www.alibabacloud.com/help/en/sdk/product-overview/v3-request-structure-and-signature).

This module recomputes the signature from what arrived on the wire (the raw query string,
the headers, the body) with the caller's secret, so a test passes only when the real SDK
signed the real request correctly.  Errors carry the codes the real gateway answers with
(the OpenAPI common error codes: IncompleteSignature, SignatureDoesNotMatch,
InvalidAccessKeyId.NotFound, InvalidTimeStamp.Expired, SignatureNonceUsed).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Mapping

ALGORITHM = "ACS3-HMAC-SHA256"
_AUTH = re.compile(r"^ACS3-HMAC-SHA256 Credential=([^,]+),SignedHeaders=([^,]*),Signature=([0-9a-f]{64})$")
MAX_SKEW_S = 15 * 60  # the gateway refuses a request more than 15 minutes off (InvalidTimeStamp.Expired)


class SignatureError(Exception):
    """A request the gateway refuses before any product sees it."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class Signed:
    """Who signed a request: the AccessKey id and the STS token sent with it (if any)."""

    access_key_id: str
    security_token: str | None
    nonce: str


def canonical_query(pairs: list[tuple[str, str]]) -> str:
    """The SDK's canonical query: sorted by name, values encoded with only ``~`` left bare."""
    items = sorted(pairs, key=lambda kv: kv[0])
    return "&".join(f"{k}={urllib.parse.quote(v, safe='~')}" for k, v in items)


def canonical_headers(headers: Mapping[str, str], names: list[str]) -> str:
    return "".join(f"{n}:{headers.get(n, '').strip()}\n" for n in names)


def verify(method: str, path: str, query: list[tuple[str, str]], headers: Mapping[str, str], body: bytes,
           secret_for: Callable[[str], str | None], now: datetime.datetime) -> Signed:
    """Check one request; return who signed it or raise SignatureError with the gateway's code."""
    low = {k.lower(): v for k, v in headers.items()}
    auth = low.get("authorization", "")
    m = _AUTH.match(auth.strip())
    if not m:
        raise SignatureError(400, "IncompleteSignature",
                             "The request signature does not conform to Aliyun standards.")
    ak, signed_names, signature = m.group(1), m.group(2).split(";"), m.group(3)
    for required in ("host", "x-acs-action", "x-acs-version", "x-acs-date", "x-acs-signature-nonce",
                     "x-acs-content-sha256"):
        if required not in signed_names:
            raise SignatureError(400, "IncompleteSignature", f"The header {required} must be signed.")
    payload = hashlib.sha256(body).hexdigest()
    if low.get("x-acs-content-sha256") != payload:
        raise SignatureError(400, "IncompleteSignature",
                             "The x-acs-content-sha256 header does not match the request body.")
    try:
        sent = datetime.datetime.strptime(low["x-acs-date"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        raise SignatureError(400, "InvalidTimeStamp.Format",
                             "Specified time stamp or date value is not well formatted.") from None
    if abs((now - sent).total_seconds()) > MAX_SKEW_S:
        raise SignatureError(400, "InvalidTimeStamp.Expired", "Specified time stamp or date value is expired.")
    secret = secret_for(ak)
    if secret is None:
        raise SignatureError(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
    names = sorted(signed_names)
    canonical = "\n".join([method, path or "/", canonical_query(query), canonical_headers(low, names),
                           ";".join(names), payload])
    to_sign = f"{ALGORITHM}\n{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"
    expected = hmac.new(secret.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise SignatureError(400, "SignatureDoesNotMatch", "Specified signature is not matched with our calculation.")
    return Signed(ak, low.get("x-acs-security-token") or None, low.get("x-acs-signature-nonce", ""))
