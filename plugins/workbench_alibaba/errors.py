"""Alibaba Cloud API errors → workbench errors: the plugin's error table (core ``sdk_errors`` shape).

The SDK raises ``ClientException`` (4xx), ``ServerException`` (5xx) and ``ThrottlingException``
(with ``x-acs-retry-after``), each with ``code``, ``status_code``, ``message`` and the answer as
``data`` (``AccessDeniedDetail.AuthAction`` names a refused RAM action); connection failures arrive as
``UnretryableException`` around a ``RetryError``.  Codes from the API references' error tables and the
OpenAPI common error codes (InvalidAccessKeyId.NotFound, SignatureDoesNotMatch, Throttling.User,
Forbidden.RAM …).

Secrets: messages are built from codes, action names and our own words; the service's own message is
quoted only for invalid parameters, and every built error passes :func:`~sdk_errors.scrub`.
"""

from __future__ import annotations

import re
from typing import Iterable

from workbench.core.domain.errors import (AuthError, CapacityError, ConfigError, NotFoundError, PluginError,
                                          QuotaError, SpecError, TransientError, WorkbenchError)
from workbench.core.providers.redaction import redact
from workbench.core.providers.sdk_errors import ErrorRule, ErrorTable, scrub

POLICY_HINT = "attach the policy in resources/policies/alibaba-ram-policy.json to this RAM user or role"
RAM_PREFIX = {"ecs": "ecs", "vpc": "vpc", "sts": "sts", "bss": "bssapi", "ram": "ram"}
_DENIED = (r"^(NoPermission|Forbidden\.RAM|Forbbiden\.SubUser|Forbidden\.SubUser|Forbidden|Forbedden\.NotSupportRAM|"
           r"Forbidden\.AccessDenied|NotAuthorized)$")
_RETRYABLE = ("Throttling", "Throttling.User", "Throttling.Api", "Throttling.Resource", "ServiceUnavailable",
              "InternalError", "UnknownError", "LastTokenProcessing")

#: the first matching rule wins; fields: what ("RunInstances in cn-hangzhou"), action (RAM), code, itype, message
TABLE = ErrorTable(
    ErrorRule("key", AuthError, "Alibaba Cloud does not know this AccessKey ID ({code})",
              "store a valid AccessKey (RAM console → Users → AccessKey) for this profile",
              codes=("InvalidAccessKeyId", "InvalidAccessKeyId.NotFound")),
    ErrorRule("key-off", AuthError, "the AccessKey is disabled ({code})",
              "enable it in the RAM console or store an active one", codes=("InvalidAccessKeyId.Inactive",)),
    ErrorRule("secret", AuthError, "the AccessKey secret does not match the AccessKey ID ({code})",
              "store the secret shown when the key was made", codes=("SignatureDoesNotMatch", "IncompleteSignature")),
    ErrorRule("token", AuthError, "the temporary (STS) credentials are not valid ({code})",
              "sign in again: assume the role anew or refresh the CLI profile's token",
              prefixes=("InvalidSecurityToken.",)),
    ErrorRule("clock", AuthError, "Alibaba Cloud refused the request time ({code})",
              "set this computer's clock right (automatic time); requests more than 15 minutes off are refused",
              prefixes=("InvalidTimeStamp.",)),
    ErrorRule("role", AuthError, "the RAM role to assume does not exist ({code}{where})", "check the profile's role_arn",
              prefixes=("EntityNotExist.Role",)),
    ErrorRule("verify", AuthError, "the Alibaba Cloud account has not passed real-name verification ({code})",
              "complete real-name verification in the Alibaba Cloud console; resources cannot be bought before it",
              codes=("Forbidden.UserVerification", "RealNameAuthenticationError"), prefixes=("Forbidden.RealName",)),
    ErrorRule("denied", AuthError, "not allowed to call {action}{where} ({code})", "grant {action}: " + POLICY_HINT,
              pattern=_DENIED),
    ErrorRule("capacity", CapacityError, "Alibaba Cloud has no stock for {itype}{where} right now ({code})",
              "try the next zone or region, another GPU type, or pay-as-you-go instead of spot",
              codes=("Zone.NotOnSale", "OperationDenied.ZoneNotAvailable", "ResourceNotAvailable",
                     "InvalidSpotPriceLimit.LowerThanPublicPrice"), prefixes=("OperationDenied.NoStock",)),
    ErrorRule("quota", QuotaError, "an Alibaba Cloud quota does not allow {itype}{where} ({code})",
              "raise the quota in the Quota Center (ECS: pay-as-you-go vCPUs of the instance family) and retry",
              prefixes=("QuotaExceed", "QuotaExceeded"), codes=("InstanceQuotaExceeded",),
              pattern=r"\.QuotaExceed(ed)?$"),
    ErrorRule("balance", QuotaError, "the account's balance does not cover a pay-as-you-go purchase ({code})",
              "top up the Alibaba Cloud account (pay-as-you-go needs a positive balance) and retry",
              codes=("InsufficientBalance", "Account.Arrearage", "PAY.INSUFFICIENT_BALANCE",
                     "InvalidAccount.NotEnoughBalance")),
    ErrorRule("busy", TransientError, "Alibaba Cloud is busy or the resource is changing ({code}{where})",
              "retry in a minute",
              codes=(*_RETRYABLE, "OperationConflict", "IncorrectInstanceStatus", "IncorrectVpcStatus",
                     "IncorrectVSwitchStatus", "TaskConflict", "IncorrectDiskStatus", "IncorrectEipStatus",
                     "DependencyViolation", "OperationDenied.OtherSubnetProcessing"),
              prefixes=("Throttling.", "IncorrectStatus.", "DependencyViolation.")),
    ErrorRule("gone", NotFoundError, "{what}: the resource does not exist ({code})", "it may already be gone",
              pattern=r"\.NotFound$"),
    ErrorRule("exists", ConfigError, "{what}: it already exists ({code})", "use another name, or delete the old one",
              pattern=r"AlreadyExist"),
    ErrorRule("mismatch", PluginError, "{what}: a retried request changed its parameters ({code})",
              "launch again with a new launch id", codes=("IdempotentParameterMismatch",)),
    ErrorRule("invalid", SpecError, "Alibaba Cloud refused {what}: {message} ({code})",
              "check the instance type, image, disk and region of the job",
              prefixes=("InvalidParameter", "MissingParameter", "Invalid"),
              codes=("UnsupportedParameter", "DryRunOperation")),
    ErrorRule("server", TransientError, "Alibaba Cloud failed {what} ({code}), after retries", "retry in a minute",
              statuses=(429,), min_status=500),
)


def error_code(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    return str(code) if code not in (None, "None") else ""


def status_of(exc: BaseException) -> int:
    try:
        return int(getattr(exc, "status_code", 0) or 0)
    except (TypeError, ValueError):
        return 0


def _service_message(exc: BaseException) -> str:
    data = getattr(exc, "data", None)
    return str(data["Message"]) if isinstance(data, dict) and data.get("Message") else ""


def is_connection_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("UnretryableException", "RetryError", "TeaUnretryableException") or \
        isinstance(exc, (ConnectionError, TimeoutError))


def is_retryable(exc: BaseException) -> bool:
    """Worth sending again unchanged: throttling, 5xx, a lost connection."""
    if isinstance(exc, WorkbenchError):
        return isinstance(exc, TransientError)
    if is_connection_error(exc):
        return True
    code = error_code(exc)
    return code in _RETRYABLE or code.startswith("Throttling.") or status_of(exc) >= 500 or \
        type(exc).__name__ == "ThrottlingException"


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError) or bool(re.search(r"\.NotFound$", error_code(exc)))


def translate(exc: BaseException, action: str, *, product: str = "ecs", region: str = "", itype: str = "",
              secrets: Iterable[str] = ()) -> WorkbenchError:
    """A workbench error for ``exc`` raised by ``action``; never raises."""
    if isinstance(exc, WorkbenchError):
        return exc
    where = f" in {region}" if region else ""
    what = f"{action}{where}"
    if is_connection_error(exc):
        return TransientError(f"Alibaba Cloud did not answer {what} ({type(exc).__name__})",
                              hint="check the network connection (or the profile's endpoint) and retry")
    code = error_code(exc)
    if not code:
        if type(exc).__name__ in ("ValidateException", "RequiredArgumentException", "ValueError", "TypeError"):
            return PluginError(f"the Alibaba plugin built an invalid {action} request: {redact(str(exc), secrets)}")
        return PluginError(f"unexpected error from {what}: {type(exc).__name__}")
    detail = getattr(exc, "access_denied_detail", None)
    ram = (detail.get("AuthAction") if isinstance(detail, dict) else None) or f"{RAM_PREFIX.get(product, product)}:{action}"
    rule = TABLE.find(code, status_of(exc))
    if rule is None:
        return scrub(PluginError(f"Alibaba Cloud error for {what}: {code}: {_service_message(exc)}"), secrets)
    return scrub(rule.build(what=what, where=where, action=ram, code=code, itype=itype or "this machine",
                            message=_service_message(exc) or code), secrets)
