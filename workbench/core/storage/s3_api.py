"""The S3 API calls every S3-compatible store shares (AWS S3, and Alibaba OSS through its S3-compatible API).

A plugin keeps what is its own (which client, which region, how an SDK error reads); the paging,
the clean-up of unfinished multipart uploads and the upload loop over a transfer manager are the
same calls on both clouds and live here once.  Nothing here imports an SDK: the client and the
transfer manager come from the plugin (``boto3`` client, ``boto3.s3.transfer.create_transfer_manager``),
and this module only calls their documented methods.  SDK exceptions pass through unchanged, so the
plugin maps them with the context it knows.

Threading: the functions block on the network; call them off the UI thread.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage.contract import PutFile, RemoteObject

MULTIPART_BYTES = 64 * 1024 * 1024  # parts of 64 MB above 64 MB: few parts, resumable
CONCURRENCY = 16  # parallel part and file uploads; a client's pool should hold a few more connections
POLL_S = 0.05  # how often a waiting upload looks at should_stop


def prefix_of(uri: StorageUri) -> str:
    """The key prefix a listing uses: ``"runs/a/"`` for ``s3://b/runs/a``, ``""`` for a whole bucket."""
    return f"{uri.prefix}/" if uri.prefix else ""


def object_key(uri: StorageUri, rel: str) -> str:
    """The key of ``rel`` (a path relative to the mount) under the address's prefix."""
    return f"{uri.prefix}/{rel}" if uri.prefix else rel


def list_prefix(client: Any, uri: StorageUri) -> dict[str, RemoteObject]:
    """Every object under the prefix, by its path relative to it (folder markers left out)."""
    base = prefix_of(uri)
    out: dict[str, RemoteObject] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=uri.bucket, Prefix=base):
        for obj in page.get("Contents") or []:
            rel = obj["Key"][len(base):]
            if rel and not rel.endswith("/"):
                out[rel] = RemoteObject(int(obj.get("Size", 0)), str(obj.get("ETag", "")).strip('"'))
    return out


def abort_unfinished(client: Any, uri: StorageUri) -> int:
    """Abort the multipart uploads left unfinished under the prefix (their parts bill); how many."""
    base = prefix_of(uri)
    n = 0
    for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=uri.bucket, Prefix=base):
        for up in page.get("Uploads") or []:
            client.abort_multipart_upload(Bucket=uri.bucket, Key=up["Key"], UploadId=up["UploadId"])
            n += 1
    return n


class _Progress:
    """A transfer-manager subscriber (the manager calls the ``on_*`` methods it finds)."""

    def __init__(self, item: PutFile, on_bytes: Callable[[int], None],
                 on_done: Callable[[PutFile, str], None]) -> None:
        self.item, self._on_bytes, self._on_done = item, on_bytes, on_done

    def on_progress(self, future: Any, bytes_transferred: int, **kwargs: Any) -> None:
        self._on_bytes(bytes_transferred)

    def on_done(self, future: Any, **kwargs: Any) -> None:
        try:
            future.result()
        except BaseException:  # noqa: BLE001 - reported when put_files collects the result
            return
        self._on_done(self.item, "")


def put_files(manager: Any, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
              on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> tuple[PutFile, BaseException] | None:
    """Queue every file on ``manager`` and wait for them: the first failure, or None.

    A failure, or ``should_stop()`` turning true, cancels what has not finished; after a stop the
    caller ignores the failure (a cancelled upload is not one).  ``on_done`` is called once per file
    that arrived, ``on_bytes`` with each chunk sent.
    """
    futures = []
    for item in files:
        if should_stop():
            break
        futures.append((item, manager.upload(item.path, uri.bucket, object_key(uri, item.key),
                                             subscribers=[_Progress(item, on_bytes, on_done)])))
    failure: tuple[PutFile, BaseException] | None = None
    for item, fut in futures:
        while not fut.done():
            if should_stop():
                for _, other in futures:
                    other.cancel()
                break
            time.sleep(POLL_S)
        try:
            fut.result()
        except BaseException as exc:  # noqa: BLE001 - cancelled or failed
            if not should_stop() and failure is None:
                failure = (item, exc)
                for _, other in futures:
                    other.cancel()
    return failure


#: S3 answers for a conditional write that lost (``If-None-Match: *`` on an existing key, ``If-Match`` on a changed
#: one): 412 PreconditionFailed, or 409 ConditionalRequestConflict while another conditional write is in flight
LOST_CONDITION = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")
MISSING_KEY = ("NoSuchKey", "404", "NotFound")


def _code(exc: BaseException) -> str:
    err = getattr(exc, "response", {}) or {}
    return str((err.get("Error") or {}).get("Code") or "")


def read_small(client: Any, bucket: str, key: str) -> tuple[bytes, str] | None:
    """(content, ETag) of one small object, None when there is none."""
    try:
        answer = client.get_object(Bucket=bucket, Key=key)
    except Exception as exc:  # noqa: BLE001 - only "no such key" is an answer; the rest goes to the plugin
        if _code(exc) in MISSING_KEY:
            return None
        raise
    return answer["Body"].read(), str(answer.get("ETag", "")).strip('"')


def write_small(client: Any, bucket: str, key: str, data: bytes, if_absent: bool = False,
                if_match: str | None = None) -> str | None:
    """Store ``data`` at ``key``; the new ETag, or None when the condition lost (another writer was first).

    ``if_absent``: only when no object has that key (S3 ``If-None-Match: *``, atomic in the service);
    ``if_match``: only when the object still has that ETag (``If-Match``).
    """
    extra: dict[str, str] = {}
    if if_absent:
        extra["IfNoneMatch"] = "*"
    if if_match is not None:
        extra["IfMatch"] = f'"{if_match}"'
    try:
        answer = client.put_object(Bucket=bucket, Key=key, Body=data, ContentType="application/json", **extra)
    except Exception as exc:  # noqa: BLE001 - a lost condition is an answer; the rest goes to the plugin
        if extra and _code(exc) in LOST_CONDITION + (MISSING_KEY if if_match else ()):
            return None
        raise
    return str(answer.get("ETag", "")).strip('"')


def delete_key(client: Any, bucket: str, key: str) -> None:
    client.delete_object(Bucket=bucket, Key=key)
