"""Azure Blob for the app: check a container, list a prefix, upload a folder, mint a machine's SAS.

The storage account is found through ARM with the profile's own sign-in (``storageAccounts``
of the subscription: its resource group, region and blob endpoint), and its key is read with
``listKeys`` (the role needs ``Microsoft.Storage/storageAccounts/read`` and
``…/listKeys/action``).  On this computer the key signs the data-plane calls (the real
azure-storage-blob SDK); it never leaves this computer and is never stored.  The machine gets
a *service SAS* for the one container instead (Azure cannot scope a SAS to a prefix):
read + list for a ``copy`` mount, plus create/write/add for a ``sync`` one, expiring with
the launch's max runtime.

Small objects for the controller's board (:class:`~workbench.core.storage.contract.SmallObjects`): the board's
address is the profile's ``storage_uri`` (``https://ACCOUNT.blob.core.windows.net/container/prefix``).  A create
is Put Blob with ``If-None-Match: *`` (``MatchConditions.IfMissing``), a replace Put Blob with ``If-Match`` on the
ETag read (``MatchConditions.IfNotModified``); Blob Storage decides both atomically and answers a lost condition
409 BlobAlreadyExists or 412 ConditionNotMet (LeaseIdMissing while someone holds a lease): the write then
answers None.  The same account key signs them.  The controller machine reaches the board the same way: its
identity's storage role (``listKeys`` on the accounts in ``controller_storage_accounts``, see :mod:`.controller`)
must therefore include the board's account; a data-plane role (Storage Blob Data Contributor) would be needed
only if the key path were replaced by Entra ID tokens.

Threading: the SDK clients are thread-safe; account look-ups are cached under a lock.
Failure rules: SDK errors are mapped (ContainerNotFound → NotFoundError, 403 → AuthError,
the rest through :func:`.errors.map_error`); the key never appears in a message.
"""

from __future__ import annotations

import datetime
import logging
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from workbench.core.domain.errors import AuthError, NotFoundError, WorkbenchError
from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage.contract import BucketInfo, MachineRemote, PutFile, RemoteObject, SmallObjects

from .clients import AzureClients

log = logging.getLogger("workbench.azure.storage")

CONCURRENCY = 16
#: Blob Storage's answers to a conditional write that lost (status, or error code): If-None-Match on a blob that
#: exists (409 BlobAlreadyExists), If-Match on a changed one (412 ConditionNotMet), a lease in the way (412)
LOST_STATUS = (412,)
LOST_CODES = ("BlobAlreadyExists", "ConditionNotMet", "LeaseIdMissing", "LeaseIdMismatchWithBlobOperation")
SAS_START_SKEW = datetime.timedelta(minutes=5)  # a machine whose clock runs a little behind


@dataclass(frozen=True)
class _Account:
    name: str
    group: str
    location: str
    blob_endpoint: str
    key: str


def _error_code(exc: BaseException) -> str:
    """The Blob service's error code of an SDK exception ("BlobNotFound"), '' when it has none."""
    code = getattr(exc, "error_code", None)
    return str(getattr(code, "value", code) or "")


class BlobStorage(SmallObjects):
    """Azure Blob on behalf of one Azure profile (see the module doc)."""

    def __init__(self, clients: AzureClients, profile_name: str) -> None:
        self.clients = clients
        self.profile_name = profile_name
        self._accounts: dict[str, _Account] = {}
        self._lock = threading.Lock()

    # -- accounts (ARM) ---------------------------------------------------------------
    def _listed_accounts(self) -> list[Any]:
        try:
            return list(self.clients.storage.storage_accounts.list())
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, "listing storage accounts") from None

    def account(self, name: str) -> _Account:
        with self._lock:
            known = self._accounts.get(name)
        if known is not None:
            return known
        found = next((a for a in self._listed_accounts() if (a.name or "").lower() == name.lower()), None)
        if found is None:
            raise NotFoundError(f"no storage account {name!r} in the subscription of Azure profile "
                                f"{self.profile_name!r}", hint="check the account name in the blob address, or the "
                                                               "profile's subscription_id")
        group = found.id.split("/resourceGroups/")[1].split("/")[0]
        try:
            answer = self.clients.storage.storage_accounts.list_keys(group, found.name)
            keys = [k["value"] for k in answer["keys"] or [] if k.get("value")]  # ``.keys`` is the mapping's method
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.clients.error(exc, f"reading the keys of storage account {name}") from None
        if not keys:
            raise AuthError(f"storage account {name!r} has no access key (shared-key access may be disabled)",
                            hint="allow storage account key access on the account")
        endpoint = getattr(getattr(found, "primary_endpoints", None), "blob", None) or \
            f"https://{found.name}.blob.core.windows.net/"
        acct = _Account(found.name, group, found.location or "", endpoint.rstrip("/"), keys[0])
        with self._lock:
            self._accounts[name] = acct
        return acct

    def _service(self, acct: _Account) -> Any:
        from azure.storage.blob import BlobServiceClient

        kw: dict[str, Any] = {}
        if self.clients.settings.ca_bundle:
            kw["connection_verify"] = self.clients.settings.ca_bundle
        return BlobServiceClient(acct.blob_endpoint, credential={"account_name": acct.name, "account_key": acct.key},
                                 retry_total=3, **kw)

    def _container(self, uri: StorageUri) -> Any:
        return self._service(self.account(uri.account)).get_container_client(uri.bucket)

    def _fail(self, exc: BaseException, what: str, uri: StorageUri) -> WorkbenchError:
        if isinstance(exc, WorkbenchError):
            return exc
        code = str(getattr(exc, "error_code", "") or "")
        status = getattr(exc, "status_code", None)
        if code in ("ContainerNotFound", "ResourceNotFound") or status == 404:
            return NotFoundError(f"the container {uri.bucket!r} does not exist in storage account {uri.account!r}",
                                 hint="create it in the portal (Storage account → Containers) or with `az storage "
                                      "container create`")
        if status == 403 or code.startswith("Authorization"):
            return AuthError(f"storage account {uri.account!r} refused access to container {uri.bucket!r} ({code})",
                             hint="allow shared-key access and this computer's network on the account")
        return self.clients.error(exc, what)

    # -- the contract's storage methods ------------------------------------------------
    def probe(self, uri: StorageUri) -> BucketInfo:
        acct = self.account(uri.account)
        try:
            self._container(uri).get_container_properties()
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"checking container {uri.bucket}", uri) from None
        return BucketInfo(uri, acct.location or None, f"Azure container {acct.name}/{uri.bucket} ({acct.location})")

    def list(self, uri: StorageUri) -> dict[str, RemoteObject]:
        base = f"{uri.prefix}/" if uri.prefix else ""
        out: dict[str, RemoteObject] = {}
        try:
            for blob in self._container(uri).list_blobs(name_starts_with=base or None):
                rel = blob.name[len(base):]
                if rel and not rel.endswith("/"):
                    out[rel] = RemoteObject(int(blob.size or 0), str(blob.etag or "").strip('"'))
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self._fail(exc, f"listing {uri}", uri) from None
        return out

    def put(self, uri: StorageUri, files: Sequence[PutFile], on_done: Callable[[PutFile, str], None],
            on_bytes: Callable[[int], None], should_stop: Callable[[], bool]) -> None:
        if not files:
            return
        container = self._container(uri)

        def one(item: PutFile) -> None:
            if should_stop():
                return
            sent = [0]

            def hook(current: int, total: int | None) -> None:
                on_bytes(current - sent[0])
                sent[0] = current

            name = f"{uri.prefix}/{item.key}" if uri.prefix else item.key
            with open(item.path, "rb") as fh:
                # BlobClient.upload_blob answers the blob's properties (etag); ContainerClient's the client
                answer = container.get_blob_client(name).upload_blob(fh, length=item.size, overwrite=True,
                                                                     max_concurrency=2, progress_hook=hook)
            on_done(item, str(answer.get("etag", "")).strip('"'))

        with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="blob-upload") as pool:
            futures = {pool.submit(one, f): f for f in files}
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for fut in pending:
                fut.cancel()
            for fut in done:
                exc = fut.exception()
                if exc is not None and not should_stop():
                    item = futures[fut]
                    raise self._fail(exc, f"uploading {item.path} to {uri}", uri) from None

    # -- small objects (the controller's board: workbench.core.controller.board) ---------------------
    def _blob(self, uri: StorageUri, key: str) -> Any:
        return self._container(uri).get_blob_client(f"{uri.prefix}/{key}" if uri.prefix else key)

    def read_object(self, uri: StorageUri, key: str) -> tuple[bytes, str] | None:
        try:
            download = self._blob(uri, key).download_blob()
            data = download.readall()
        except Exception as exc:  # noqa: BLE001 - only "no such blob" is an answer; the rest is mapped
            if _error_code(exc) == "BlobNotFound":
                return None
            raise self._fail(exc, f"reading {key} in {uri}", uri) from None
        return data, str(download.properties.etag or "").strip('"')

    def write_object(self, uri: StorageUri, key: str, data: bytes, if_absent: bool = False,
                     if_match: str | None = None) -> str | None:
        from azure.core import MatchConditions
        from azure.storage.blob import ContentSettings

        conditions: dict[str, Any] = {}
        if if_absent:
            conditions["match_condition"] = MatchConditions.IfMissing  # If-None-Match: *
        if if_match is not None:
            conditions.update(etag=f'"{if_match}"', match_condition=MatchConditions.IfNotModified)  # If-Match
        try:
            answer = self._blob(uri, key).upload_blob(
                data, overwrite=True, content_settings=ContentSettings(content_type="application/json"), **conditions)
        except Exception as exc:  # noqa: BLE001 - a lost condition is an answer; the rest is mapped
            code = _error_code(exc)
            if conditions and (getattr(exc, "status_code", None) in LOST_STATUS or code in LOST_CODES
                               or (if_match is not None and code == "BlobNotFound")):
                return None
            raise self._fail(exc, f"writing {key} in {uri}", uri) from None
        return str(answer.get("etag", "")).strip('"')

    def delete_object(self, uri: StorageUri, key: str) -> None:
        try:
            self._blob(uri, key).delete_blob()
        except Exception as exc:  # noqa: BLE001 - a blob already gone is deleted; the rest is mapped
            if _error_code(exc) != "BlobNotFound":
                raise self._fail(exc, f"deleting {key} in {uri}", uri) from None

    def buckets(self) -> list[str]:
        out = []
        for a in self._listed_accounts():
            try:
                acct = self.account(a.name)
                names = [c.name for c in self._service(acct).list_containers()]
            except WorkbenchError as exc:
                log.info("containers of %s not listed: %s", a.name, exc.message)
                continue
            except Exception as exc:  # noqa: BLE001 - one account's trouble must not hide the others
                log.info("containers of %s not listed: %s", a.name, exc)
                continue
            out += [f"https://{acct.name}.blob.core.windows.net/{n}" for n in names]
        return sorted(out)

    def abort_incomplete(self, uri: StorageUri) -> int:
        """Nothing to abort: an interrupted upload_blob leaves only uncommitted blocks, which Azure discards itself."""
        return 0

    def machine_remote(self, uri: StorageUri, write: bool, duration_s: int, label: str) -> MachineRemote:
        from azure.storage.blob import ContainerSasPermissions, generate_container_sas

        acct = self.account(uri.account)
        now = datetime.datetime.now(datetime.timezone.utc)
        expiry = now + datetime.timedelta(seconds=duration_s)
        perms = ContainerSasPermissions(read=True, list=True, write=write, add=write, create=write)
        sas = generate_container_sas(acct.name, uri.bucket, account_key=acct.key, permission=perms, expiry=expiry,
                                     start=now - SAS_START_SKEW)
        options = {"type": "azureblob", "sas_url": f"{acct.blob_endpoint}/{uri.bucket}?{sas}"}
        path = f"{uri.bucket}/{uri.prefix}" if uri.prefix else uri.bucket
        return MachineRemote(options, path, expiry.timestamp(), secret_keys=("sas_url",),
                             notes=("an Azure SAS covers the whole container",))
