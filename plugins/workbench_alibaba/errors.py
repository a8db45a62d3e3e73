"""Alibaba Cloud API errors → workbench errors: one table of codes, each with a message a person can act on.

The SDK raises ``ClientException`` (4xx), ``ServerException`` (5xx) and ``ThrottlingException``
(with ``x-acs-retry-after``), each with ``code``, ``status_code``, ``message`` and the answer as
``data``; connection failures arrive as ``UnretryableException`` around a ``RetryError``.
Codes from the API references' error tables and the OpenAPI common error codes
(InvalidAccessKeyId.NotFound, SignatureDoesNotMatch, Throttling.User, Forbidden.RAM …).

Secrets: messages are built from codes, action names and our own words; the service's own
message is quoted only through :func:`redact` with the profile's secret values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from workbench.core.domain.errors import (AuthError, CapacityError, ConfigError, NotFoundError, PluginError, QuotaError,
                                          SpecError, TransientError, WorkbenchError)

POLICY_HINT = "attach the policy in resources/policies/alibaba-ram-policy.json to this RAM user or role"
RAM_PREFIX = {"ecs": "ecs", "vpc": "vpc", "sts": "sts", "bss": "bssapi"}


@dataclass(frozen=True)
class Rule:
    """Codes matching ``pattern`` (a regex over the whole code) become ``kind`` with this text and hint."""

    pattern: str
    kind: type[WorkbenchError]
    text: str
    hint: str


#: first match wins; ``{what}`` is "RunInstances in cn-hangzhou", ``{action}`` the RAM action, ``{code}`` the code
RULES: tuple[Rule, ...] = (
    Rule(r"InvalidAccessKeyId(\.NotFound)?", AuthError, "Alibaba Cloud does not know this AccessKey ID ({code})",
         "store a valid AccessKey (RAM console → Users → AccessKey) for this profile"),
    Rule(r"InvalidAccessKeyId\.Inactive", AuthError, "the AccessKey is disabled ({code})",
         "enable it in the RAM console or store an active one"),
    Rule(r"SignatureDoesNotMatch|IncompleteSignature", AuthError,
         "the AccessKey secret does not match the AccessKey ID ({code})", "store the secret shown when the key was made"),
    Rule(r"InvalidSecurityToken\..*", AuthError, "the temporary (STS) credentials are not valid ({code})",
         "sign in again: assume the role anew or refresh the CLI profile's token"),
    Rule(r"InvalidTimeStamp\..*", AuthError, "Alibaba Cloud refused the request time ({code})",
         "set this computer's clock right (automatic time); requests more than 15 minutes off are refused"),
    Rule(r"EntityNotExist\.Role|EntityNotExist\.Role.*", AuthError, "the RAM role to assume does not exist ({code})",
         "check the profile's role_arn"),
    Rule(r"NoPermission|Forbidden\.RAM|Forbbiden\.SubUser|Forbidden\.SubUser|Forbidden|Forbedden\.NotSupportRAM|"
         r"Forbidden\.AccessDenied|NotAuthorized", AuthError, "not allowed to call {action} ({code})",
         "grant {action}: " + POLICY_HINT),
    Rule(r"Forbidden\.UserVerification|RealNameAuthenticationError|Forbidden\.RealName.*", AuthError,
         "the Alibaba Cloud account has not passed real-name verification ({code})",
         "complete real-name verification in the Alibaba Cloud console; resources cannot be bought before it"),
    Rule(r"OperationDenied\.NoStock|OperationDenied\.NoStock.*|Zone\.NotOnSale|OperationDenied\.ZoneNotAvailable|"
         r"InvalidResourceType\.NotSupported|ResourceNotAvailable|InvalidSpotPriceLimit\.LowerThanPublicPrice",
         CapacityError, "Alibaba Cloud has no stock for {itype} there right now ({code})",
         "try the next zone or region, another GPU type, or pay-as-you-go instead of spot"),
    Rule(r"QuotaExceed.*|QuotaExceeded.*|.*\.QuotaExceed(ed)?|InstanceQuotaExceeded", QuotaError,
         "an Alibaba Cloud quota does not allow {itype} ({code})",
         "raise the quota in the Quota Center (ECS: pay-as-you-go vCPUs of the instance family) and retry"),
    Rule(r"InsufficientBalance|Account\.Arrearage|PAY\.INSUFFICIENT_BALANCE|InvalidAccount\.NotEnoughBalance",
         QuotaError, "the account's balance does not cover a pay-as-you-go purchase ({code})",
         "top up the Alibaba Cloud account (pay-as-you-go needs a positive balance) and retry"),
    Rule(r"Throttling(\..*)?|ServiceUnavailable|InternalError|UnknownError|LastTokenProcessing|OperationConflict|"
         r"IncorrectInstanceStatus|IncorrectVpcStatus|IncorrectVSwitchStatus|IncorrectStatus\..*|TaskConflict|"
         r"DependencyViolation(\..*)?|IncorrectDiskStatus|IncorrectEipStatus|OperationFailed\..*Processing",
         TransientError, "Alibaba Cloud is busy or the resource is changing ({code})", "retry in a minute"),
    Rule(r"Invalid.*\.NotFound|.*\.NotFound|InvalidRegionId\.NotFound", NotFoundError,
         "{what}: the resource does not exist ({code})", "it may already be gone"),
    Rule(r"IdempotentParameterMismatch", PluginError, "{what}: a retried request changed its parameters ({code})",
         "launch again with a new launch id"),
    Rule(r"InvalidParameter.*|MissingParameter.*|Invalid.*\.Malformed|Invalid.*\.ValueNotSupported|"
         r"Invalid[A-Za-z]+(\.[A-Za-z]+)*|UnsupportedParameter|DryRunOperation", SpecError,
         "Alibaba Cloud refused {what}: {message} ({code})", "check the instance type, image, disk and region of the job"),
)
_RETRYABLE = re.compile(r"Throttling(\..*)?|ServiceUnavailable|InternalError|UnknownError|LastTokenProcessing")


def redact(text: str, secrets: Iterable[str]) -> str:
    for value in secrets:
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return text


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
    if isinstance(data, dict) and data.get("Message"):
        return str(data["Message"])
    return ""


def is_connection_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("UnretryableException", "RetryError", "TeaUnretryableException") or \
        isinstance(exc, (ConnectionError, TimeoutError))


def is_retryable(exc: BaseException) -> bool:
    """Worth sending again unchanged: throttling, 5xx, a lost connection."""
    if isinstance(exc, WorkbenchError):
        return isinstance(exc, TransientError)
    if is_connection_error(exc):
        return True
    return bool(_RETRYABLE.fullmatch(error_code(exc))) or status_of(exc) >= 500 or type(exc).__name__ == \
        "ThrottlingException"


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError) or bool(re.fullmatch(r"Invalid.*\.NotFound|.*\.NotFound", error_code(exc)))


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
    detail = getattr(exc, "access_denied_detail", None) or {}
    ram = (detail.get("AuthAction") if isinstance(detail, dict) else None) or f"{RAM_PREFIX.get(product, product)}:{action}"
    message = redact(_service_message(exc), secrets)
    for rule in RULES:
        if re.fullmatch(rule.pattern, code):
            fields = {"what": what, "action": ram, "code": code, "itype": itype or "this machine",
                      "message": message or code}
            return rule.kind(rule.text.format(**fields) + ("" if rule.kind is SpecError or not where
                                                         or "{what}" in rule.text else where),
                             rule.hint.format(**fields))
    if status_of(exc) >= 500 or status_of(exc) == 429:
        return TransientError(f"Alibaba Cloud failed {what} ({code}), after retries", hint="retry in a minute")
    return PluginError(f"Alibaba Cloud error for {what}: {code}: {message}")


_ = ConfigError
