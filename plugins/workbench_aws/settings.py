"""The AWS profile's settings, parsed and checked once (plain Python, no boto3).

A :class:`~workbench.core.domain.models.Profile` carries strings only.  Keys the AWS
plugin reads from ``Profile.settings`` (all optional):

``regions``               comma list of enabled regions ("all" = every region the account has
                          enabled); default: the profile's region, else us-east-1
``endpoint_url.<service>`` an endpoint for one service (``Profile.endpoint_url`` serves all)
``ssh_cidr``              who may reach SSH; default: this computer's public address as /32
``ssh_address``           "[USER@]HOST[:PORT]": reach the machines there (port forward, bastion); default "public";
                          HOST "private" reaches each machine at its private address (VPN, inside the VPC)
``subnet``                launch into this subnet (subnet-…) instead of the default VPC's default subnets
``allow_ssh_from_anywhere`` "true" is the explicit confirmation 0.0.0.0/0 needs
``checkip_url``           where the public address is asked (default checkip.amazonaws.com)
``ami`` / ``ami.<region>`` image override; ``ami_ssm_parameter`` the public SSM parameter
``mfa_serial``            the MFA device ARN: calls then use STS session credentials
``pricing``               "auto" (live, snapshot on failure), "live" (no fallback) or "snapshot"
``families``              comma list of instance-type families to offer (default: the GPU ones)
``max_attempts`` ``connect_timeout`` ``read_timeout``   botocore retry/timeouts on every client
``retry_backoff_cap_s``   cap of the standard retry mode's backoff (default: botocore's 20 s; tests use less)
``poll_s`` ``terminate_wait_s``    how often / how long terminate waits for "terminated"
``cache_ttl_s``           how long live offers and prices are reused
``controller_role``       the controller machine's IAM role and instance profile (default workbench-controller;
                          any name starting so: the app's policy additions name that prefix); its job storage
                          role is ``workbench-job-storage`` + the same suffix (:mod:`.controller_identity`)

Failure rules: a bad value raises ConfigError naming the key and the profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from workbench.core.domain.errors import ConfigError
from workbench.core.providers.profile_settings import PRICING_MODES, choice, region_list, ssh_address, ssh_cidr
from workbench.core.providers.profile_settings import flag as _flag
from workbench.core.providers.profile_settings import number as _number
from workbench.core.domain.models import Profile

DEFAULT_REGION = "us-east-1"
#: the Deep Learning Base AMI (NVIDIA driver, CUDA, Docker) on Ubuntu 22.04, published by AWS in SSM
DEFAULT_AMI_PARAMETER = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
#: EC2 families with NVIDIA GPUs (plus their metal sizes); describe_instance_types is asked for these
GPU_FAMILIES = ("p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "g4dn", "g5", "g6", "g6e", "gr6")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
CONTROLLER_ROLE = "workbench-controller"
JOB_STORAGE_ROLE = "workbench-job-storage"
#: IAM role names: up to 64 of these characters
_CONTROLLER_ROLE = re.compile(r"workbench-controller[\w+=,.@-]{0,44}")


@dataclass(frozen=True)
class AwsSettings:
    """Everything the plugin reads from one profile (see the module doc for the keys)."""

    profile_name: str
    regions: tuple[str, ...] = (DEFAULT_REGION,)
    all_regions: bool = False
    endpoint_url: str | None = None
    service_endpoints: Mapping[str, str] = field(default_factory=dict)
    ssh_cidr: str | None = None
    ssh_address: tuple[str, int, str | None] | None = None
    subnet: str | None = None
    allow_ssh_from_anywhere: bool = False
    checkip_url: str = "https://checkip.amazonaws.com"
    ami: str | None = None
    ami_by_region: Mapping[str, str] = field(default_factory=dict)
    ami_ssm_parameter: str = DEFAULT_AMI_PARAMETER
    mfa_serial: str | None = None
    pricing: str = "auto"
    families: tuple[str, ...] = GPU_FAMILIES
    max_attempts: int = 8
    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    retry_backoff_cap_s: float | None = None
    poll_s: float = 5.0
    terminate_wait_s: float = 600.0
    cache_ttl_s: float = 3600.0
    controller_role: str = CONTROLLER_ROLE

    @property
    def job_storage_role(self) -> str:
        """The role the controller assumes for a job machine's storage credentials (same suffix as its own)."""
        return JOB_STORAGE_ROLE + self.controller_role[len(CONTROLLER_ROLE):]

    def endpoint(self, service: str) -> str | None:
        """The endpoint for ``service`` (botocore's name, e.g. "ec2", "pricing"), None = AWS's own."""
        return self.service_endpoints.get(service) or self.endpoint_url

    def ami_for(self, region: str) -> str | None:
        return self.ami_by_region.get(region) or self.ami




def _regions(profile: Profile, raw: str | None) -> tuple[tuple[str, ...], bool]:
    if raw and raw.strip().lower() == "all":
        return ((profile.region or DEFAULT_REGION),), True
    return region_list(profile.name, raw, profile.region or DEFAULT_REGION, _REGION, "an AWS region name",
                       hint="regions look like us-east-1, eu-west-1 (comma separated)"), False


def parse(profile: Profile) -> AwsSettings:
    """Read and check ``profile``'s settings; ConfigError on the first bad one."""
    s = {k: str(v) for k, v in profile.settings.items()}
    name = profile.name
    regions, all_regions = _regions(profile, s.get("regions"))
    anywhere = _flag(s.get("allow_ssh_from_anywhere"))
    pricing = choice(name, "pricing", s.get("pricing"), PRICING_MODES)
    families = tuple(f.strip() for f in (s.get("families") or "").split(",") if f.strip()) or GPU_FAMILIES
    ami = (s.get("ami") or "").strip() or None
    for value in [ami, *(v for k, v in s.items() if k.startswith("ami."))]:
        if value and not re.fullmatch(r"ami-[0-9a-f]{8,17}", value.strip()):
            raise ConfigError(f"profile {name!r}: {value!r} is not an AMI id (ami-…)")
    subnet = (s.get("subnet") or "").strip() or None
    if subnet and not re.fullmatch(r"subnet-[0-9a-f]{8,17}", subnet):
        raise ConfigError(f"profile {name!r}: {subnet!r} is not a subnet id (subnet-…)")
    endpoint = profile.endpoint_url or s.get("endpoint_url") or None
    controller_role = (s.get("controller_role") or "").strip() or CONTROLLER_ROLE
    if not _CONTROLLER_ROLE.fullmatch(controller_role):
        raise ConfigError(f"profile {name!r}: controller_role {controller_role!r} is not a role name starting "
                          f"with {CONTROLLER_ROLE}", hint="the app's IAM additions (resources/policies/"
                                                          "aws-app-controller-additions.json) allow only those names")
    return AwsSettings(
        profile_name=name,
        regions=regions,
        all_regions=all_regions,
        endpoint_url=endpoint,
        service_endpoints={k.split(".", 1)[1]: v for k, v in s.items() if k.startswith("endpoint_url.") and v},
        ssh_cidr=ssh_cidr(name, s.get("ssh_cidr"), anywhere),
        ssh_address=ssh_address(name, s.get("ssh_address")),
        subnet=subnet,
        allow_ssh_from_anywhere=anywhere,
        checkip_url=s.get("checkip_url") or AwsSettings.checkip_url,
        ami=ami,
        ami_by_region={k.split(".", 1)[1]: v.strip() for k, v in s.items() if k.startswith("ami.") and v.strip()},
        ami_ssm_parameter=s.get("ami_ssm_parameter") or DEFAULT_AMI_PARAMETER,
        mfa_serial=(s.get("mfa_serial") or "").strip() or None,
        pricing=pricing,
        families=families,
        max_attempts=int(_number(name, "max_attempts", s.get("max_attempts"), 8, 1, 20)),
        connect_timeout=_number(name, "connect_timeout", s.get("connect_timeout"), 5.0, 0.1, 120),
        read_timeout=_number(name, "read_timeout", s.get("read_timeout"), 30.0, 0.1, 600),
        retry_backoff_cap_s=(_number(name, "retry_backoff_cap_s", s.get("retry_backoff_cap_s"), 20.0, 0.0, 20.0)
                             if s.get("retry_backoff_cap_s") else None),
        poll_s=_number(name, "poll_s", s.get("poll_s"), 5.0, 0.0, 60),
        terminate_wait_s=_number(name, "terminate_wait_s", s.get("terminate_wait_s"), 600.0, 0.0, 3600),
        cache_ttl_s=_number(name, "cache_ttl_s", s.get("cache_ttl_s"), 3600.0, 0.0, 7 * 86400),
        controller_role=controller_role,
    )
