"""The Azure profile's settings, parsed and checked once (plain Python, no SDK).

A :class:`~workbench.core.domain.models.Profile` carries strings only.  Keys read from
``Profile.settings`` (``tenant_id`` and ``client_id`` may also come from the
credential form; the client secret only ever comes from the keyring):

``tenant_id`` ``client_id``   the service principal (app registration)
``auth``                "secret" (default: ClientSecretCredential), "cli" (the user's ``az login``) or
                        "managed_identity" (the VM's own identity through IMDS: the controller, issue 33; chosen by
                        itself on a machine-identity Accounts with no client secret)
``managed_identity_client_id``   which user-assigned identity of the VM (default: its only one); may come with
                        ``subscription_id`` and ``tenant_id`` from the controller's identity fields
``cloud``               "public" (default), "china" (21Vianet) or "custom"
``arm_endpoint`` ``authority_host``   required for cloud=custom (sovereign clouds, tests)
``arm_audience``        token audience (default: the ARM endpoint)
``ca_bundle``           a PEM file of extra trusted roots (TLS-inspecting proxies, tests)
``portal_url``          the portal for console links (default per cloud)
``subscription_id``     default: the only subscription the identity sees
``regions``             comma list; default: the profile's region, else the cloud's default
``ssh_cidr``            who may reach SSH (the NSG rule); default: this computer's public address /32
``checkip_url``         where that address is asked; ``allow_ssh_from_anywhere=true`` permits 0.0.0.0/0
``ssh_user``            admin user on the VM (default "azureuser")
``ssh_address``         "[USER@]HOST[:PORT]": reach the VMs there (port forward, bastion); default "public"
``image``               marketplace image "publisher:offer:sku:version" (default: Ubuntu HPC 22.04 with
                        NVIDIA drivers, CUDA and InfiniBand)
``zones``               "none" (default: regional), "auto" (each zone the size has) or e.g. "1,2"
``encryption_at_host``  "auto" (default: where the size allows), "on", "off"
``auto_shutdown``       "auto" (default: the max-runtime deadline when under 24 h), "off" or "HHMM" UTC
``guard_role_id``       role definition GUID given to the VM's identity on its group (default: Contributor)
``controller_storage_accounts``   comma list of storage account resource ids the controller (issue 33) may read
                        the keys of, for the SAS of the storage mounts of the jobs it relaunches (:mod:`.controller`)
``pricing``             "auto" (live, snapshot on failure), "live" or "snapshot"
``prices_url``          Retail Prices API (default: prices.azure.com for public; none for china)
``currency``            the Retail Prices ``currencyCode`` (default USD; e.g. CNY)
``retry_total`` ``retry_backoff`` ``polling_interval`` ``connect_timeout`` ``read_timeout``
``launch_timeout_s`` ``terminate_timeout_s`` ``cache_ttl_s``

Failure rules: a bad value raises ConfigError naming the key and the profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from workbench.core.domain.errors import ConfigError
from workbench.core.providers.profile_settings import PRICING_MODES, region_list, ssh_address, ssh_cidr
from workbench.core.providers.profile_settings import choice as _choice
from workbench.core.providers.profile_settings import flag as _flag
from workbench.core.providers.profile_settings import number as _number
from workbench.core.domain.models import Profile

#: Contributor, the built-in role; scoped to the launch's own group it lets the VM delete that group
CONTRIBUTOR_ROLE = "b24988ac-6180-42a0-ab88-20f7382dd24c"
DEFAULT_IMAGE = "microsoft-dsvm:ubuntu-hpc:2204:latest"
CHECKIP_URL = "https://api.ipify.org"


@dataclass(frozen=True)
class Cloud:
    name: str
    arm_endpoint: str
    authority_host: str
    portal_url: str
    prices_url: str | None
    default_region: str


CLOUDS = {
    "public": Cloud("public", "https://management.azure.com", "login.microsoftonline.com", "https://portal.azure.com",
                    "https://prices.azure.com/api/retail/prices", "eastus"),
    # Azure operated by 21Vianet: its own ARM, login and portal hosts; the global Retail Prices
    # API does not price it, so offers there come from the snapshot unless prices_url is set
    "china": Cloud("china", "https://management.chinacloudapi.cn", "login.chinacloudapi.cn", "https://portal.azure.cn",
                   None, "chinanorth3"),
}
_REGION = re.compile(r"^[a-z][a-z0-9]{2,30}$")
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_TENANT = re.compile(r"^[A-Za-z0-9.-]{1,100}$")


@dataclass(frozen=True)
class AzureSettings:
    """Everything the plugin reads from one profile (see the module doc for the keys)."""

    profile_name: str
    tenant_id: str = ""
    client_id: str = ""
    auth: str = "secret"
    managed_identity_client_id: str = ""
    cloud: str = "public"
    arm_endpoint: str = CLOUDS["public"].arm_endpoint
    authority_host: str = CLOUDS["public"].authority_host
    arm_audience: str = CLOUDS["public"].arm_endpoint
    ca_bundle: str | None = None
    portal_url: str = CLOUDS["public"].portal_url
    subscription_id: str | None = None
    regions: tuple[str, ...] = ("eastus",)
    ssh_cidr: str | None = None
    checkip_url: str = CHECKIP_URL
    allow_ssh_from_anywhere: bool = False
    ssh_user: str = "azureuser"
    ssh_address: tuple[str, int, str | None] | None = None
    image: tuple[str, str, str, str] = tuple(DEFAULT_IMAGE.split(":"))  # type: ignore[assignment]
    zones: str = "none"  # "none" | "auto" | "1,2,…"
    encryption_at_host: str = "auto"
    auto_shutdown: str = "auto"
    guard_role_id: str = CONTRIBUTOR_ROLE
    controller_storage_accounts: tuple[str, ...] = ()
    pricing: str = "auto"
    prices_url: str | None = CLOUDS["public"].prices_url
    currency: str = "USD"
    retry_total: int = 5
    retry_backoff: float = 0.8
    polling_interval: float = 5.0
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    launch_timeout_s: float = 1800.0
    terminate_timeout_s: float = 1800.0
    cache_ttl_s: float = 3600.0

    @property
    def scope(self) -> str:
        return self.arm_audience.rstrip("/") + "/.default"

    def zone_choices(self, offered: tuple[str, ...]) -> list[str | None]:
        """Zones to try in order for a size that has ``offered`` zones; [None] means regional."""
        if self.zones == "none" or not offered:
            return [None]
        if self.zones == "auto":
            return list(offered)
        wanted = [z.strip() for z in self.zones.split(",") if z.strip()]
        return [z for z in wanted if z in offered] or [None]




_ACCOUNT = re.compile(r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[^/]+/providers/Microsoft\.Storage/"
                      r"storageAccounts/[a-z0-9]{3,24}$", re.IGNORECASE)


def storage_account_ids(raw: str | Sequence[str] | None) -> tuple[str, ...]:
    """Storage account resource ids from a comma list or a sequence, each once (ConfigError naming a bad one)."""
    items = [x.strip() for x in (raw.split(",") if isinstance(raw, str) else list(raw or [])) if x and x.strip()]
    for x in items:
        if not _ACCOUNT.match(x):
            raise ConfigError(f"not a storage account id: {x!r}", hint="give /subscriptions/<id>/resourceGroups/<g>/"
                              "providers/Microsoft.Storage/storageAccounts/<name> (the account's Properties → "
                              "Resource ID)")
    return tuple(dict.fromkeys(items))


def _url(profile: str, key: str, raw: str) -> str:
    value = raw.strip().rstrip("/")
    if not value.startswith("https://"):
        raise ConfigError(f"profile {profile!r}: {key} must be an https:// address, not {raw!r}",
                          hint="Azure Resource Manager and Entra ID speak HTTPS only")
    return value


def parse(profile: Profile, credentials: Mapping[str, str] | None = None,
          machine_identity: bool = False) -> AzureSettings:
    """Check every key once; raise ConfigError naming the first bad one.

    ``machine_identity`` (the controller): with no client secret, the VM's managed identity signs in, whatever the
    profile's ``auth`` said on the user's computer (no ``az login`` and no secret exist on that machine)."""
    s = dict(profile.settings)
    creds = credentials or {}
    name = profile.name
    auth = _choice(name, "auth", s.get("auth"), ("secret", "cli", "managed_identity"))
    if machine_identity and not creds.get("client_secret"):
        auth = "managed_identity"
    mi_client = (creds.get("managed_identity_client_id") or s.get("managed_identity_client_id") or "").strip()
    if mi_client and not _GUID.match(mi_client):
        raise ConfigError(f"profile {name!r}: managed_identity_client_id must be a GUID, not {mi_client!r}")
    cloud_name = _choice(name, "cloud", s.get("cloud"), ("public", "china", "custom"))
    tenant = (s.get("tenant_id") or creds.get("tenant_id") or "").strip()
    client = (s.get("client_id") or creds.get("client_id") or "").strip()
    if tenant and not _TENANT.match(tenant):
        raise ConfigError(f"profile {name!r}: tenant_id {tenant!r} is not a tenant id or domain")
    if auth == "secret" and (not tenant or not client):
        missing = " and ".join(k for k, v in (("tenant_id", tenant), ("client_id", client)) if not v)
        raise ConfigError(f"profile {name!r}: {missing} missing for service-principal sign-in",
                          hint="set tenant_id and client_id (the app registration), or auth=cli to use `az login`")
    if cloud_name == "custom":
        arm = s.get("arm_endpoint") or profile.endpoint_url
        if not arm or not s.get("authority_host"):
            raise ConfigError(f"profile {name!r}: cloud=custom needs arm_endpoint and authority_host")
        arm = _url(name, "arm_endpoint", arm)
        authority = _url(name, "authority_host", s["authority_host"])
        portal = s.get("portal_url") or CLOUDS["public"].portal_url
        prices = s.get("prices_url") or None
        default_region = "eastus"
    else:
        c = CLOUDS[cloud_name]
        arm, authority, portal = c.arm_endpoint, c.authority_host, s.get("portal_url") or c.portal_url
        prices, default_region = s.get("prices_url") or c.prices_url, c.default_region
    regions = region_list(name, s.get("regions") or profile.region, default_region, _REGION,
                          "an Azure region name (e.g. eastus, chinanorth3)")
    sub = (s.get("subscription_id") or creds.get("subscription_id") or "").strip() or None
    if sub and not _GUID.match(sub):
        raise ConfigError(f"profile {name!r}: subscription_id must be a GUID, not {sub!r}")
    anywhere = _flag(s.get("allow_ssh_from_anywhere"))
    cidr = ssh_cidr(name, s.get("ssh_cidr"), anywhere)
    image = tuple((s.get("image") or DEFAULT_IMAGE).split(":"))
    if len(image) != 4 or not all(image):
        raise ConfigError(f"profile {name!r}: image must be publisher:offer:sku:version, not {s.get('image')!r}")
    zones = (s.get("zones") or "none").strip().lower()
    if zones not in ("none", "auto") and not re.fullmatch(r"[1-3](,[1-3])*", zones.replace(" ", "")):
        raise ConfigError(f"profile {name!r}: zones must be none, auto or a list like 1,2 — not {zones!r}")
    shutdown = (s.get("auto_shutdown") or "auto").strip().lower()
    if shutdown not in ("auto", "off") and not re.fullmatch(r"([01]\d|2[0-3])[0-5]\d", shutdown):
        raise ConfigError(f"profile {name!r}: auto_shutdown must be auto, off or a UTC time HHMM, not {shutdown!r}")
    role = (s.get("guard_role_id") or CONTRIBUTOR_ROLE).strip()
    if not _GUID.match(role):
        raise ConfigError(f"profile {name!r}: guard_role_id must be a role definition GUID")
    user = (s.get("ssh_user") or "azureuser").strip()
    if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", user) or user in ("root", "admin", "administrator"):
        raise ConfigError(f"profile {name!r}: ssh_user {user!r} is not allowed on Azure Linux VMs")
    currency = (s.get("currency") or "USD").strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", currency):
        raise ConfigError(f"profile {name!r}: currency must be a three-letter code such as USD or CNY")
    ca = (s.get("ca_bundle") or "").strip() or None
    try:
        controller_accounts = storage_account_ids(s.get("controller_storage_accounts"))
    except ConfigError as exc:
        raise ConfigError(f"profile {name!r}: controller_storage_accounts: {exc.message}", hint=exc.hint) from None
    return AzureSettings(
        profile_name=name, tenant_id=tenant, client_id=client, auth=auth, managed_identity_client_id=mi_client,
        cloud=cloud_name,
        arm_endpoint=arm, authority_host=authority,
        arm_audience=_url(name, "arm_audience", s["arm_audience"]) if s.get("arm_audience") else arm,
        ca_bundle=ca, portal_url=portal.rstrip("/"), subscription_id=sub, regions=regions,
        ssh_cidr=cidr, checkip_url=s.get("checkip_url") or CHECKIP_URL, allow_ssh_from_anywhere=anywhere,
        ssh_user=user, image=image,  # type: ignore[arg-type]
        ssh_address=ssh_address(name, s.get("ssh_address")),
        zones=zones.replace(" ", ""),
        encryption_at_host=_choice(name, "encryption_at_host", s.get("encryption_at_host"), ("auto", "on", "off")),
        auto_shutdown=shutdown, guard_role_id=role, controller_storage_accounts=controller_accounts,
        pricing=_choice(name, "pricing", s.get("pricing"), PRICING_MODES),
        prices_url=prices, currency=currency,
        retry_total=int(_number(name, "retry_total", s.get("retry_total"), 5, 0, 20)),
        retry_backoff=_number(name, "retry_backoff", s.get("retry_backoff"), 0.8, 0, 60),
        polling_interval=_number(name, "polling_interval", s.get("polling_interval"), 5, 0, 300),
        connect_timeout=_number(name, "connect_timeout", s.get("connect_timeout"), 10, 0.1, 300),
        read_timeout=_number(name, "read_timeout", s.get("read_timeout"), 60, 0.1, 3600),
        launch_timeout_s=_number(name, "launch_timeout_s", s.get("launch_timeout_s"), 1800, 1, 86400),
        terminate_timeout_s=_number(name, "terminate_timeout_s", s.get("terminate_timeout_s"), 1800, 1, 86400),
        cache_ttl_s=_number(name, "cache_ttl_s", s.get("cache_ttl_s"), 3600, 0, 7 * 86400),
    )
