"""S3 for the app: check a bucket, list a prefix, upload a folder, and mint a machine's credentials.

On this computer everything goes through boto3 with the profile's own credentials: the
bucket's region is asked first (``HeadBucket`` answers it even when it refuses), then each
call goes to that region.  Uploads use boto3's S3 transfer manager (parallel, multipart above
64 MB); unfinished multipart uploads under the prefix are aborted before a new upload, so an
interrupted one leaves nothing billing.

The machine never gets the user's keys: :meth:`S3Storage.machine_remote` asks STS for
session credentials (``GetFederationToken``; ``AssumeRole`` of the profile setting
``storage_role_arn`` where the profile's own credentials are temporary, e.g. SSO) under a
policy that allows only the mount's bucket and prefix: read for ``copy`` mounts, read and
write for ``sync`` ones.  They expire with the launch's max runtime (at most 36 h; 12 h with a role).

Where the plugin itself runs on a role's credentials (the account's controller machine, which relaunches
attempts while the app is closed: ``GetCallerIdentity`` names an ``:assumed-role/``), AWS allows less:
``GetFederationToken`` needs an IAM user's long-term key, so without ``storage_role_arn`` the call is
refused here with an AuthError naming the job storage role (:mod:`.controller_identity`) instead of being
sent; and one role assuming another is role chaining, whose sessions last one hour at most, so
``AssumeRole`` is asked for 3600 s at most (the credentials of such an attempt expire after an hour).

Threading: one S3Storage per provider; boto3 clients per thread (see :mod:`.clients`).
Failure rules: botocore errors leave through :func:`.errors.translate`, S3's own codes
mapped here first (NoSuchBucket → NotFoundError, AccessDenied → AuthError).
"""

from __future__ import annotations

import json
import re
import threading
from contextlib import AbstractContextManager
from typing import Any, Sequence

from workbench.core.domain.errors import AuthError, WorkbenchError
from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage.contract import MachineRemote
from workbench.core.storage.rclone import s3_compatible_remote
from workbench.core.storage.s3_store import S3CompatibleStore, transfer_config

from .clients import Clients
from .codes import error_code
from .errors import translate

ROLE_SETTING = "storage_role_arn"
MAX_FEDERATION_S = 36 * 3600
MAX_ROLE_S = 12 * 3600
#: role chaining (a role's credentials calling AssumeRole) caps the session at one hour
MAX_CHAINED_S = 3600


def bucket_policy(uri: StorageUri, write: bool, partition: str = "aws") -> dict[str, Any]:
    """The IAM policy a machine's session gets: this bucket's prefix only; writes only for ``write``."""
    bucket = f"arn:{partition}:s3:::{uri.bucket}"
    objects = f"{bucket}/{uri.prefix}/*" if uri.prefix else f"{bucket}/*"
    listing: dict[str, Any] = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket}
    if uri.prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [uri.prefix, f"{uri.prefix}/", f"{uri.prefix}/*"]}}
    actions = ["s3:GetObject"] + (["s3:PutObject", "s3:AbortMultipartUpload"] if write else [])
    return {"Version": "2012-10-17", "Statement": [
        listing,
        {"Effect": "Allow", "Action": actions, "Resource": objects},
        {"Effect": "Allow", "Action": "s3:GetBucketLocation", "Resource": bucket},
    ]}


def _partition(region: str) -> str:
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


class S3Storage(S3CompatibleStore):
    """S3 on behalf of one AWS profile (see the module doc); listing and uploads: :class:`S3CompatibleStore`."""

    scheme, service = "s3", "S3"
    make_bucket = "the S3 console or with `aws s3 mb`"
    grant = ("its IAM user s3:ListBucket, s3:GetObject and s3:PutObject on the bucket "
             "(resources/policies/aws-iam-policy.json)")

    def __init__(self, clients: Clients, regions: Sequence[str], profile_name: str,
                 settings: dict[str, str]) -> None:
        self.clients = clients
        self.home = regions[0]
        self.profile_name = profile_name
        self.role_arn = (settings.get(ROLE_SETTING) or "").strip() or None
        self._regions: dict[str, str] = {}
        self._caller: str | None = None  # the ARN the profile's credentials act as, asked once
        self._lock = threading.Lock()

    # -- plumbing ------------------------------------------------------------------
    def _client(self, region: str) -> Any:
        return self.clients.client("s3", region)

    def _transfer_manager(self, client: Any) -> AbstractContextManager[Any]:
        from boto3.s3.transfer import TransferConfig, create_transfer_manager

        return create_transfer_manager(client, TransferConfig(**transfer_config()))

    def _fail(self, exc: BaseException, what: str, uri: StorageUri, operation: str, service: str = "s3"
              ) -> WorkbenchError:
        known = self._bucket_error(error_code(exc), uri)
        if known is not None:
            return known
        return translate(exc, what, service=service, operation=operation, secrets=self.clients.secret_values())

    def region_of(self, uri: StorageUri) -> str:
        """The bucket's region (HeadBucket says it in a header, even on a refusal or a redirect)."""
        with self._lock:
            known = self._regions.get(uri.bucket)
        if known:
            return known
        s3 = self._client(self.home)
        try:
            answer = s3.head_bucket(Bucket=uri.bucket)
            headers = answer.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        except Exception as exc:  # noqa: BLE001 - mapped
            headers = getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPHeaders", {})
            if error_code(exc) not in ("301", "PermanentRedirect") or not headers.get("x-amz-bucket-region"):
                raise self._fail(exc, f"looking up the S3 bucket {uri.bucket}", uri, "HeadBucket") from None
        region = headers.get("x-amz-bucket-region") or self.home
        with self._lock:
            self._regions[uri.bucket] = region
        return region

    def caller_arn(self) -> str:
        """The ARN the profile's credentials act as (``…:assumed-role/ROLE/SESSION`` on a role); asked once."""
        with self._lock:
            known = self._caller
        if known is not None:
            return known
        try:
            arn = str(self.clients.client("sts", self.home).get_caller_identity().get("Arn") or "")
        except Exception as exc:  # noqa: BLE001 - mapped
            raise translate(exc, "checking the credentials", service="sts", operation="GetCallerIdentity",
                            secrets=self.clients.secret_values()) from None
        with self._lock:
            self._caller = arn
        return arn

    def machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote:
        region = self.region_of(uri)
        policy = json.dumps(bucket_policy(uri, write, _partition(region)), separators=(",", ":"))
        sts = self.clients.client("sts", self.home)
        name = re.sub(r"[^\w+=,.@-]", "-", f"wb-{label}")[:32]
        caller = self.caller_arn()
        on_role = ":assumed-role/" in caller
        if on_role and not self.role_arn:
            role = caller.split(":assumed-role/", 1)[1].split("/", 1)[0]
            raise AuthError(f"profile {self.profile_name!r} runs as the role {role}, and AWS lets no role call "
                            f"GetFederationToken: the machine's credentials for s3://{uri.bucket} need a role to "
                            "assume", hint=f"set {ROLE_SETTING} to a role this one may assume that can use the "
                                           "bucket (on the controller machine: its job storage role, arn:aws:iam::"
                                           "ACCOUNT:role/workbench-job-storage); AWS ends such sessions after one "
                                           "hour (role chaining)")
        try:
            if self.role_arn:
                longest = MAX_CHAINED_S if on_role else MAX_ROLE_S
                answer = sts.assume_role(RoleArn=self.role_arn, RoleSessionName=name, Policy=policy,
                                         DurationSeconds=int(min(duration_s, longest)))
            else:
                answer = sts.get_federation_token(Name=name, Policy=policy,
                                                  DurationSeconds=int(min(duration_s, MAX_FEDERATION_S)))
        except Exception as exc:  # noqa: BLE001 - mapped
            operation = "AssumeRole" if self.role_arn else "GetFederationToken"
            if not self.role_arn and error_code(exc) in ("AccessDenied", "InvalidClientTokenId"):
                raise AuthError(f"profile {self.profile_name!r} cannot make credentials for the machine "
                                f"(STS {operation}: {error_code(exc)})",
                                hint="GetFederationToken needs an IAM user's access key; with SSO or other "
                                     f"temporary credentials set {ROLE_SETTING}=arn:aws:iam::ACCOUNT:role/NAME, a "
                                     "role the app may assume that can use the bucket") from None
            raise translate(exc, f"making credentials for s3://{uri.bucket}", service="sts", operation=operation,
                            secrets=self.clients.secret_values()) from None
        c = answer["Credentials"]
        expires = c.get("Expiration")
        return s3_compatible_remote(uri, c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"], region,
                                    self.clients.settings.endpoint("s3"),
                                    expires.timestamp() if hasattr(expires, "timestamp") else None)
