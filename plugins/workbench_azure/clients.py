"""Sign-in and SDK clients for one Azure profile (credentials and clouds).

:class:`AzureClients` builds the credential (a service principal's
ClientSecretCredential, AzureCliCredential, or on the controller the VM's
ManagedIdentityCredential from IMDS) and the management clients on
first use, with the profile's cloud endpoints, CA bundle, retry policy
(which honours 429 Retry-After), timeouts and LRO polling interval, and
resolves the subscription.

Threading: the SDK clients are safe to share between threads; creating them is
guarded by a lock.  Failure rules: every SDK error leaves through
:func:`.errors.map_error`; a secret never appears in a message.
"""

from __future__ import annotations

import threading
from typing import Any

from workbench.core.domain.errors import AuthError, ConfigError

from . import sdk_models
from .errors import map_error
from .settings import AzureSettings


class AzureClients:
    """Lazily built credential and management clients (see the module doc)."""

    def __init__(self, settings: AzureSettings, secret: str | None) -> None:
        self.settings = settings
        self._secret = secret or None
        self._lock = threading.Lock()
        self._credential: Any = None
        self._clients: dict[str, Any] = {}
        self._subscription: dict[str, str] | None = None

    @property
    def secrets(self) -> list[str]:
        return [self._secret] if self._secret else []

    def error(self, exc: BaseException, what: str):
        return map_error(exc, what, self.secrets)

    # -- credential ---------------------------------------------------------------------
    def credential(self) -> Any:
        with self._lock:
            if self._credential is None:
                self._credential = self._make_credential()
            return self._credential

    def _make_credential(self) -> Any:
        s = self.settings
        if s.auth == "cli":
            from azure.identity import AzureCliCredential

            return AzureCliCredential(tenant_id=s.tenant_id or None, process_timeout=30)
        if s.auth == "managed_identity":
            # the VM's identity from IMDS (169.254.169.254; AZURE_POD_IDENTITY_AUTHORITY_HOST moves it, as the SDK
            # documents): the controller machine's user-assigned identity, never a stored secret
            from azure.identity import ManagedIdentityCredential

            return ManagedIdentityCredential(client_id=s.managed_identity_client_id or None)
        if not self._secret:
            raise AuthError(f"no client secret stored for Azure profile {s.profile_name!r}",
                            hint=f"run `workbench credentials set azure {s.profile_name} --stdin`, or set auth=cli")
        from azure.identity import ClientSecretCredential

        kwargs: dict[str, Any] = {"authority": s.authority_host}
        if s.cloud == "custom":
            kwargs["disable_instance_discovery"] = True  # else MSAL asks the public login host
        if s.ca_bundle:
            kwargs["connection_verify"] = s.ca_bundle
        try:
            return ClientSecretCredential(s.tenant_id, s.client_id, self._secret, **kwargs)
        except ValueError as exc:  # a malformed tenant id, caught by azure-identity before any request
            raise ConfigError(f"Azure profile {s.profile_name!r}: {exc}") from None

    def token(self) -> None:
        """Ask Entra ID for an ARM token now (raises AuthError naming the cause)."""
        try:
            self.credential().get_token(self.settings.scope)
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.error(exc, "signing in") from None

    # -- clients --------------------------------------------------------------------------
    def _kwargs(self) -> dict[str, Any]:
        s = self.settings
        kw: dict[str, Any] = {
            "base_url": s.arm_endpoint, "credential_scopes": [s.scope], "polling_interval": s.polling_interval,
            # retry_status too: azure-core's default of 3 would cap retries of 429/5xx answers below retry_total
            "retry_total": s.retry_total, "retry_status": s.retry_total, "retry_backoff_factor": s.retry_backoff,
            "retry_backoff_max": 60,
            "connection_timeout": s.connect_timeout, "read_timeout": s.read_timeout,
        }
        if s.ca_bundle:
            kw["connection_verify"] = s.ca_bundle
        return kw

    def _client(self, kind: str) -> Any:
        with self._lock:
            client = self._clients.get(kind)
        if client is not None:
            return client
        cred = self.credential()
        if kind == "subscriptions":
            from azure.mgmt.resource.subscriptions import SubscriptionClient

            client = SubscriptionClient(cred, **self._kwargs())
        else:
            sub = self.subscription_id()
            if kind == "compute":
                from azure.mgmt.compute import ComputeManagementClient as cls
            elif kind == "network":
                from azure.mgmt.network import NetworkManagementClient as cls
            elif kind == "storage":
                from azure.mgmt.storage import StorageManagementClient as cls
            else:
                from azure.mgmt.resource.resources import ResourceManagementClient as cls
            client = cls(cred, sub, **self._kwargs())
        sdk_models.guard(type(client).__module__.rsplit("._", 1)[0])  # its package, e.g. azure.mgmt.compute
        with self._lock:
            return self._clients.setdefault(kind, client)

    def close(self) -> None:
        """Close the clients' HTTP sessions (they are rebuilt on next use)."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
            cred, self._credential = self._credential, None
        for c in clients:
            c.close()
        if cred is not None and hasattr(cred, "close"):
            cred.close()

    @property
    def compute(self) -> Any:
        return self._client("compute")

    @property
    def network(self) -> Any:
        return self._client("network")

    @property
    def resources(self) -> Any:
        return self._client("resources")

    @property
    def storage(self) -> Any:
        return self._client("storage")

    @property
    def subscriptions(self) -> Any:
        return self._client("subscriptions")

    # -- subscription -----------------------------------------------------------------------
    def list_subscriptions(self) -> list[dict[str, str]]:
        try:
            return [{"id": s.subscription_id, "name": s.display_name or "", "state": str(s.state or ""),
                     "tenant": s.tenant_id or ""} for s in self.subscriptions.subscriptions.list()]
        except Exception as exc:  # noqa: BLE001 - mapped
            raise self.error(exc, "listing subscriptions") from None

    def subscription(self) -> dict[str, str]:
        """The profile's subscription as the identity sees it (AuthError when it cannot see it)."""
        with self._lock:
            if self._subscription is not None:
                return self._subscription
        seen = self.list_subscriptions()
        wanted = self.settings.subscription_id
        name = self.settings.profile_name
        if not seen:
            raise AuthError("the identity signed in but has no role on any subscription",
                            hint="assign it the workbench role (resources/policies/azure-custom-role.json) on a "
                                 "subscription")
        if wanted:
            found = next((s for s in seen if s["id"].lower() == wanted.lower()), None)
            if found is None:
                raise AuthError(f"the identity has no role on subscription {wanted}",
                                hint="assign it a role there, or set subscription_id to one of: "
                                     + ", ".join(f"{s['id']} ({s['name']})" for s in seen))
        elif len(seen) == 1:
            found = seen[0]
        else:
            raise ConfigError(f"Azure profile {name!r}: the identity sees {len(seen)} subscriptions; choose one",
                              hint="set subscription_id to one of: "
                                   + ", ".join(f"{s['id']} ({s['name']})" for s in seen))
        with self._lock:
            self._subscription = found
        return found

    def subscription_id(self) -> str:
        return self.settings.subscription_id or self.subscription()["id"]
