"""The board: where the app and the account's controller meet (objects in the profile's bucket).

The app and the controller run on different machines with different stores, often not at the same time
(the laptop is closed).  They share one place both can reach with their own credentials: a prefix of the
profile's ``storage_uri`` bucket, ``<storage_uri>/workbench-controller/<install id>/``.  No port is opened on
either side and no key of one is given to the other; the cloud's object store keeps the records while
either side is away, and its conditional writes (S3 ``If-None-Match: *`` / ``If-Match``) make a claim
atomic (:mod:`.claims`).

Keys under the prefix::

    controller.json                 the controller's heartbeat (its launch, version, last poll, what it watches)
    launches/<root id>.json         a launch handed to the controller: spec, attempts, deadlines, budget
    launches/<root id>.tar.gz       the job's workdir (a relaunch uploads it again)
    released/<root id>.json         the app took the launch back
    claims/<root id>/attempt-<n>.json   who relaunches attempt n (see :mod:`.claims`)
    events/<time>-<hex>.json        what happened (relaunched, gave up, guard fired, finished), with costs

Threading: every call blocks on the network; call from a worker.  Failures are workbench errors from the
plugin's store (an unreachable bucket, a refusal).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import Profile
from workbench.core.domain.storage_uri import StorageUri, parse_storage_uri
from workbench.core.storage.contract import SupportsObjectStorage

PREFIX = "workbench-controller"
SETTING = "storage_uri"  # the profile setting naming the bucket the board lives in
#: a folder of this computer instead (rehearsing on Local, where app and controller share one computer; tests)
FOLDER_SETTING = "controller_board"


class Objects(ABC):
    """Small objects under one prefix with conditional writes (a bucket, or a folder in unit tests)."""

    @abstractmethod
    def read(self, key: str) -> tuple[bytes, str] | None: ...

    @abstractmethod
    def write(self, key: str, data: bytes, if_absent: bool = False, if_match: str | None = None) -> str | None: ...

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @abstractmethod
    def keys(self, under: str) -> list[str]: ...

    @abstractmethod
    def where(self) -> str: ...


class BucketObjects(Objects):
    """The board in a bucket, through the profile's storage plugin."""

    def __init__(self, provider: SupportsObjectStorage, uri: StorageUri) -> None:
        self.provider = provider
        self.uri = uri

    def read(self, key: str) -> tuple[bytes, str] | None:
        return self.provider.storage_read(self.uri, key)

    def write(self, key: str, data: bytes, if_absent: bool = False, if_match: str | None = None) -> str | None:
        return self.provider.storage_write(self.uri, key, data, if_absent=if_absent, if_match=if_match)

    def delete(self, key: str) -> None:
        self.provider.storage_delete(self.uri, key)

    def keys(self, under: str) -> list[str]:
        sub = dataclasses.replace(self.uri, prefix=f"{self.uri.prefix}/{under.strip('/')}".strip("/"))
        return sorted(f"{under.strip('/')}/{k}" for k in self.provider.storage_list(sub))

    def where(self) -> str:
        return str(self.uri)


class FolderObjects(Objects):
    """The board in a local folder: unit tests, and two processes on one computer (atomic like a bucket)."""

    _lock = threading.Lock()

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key

    def read(self, key: str) -> tuple[bytes, str] | None:
        try:
            data = self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        return data, hashlib.md5(data).hexdigest()  # noqa: S324 - an ETag, as S3's

    def write(self, key: str, data: bytes, if_absent: bool = False, if_match: str | None = None) -> str | None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        tmp.write_bytes(data)
        lock = path.with_name(f".{path.name}.lock")
        with self._lock:
            while True:  # one writer per key across processes too
                try:
                    os.mkdir(lock)
                    break
                except FileExistsError:
                    time.sleep(0.005)
            try:
                now = self.read(key)
                if (if_absent and now is not None) or (if_match is not None and (now is None or now[1] != if_match)):
                    tmp.unlink()
                    return None
                os.replace(tmp, path)
            finally:
                os.rmdir(lock)
        return hashlib.md5(data).hexdigest()  # noqa: S324

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def keys(self, under: str) -> list[str]:
        base = self._path(under.strip("/"))
        if not base.is_dir():
            return []
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*")
                      if p.is_file() and not p.name.startswith("."))

    def where(self) -> str:
        return str(self.root)


class Board:
    """JSON records on :class:`Objects` (see the module doc for the keys)."""

    def __init__(self, objects: Objects) -> None:
        self.objects = objects

    @classmethod
    def of_profile(cls, accounts: Any, profile: Profile, install_id: str) -> "Board":
        """The board of ``profile``: its ``storage_uri`` bucket, under ``workbench-controller/<install id>/``
        (or the folder its ``controller_board`` setting names)."""
        folder = (profile.settings or {}).get(FOLDER_SETTING)
        if folder:
            return cls(FolderObjects(Path(folder).expanduser() / PREFIX / install_id))
        raw = (profile.settings or {}).get(SETTING)
        if not raw:
            raise ConfigError(f"profile {profile.name!r} has no bucket for the controller's records",
                              hint=f"set the profile's {SETTING} (e.g. s3://my-bucket/workbench): the app and the "
                                   "controller meet there; `workbench profiles set NAME storage_uri=s3://…`")
        uri = parse_storage_uri(raw)
        provider = accounts.provider(profile)
        if not isinstance(provider, SupportsObjectStorage) or uri.kind not in provider.storage_kinds:
            raise ConfigError(f"profile {profile.name!r} cannot reach {raw} for the controller's records",
                              hint="use a bucket of the profile's own cloud")
        prefix = "/".join(p for p in (uri.prefix, PREFIX, install_id) if p)
        return cls(BucketObjects(provider, dataclasses.replace(uri, prefix=prefix)))

    def where(self) -> str:
        return self.objects.where()

    def get(self, key: str) -> tuple[dict[str, Any], str] | None:
        got = self.objects.read(key)
        if got is None:
            return None
        try:
            data = json.loads(got[0].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None  # not ours (or half written by a tool): ignored, never fatal
        return (data, got[1]) if isinstance(data, dict) else None

    def put(self, key: str, record: dict[str, Any], if_absent: bool = False, if_match: str | None = None) -> str | None:
        data = json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")
        return self.objects.write(key, data, if_absent=if_absent, if_match=if_match)

    def put_bytes(self, key: str, data: bytes) -> None:
        self.objects.write(key, data)

    def get_bytes(self, key: str) -> bytes | None:
        got = self.objects.read(key)
        return None if got is None else got[0]

    def delete(self, key: str) -> None:
        self.objects.delete(key)

    def keys(self, under: str) -> list[str]:
        return self.objects.keys(under)

    def records(self, under: str) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for key in self.keys(under):
            if key.endswith(".json"):
                got = self.get(key)
                if got is not None:
                    out.append((key, got[0]))
        return out

    def add_event(self, record: dict[str, Any]) -> str:
        """An event, kept under a key that sorts by time (``events/<ms>-<hex>.json``)."""
        key = f"events/{int(record.get('ts', time.time()) * 1000):015d}-{secrets.token_hex(3)}.json"
        self.put(key, record)
        return key
