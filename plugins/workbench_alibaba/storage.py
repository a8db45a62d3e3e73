"""OSS (Alibaba Cloud Object Storage) for the app: check a bucket, list a prefix, upload a folder, and
mint a machine's credentials.

On this computer everything goes through OSS's S3-compatible API with boto3 and the profile's own
key (the AccessKey, or the RAM role's temporary key for auth=ram_role): the endpoint
``https://s3.oss-<region>.aliyuncs.com``, virtual-hosted addressing, and Signature V4 signed for the
OSS region id (``cn-hangzhou``) with boto3's optional checksums off (``when_required``: its
default aws-chunked uploads are not supported by OSS).  OSS's guide for boto3 signs with V2 instead
(``signature_version='s3'``); the profile setting ``oss_signature=v2`` does that.  The bucket's region
comes from GetBucketLocation (``oss-cn-shanghai`` → ``cn-shanghai``); an answer naming another
endpoint (OSS refuses a bucket addressed through another region) is followed once.

The machine never gets the user's key: :meth:`OssStorage.machine_remote` calls STS AssumeRole for the
role of the profile setting ``storage_role_arn`` with a policy that allows only the mount's bucket
and prefix (read for ``copy`` mounts, read and write for ``sync`` ones), for the run's duration up to
``storage_session_max_s`` (the role's MaxSessionDuration: 3600 s unless raised in RAM, at most
43200).  Without a role the mount is refused (ConfigError naming the setting).

The controller's board (:class:`~workbench.core.storage.contract.SmallObjects`) differs from S3 here: OSS's
PutObject refuses ``If-None-Match`` and ``If-Match`` (400 NotImplemented, OSS error 0017-00000245), so
:meth:`OssStorage.write_object` never sends them.  Create-if-absent is OSS's own ``x-oss-forbid-overwrite: true``
(atomic in OSS; 409 FileAlreadyExists when the key exists, error 0026-00000201), added to the signed request
through boto3's ``before-sign.s3.PutObject`` event.  OSS has no replace-if-ETag-matches write at all; a replace
is built from that create: the writer first creates the marker ``<key>.if-match-<ETag>`` (so of writers holding
the same ETag exactly one goes on), reads the key again (another ETag: lost), writes it, and removes the
marker.  Only conditional writers touch a board's claim keys, so this is as atomic as S3's If-Match, with one
difference: a writer that dies between its marker and its write leaves that ETag unreplaceable until the marker
is deleted (the claim then stays with its dead owner, never relaunched twice: a warning names the marker).

Settings (all optional): ``oss_endpoint`` (a URL serving the S3-compatible API for every region:
tests, a private endpoint; addressed path-style), ``oss_signature`` (v4|v2), ``storage_role_arn``,
``storage_session_max_s``.

Threading: one OssStorage per provider; boto3 clients are cached per (region, key) behind a lock
(boto3 clients are thread-safe).  Failure rules: only workbench errors leave; NoSuchBucket →
NotFoundError, AccessDenied → AuthError, throttling/5xx/connection → TransientError.  Every S3
operation is mapped to its RAM action and checked against ``clients.ACTIONS["oss"]`` before it is
sent (resources/policies/alibaba-ram-policy.json lists the same).
"""

from __future__ import annotations

import calendar
import json
import logging
import re
import threading
import time
from contextlib import AbstractContextManager
from typing import Any, Mapping

from workbench.core.domain.errors import ConfigError, PluginError, TransientError, WorkbenchError
from workbench.core.domain.storage_uri import StorageUri
from workbench.core.providers.redaction import redact
from workbench.core.storage.contract import MachineRemote, ServesObjectStorage
from workbench.core.storage.rclone import s3_compatible_remote
from workbench.core.storage.s3_api import CONCURRENCY, object_key
from workbench.core.storage.s3_store import S3CompatibleStore, transfer_config

from . import clients
from .clients import Api

log = logging.getLogger("workbench.alibaba.storage")


ROLE_SETTING, ENDPOINT_SETTING, SIGNATURE_SETTING = "storage_role_arn", "oss_endpoint", "oss_signature"
SESSION_SETTING = "storage_session_max_s"
MIN_SESSION_S, DEFAULT_SESSION_S, MAX_SESSION_S = 900, 3600, 43200
_ROLE_ARN = re.compile(r"^acs:ram::\d+:role/[A-Za-z0-9._-]{1,64}$")
#: the S3 operation boto3 sends → the OSS RAM action that allows it (one multipart upload = oss:PutObject)
RAM_ACTION = {
    "ListBuckets": "ListBuckets", "GetBucketLocation": "GetBucketLocation", "ListObjectsV2": "ListObjects",
    "PutObject": "PutObject", "CreateMultipartUpload": "PutObject", "UploadPart": "PutObject",
    "CompleteMultipartUpload": "PutObject", "ListMultipartUploads": "ListMultipartUploads",
    "AbortMultipartUpload": "AbortMultipartUpload", "GetObject": "GetObject", "DeleteObject": "DeleteObject",
}
#: OSS's answer to a create with x-oss-forbid-overwrite on a key that exists (the condition lost)
EXISTS = ("FileAlreadyExists", "409")
FORBID_OVERWRITE = "x-oss-forbid-overwrite"
MARKER_STALE_S = 600.0  # a replace marker older than this: its writer died between the marker and the write
_BUSY = ("Throttling", "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "503", "500")


def oss_s3_endpoint(region: str) -> str:
    """OSS's S3-compatible public endpoint of a region (OSS's guide for AWS SDKs)."""
    return f"https://s3.oss-{region.removeprefix('oss-')}.aliyuncs.com"


def machine_policy(uri: StorageUri, write: bool) -> dict[str, Any]:
    """The RAM policy a machine's STS token gets: this bucket's prefix only; writes only for ``write``."""
    bucket = f"acs:oss:*:*:{uri.bucket}"
    objects = f"{bucket}/{uri.prefix}/*" if uri.prefix else f"{bucket}/*"
    listing: dict[str, Any] = {"Effect": "Allow", "Action": ["oss:ListObjects"], "Resource": [bucket]}
    if uri.prefix:
        listing["Condition"] = {"StringLike": {"oss:Prefix": [uri.prefix, f"{uri.prefix}/", f"{uri.prefix}/*"]}}
    actions = ["oss:GetObject"] + (["oss:PutObject", "oss:AbortMultipartUpload"] if write else [])
    return {"Version": "1", "Statement": [listing, {"Effect": "Allow", "Action": actions, "Resource": [objects]}]}


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        err = response.get("Error") or {}
        code = str(err.get("Code") or "")
        if code:
            return code
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        return str(status or "")
    return ""


def _redirect_region(exc: BaseException) -> str | None:
    """The region of the endpoint OSS names when a bucket is addressed through another region."""
    err = (getattr(exc, "response", None) or {}).get("Error") or {}
    endpoint = str(err.get("Endpoint") or "")
    found = re.match(r"^(?:s3\.)?oss-([a-z0-9-]+?)(?:-internal)?\.aliyuncs\.com", endpoint)
    return found.group(1) if found else None


class OssStorage(S3CompatibleStore):
    """OSS on behalf of one Alibaba profile (see the module doc); listing and uploads: :class:`S3CompatibleStore`."""

    scheme, service = "oss", "OSS"
    make_bucket = "the OSS console or with `ossutil mb`"
    grant = ("its RAM user oss:ListObjects, oss:GetObject and oss:PutObject on the bucket "
             "(resources/policies/alibaba-ram-policy.json)")

    def __init__(self, api: Api, profile_name: str, home_region: str, settings: Mapping[str, str]) -> None:
        self.api = api
        self.profile_name = profile_name
        self.home = home_region
        self.endpoint = (settings.get(ENDPOINT_SETTING) or "").strip().rstrip("/") or None
        if self.endpoint and not re.match(r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?(/.*)?$", self.endpoint):
            raise ConfigError(f"profile {profile_name!r}: {ENDPOINT_SETTING} {self.endpoint!r} is not an http(s) URL")
        self.signature = (settings.get(SIGNATURE_SETTING) or "v4").strip().lower()
        if self.signature not in ("v4", "v2"):
            raise ConfigError(f"profile {profile_name!r}: {SIGNATURE_SETTING} must be v4 or v2, not {self.signature!r}")
        self.role_arn = (settings.get(ROLE_SETTING) or "").strip() or None
        if self.role_arn and not _ROLE_ARN.match(self.role_arn):
            raise ConfigError(f"profile {profile_name!r}: {ROLE_SETTING} {self.role_arn!r} is not a RAM role ARN",
                              hint="it looks like acs:ram::1234567890123456:role/workbench-machines")
        try:
            self.session_max = int(settings.get(SESSION_SETTING) or DEFAULT_SESSION_S)
        except ValueError:
            raise ConfigError(f"profile {profile_name!r}: {SESSION_SETTING} must be a number of seconds") from None
        if not MIN_SESSION_S <= self.session_max <= MAX_SESSION_S:
            raise ConfigError(f"profile {profile_name!r}: {SESSION_SETTING} must be between {MIN_SESSION_S} and "
                              f"{MAX_SESSION_S} (the RAM role's maximum session duration)")
        self._regions: dict[str, str] = {}
        self._clients: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self._forbid = threading.local()  # this thread's PutObject is a create (x-oss-forbid-overwrite)

    # -- plumbing ------------------------------------------------------------------------------
    def _client(self, region: str) -> Any:
        key = self.api.key()
        with self._lock:
            hit = self._clients.get((region, key.access_key_id))
        if hit is not None:
            return hit
        try:
            import boto3
            from botocore.config import Config
        except ModuleNotFoundError as exc:
            raise PluginError(f"OSS needs boto3, which is not installed (missing {exc.name})",
                              hint="install the [alibaba] extra: pip install 'cloud-gpu-workbench[alibaba]'") from None
        s = self.api.settings
        config = Config(signature_version="s3v4" if self.signature == "v4" else "s3", region_name=region,
                        s3={"addressing_style": "path" if self.endpoint else "virtual"},
                        request_checksum_calculation="when_required", response_checksum_validation="when_required",
                        connect_timeout=s.connect_timeout, read_timeout=s.read_timeout,
                        retries={"max_attempts": s.retry_total + 1, "mode": "standard"},
                        max_pool_connections=CONCURRENCY + 4)
        client = boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint or oss_s3_endpoint(region), aws_access_key_id=key.access_key_id,
            aws_secret_access_key=key.secret, aws_session_token=key.token, config=config)
        client.meta.events.register("before-call.s3", self._check_action)
        client.meta.events.register("before-sign.s3.PutObject", self._forbid_overwrite)
        with self._lock:
            self._clients = {k: v for k, v in self._clients.items() if k[1] == key.access_key_id}
            self._clients[(region, key.access_key_id)] = client
        return client

    @staticmethod
    def _check_action(model: Any = None, **_: Any) -> None:
        """Before each S3 operation: its RAM action must be on the plugin's list (as for every API call)."""
        action = RAM_ACTION.get(getattr(model, "name", ""))
        if action is None or action not in clients.ACTIONS.get("oss", ()):
            raise PluginError(f"the Alibaba plugin tried the OSS operation {getattr(model, 'name', '?')}, which is "
                              "not in its list of actions",
                              hint="add it to clients.ACTIONS and resources/policies/alibaba-ram-policy.json")
        for watch in list(clients._observers):
            watch("oss", action)

    def _forbid_overwrite(self, request: Any = None, **_: Any) -> None:
        """Before a PutObject is signed: OSS's create-if-absent header when this thread is creating."""
        if getattr(self._forbid, "on", False) and request is not None:
            request.headers[FORBID_OVERWRITE] = "true"

    def _transfer_manager(self, client: Any) -> AbstractContextManager[Any]:
        from boto3.s3.transfer import TransferConfig, create_transfer_manager

        return create_transfer_manager(client, TransferConfig(**transfer_config()))

    def _fail(self, exc: BaseException, what: str, uri: StorageUri, operation: str = "") -> WorkbenchError:
        if isinstance(exc, WorkbenchError):
            return exc
        code = _code(exc)
        secrets = self.api.secret_values()
        known = self._bucket_error(code, uri)
        if known is not None:
            return known
        if code in _BUSY or code.startswith("5") or type(exc).__name__ in (
                "EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError"):
            return TransientError(f"OSS did not answer {what} ({code or type(exc).__name__})",
                                  hint="check the network connection and retry; files already sent are skipped")
        detail = redact(str(exc), secrets)[:300]
        return PluginError(f"OSS refused {what}: {code or type(exc).__name__}: {detail}")

    def region_of(self, uri: StorageUri) -> str:
        """The bucket's region (GetBucketLocation answers ``oss-<region>``); NotFound/AuthError as it says."""
        with self._lock:
            known = self._regions.get(uri.bucket)
        if known:
            return known
        region, tried = self.home, set()
        while True:
            tried.add(region)
            try:
                answer = self._client(region).get_bucket_location(Bucket=uri.bucket)
                break
            except Exception as exc:  # noqa: BLE001 - mapped
                other = _redirect_region(exc)
                if other and other not in tried:
                    region = other
                    continue
                raise self._fail(exc, f"looking up the OSS bucket {uri.bucket}", uri) from None
        found = str(answer.get("LocationConstraint") or "").removeprefix("oss-") or region
        with self._lock:
            self._regions[uri.bucket] = found
        return found

    # -- the contract's storage methods: probe, list, abort_incomplete, put, buckets (S3CompatibleStore)
    def write_object(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                     if_match: str | None = None) -> str | None:
        """As the contract says, with OSS's own conditions (see the module doc): never If-None-Match / If-Match."""
        if if_match is not None:
            return self._replace(uri, key, data, if_match)
        if if_absent:
            return self._create(uri, key, data)
        return super().write_object(uri, key, data)

    def _create(self, uri: StorageUri, key: str, data: bytes) -> str | None:
        client = self._bucket_client(uri)
        self._forbid.on = True
        try:
            answer = client.put_object(Bucket=uri.bucket, Key=object_key(uri, key), Body=data,
                                       ContentType="application/json")
        except Exception as exc:  # noqa: BLE001 - a key that exists is an answer; the rest is mapped
            if _code(exc) in EXISTS:
                return None
            raise self._fail(exc, f"writing {self.url(uri, key)}", uri, "PutObject") from None
        finally:
            self._forbid.on = False
        return str(answer.get("ETag", "")).strip('"')

    def _replace(self, uri: StorageUri, key: str, data: bytes, etag: str) -> str | None:
        marker = f"{key}.if-match-{etag}"
        if self._create(uri, marker, json.dumps({"at": time.time()}).encode()) is None:
            self._warn_if_stale(uri, marker)
            return None  # another writer holding this ETag goes first
        try:
            now = self.read_object(uri, key)
            if now is None or now[1] != etag:
                return None
            return super().write_object(uri, key, data)
        finally:
            try:
                self.delete_object(uri, marker)
            except WorkbenchError as exc:  # the next replace of this ETag loses; the record was written
                log.warning("could not remove %s: %s", self.url(uri, marker), exc.message)

    def _warn_if_stale(self, uri: StorageUri, marker: str) -> None:
        got = self.read_object(uri, marker)
        try:
            at = float(json.loads(got[0]).get("at") or 0) if got else time.time()
        except (ValueError, AttributeError):
            at = 0.0
        if time.time() - at > MARKER_STALE_S:
            log.warning("%s is %d s old: the writer that made it died before replacing the record, which stays as it "
                        "is until the marker is deleted (check that nothing is being relaunched for it first)",
                        self.url(uri, marker), time.time() - at)

    def machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote:
        if not self.role_arn:
            raise ConfigError(f"profile {self.profile_name!r} has no RAM role to make the machine's OSS credentials "
                              f"(setting {ROLE_SETTING})",
                              hint=f"create a RAM role this user may assume, allowed on the bucket, and set it: "
                                   f"`workbench profiles add alibaba {self.profile_name} --set {ROLE_SETTING}="
                                   "acs:ram::ACCOUNT:role/NAME` (the machine never gets the profile's AccessKey)")
        region = self.region_of(uri)
        policy = json.dumps(machine_policy(uri, write), separators=(",", ":"))
        name = re.sub(r"[^A-Za-z0-9.@_-]", "-", f"wb-{label}")[:32]
        seconds = int(max(MIN_SESSION_S, min(duration_s, self.session_max)))
        try:
            body = self.api.sts("AssumeRole", RoleArn=self.role_arn, RoleSessionName=name, Policy=policy,
                                DurationSeconds=seconds)
        except WorkbenchError as exc:
            if "DurationSeconds" in exc.message:
                raise ConfigError(f"the RAM role {self.role_arn} does not allow sessions of {seconds} s",
                                  hint=f"raise the role's maximum session duration in the RAM console, or set "
                                       f"{SESSION_SETTING} to what it allows (3600 by default)") from None
            raise type(exc)(f"making the machine's OSS credentials (AssumeRole {self.role_arn}): {exc.message}",
                            exc.hint) from None
        c = body.get("Credentials") or {}
        try:
            expires = float(calendar.timegm(time.strptime(str(c.get("Expiration")), "%Y-%m-%dT%H:%M:%SZ")))
        except ValueError:
            expires = time.time() + seconds
        remote = s3_compatible_remote(uri, c["AccessKeyId"], c["AccessKeySecret"], c.get("SecurityToken") or "",
                                      region, self.endpoint, expires)
        if seconds < duration_s:
            note = (f"the machine's OSS credentials last {seconds // 60} min, less than the run may take: raise the "
                    f"RAM role's maximum session duration and set {SESSION_SETTING} (up to {MAX_SESSION_S})")
            remote = MachineRemote(remote.options, remote.path, remote.expires_at, remote.secret_keys, (note,))
        return remote


class OssStorageMixin(ServesObjectStorage):
    """The provider's OSS half: serves ``oss://`` with the profile's credentials (see :class:`OssStorage`)."""

    storage_kinds, storage_addresses = ("oss",), "oss://"

    def _oss(self) -> OssStorage:
        store = self.__dict__.get("_oss_storage")
        if store is None:
            store = OssStorage(self._api, self.profile.name, self.settings.regions[0],  # type: ignore[attr-defined]
                               dict(self.profile.settings or {}))  # type: ignore[attr-defined]
            self.__dict__["_oss_storage"] = store
        return store

    def _object_store(self) -> OssStorage:
        return self._oss()
