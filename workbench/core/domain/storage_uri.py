"""Where a storage mount's data lives: an S3, Azure Blob or OSS address, or a local folder.

Pure parsing and validation (no I/O): the job spec checks sources with it, and the
storage code on both sides (this computer, the machine) reads the parts from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # S3 / OSS bucket names
_CONTAINER = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}")  # Azure container names
_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")  # Azure storage account names
_AZURE_HOST = re.compile(r"([a-z0-9]+)\.blob\.core\.(?:windows\.net|chinacloudapi\.cn)", re.IGNORECASE)
FORMS = ("s3://BUCKET/PREFIX, https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, oss://BUCKET/PREFIX "
         "or a local folder")


@dataclass(frozen=True)
class StorageUri:
    """A parsed storage source; ``kind`` is "s3", "azure", "oss" or "local"."""

    kind: str
    bucket: str = ""  # S3/OSS bucket, Azure container
    prefix: str = ""  # without leading or trailing '/'
    account: str = ""  # Azure storage account
    path: str = ""  # local folder, as given

    @property
    def is_local(self) -> bool:
        return self.kind == "local"

    def __str__(self) -> str:
        if self.kind == "local":
            return self.path
        tail = f"/{self.prefix}" if self.prefix else ""
        if self.kind == "azure":
            return f"https://{self.account}.blob.core.windows.net/{self.bucket}{tail}"
        return f"{self.kind}://{self.bucket}{tail}"


def parse_storage_uri(text: str) -> StorageUri:
    """Parse ``text``; raises ValueError with a message that says what is wrong and what is expected."""
    text = text.strip()
    if not text:
        raise ValueError(f"is empty: give {FORMS}")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return StorageUri("local", path=text)
    scheme = scheme.lower()
    if scheme in ("s3", "oss"):
        bucket, _, prefix = rest.partition("/")
        if not _BUCKET.fullmatch(bucket) or ".." in bucket:
            raise ValueError(f"'{bucket}' is not a valid bucket name (3-63 lower-case letters, digits, '.' or '-')")
        return StorageUri(scheme, bucket=bucket, prefix=_clean(prefix))
    if scheme == "https":
        host, _, path = rest.partition("/")
        m = _AZURE_HOST.fullmatch(host)
        if not m:
            raise ValueError(f"'{host}' is not an Azure Blob address: expected ACCOUNT.blob.core.windows.net")
        account = m.group(1).lower()
        if not _ACCOUNT.fullmatch(account):
            raise ValueError(f"'{account}' is not a valid storage account name (3-24 lower-case letters or digits)")
        container, _, prefix = path.partition("/")
        if not _CONTAINER.fullmatch(container):
            raise ValueError(f"'{container}' is not a valid container name (3-63 lower-case letters, digits, '-')")
        return StorageUri("azure", bucket=container, prefix=_clean(prefix), account=account)
    raise ValueError(f"unknown storage scheme '{scheme}://': give {FORMS}")


def _clean(prefix: str) -> str:
    parts = [p for p in prefix.split("/") if p]
    if ".." in parts or "." in parts:
        raise ValueError(f"the prefix '{prefix}' must not contain '.' or '..' parts")
    return "/".join(parts)
