"""Which profile serves a storage address: the launch's own when its cloud serves that kind, else the
first profile of a cloud that does (``s3://`` → AWS, ``https://….blob.core.windows.net`` → Azure,
``oss://`` → Alibaba).  Which bucket receives a local folder: the profile setting ``storage_uri``.

Pure lookups over the accounts (providers are built on first use); any thread.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.models import Profile
from workbench.core.domain.storage_uri import StorageUri, parse_storage_uri
from workbench.core.storage.contract import SupportsObjectStorage

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

#: the profile setting naming where local folders are uploaded before a launch
UPLOAD_SETTING = "storage_uri"
UPLOADS_FOLDER = "workbench-uploads"
CLOUD_OF_KIND = {"s3": "aws", "azure": "azure", "oss": "alibaba"}
KIND_NAMES = {"s3": "S3", "azure": "Azure Blob", "oss": "OSS"}


def _serves(accounts: "Accounts", provider_id: str, kind: str) -> bool:
    entry = accounts.entries.get(provider_id)
    cls = getattr(entry, "cls", None)
    return (cls is not None and isinstance(cls, type) and issubclass(cls, SupportsObjectStorage)
            and kind in cls.storage_kinds)


def storage_profile(accounts: "Accounts", uri: StorageUri, prefer: Profile | None = None) -> Profile:
    """The profile whose credentials reach ``uri`` (NotFoundError naming what to add when none)."""
    if prefer is not None and _serves(accounts, prefer.provider, uri.kind):
        return prefer
    for p in accounts.profiles():
        if _serves(accounts, p.provider, uri.kind):
            return p
    cloud = CLOUD_OF_KIND.get(uri.kind, uri.kind)
    if any(p.provider == cloud for p in accounts.profiles()) and not _serves(accounts, cloud, uri.kind):
        raise NotFoundError(f"{uri}: the {cloud} plugin cannot reach {KIND_NAMES.get(uri.kind, uri.kind)} yet",
                            hint="copy the data to S3 or Azure Blob, or mount a folder of this computer")
    raise NotFoundError(f"{uri} needs a {KIND_NAMES.get(uri.kind, uri.kind)} account, and no {cloud} profile "
                        "can reach it", hint=f"add one with `workbench profiles add {cloud} NAME` (and its credentials)")


def storage_provider(accounts: "Accounts", uri: StorageUri,
                     prefer: Profile | None = None) -> tuple[Profile, SupportsObjectStorage]:
    prof = storage_profile(accounts, uri, prefer)
    prov = accounts.provider(prof)
    assert isinstance(prov, SupportsObjectStorage)
    return prof, prov


def upload_base(profile: Profile) -> StorageUri:
    """The profile's ``storage_uri`` setting, parsed (ConfigError when unset or not a bucket address)."""
    text = (profile.settings or {}).get(UPLOAD_SETTING, "").strip()
    if not text:
        raise ConfigError(f"a storage mount names a folder on this computer, and profile {profile.name!r} has no "
                          f"bucket to upload it to",
                          hint=f"set one: `workbench profiles add {profile.provider} {profile.name} --set "
                               f"{UPLOAD_SETTING}=s3://BUCKET/PREFIX` (Azure: https://ACCOUNT.blob.core.windows.net/"
                               "CONTAINER/PREFIX), or give a bucket address as the mount's source")
    try:
        uri = parse_storage_uri(text)
    except ValueError as exc:
        raise ConfigError(f"profile {profile.name!r}: {UPLOAD_SETTING} {exc}") from None
    if uri.is_local:
        raise ConfigError(f"profile {profile.name!r}: {UPLOAD_SETTING} must be a bucket address, not a folder")
    return uri


def upload_target(base: StorageUri, folder: str | os.PathLike[str]) -> StorageUri:
    """Where ``folder`` goes under ``base``: ``<prefix>/workbench-uploads/<name>-<8 hex of its path>``.

    The same folder always lands in the same place, so a second upload skips what is there.
    """
    path = Path(folder).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip("-.") or "folder"
    digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:8]
    prefix = "/".join(p for p in (base.prefix, UPLOADS_FOLDER, f"{name[:60]}-{digest}") if p)
    return StorageUri(base.kind, bucket=base.bucket, prefix=prefix, account=base.account)
