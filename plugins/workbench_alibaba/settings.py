"""The Alibaba Cloud profile's settings, parsed and checked once (plain Python, no SDK).

Keys read from ``Profile.settings`` (all optional; the AccessKey secret only ever comes from the keyring):

``site``                  "china" (default; regions cn-*, bills in CNY) or "international" (ap-*, eu-*, us-*, USD)
``regions``               comma list of enabled regions; default: the profile's region, else cn-hangzhou /
                          ap-southeast-1 by site
``auth``                  "access_key" (default: the stored AccessKey), "ram_role" (assume ``role_arn`` with it),
                          "cli" (a profile of the Alibaba Cloud CLI, ``~/.aliyun/config.json``) or "ecs_ram_role"
                          (the instance's own RAM role from the metadata service: the controller, issue 33; chosen
                          by itself on a machine-identity Accounts with no AccessKey)
``ram_role_name``         the instance's RAM role for auth=ecs_ram_role (the controller's identity fields carry it;
                          default: the one the metadata service names)
``ecs_metadata_host``     HOST:PORT of the metadata service (default 100.100.100.200; tests only: a loopback one)
``role_arn`` ``role_session_name``   the RAM role for auth=ram_role (and CLI profiles in RamRoleArn mode)
``cli_profile`` ``cli_config``       the CLI profile's name (default: its "current") and file
``endpoint``              HOST[:PORT] serving every product (tests, private endpoints); ``protocol`` http|https
``ssh_cidr``              who may reach SSH; default: this computer's public address /32
``checkip_url``           where that address is asked; ``allow_ssh_from_anywhere=true`` permits 0.0.0.0/0
``ssh_user``              login user on the machine (default root: the key pair is bound to root)
``ssh_address``           "[USER@]HOST[:PORT]": reach the machines there (port forward, bastion); default "public"
``image``                 an image id (default: the newest public image of ``image_family``)
``image_family``          default acs:ubuntu_22_04_x64; ``gpu_driver`` "install" (default: the boot script
                          installs the NVIDIA driver when the image has none) or "image" (it has one)
``zones``                 "auto" (default: every zone with stock, cheapest spot first) or a comma list
``disk_category``         system disk: cloud_essd (default), cloud_auto, cloud_ssd, cloud_efficiency;
                          always encrypted
``bandwidth_mbps``        public bandwidth (InternetMaxBandwidthOut, pay-by-traffic), default 100
``release_margin_minutes`` AutoReleaseTime = launch + max runtime + this margin (default 60)
``pricing``               "auto" (live, snapshot on failure), "live" or "snapshot"
``retry_total`` ``retry_backoff_s`` ``connect_timeout`` ``read_timeout``  SDK calls
``poll_s`` ``launch_timeout_s`` ``terminate_timeout_s`` ``cache_ttl_s``

Failure rules: a bad value raises ConfigError naming the key and the profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import Profile
from workbench.core.providers.profile_settings import PRICING_MODES, region_list, ssh_address, ssh_cidr
from workbench.core.providers.profile_settings import choice as _choice
from workbench.core.providers.profile_settings import flag as _flag
from workbench.core.providers.profile_settings import number as _number
from workbench.core.providers.public_address import DEFAULT_URL as CHECKIP_URL

SITES = {"china": "cn-hangzhou", "international": "ap-southeast-1"}
DEFAULT_IMAGE_FAMILY = "acs:ubuntu_22_04_x64"
DISK_CATEGORIES = ("cloud_essd", "cloud_auto", "cloud_ssd", "cloud_efficiency")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+(-\d+)?$")
_ROLE_ARN = re.compile(r"^acs:ram::\d+:role/[A-Za-z0-9._-]{1,64}$")
_ENDPOINT = re.compile(r"^[A-Za-z0-9.-]+(:\d{1,5})?$")


@dataclass(frozen=True)
class AlibabaSettings:
    profile_name: str
    site: str = "china"
    regions: tuple[str, ...] = ("cn-hangzhou",)
    auth: str = "access_key"
    role_arn: str | None = None
    role_session_name: str = "cloud-gpu-workbench"
    cli_profile: str | None = None
    cli_config: Path | None = None
    ram_role_name: str | None = None
    ecs_metadata_host: str | None = None
    endpoint: str | None = None
    protocol: str = "https"
    ssh_cidr: str | None = None
    checkip_url: str = CHECKIP_URL
    allow_ssh_from_anywhere: bool = False
    ssh_user: str = "root"
    ssh_address: tuple[str, int, str | None] | None = None
    image: str | None = None
    image_family: str = DEFAULT_IMAGE_FAMILY
    gpu_driver: str = "install"
    zones: tuple[str, ...] = ()  # () = auto
    disk_category: str = "cloud_essd"
    bandwidth_mbps: int = 100
    release_margin_s: float = 3600.0
    pricing: str = "auto"
    retry_total: int = 4
    retry_backoff_s: float = 1.0
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    poll_s: float = 3.0
    launch_timeout_s: float = 900.0
    terminate_timeout_s: float = 900.0
    cache_ttl_s: float = 3600.0

    @property
    def currency(self) -> str:
        """What the site bills in: the China site in CNY, the international site in USD."""
        return "CNY" if self.site == "china" else "USD"


def parse(profile: Profile, credentials: Mapping[str, str] | None = None,
          machine_identity: bool = False) -> AlibabaSettings:
    """Check every key once; raise ConfigError naming the first bad one.

    ``machine_identity`` (the controller): with no AccessKey, the instance's RAM role signs in, whatever the
    profile's ``auth`` said on the user's computer (no key, CLI profile or user's role exists on that machine)."""
    s = dict(profile.settings)
    name = profile.name
    creds = credentials or {}
    site = _choice(name, "site", s.get("site"), ("china", "international"))
    regions = region_list(name, s.get("regions") or profile.region, SITES[site], _REGION,
                          "an Alibaba Cloud region id (e.g. cn-hangzhou)")
    auth = _choice(name, "auth", s.get("auth") or ("cli" if creds.get("cli_profile") else None),
                   ("access_key", "ram_role", "cli", "ecs_ram_role"))
    if machine_identity and not creds.get("access_key_secret"):
        auth = "ecs_ram_role"
    ecs_role = (creds.get("ram_role_name") or s.get("ram_role_name") or "").strip() or None
    if ecs_role and not re.fullmatch(r"[A-Za-z0-9.-]{1,64}", ecs_role):
        raise ConfigError(f"profile {name!r}: ram_role_name {ecs_role!r} is not a RAM role name")
    metadata = (s.get("ecs_metadata_host") or "").strip() or None
    if metadata and not (_ENDPOINT.match(metadata) and metadata.split(":")[0] in ("127.0.0.1", "localhost")):
        raise ConfigError(f"profile {name!r}: ecs_metadata_host is for a test service on this computer only",
                          hint="leave it unset: the instance's metadata service is 100.100.100.200")
    role = (s.get("role_arn") or "").strip() or None
    if role and not _ROLE_ARN.match(role):
        raise ConfigError(f"profile {name!r}: role_arn must look like acs:ram::<account id>:role/<name>, not {role!r}")
    if auth == "ram_role" and not role:
        raise ConfigError(f"profile {name!r}: auth=ram_role needs role_arn", hint="e.g. acs:ram::1234567890123456:role/"
                          "workbench (the role's ARN from the RAM console)")
    session = (s.get("role_session_name") or "cloud-gpu-workbench").strip()
    if not re.fullmatch(r"[A-Za-z0-9._@-]{2,64}", session):
        raise ConfigError(f"profile {name!r}: role_session_name must be 2-64 letters, digits or . _ @ -")
    endpoint = (s.get("endpoint") or profile.endpoint_url or "").strip() or None
    if endpoint:
        endpoint = re.sub(r"^https?://", "", endpoint).rstrip("/")
        if not _ENDPOINT.match(endpoint):
            raise ConfigError(f"profile {name!r}: endpoint must be HOST or HOST:PORT, not {s.get('endpoint')!r}")
    protocol = _choice(name, "protocol", s.get("protocol"), ("https", "http"))
    if protocol == "http" and not (endpoint and endpoint.split(":")[0] in ("127.0.0.1", "localhost")):
        raise ConfigError(f"profile {name!r}: protocol=http is only allowed for a local endpoint",
                          hint="Alibaba Cloud's endpoints speak HTTPS; http is for test servers on this computer")
    anywhere = _flag(s.get("allow_ssh_from_anywhere"))
    cidr = ssh_cidr(name, s.get("ssh_cidr"), anywhere)
    user = (s.get("ssh_user") or "root").strip()
    if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", user):
        raise ConfigError(f"profile {name!r}: ssh_user {user!r} is not a Linux user name")
    zones = tuple(z.strip() for z in (s.get("zones") or "auto").split(",") if z.strip())
    if zones == ("auto",):
        zones = ()
    for z in zones:
        if not _REGION.match(z.rstrip("abcdefghijklmnopqrstuvwxyz") + "1") and not re.fullmatch(r"[a-z0-9-]+", z):
            raise ConfigError(f"profile {name!r}: {z!r} is not a zone id (e.g. cn-hangzhou-i)")
    image = (s.get("image") or "").strip() or None
    if image and not re.fullmatch(r"[A-Za-z0-9._:-]{3,128}", image):
        raise ConfigError(f"profile {name!r}: image {image!r} is not an image id")
    cli_config = s.get("cli_config")
    return AlibabaSettings(
        profile_name=name, site=site, regions=regions, auth=auth, role_arn=role,
        role_session_name=session, cli_profile=(s.get("cli_profile") or creds.get("cli_profile") or "").strip() or None,
        cli_config=Path(cli_config).expanduser() if cli_config else None, ram_role_name=ecs_role,
        ecs_metadata_host=metadata, endpoint=endpoint, protocol=protocol,
        ssh_cidr=cidr, checkip_url=s.get("checkip_url") or CHECKIP_URL, allow_ssh_from_anywhere=anywhere,
        ssh_user=user, ssh_address=ssh_address(name, s.get("ssh_address")), image=image,
        image_family=(s.get("image_family") or DEFAULT_IMAGE_FAMILY).strip(),
        gpu_driver=_choice(name, "gpu_driver", s.get("gpu_driver"), ("install", "image")), zones=zones,
        disk_category=_choice(name, "disk_category", s.get("disk_category"), DISK_CATEGORIES),
        bandwidth_mbps=int(_number(name, "bandwidth_mbps", s.get("bandwidth_mbps"), 100, 1, 1000)),
        release_margin_s=60 * _number(name, "release_margin_minutes", s.get("release_margin_minutes"), 60, 0, 7 * 1440),
        pricing=_choice(name, "pricing", s.get("pricing"), PRICING_MODES),
        retry_total=int(_number(name, "retry_total", s.get("retry_total"), 4, 0, 20)),
        retry_backoff_s=_number(name, "retry_backoff_s", s.get("retry_backoff_s"), 1.0, 0, 60),
        connect_timeout=_number(name, "connect_timeout", s.get("connect_timeout"), 10, 0.1, 300),
        read_timeout=_number(name, "read_timeout", s.get("read_timeout"), 60, 0.1, 3600),
        poll_s=_number(name, "poll_s", s.get("poll_s"), 3.0, 0.0, 300),
        launch_timeout_s=_number(name, "launch_timeout_s", s.get("launch_timeout_s"), 900, 1, 86400),
        terminate_timeout_s=_number(name, "terminate_timeout_s", s.get("terminate_timeout_s"), 900, 1, 86400),
        cache_ttl_s=_number(name, "cache_ttl_s", s.get("cache_ttl_s"), 3600, 0, 7 * 86400),
    )
