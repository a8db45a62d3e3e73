"""STS as strict as AWS about who may ask for what, in front of moto (which answers every STS call).

Written from the STS API reference and the IAM user guide ("Methods to assume a role", "Role chaining"):

- ``GetFederationToken`` must be called with an IAM user's long-term key.  Called with temporary
  credentials (the request carries ``X-Amz-Security-Token``, or the key id is an ``ASIA…`` one: a role's,
  an MFA session's, a federation token's) it is refused: 403 AccessDenied "Cannot call
  GetFederationToken with session credentials".
- ``AssumeRole`` called with a role's own credentials is role chaining, whose session lasts one hour at
  most: ``DurationSeconds`` above 3600 is refused with 400 ValidationError "The requested DurationSeconds
  exceeds the 1 hour session limit for roles assumed by role chaining."  A role's credentials: keys moto
  handed out for an ``AssumeRole`` (its STS backend remembers the assumed role), and keys a test declares
  with :meth:`StrictSts.role_key` (e.g. an instance profile's, as the controller machine's metadata service
  would hand them out).

Always on (like the DependencyViolation of DeleteSecurityGroup): nothing AWS allows is refused here.
The audit table: tests/support/README.md ("STS: what a caller may ask").
"""

from __future__ import annotations

import threading
from typing import Any

FEDERATION_REFUSED = "Cannot call GetFederationToken with session credentials"
CHAINING_REFUSED = ("The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role "
                    "chaining.")
CHAINED_MAX_S = 3600


class StrictSts:
    """Decides whether an STS request is one AWS refuses (see the module doc); thread-safe."""

    def __init__(self) -> None:
        self._declared: set[str] = set()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._declared.clear()

    def role_key(self, access_key_id: str) -> None:
        """Treat ``access_key_id`` as a role's credentials (an instance profile's, say)."""
        with self._lock:
            self._declared.add(access_key_id)

    def _is_role(self, access_key: str) -> bool:
        with self._lock:
            if access_key in self._declared:
                return True
        from moto.sts.models import sts_backends

        for account in list(sts_backends.keys()):
            for partition in list(sts_backends[account].keys()):
                if sts_backends[account][partition].get_assumed_role_from_access_key(access_key) is not None:
                    return True
        return False

    def refuse(self, call: Any, environ: dict[str, Any]) -> tuple[str, str, int] | None:
        """(code, message, HTTP status) when AWS would refuse ``call``; None otherwise."""
        if call.service != "sts":
            return None
        session = bool(environ.get("HTTP_X_AMZ_SECURITY_TOKEN")) or call.access_key.startswith("ASIA")
        if call.operation == "GetFederationToken" and session:
            return "AccessDenied", FEDERATION_REFUSED, 403
        if call.operation == "AssumeRole" and session and self._is_role(call.access_key):
            try:
                asked = int(call.param("DurationSeconds") or CHAINED_MAX_S)
            except ValueError:
                asked = CHAINED_MAX_S
            if asked > CHAINED_MAX_S:
                return "ValidationError", CHAINING_REFUSED, 400
        return None
