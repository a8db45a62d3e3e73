"""AWS errors → workbench errors, each with a message a person can act on and a hint.

botocore has already retried throttling and 5xx (standard retry mode) before an
error reaches this module, so what arrives here is final for this call.

The code → error table is :data:`TABLE` (the shape every cloud plugin uses:
:mod:`workbench.core.providers.sdk_errors`); botocore's own exception classes
(no credentials, SSO, connection) are mapped before it.

Secrets: messages are built from error *codes*, operation names and our own
words; AWS's own message text is only quoted for codes whose messages carry no
credential material, and every error is passed through the core's redaction
with the profile's secret values as a second line of defence.
"""

from __future__ import annotations

from typing import Iterable

from workbench.core.domain.errors import (AuthError, CapacityError, ConfigError, PluginError, QuotaError, SpecError,
                                          TransientError, WorkbenchError)
from workbench.core.providers.redaction import redact
from workbench.core.providers.sdk_errors import ErrorRule, ErrorTable, scrub

from . import quotas
from .codes import aws_message, error_code, http_status, is_not_found

__all__ = ["POLICY_HINT", "TABLE", "error_code", "http_status", "iam_action", "is_not_found", "redact", "translate"]

POLICY_HINT = "attach the policy in resources/policies/aws-iam-policy.json to this user or role"
_WHY_AUTH = {
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

#: Tried in order; fields: what, where (" in REGION" or ""), code, status, action (the IAM action),
#: instance ("p3.2xlarge" or "this request"), message (AWS's text, redacted), why (the auth cause).
TABLE = ErrorTable(
    ErrorRule("auth", AuthError, "AWS rejected the credentials while {what}: {why}",
              hint="store a valid key pair (or refresh the session token / SSO login) for this profile",
              codes=tuple(_WHY_AUTH)),
    ErrorRule("denied", AuthError, "not allowed to call {action} while {what}{where} ({code})",
              hint="grant {action}: " + POLICY_HINT,
              codes=("UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "UnauthorizedAccess")),
    ErrorRule("capacity", CapacityError, "AWS has no capacity for {instance}{where} right now ({code})",
              hint="try another region or instance type, spot vs on-demand, or retry later",
              codes=("InsufficientInstanceCapacity", "InsufficientCapacity", "InsufficientHostCapacity",
                     "InsufficientReservedInstanceCapacity", "Unsupported", "SpotMaxPriceTooLow")),
    ErrorRule("quota", QuotaError, "an AWS limit was reached while {what}{where} ({code}: {message})",
              hint="request a quota increase in the Service Quotas console",
              codes=("VcpuLimitExceeded", "InstanceLimitExceeded", "MaxSpotInstanceCountExceeded",
                     "ResourceLimitExceeded", "VolumeLimitExceeded", "AddressLimitExceeded",
                     "RulesPerSecurityGroupLimitExceeded", "SecurityGroupLimitExceeded", "KeyPairLimitExceeded",
                     "ServiceQuotaExceededException")),
    ErrorRule("spec", SpecError, "AWS refused the request while {what}{where}: {message_or_code} ({code})",
              hint="check the instance type, image and disk size of the job",
              prefixes=("InvalidParameter", "MissingParameter"),
              codes=("InvalidAMIID.NotFound", "InvalidAMIID.Malformed", "InvalidInstanceType",
                     "InvalidBlockDeviceMapping")),
    ErrorRule("transient", TransientError, "AWS is busy or failing while {what}{where} ({code_or_status}), after retries",
              hint="retry in a minute", statuses=(429,), min_status=500,
              codes=("RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException",
                     "ServiceUnavailable", "Unavailable", "InternalError", "InternalFailure", "ServerInternal",
                     "RequestTimeout", "DependencyViolation", "IncorrectState", "IncorrectInstanceState")),
)


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
    return scrub(_translate(exc, what, service, operation, region, instance_type, list(secrets)), secrets)


def _translate(exc: BaseException, what: str, service: str, operation: str, region: str, instance_type: str,
               secrets: list[str]) -> WorkbenchError:
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
        return PluginError(f"the AWS plugin sent an invalid request while {what}: {redact(str(exc), secrets)}")
    if not isinstance(exc, bx.ClientError):
        return PluginError(f"unexpected error while {what}{where}: {type(exc).__name__}")
    code = error_code(exc)
    status = http_status(exc)
    message = redact(aws_message(exc), secrets)
    rule = TABLE.find(code, status, message)
    if rule is None:
        return PluginError(f"AWS error while {what}{where}: {code}: {message}")
    if rule.name == "quota" and instance_type:
        quota = quotas.quota_for(instance_type)
        return QuotaError(f"the account's quota '{quota.name}' does not allow {instance_type}{where} ({code})",
                          hint=f"request an increase of '{quota.name}' (Service Quotas: ec2 {quota.code})"
                               f" to at least the machine's vCPUs")
    return rule.build(what=what, where=where, code=code, status=status, message=message,
                      message_or_code=message or code, code_or_status=code or status,
                      action=iam_action(service, operation) if operation else "the needed action",
                      instance=instance_type or "this request", why=_WHY_AUTH.get(code, ""))
