"""S3 conditional writes as atomic as S3's, in front of moto (which checks them but not atomically).

moto 5.2 checks ``If-None-Match: *`` and ``If-Match`` on PutObject (and CompleteMultipartUpload) by looking the
key up and then storing the object: two requests answered on two server threads can both pass the look-up,
and both "win" a create-if-absent.  S3 decides a conditional write atomically: of racing writers one stores,
the others get 412 PreconditionFailed, or 409 ConditionalRequestConflict while another write to the key is in
flight ("Add preconditions to S3 operations with conditional requests", PutObject reference: "If a conflicting
operation occurs during the upload S3 returns a 409 ConditionalRequestConflict response").

:class:`ObjectWrites` makes moto's check-then-store one step: every request that writes or deletes one object
(PutObject, CopyObject, DeleteObject, CompleteMultipartUpload; not the parts of a multipart upload, which do not
touch the key) holds a lock of that object (bucket, key) while moto answers it, so a conditional write sees
every earlier write to its key done and no later one started.  Unconditional writes take the lock too (S3
orders them against the conditional ones the same way).  ``conflict = True`` answers 409
ConditionalRequestConflict to a conditional write that finds the key busy instead of waiting (S3 may do
either).  ``enabled = False`` restores moto's own behaviour (a test shows the race it loses).

``oss = True`` makes PutObject answer as OSS's does (moto stands in for OSS in the Alibaba tests): OSS refuses
the conditional headers on PutObject (400 NotImplemented, OSS error 0017-00000245: "The PutObject operation does
not allow you to specify a condition parameter") and offers ``x-oss-forbid-overwrite: true`` instead (409
FileAlreadyExists when the key exists, OSS error 0026-00000201), which moto ignores; both are decided here,
under the key's lock.

Always on: nothing S3 allows is refused, writes to one key only wait for each other.  The audit table:
tests/support/README.md ("S3: conditional writes").  Thread-safe.
"""

from __future__ import annotations

import threading
import urllib.parse
import uuid
from typing import Any, Callable, Iterable

CONFLICT = ("ConditionalRequestConflict",
            "A conflicting conditional operation is currently in progress against this resource. Please try again.")


NOT_IMPLEMENTED = ("NotImplemented", "A header you provided implies functionality that is not implemented.")
FILE_EXISTS = ("FileAlreadyExists", "The object you specified already exists and can not be overwritten.")
_REASONS = {400: "Bad Request", 409: "Conflict"}


def _error(code: str, message: str, status: int) -> tuple[str, list[tuple[str, str]], bytes]:
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            f"<RequestId>{uuid.uuid4()}</RequestId></Error>").encode()
    return f"{status} {_REASONS[status]}", [("Content-Type", "application/xml"),
                                            ("Content-Length", str(len(body)))], body


def _exists(bucket: str, key: str) -> bool:
    """Whether moto holds ``key`` in ``bucket`` (whichever account made the bucket)."""
    from moto.s3.models import s3_backends

    where = s3_backends.bucket_accounts.get(bucket)
    if where is None:
        return False
    partition, account = where
    return s3_backends[account][partition].get_object(bucket, key) is not None


class ObjectWrites:
    """Per-object serialization of S3 object writes (see the module doc)."""

    def __init__(self) -> None:
        self.enabled = True
        self.conflict = False
        self.conflicts = 0  # how many 409 answers were given
        self.oss = False
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def clear(self) -> None:
        self.enabled = True
        self.conflict = False
        self.conflicts = 0
        self.oss = False

    @staticmethod
    def object_of(environ: dict[str, Any]) -> tuple[str, str] | None:
        """(bucket, key) of a request that writes or deletes one object; None for any other request."""
        method = environ.get("REQUEST_METHOD", "")
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if method in ("PUT", "DELETE"):
            if "partNumber" in query or "uploadId" in query or set(query) & {"tagging", "acl", "retention",
                                                                              "legal-hold"}:
                return None
        elif not (method == "POST" and "uploadId" in query):  # CompleteMultipartUpload
            return None
        host = environ.get("HTTP_HOST", "").split(":")[0]
        path = environ.get("PATH_INFO", "").lstrip("/")
        label = host.split(".")[0]
        if "." in host and not host.replace(".", "").isdigit() and label not in ("s3", "localhost"):
            return (label, path) if path else None  # virtual-hosted: the bucket is the host's first label
        bucket, _, key = path.partition("/")
        return (bucket, key) if bucket and key else None

    @staticmethod
    def conditional(environ: dict[str, Any]) -> bool:
        return bool(environ.get("HTTP_IF_NONE_MATCH") or environ.get("HTTP_IF_MATCH"))

    @staticmethod
    def _as_oss(environ: dict[str, Any], obj: tuple[str, str]) -> tuple[str, list[tuple[str, str]], bytes] | None:
        """OSS's answer to a PutObject moto would answer otherwise (see the module doc); None: moto's answer."""
        if environ.get("REQUEST_METHOD") != "PUT" or environ.get("HTTP_X_AMZ_COPY_SOURCE"):
            return None
        if ObjectWrites.conditional(environ):
            return _error(*NOT_IMPLEMENTED, 400)
        if environ.get("HTTP_X_OSS_FORBID_OVERWRITE", "").lower() == "true" and _exists(*obj):
            return _error(*FILE_EXISTS, 409)
        return None

    def _lock(self, obj: tuple[str, str]) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(obj, threading.Lock())

    def serve(self, environ: dict[str, Any], app: Callable, start_response: Callable) -> Iterable[bytes]:
        """moto's answer to the request, under the object's lock when it writes one object."""
        obj = self.object_of(environ) if self.enabled else None
        if obj is None:
            return app(environ, start_response)
        lock = self._lock(obj)
        if self.conflict and self.conditional(environ):
            if not lock.acquire(blocking=False):
                with self._guard:
                    self.conflicts += 1
                status, headers, body = _error(*CONFLICT, 409)
                start_response(status, headers)
                return [body]
        else:
            lock.acquire()
        try:  # the whole answer inside the lock: moto stores the object while it makes the answer
            refused = self._as_oss(environ, obj) if self.oss else None
            if refused is not None:
                start_response(refused[0], refused[1])
                return [refused[2]]
            head: list[tuple[str, list[tuple[str, str]]]] = []
            data = b"".join(app(environ, lambda status, headers, exc_info=None: head.append((status, headers))))
        finally:
            lock.release()
        start_response(head[0][0], head[0][1])
        return [data]
