"""What a cloud plugin implements to serve object storage (S3, Azure Blob, OSS) to the app.

A provider class that also derives from :class:`SupportsObjectStorage` serves the storage
kinds it names (``"s3"``, ``"azure"``, ``"oss"``) with the credentials of its profile.  The
app uses it on this computer (check a bucket before launch, list what is there, upload a
local folder) and to mint the *machine's* credentials: short-lived, scoped to one mount's
bucket and prefix, never the user's own keys (AWS: STS session credentials under a policy;
Azure: an expiring container SAS; OSS: an STS token).  Data on the machine moves with
rclone; the plugin only says how rclone reaches the bucket (:class:`MachineRemote`).

Threading: like the Provider contract (reads from any thread, blocking on the network).
Failure rules: only workbench errors escape; a missing bucket or container is
NotFoundError, refused access AuthError, throttling and 5xx TransientError, each naming the
bucket and what to do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterable, Mapping, Protocol, Sequence

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.storage_uri import StorageUri


@dataclass(frozen=True)
class BucketInfo:
    """A bucket (or Azure container) that exists and answers: where it lives."""

    uri: StorageUri
    region: str | None  # e.g. "us-east-1", "eastus"; None when the service does not say
    display: str = ""  # e.g. "S3 bucket data-lab (us-east-1)"


@dataclass(frozen=True)
class RemoteObject:
    """One object under a prefix: its size and the service's checksum tag (S3 ETag, Azure ETag)."""

    size: int
    etag: str


@dataclass(frozen=True)
class PutFile:
    """One file to upload: ``key`` is relative to the destination prefix, '/'-separated."""

    path: str
    key: str
    size: int


@dataclass(frozen=True)
class MachineRemote:
    """How rclone on the machine reaches one mount: a remote definition and the path within it.

    ``options`` are rclone config keys (``type``, ``provider``, ``access_key_id`` …) and hold
    the short-lived credentials: they travel to the machine only as environment variables or
    a 0600 file there, never into the app's store or logs.  ``path`` follows the remote name:
    ``bucket/prefix`` (S3, OSS) or ``container/prefix`` (Azure).
    """

    options: Mapping[str, str]
    path: str
    expires_at: float | None = None
    secret_keys: tuple[str, ...] = ()  # which option names are secrets (scrubbed from any display)
    notes: tuple[str, ...] = field(default_factory=tuple)


class SupportsObjectStorage(ABC):
    """Capability of a provider: serve ``storage_kinds`` buckets with this profile's credentials."""

    storage_kinds: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def storage_probe(self, uri: StorageUri) -> BucketInfo:
        """Check that the bucket exists and these credentials may use it (no object is read)."""

    @abstractmethod
    def storage_list(self, uri: StorageUri) -> dict[str, RemoteObject]:
        """Every object under the URI's prefix, keyed relative to it ('' prefix: the whole bucket)."""

    @abstractmethod
    def storage_put(self, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
                    on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> None:
        """Upload ``files`` under the URI's prefix, in parallel.

        ``on_done(file, etag)`` after each file is stored; ``on_bytes(n)`` as bytes go out (any
        thread).  Returns early, without error, when ``should_stop()`` turns true (files in
        flight are abandoned: the next upload sends them again).  A file that fails raises.
        """

    @abstractmethod
    def storage_buckets(self) -> list[str]:
        """The buckets (containers) these credentials can see, as URIs, for a picker."""

    @abstractmethod
    def storage_machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote:
        """Mint credentials for a machine: read (``write`` False) or read + write under the URI's prefix only.

        ``label`` names the session where the cloud records one (e.g. the launch id).
        """

    def storage_abort_incomplete(self, uri: StorageUri) -> int:
        """Drop unfinished multipart uploads under the prefix (they bill storage); how many went."""
        return 0

    # Small objects with conditional writes (the controller's board).  A store without them refuses.
    def storage_read(self, uri: StorageUri, key: str) -> tuple[bytes, str] | None:
        """(content, ETag) of the object ``key`` under the prefix; None when there is none."""
        raise ConfigError(f"{uri} cannot hold the controller's records (no small-object support here)")

    def storage_write(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                      if_match: str | None = None) -> str | None:
        """Write ``key``: the new ETag, or None when ``if_absent`` / ``if_match`` lost (atomic in the service)."""
        raise ConfigError(f"{uri} cannot hold the controller's records (no small-object support here)")

    def storage_delete(self, uri: StorageUri, key: str) -> None:
        raise ConfigError(f"{uri} cannot hold the controller's records (no small-object support here)")


class ObjectStore(Protocol):
    """A plugin's storage object for one profile: the contract's storage methods without ``storage_``."""

    def probe(self, uri: StorageUri) -> BucketInfo: ...

    def list(self, uri: StorageUri) -> dict[str, RemoteObject]: ...

    def put(self, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
            on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> None: ...

    def buckets(self) -> list[str]: ...

    def machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote: ...

    def abort_incomplete(self, uri: StorageUri) -> int: ...


class SmallObjects(ABC):
    """A store that also reads and writes small objects with conditional writes (S3 ``If-None-Match`` /
    ``If-Match``): what the controller's board (:mod:`workbench.core.controller.board`) needs."""

    @abstractmethod
    def read_object(self, uri: StorageUri, key: str) -> tuple[bytes, str] | None: ...

    @abstractmethod
    def write_object(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                     if_match: str | None = None) -> str | None: ...

    @abstractmethod
    def delete_object(self, uri: StorageUri, key: str) -> None: ...


class ServesObjectStorage(SupportsObjectStorage):
    """:class:`SupportsObjectStorage` for a provider whose storage is one :class:`ObjectStore`.

    The provider names its ``storage_kinds`` and ``storage_addresses`` (how its addresses look, for the
    refusal: ``"s3://"``) and gives the store (``_object_store()``, made on first use); each
    ``storage_*`` method refuses an address of another kind (ConfigError) and hands the rest to it.
    """

    storage_addresses: ClassVar[str] = ""
    display_name: ClassVar[str]  # the Provider's

    @abstractmethod
    def _object_store(self) -> ObjectStore:
        """The profile's store (the same object every call)."""

    def _served(self, uri: StorageUri) -> ObjectStore:
        if uri.kind not in self.storage_kinds:
            raise ConfigError(f"the {self.display_name} plugin serves {self.storage_addresses} addresses, not {uri}")
        return self._object_store()

    def storage_probe(self, uri: StorageUri) -> BucketInfo:
        return self._served(uri).probe(uri)

    def storage_list(self, uri: StorageUri) -> dict[str, RemoteObject]:
        return self._served(uri).list(uri)

    def storage_put(self, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
                    on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> None:
        self._served(uri).put(uri, files, on_done, on_bytes, should_stop)

    def storage_buckets(self) -> list[str]:
        return self._object_store().buckets()

    def storage_machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote:
        return self._served(uri).machine_remote(uri, write, duration_s, label)

    def storage_abort_incomplete(self, uri: StorageUri) -> int:
        return self._served(uri).abort_incomplete(uri)

    def _small(self, uri: StorageUri) -> SmallObjects:
        store = self._served(uri)
        if not isinstance(store, SmallObjects):
            raise ConfigError(f"{uri} cannot hold the controller's records (no small-object support here)")
        return store

    def storage_read(self, uri: StorageUri, key: str) -> tuple[bytes, str] | None:
        return self._small(uri).read_object(uri, key)

    def storage_write(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                      if_match: str | None = None) -> str | None:
        return self._small(uri).write_object(uri, key, data, if_absent=if_absent, if_match=if_match)

    def storage_delete(self, uri: StorageUri, key: str) -> None:
        self._small(uri).delete_object(uri, key)


def objects_size(objects: Iterable[RemoteObject]) -> int:
    return sum(o.size for o in objects)
