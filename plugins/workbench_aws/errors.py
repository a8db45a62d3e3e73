"""AWS errors → workbench errors, each with a message a person can act on and a hint.

botocore has already retried throttling and 5xx (standard retry mode) before an
error reaches this module, so what arrives here is final for this call.

Secrets: messages are built from error *codes*, operation names and our own
words; AWS's own message text is only quoted for codes whose messages carry no
credential material, and every text is passed through :func:`redact` with the
profile's secret values as a second line of defence.
"""

from __future__ import annotations

import re
from typing import Iterable

from workbench.core.domain.errors import (AuthError, CapacityError, ConfigError, PluginError, QuotaError, SpecError,
                                   TransientError, WorkbenchError)

from . import quotas

POLICY_HINT = "attach the policy in resources/policies/aws-iam-policy.json to this user or role"

_NOT_FOUND = re.compile(r"(\.NotFound|NotFound|\.Malformed|NoSuchEntity|NotFoundException)$")
_AUTH_CAUSES = {
    "InvalidClientTokenId": "the access key id is not valid (InvalidClientTokenId)",
    "InvalidAccessKeyId": "the access key id is not valid (InvalidAccessKeyId)",
    "UnrecognizedClientException": "the access key id is not valid (UnrecognizedClientException)",
    "AuthFailure": "AWS could not validate the credentials (AuthFailure)",
    "SignatureDoesNotMatch": "the secret access key does not match the access key id (SignatureDoesNotMatch)",
    "IncompleteSignature": "the request signature is incomplete (IncompleteSignature)",
    "ExpiredToken": "the session token has expired (ExpiredToken)",
    "ExpiredTokenException": "the session token has expired (ExpiredTokenException)",
    "RequestExpired": "the request expired: check this computer's clock (RequestExpired)",
    "InvalidToken": "the session token is not valid (InvalidToken)",
    "OptInRequired": "the account is not subscribed to this service or region (OptInRequired)",
}
_DENIED = ("UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "UnauthorizedAccess")
_CAPACITY = ("InsufficientInstanceCapacity", "InsufficientCapacity", "InsufficientHostCapacity",
             "InsufficientReservedInstanceCapacity", "Unsupported", "SpotMaxPriceTooLow")
_QUOTA = ("VcpuLimitExceeded", "InstanceLimitExceeded", "MaxSpotInstanceCountExceeded", "ResourceLimitExceeded",
          "VolumeLimitExceeded", "AddressLimitExceeded", "RulesPerSecurityGroupLimitExceeded",
          "SecurityGroupLimitExceeded", "KeyPairLimitExceeded", "ServiceQuotaExceededException")
_TRANSIENT = ("RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException",
              "ServiceUnavailable", "Unavailable", "InternalError", "InternalFailure", "ServerInternal",
              "RequestTimeout", "DependencyViolation", "IncorrectState", "IncorrectInstanceState")


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every (non-trivial) secret value replaced by ***."""
    for value in secrets:
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return text


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


def is_not_found(exc: BaseException) -> bool:
    """True for "that thing does not exist" answers (which delete/terminate treat as success)."""
    code = error_code(exc)
    return bool(code) and bool(_NOT_FOUND.search(code))


def _aws_message(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Message", "") or "")
    return ""


#: S3 operations whose IAM action has another name (the multipart steps are all s3:PutObject)
S3_ACTIONS = {"HeadBucket": "ListBucket", "ListObjectsV2": "ListBucket", "ListObjects": "ListBucket",
              "ListBuckets": "ListAllMyBuckets", "ListMultipartUploads": "ListBucketMultipartUploads",
              "CreateMultipartUpload": "PutObject", "UploadPart": "PutObject", "CompleteMultipartUpload": "PutObject",
              "HeadObject": "GetObject"}


def iam_action(service: str, operation: str) -> str:
    """The IAM action for a botocore service/operation, e.g. ("ec2", "RunInstances") → "ec2:RunInstances"."""
    prefix = {"monitoring": "cloudwatch", "service-quotas": "servicequotas", "api.pricing": "pricing"}.get(
        service, service)
    if prefix == "s3":
        operation = S3_ACTIONS.get(operation, operation)
    return f"{prefix}:{operation}"


def translate(exc: BaseException, what: str, *, service: str = "ec2", operation: str = "",
              region: str = "", instance_type: str = "", secrets: Iterable[str] = ()) -> WorkbenchError:
    """A workbench error for ``exc`` raised while doing ``what`` (e.g. "launching p3.2xlarge in us-east-1").

    Never raises; unknown errors become PluginError naming the AWS code.
    """
    if isinstance(exc, WorkbenchError):
        return exc
    import botocore.exceptions as bx  # only ever called after boto3 was needed

    where = f" in {region}" if region else ""
    if isinstance(exc, bx.NoCredentialsError):
        return AuthError("no AWS credentials found for this profile",
                         hint="store an access key id and secret access key, or name a profile from ~/.aws/config")
    if isinstance(exc, bx.ProfileNotFound):
        return ConfigError(f"the named profile is not in the AWS config: {exc.kwargs.get('profile', '')}",
                           hint="check ~/.aws/config (or AWS_CONFIG_FILE) for the profile name")
    if isinstance(exc, (bx.SSOTokenLoadError, bx.UnauthorizedSSOTokenError, bx.TokenRetrievalError)):
        return AuthError("the AWS SSO session of the named profile has expired or was never started",
                         hint="run `aws sso login --profile NAME` and try again")
    if isinstance(exc, bx.NoRegionError):
        return ConfigError("no AWS region configured", hint="set the profile's region or regions setting")
    if isinstance(exc, (bx.EndpointConnectionError, bx.ConnectTimeoutError, bx.ReadTimeoutError,
                        bx.ConnectionClosedError, bx.HTTPClientError)):
        return TransientError(f"AWS did not answer while {what}{where} ({type(exc).__name__})",
                              hint="check the network connection (or the profile's endpoint_url) and retry")
    if isinstance(exc, bx.ParamValidationError):
        return PluginError(f"the AWS plugin sent an invalid request while {what}: "
                           f"{redact(str(exc), secrets)}")
    if not isinstance(exc, bx.ClientError):
        return PluginError(f"unexpected error while {what}{where}: {type(exc).__name__}")
    code = error_code(exc)
    status = http_status(exc)
    message = redact(_aws_message(exc), secrets)
    action = iam_action(service, operation) if operation else "the needed action"
    if code in _AUTH_CAUSES:
        return AuthError(f"AWS rejected the credentials while {what}: {_AUTH_CAUSES[code]}",
                         hint="store a valid key pair (or refresh the session token / SSO login) for this profile")
    if code in _DENIED:
        return AuthError(f"not allowed to call {action} while {what}{where} ({code})",
                         hint=f"grant {action}: {POLICY_HINT}")
    if code in _CAPACITY:
        return CapacityError(f"AWS has no capacity for {instance_type or 'this request'}{where} right now ({code})",
                             hint="try another region or instance type, spot vs on-demand, or retry later")
    if code in _QUOTA:
        quota = quotas.quota_for(instance_type) if instance_type else None
        if quota is not None:
            return QuotaError(f"the account's quota '{quota.name}' does not allow {instance_type}{where} ({code})",
                              hint=f"request an increase of '{quota.name}' (Service Quotas: ec2 {quota.code})"
                                   f" to at least the machine's vCPUs")
        return QuotaError(f"an AWS limit was reached while {what}{where} ({code}: {message})",
                          hint="request a quota increase in the Service Quotas console")
    if code.startswith("InvalidParameter") or code.startswith("MissingParameter") or code in (
            "InvalidAMIID.NotFound", "InvalidAMIID.Malformed", "InvalidInstanceType", "InvalidBlockDeviceMapping"):
        return SpecError(f"AWS refused the request while {what}{where}: {message or code} ({code})",
                         hint="check the instance type, image and disk size of the job")
    if code in _TRANSIENT or status >= 500 or status == 429:
        return TransientError(f"AWS is busy or failing while {what}{where} ({code or status}), after retries",
                              hint="retry in a minute")
    return PluginError(f"AWS error while {what}{where}: {code}: {message}")
