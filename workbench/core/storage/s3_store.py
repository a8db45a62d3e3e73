"""An S3-compatible object store on behalf of one profile: the half every such store shares.

AWS S3 and Alibaba OSS (through its S3-compatible API) answer the same calls; what differs is how
a client is made (credentials, endpoint, signature), how a bucket's region is found and how an SDK
error reads.  A plugin subclasses :class:`S3CompatibleStore` and writes only those four pieces:

``_client(region)``        the SDK's S3 client for a region (cached by the plugin)
``region_of(uri)``         the bucket's region
``_transfer_manager(c)``   ``boto3.s3.transfer.create_transfer_manager(c, TransferConfig(**transfer_config()))``
                           (the SDK import stays in the plugin: core imports no SDK)
``_fail(exc, what, uri, operation)``   the workbench error for an SDK exception

and gets ``probe``, ``list``, ``abort_incomplete``, ``put`` and ``buckets`` with the same
messages on every cloud, and ``_bucket_error`` for its ``_fail`` (a missing bucket → NotFoundError,
a refusal → AuthError, worded with the class's ``make_bucket`` and ``grant``) ("listing s3://bucket/prefix/", "uploading F to oss://bucket/key").
The calls themselves are :mod:`.s3_api`'s.  Creating a machine's credentials is each cloud's own
(``machine_remote``).

Threading: like the provider (any thread); the plugin's client cache must be thread-safe.
Failure rules: only what ``_fail`` returns leaves (SDK exceptions never do).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Any, Callable, ClassVar, Sequence

from workbench.core.domain.errors import AuthError, NotFoundError, WorkbenchError
from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage import s3_api
from workbench.core.storage.contract import BucketInfo, PutFile, RemoteObject, SmallObjects

log = logging.getLogger("workbench.storage")
#: S3 error codes (or HTTP statuses) that say the bucket is not there, or that these credentials may not use it
MISSING_CODES = ("NoSuchBucket", "404", "NotFound")
DENIED_CODES = ("AccessDenied", "403", "Forbidden", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch",
                "InvalidSecurityToken", "SecurityTokenExpired")



def transfer_config() -> dict[str, int]:
    """Keyword arguments of boto3's ``TransferConfig`` for uploads: parts of :data:`s3_api.MULTIPART_BYTES`
    above that size, :data:`s3_api.CONCURRENCY` at once (read at each call, so a test may lower them)."""
    return {"multipart_threshold": s3_api.MULTIPART_BYTES, "multipart_chunksize": s3_api.MULTIPART_BYTES,
            "max_concurrency": s3_api.CONCURRENCY}


class S3CompatibleStore(SmallObjects):
    """``probe``/``list``/``abort_incomplete``/``put``/``buckets`` over a plugin's S3 client (see the module doc)."""

    #: the address scheme ("s3", "oss") and the service's name in messages ("S3", "OSS")
    scheme: ClassVar[str]
    service: ClassVar[str]
    #: for the messages: where buckets are made ("the S3 console or with `aws s3 mb`"), and what the profile's
    #: identity must be given ("its IAM user s3:ListBucket, … on the bucket (resources/policies/…)")
    make_bucket: ClassVar[str]
    grant: ClassVar[str]
    #: the region whose client lists the buckets, and the profile (named in messages)
    home: str
    profile_name: str

    @abstractmethod
    def _client(self, region: str) -> Any:
        """The S3 client for ``region``."""

    @abstractmethod
    def region_of(self, uri: StorageUri) -> str:
        """The bucket's region; a workbench error when it cannot be found out."""

    @abstractmethod
    def _transfer_manager(self, client: Any) -> AbstractContextManager[Any]:
        """A transfer manager over ``client`` (boto3's, with :func:`transfer_config`)."""

    @abstractmethod
    def _fail(self, exc: BaseException, what: str, uri: StorageUri, operation: str) -> WorkbenchError:
        """The workbench error for an SDK exception raised while doing ``what`` (the S3 ``operation``)."""

    def _bucket_error(self, code: str, uri: StorageUri) -> WorkbenchError | None:
        """NotFoundError for a missing bucket, AuthError for a refusal (by the S3 ``code``); None otherwise."""
        if code in MISSING_CODES:
            return NotFoundError(f"the {self.service} bucket {uri.bucket!r} does not exist (or is not visible to "
                                 f"profile {self.profile_name!r})",
                                 hint=f"check the name; buckets are created in {self.make_bucket}")
        if code in DENIED_CODES:
            return AuthError(f"profile {self.profile_name!r} may not use the {self.service} bucket {uri.bucket!r} "
                             f"({code})", hint=f"give {self.grant}")
        return None

    def url(self, uri: StorageUri, key: str | None = None) -> str:
        """``s3://bucket/prefix/`` (the listing's prefix), or the address of one object key under it."""
        return f"{self.scheme}://{uri.bucket}/{s3_api.prefix_of(uri) if key is None else s3_api.object_key(uri, key)}"

    def _bucket_client(self, uri: StorageUri) -> Any:
        return self._client(self.region_of(uri))

    def probe(self, uri: StorageUri) -> BucketInfo:
        region = self.region_of(uri)
        return BucketInfo(uri, region, f"{self.service} bucket {uri.bucket} ({region})")

    def list(self, uri: StorageUri) -> dict[str, RemoteObject]:
        try:
            return s3_api.list_prefix(self._bucket_client(uri), uri)
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"listing {self.url(uri)}", uri, "ListObjectsV2") from None

    def abort_incomplete(self, uri: StorageUri) -> int:
        try:
            n = s3_api.abort_unfinished(self._bucket_client(uri), uri)
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"cleaning unfinished uploads in {self.url(uri)}", uri,
                             "ListMultipartUploads") from None
        if n:
            log.info("aborted %d unfinished multipart upload(s) under %s", n, self.url(uri))
        return n

    def put(self, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
            on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> None:
        if not files:
            return
        with self._transfer_manager(self._bucket_client(uri)) as manager:
            failure = s3_api.put_files(manager, uri, files, on_done, on_bytes, should_stop)
        if failure is not None and not should_stop():
            item, exc = failure
            raise self._fail(exc, f"uploading {item.path} to {self.url(uri, item.key)}", uri, "PutObject") from None

    # -- small objects (the controller's board: workbench.core.controller.board) --------------------
    def read_object(self, uri: StorageUri, key: str) -> tuple[bytes, str] | None:
        try:
            return s3_api.read_small(self._bucket_client(uri), uri.bucket, s3_api.object_key(uri, key))
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"reading {self.url(uri, key)}", uri, "GetObject") from None

    def write_object(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                     if_match: str | None = None) -> str | None:
        try:
            return s3_api.write_small(self._bucket_client(uri), uri.bucket, s3_api.object_key(uri, key), data,
                                      if_absent=if_absent, if_match=if_match)
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"writing {self.url(uri, key)}", uri, "PutObject") from None

    def delete_object(self, uri: StorageUri, key: str) -> None:
        try:
            s3_api.delete_key(self._bucket_client(uri), uri.bucket, s3_api.object_key(uri, key))
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"deleting {self.url(uri, key)}", uri, "DeleteObject") from None

    def buckets(self) -> list[str]:
        try:
            answer = self._client(self.home).list_buckets()
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"listing {self.service} buckets", StorageUri(self.scheme, bucket="*"),
                             "ListBuckets") from None
        return sorted(f"{self.scheme}://{b['Name']}" for b in answer.get("Buckets") or [])
