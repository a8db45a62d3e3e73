"""Azure SDK exceptions → workbench errors with a clear message and a hint.

Mapping (the codes are ARM's and Entra ID's own):

* Entra ID sign-in: AADSTS7000215/7000222 (wrong/expired secret), AADSTS700016 (unknown
  client id), AADSTS90002 / unknown authority (unknown tenant), Azure CLI not logged in → AuthError
* 401 InvalidAuthenticationToken*, 403 AuthorizationFailed / LinkedAuthorizationFailed
  (the message names the missing action) → AuthError
* SkuNotAvailable, AllocationFailed, ZonalAllocationFailed, Overconstrained* → CapacityError
* OperationNotAllowed / QuotaExceeded whose text speaks of quota → QuotaError
* 429 (after the SDK's own retries, which honour Retry-After), 5xx, timeouts, connection
  failures → TransientError
* 404 ResourceNotFound / ResourceGroupNotFound / NotFound → NotFoundError (callers that
  delete treat it as "already gone")
* anything else → PluginError quoting Azure's code and message

The code table is :data:`TABLE`, in the shape every cloud plugin uses
(:mod:`workbench.core.providers.sdk_errors`); sign-in and connection failures are
mapped before it.  Never puts a secret in a message: messages are built from Azure's
own text (which does not echo secrets) and scrubbed of the given secret values anyway.
"""

from __future__ import annotations

import re
from typing import Iterable

from workbench.core.domain.errors import (AuthError, CapacityError, NotFoundError, PluginError, QuotaError,
                                          TransientError, WorkbenchError)
from workbench.core.providers.sdk_errors import ErrorRule, ErrorTable, scrub

QUOTA_HINT = ("request a quota increase in the Azure portal (Quotas → Compute) for that family in that region, "
              "or choose another size or region")
_ACTION = re.compile(r"perform action(?:\(s\))? '([^']+)'")

#: ARM's codes (compared without case), tried in order.  Fields: what, code, code_or_status, action (the
#: missing permission named in Azure's text), text (Azure's message, shortened), long_text (up to 300).
TABLE = ErrorTable(
    ErrorRule("denied", AuthError, "Azure refused {what}: the identity lacks permission for {action}",
              hint="give the service principal the workbench role (resources/policies/azure-custom-role.json) on "
                   "the subscription, then refresh its sign-in",
              codes=("AuthorizationFailed", "LinkedAuthorizationFailed"), statuses=(403,)),
    ErrorRule("token", AuthError, "Azure did not accept the sign-in while {what} ({code_or_status})",
              hint="check the tenant, client id and secret; for a custom cloud, arm_audience",
              prefixes=("InvalidAuthenticationToken",), codes=("ExpiredAuthenticationToken",), statuses=(401,)),
    ErrorRule("subscription", AuthError, "the subscription is not visible to this identity ({code})",
              hint="check subscription_id and that the identity has a role on it",
              codes=("SubscriptionNotFound", "InvalidSubscriptionId")),
    ErrorRule("capacity", CapacityError, "Azure has no capacity for {what} ({code}): {text}",
              hint="try another zone, region or size, or spot off/on",
              codes=("SkuNotAvailable", "AllocationFailed", "ZonalAllocationFailed",
                     "OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest",
                     "AllocationFailedVmSizeNotAvailable")),
    ErrorRule("quota", QuotaError, "not enough vCPU quota for {what}{family}: {quota_text}", hint=QUOTA_HINT,
              codes=("OperationNotAllowed", "QuotaExceeded"), when=lambda text: "quota" in text.lower()),
    ErrorRule("not_found", NotFoundError, "not found while {what}: {text}",
              codes=("ResourceNotFound", "ResourceGroupNotFound", "NotFound", "ParentResourceNotFound"),
              statuses=(404,)),
    ErrorRule("throttled", TransientError, "Azure is throttling requests ({what})", hint="wait a minute and try again",
              codes=("TooManyRequests", "Throttled"), statuses=(429,)),
    ErrorRule("server", TransientError, "Azure failed while {what} ({code_or_status}): {text}",
              hint="a temporary Azure problem; try again",
              codes=("InternalServerError", "ServiceUnavailable", "InternalExecutionError"), min_status=500),
    ignore_case=True,
)
CAPACITY_CODES = {c.lower() for c in TABLE.codes("capacity")}
NOT_FOUND_CODES = {c.lower() for c in TABLE.codes("not_found")}


def error_code(exc: BaseException) -> str:
    """ARM's error code of an SDK exception ('' when there is none)."""
    err = getattr(exc, "error", None)
    code = getattr(err, "code", None) if err is not None else None
    if not code:
        m = re.match(r"\(([A-Za-z]+)\)", str(getattr(exc, "message", "") or ""))
        code = m.group(1) if m else ""
    return str(code or "")


def _text(exc: BaseException) -> str:
    err = getattr(exc, "error", None)
    msg = getattr(err, "message", None) if err is not None else None
    return str(msg or getattr(exc, "message", None) or exc).strip()


def map_error(exc: BaseException, what: str, secrets: Iterable[str] = ()) -> WorkbenchError:
    """A workbench error for ``exc`` raised while doing ``what`` (e.g. "creating VM wb-x")."""
    if isinstance(exc, WorkbenchError):
        return exc
    return scrub(_map(exc, what), secrets)


def _map(exc: BaseException, what: str) -> WorkbenchError:
    from azure.core.exceptions import (ClientAuthenticationError, HttpResponseError, ServiceRequestError,
                                       ServiceResponseError)

    text = _text(exc)
    name = type(exc).__name__
    if name == "CredentialUnavailableError":
        return AuthError(f"Azure CLI sign-in is not available: {text}",
                         hint="install the Azure CLI and run `az login`, or use a service principal (auth=secret)")
    if isinstance(exc, ClientAuthenticationError) and not getattr(exc, "status_code", None) in (401, 403):
        return _sign_in(text)
    if isinstance(exc, (ServiceRequestError, ServiceResponseError)):
        tls = "CERTIFICATE_VERIFY_FAILED" in text or "SSLError" in text
        return TransientError(f"cannot reach Azure while {what}: {_short(text)}",
                              hint="check the CA bundle (ca_bundle) for this endpoint" if tls
                              else "check the network connection and proxy settings; try again")
    if isinstance(exc, HttpResponseError):
        code = error_code(exc)
        status = exc.status_code or 0
        rule = TABLE.find(code, status, text)
        if rule is None:
            return PluginError(f"Azure refused {what}: {code or status}: {_short(text, 300)}")
        actions = _ACTION.findall(text)
        family = re.search(r"approved (\S+) Cores quota", text)
        return rule.build(what=what, code=code, code_or_status=code or status, text=_short(text),
                          quota_text=_short(text, 240), action=actions[-1] if actions else "an action",
                          family=f" ({family.group(1)})" if family else "")
    return PluginError(f"{what} failed: {name}: {_short(text)}")
def _sign_in(text: str) -> AuthError:
    low = text.lower()
    if "aadsts7000215" in low:
        return AuthError("Azure sign-in failed: the client secret was rejected (AADSTS7000215)",
                         hint="use the secret's Value (not its ID), or create a new client secret and store it "
                              "with `workbench credentials set azure <profile> --stdin`")
    if "aadsts7000222" in low:
        return AuthError("Azure sign-in failed: the client secret has expired (AADSTS7000222)",
                         hint="create a new client secret for the app registration and store it")
    if "aadsts700016" in low:
        return AuthError("Azure sign-in failed: the client id is not an application in this tenant (AADSTS700016)",
                         hint="check client_id and tenant_id (the app registration's Overview page)")
    if "aadsts90002" in low or "unable to get authority configuration" in low or "invalid_tenant" in low:
        return AuthError("Azure sign-in failed: the tenant was not found (AADSTS90002)",
                         hint="check tenant_id and the cloud (public, china or custom)")
    return AuthError(f"Azure sign-in failed: {_short(text, 300)}",
                     hint="check tenant_id, client_id and the client secret")


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
