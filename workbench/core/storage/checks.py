"""Before a launch bills anything: every storage mount checked, local folders uploaded, costs named.

:func:`check_storage` asks each mount's bucket (exists? may these credentials use it? which
region?), sizes what ``copy`` mounts will bring to the machine and compares it with the disk,
and warns when data crosses regions or clouds (transfer is billed by the storage's cloud).  Each
problem is a clear error naming the mount: nothing was launched, so nothing bills.
:func:`upload_sources` then sends every local-folder source to the launch profile's bucket
(``storage_uri`` setting, see :mod:`.resolve`) and returns the spec with bucket addresses in
their place, which is what the launch stores (a relaunch never uploads again).

The Local provider is this computer: a local folder is copied straight from where it is, and
mount paths must be relative (they live in the job's folder, not in this computer's /).

Threading: blocking on the network; a worker thread.
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import JobSpec, Offer, Profile, StorageMode, StorageMount
from workbench.core.domain.storage_uri import StorageUri, parse_storage_uri
from workbench.core.storage.contract import objects_size
from workbench.core.storage.resolve import CLOUD_OF_KIND, storage_provider, upload_base, upload_target
from workbench.core.storage.upload import UploadProgress, UploadReport, folder_size, upload_folder

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

#: what the image, drivers and toolkits take of a cloud machine's disk before any data arrives
SYSTEM_RESERVE_GB = 30
#: list prices of moving data, USD per GB (public price lists, 2026): between regions of one cloud,
#: and out of a cloud to the internet or another cloud (first tier)
INTER_REGION_USD_GB = 0.02
EGRESS_USD_GB = 0.09
GB = 1e9


@dataclass(frozen=True)
class MountCheck:
    """One mount as checked: where its data is and how much a ``copy`` brings along."""

    index: int
    mount: StorageMount
    uri: str  # the bucket address (a local folder's upload target on a cloud)
    profile: str  # whose credentials reach it ('' for a folder on this computer)
    region: str | None
    bytes: int | None  # copy mounts: what the machine receives; sync mounts: None (grows with the job)
    objects: int | None
    upload_from: str | None = None  # a local folder that goes to ``uri`` first

    def to_json(self) -> dict[str, object]:
        return {"path": self.mount.path, "mode": self.mount.mode.value, "source": self.mount.source, "uri": self.uri,
                "profile": self.profile, "region": self.region, "bytes": self.bytes, "objects": self.objects,
                "upload_from": self.upload_from}


@dataclass(frozen=True)
class StoragePlan:
    mounts: tuple[MountCheck, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def copy_bytes(self) -> int:
        return sum(m.bytes or 0 for m in self.mounts if m.mount.mode is StorageMode.COPY)

    @property
    def uploads(self) -> tuple[MountCheck, ...]:
        return tuple(m for m in self.mounts if m.upload_from)

    def to_json(self) -> dict[str, object]:
        return {"mounts": [m.to_json() for m in self.mounts], "warnings": list(self.warnings),
                "copy_bytes": self.copy_bytes}


def _gb(n: float) -> str:
    return f"{n / GB:,.1f} GB" if n >= GB else f"{n / 1e6:,.1f} MB"


def _context(i: int, uri: object, exc: WorkbenchError) -> WorkbenchError:
    return type(exc)(f"storage[{i}] ({uri}): {exc.message}", exc.hint)


def check_storage(accounts: "Accounts", spec: JobSpec, profile: Profile, offer: Offer) -> StoragePlan:
    """Check every mount of ``spec`` for a launch on ``offer`` (raises the first problem, naming the mount)."""
    if not spec.storage:
        return StoragePlan()
    local = profile.provider == "local"
    mounts: list[MountCheck] = []
    warnings: list[str] = []
    for i, m in enumerate(spec.storage):
        if local and Path(m.path).is_absolute():
            raise ConfigError(f"storage[{i}].path {m.path!r}: on this computer a mount lives in the job's folder",
                              hint=f"give a relative path (e.g. {m.path.strip('/').split('/')[-1] or 'data'!r}); "
                                   "it works on cloud machines too")
        uri = parse_storage_uri(m.source)
        if uri.is_local:
            files, size = folder_size(m.source)
            if local:
                mounts.append(MountCheck(i, m, m.source, "", None, size if m.mode is StorageMode.COPY else None,
                                         files))
                continue
            try:
                target = upload_target(upload_base(profile), m.source)
                prof, prov = storage_provider(accounts, target, profile)
                info = prov.storage_probe(target)
            except WorkbenchError as exc:
                raise _context(i, m.source, exc) from None
            mounts.append(MountCheck(i, m, str(target), prof.name, info.region,
                                     size if m.mode is StorageMode.COPY else None, files, upload_from=m.source))
        else:
            try:
                prof, prov = storage_provider(accounts, uri, profile)
                info = prov.storage_probe(uri)
                listed = prov.storage_list(uri) if m.mode is StorageMode.COPY else None
            except WorkbenchError as exc:
                raise _context(i, uri, exc) from None
            if listed is not None and not listed:
                raise ConfigError(f"storage[{i}] ({uri}): there is nothing under this address to copy",
                                  hint="check the prefix; a mount that starts empty and fills up is mode: sync")
            mounts.append(MountCheck(i, m, str(uri), prof.name, info.region,
                                     objects_size(listed.values()) if listed is not None else None,
                                     len(listed) if listed is not None else None))
        warnings += _transfer_warnings(mounts[-1], uri if not uri.is_local else parse_storage_uri(mounts[-1].uri),
                                       offer)
    plan = StoragePlan(tuple(mounts), tuple(warnings))
    _check_disk(plan, spec, local)
    return plan


def _transfer_warnings(mc: MountCheck, uri: StorageUri, offer: Offer) -> list[str]:
    if uri.is_local:
        return []
    cloud = CLOUD_OF_KIND.get(uri.kind, uri.kind)
    size = f" ({_gb(mc.bytes)}, about USD {{cost:,.2f}} each time it is copied)" if mc.bytes else ""
    where = f"{uri} is in {mc.region or 'an unknown region'}"
    if offer.provider == "local":
        rate, what = EGRESS_USD_GB, "this computer: the storage's cloud bills data leaving it"
    elif offer.provider != cloud:
        rate, what = EGRESS_USD_GB, f"a {offer.provider} machine: {cloud} bills data leaving it for another cloud"
    elif mc.region and offer.region and mc.region != offer.region:
        rate, what = INTER_REGION_USD_GB, f"the machine in {offer.region}: data between regions is billed"
    else:
        return []
    cost = (mc.bytes or 0) / GB * rate
    return [f"storage[{mc.index}]: {where}, {what} (about USD {rate:g}/GB){size.format(cost=cost)}"]


def _check_disk(plan: StoragePlan, spec: JobSpec, local: bool) -> None:
    need = plan.copy_bytes
    if not need:
        return
    if local:
        free = shutil.disk_usage(paths.data_dir()).free
        if need > free:
            raise ConfigError(f"the copy mounts hold {_gb(need)}, and this computer's disk has {_gb(free)} free",
                              hint="free some space, or copy a smaller part of the dataset")
        return
    disk = spec.resources.disk_gb * GB
    usable = max(disk * 0.1, disk - SYSTEM_RESERVE_GB * GB)
    if need > usable:
        raise ConfigError(f"the copy mounts hold {_gb(need)}, more than the machine's {spec.resources.disk_gb} GB disk "
                          f"can take (about {_gb(usable)} after the system's {SYSTEM_RESERVE_GB} GB)",
                          hint=f"raise resources.disk_gb to at least {int((need / GB) + SYSTEM_RESERVE_GB) + 10}, "
                               "or copy a smaller part of the dataset")


def upload_sources(accounts: "Accounts", spec: JobSpec, plan: StoragePlan,
                   progress: Callable[[int, UploadProgress], None] | None = None,
                   should_stop: Callable[[], bool] = lambda: False) -> tuple[JobSpec, list[UploadReport]]:
    """Upload each local-folder source to its bucket; the spec with bucket addresses in their place.

    ``progress(mount index, UploadProgress)``.  A cancelled upload raises ConfigError ("cancelled:
    nothing was launched"); what was sent stays and is skipped next time.
    """
    if not plan.uploads:
        return spec, []
    mounts = list(spec.storage)
    reports = []
    records = paths.data_dir() / "storage" / "uploads"
    for mc in plan.uploads:
        uri = parse_storage_uri(mc.uri)
        _, prov = storage_provider(accounts, uri, accounts.profile(mc.profile))
        try:
            report = upload_folder(prov, mc.upload_from or "", uri, records,
                                   (lambda p, i=mc.index: progress(i, p)) if progress else None, should_stop)
        except WorkbenchError as exc:
            raise type(exc)(f"uploading storage[{mc.index}] ({mc.upload_from} → {uri}): {exc.message}",
                            exc.hint or "run the launch again: files already sent are skipped") from None
        if report.cancelled:
            raise ConfigError(f"the upload of {mc.upload_from} was cancelled: nothing was launched",
                              hint="launch again to resume; files already sent are skipped")
        reports.append(report)
        mounts[mc.index] = dataclasses.replace(mounts[mc.index], source=mc.uri)
    return dataclasses.replace(spec, storage=tuple(mounts)), reports
