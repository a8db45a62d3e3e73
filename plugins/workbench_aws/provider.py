"""The AWS (EC2) provider: the workbench's Provider contract on top of boto3.

boto3 is imported only when a method first needs AWS (``session``), so
discovering this plugin costs the app nothing at start-up.

Threading: one instance serves a profile.  Reads (offers, instances,
leftovers, samples) may run on any thread at once; they share one boto3
client per (service, region) (:mod:`.clients`: clients are thread-safe, the
one Session that makes them is used under a lock).  Work across regions fans
out on the provider's own small thread pool.  ``launch``/``terminate``/``delete`` block their worker for seconds
(terminate: until AWS says "terminated", up to ``terminate_wait_s``).

Failure rules: only workbench errors escape (mapped in :mod:`.errors`).  A
listing that fails in one region fails the whole call (a partial list would
make reconcile believe the missing machines are gone).  ``terminate`` and
``delete`` treat "already gone" as success.  ``launch`` is idempotent per
launch id and rolls back on failure (:mod:`.launch`).

MFA: with ``mfa_serial`` set, the first call raises
:class:`~.session.MfaCodeNeeded` (an AuthError with ``kind == "mfa_required"``);
the UI asks for the code and calls :meth:`AwsProvider.provide_mfa_code`, then retries.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

from workbench.core.domain.errors import TransientError, WorkbenchError
from workbench.core.domain.models import (ActualCost, GpuSample, Identity, Instance, InstanceState, LaunchRequest, Offer,
                                   Profile, Region, Resource)
from workbench.core.providers.fan_out import RegionPool, by_region
from workbench.core.providers.launch_kit import LaunchTracker, check_launch
from workbench.core.providers.leftover_sweep import first_failure, still_running, sweep
from workbench.core.providers.profile_settings import apply_ssh_address
from workbench.core.providers.contract import (ControllerIdentity, CredentialField, Listing, Provider,
                                               ProviderContext, SupportsBilling, SupportsController,
                                               SupportsEndReason, SupportsMfa, SupportsPublicPrices,
                                               SupportsSpotHistory, SupportsStop, SupportsTelemetry)
from workbench.core.providers.sdk_errors import mapped
from workbench.core.storage.contract import ServesObjectStorage

from workbench.core.providers import price_snapshot

from . import billing, inventory, pricing, quotas, teardown
from .codes import error_code
from .errors import translate
from .clients import ACCESS_KEY, NAMED_PROFILE, SECRET_KEY, SESSION_TOKEN, Clients
from .settings import DEFAULT_REGION, parse
from .storage import S3Storage

if TYPE_CHECKING:
    from .launch import Launcher
    from .offers import OfferBook

log = logging.getLogger("workbench.aws")
CLOUDWATCH_EVERY_S = 60.0
T = TypeVar("T")

REGION_NAMES = {
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)", "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)", "eu-west-1": "Europe (Ireland)", "eu-west-2": "Europe (London)",
    "eu-west-3": "Europe (Paris)", "eu-central-1": "Europe (Frankfurt)", "eu-north-1": "Europe (Stockholm)",
    "ap-northeast-1": "Asia Pacific (Tokyo)", "ap-northeast-2": "Asia Pacific (Seoul)",
    "ap-southeast-1": "Asia Pacific (Singapore)", "ap-southeast-2": "Asia Pacific (Sydney)",
    "ap-south-1": "Asia Pacific (Mumbai)", "ca-central-1": "Canada (Central)", "sa-east-1": "South America (São Paulo)",
}


class AwsProvider(Provider, SupportsStop, SupportsTelemetry, SupportsBilling, SupportsSpotHistory, ServesObjectStorage,
                  SupportsEndReason, SupportsPublicPrices, SupportsMfa, SupportsController):
    """EC2 GPU instances, on-demand and spot, found again by their tags in every enabled region."""

    id = "aws"
    display_name = "Amazon Web Services (EC2)"
    sdk_modules = ("boto3", "botocore")
    install_extra = "aws"
    credential_fields = (
        CredentialField(ACCESS_KEY, "Access key ID", optional=True,
                        help="an IAM user's key (AKIA…); leave empty to use a named profile instead"),
        CredentialField(SECRET_KEY, "Secret access key", secret=True, optional=True,
                        help="shown once when the key was created; stored in the system keyring only"),
        CredentialField(SESSION_TOKEN, "Session token", secret=True, optional=True,
                        help="only for temporary credentials (ASIA… keys)"),
        CredentialField(NAMED_PROFILE, "Named profile (AWS config / SSO)", optional=True,
                        help="a profile from ~/.aws/config, e.g. for IAM Identity Center (SSO) sign-in"),
    )
    storage_kinds, storage_addresses = ("s3",), "s3://"

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)
        self.settings = parse(profile)
        self._clients = Clients(self.settings, secrets)
        self._quotas = quotas.QuotaReader(lambda region: self._clients.client("service-quotas", region),
                                          self.settings.cache_ttl_s)
        self._launches = LaunchTracker()
        self._lazy_lock = threading.Lock()
        self._offer_book: OfferBook | None = None
        self._launcher_obj: Launcher | None = None
        self._regions_pool = RegionPool(f"aws-{profile.name}")
        self._cpu_lock = threading.Lock()
        self._regions: tuple[float, list[str]] | None = None
        self._cpu_seen: dict[str, float] = {}
        self._cpu_asked: dict[str, float] = {}
        self._s3 = S3Storage(self._clients, self.settings.regions, profile.name, dict(profile.settings))

    @classmethod
    def default_region(cls) -> str | None:
        return DEFAULT_REGION

    public_price_regions = ("us-east-1", "us-west-2", "eu-west-1")
    public_price_source = "AWS Price List offer files"

    @classmethod
    def public_prices(cls, regions, known, fetch):  # type: ignore[no-untyped-def]
        """The public EC2 and Savings Plans offer files (no account, no boto3): :mod:`.price_list`."""
        from .price_list import public_prices

        return public_prices(regions, known, fetch)

    # The offer book and the launcher are made on first use (under a lock: both keep state, the
    # launcher its per-launch locks): their modules cost ~60 ms of imports that `status` and
    # teardown never need.
    @property
    def _offers(self) -> "OfferBook":
        with self._lazy_lock:
            if self._offer_book is None:
                from .offers import OfferBook

                self._offer_book = OfferBook(self.id, self.settings, self._clients, None, self._quotas)
            return self._offer_book

    @property
    def _launcher(self) -> "Launcher":
        with self._lazy_lock:
            if self._launcher_obj is None:
                from .launch import Launcher

                self._launcher_obj = Launcher(self.id, self.profile.name, self.settings, self._clients,
                                              self.context.install_id, self.context.data_dir, self._launches)
            return self._launcher_obj

    # -- plumbing ------------------------------------------------------------------------------
    def _fail(self, exc: BaseException, what: str, operation: str, region: str = "", service: str = "ec2",
              instance_type: str = "") -> WorkbenchError:
        return translate(exc, what, service=service, operation=operation, region=region,
                         instance_type=instance_type, secrets=self._clients.secret_values())

    def _aws(self, what: str, operation: str, region: str = "", service: str = "ec2",
             instance_type: str = "") -> AbstractContextManager[None]:
        """``with self._aws(what, operation, region):`` — an SDK error inside leaves as the translated one."""
        return mapped(lambda exc: self._fail(exc, what, operation, region, service, instance_type))

    def _ec2(self, region: str) -> Any:
        return self._clients.client("ec2", region)

    def _fan_out(self, regions: Sequence[str], fn: Callable[[str], T]) -> list[T]:
        """``fn(region)`` for every region side by side; the first error is raised after all finished."""
        return self._regions_pool.map(regions, fn, lambda exc: self._fail(exc, "asking AWS", ""))

    def enabled_regions(self) -> list[str]:
        """The profile's regions ("all": every region enabled for the account, asked once per hour)."""
        if not self.settings.all_regions:
            return list(self.settings.regions)
        cached = self._regions
        if cached is not None and time.monotonic() - cached[0] < 3600:
            return cached[1]
        home = self.settings.regions[0]
        with self._aws("listing the account's regions", "DescribeRegions", home):
            answer = self._ec2(home).describe_regions(AllRegions=False)
        names = sorted(r["RegionName"] for r in answer.get("Regions") or [])
        self._regions = (time.monotonic(), names)
        return names

    # -- account -------------------------------------------------------------------------------
    def provide_mfa_code(self, code: str) -> None:
        """Hand over the six-digit MFA code (kept in memory only) after an ``mfa_required`` AuthError."""
        self._clients.provide_mfa_code(code)

    def check_credentials(self) -> Identity:
        region = self.settings.regions[0]
        with self._aws("checking the credentials", "GetCallerIdentity", region, "sts"):
            who = self._clients.client("sts", region).get_caller_identity()
        arn = who.get("Arn", "")
        return Identity(account=who.get("Account", ""), principal=arn,
                        display=f"{arn} (account {who.get('Account', '')}, {self._clients.describe_source()})")

    def regions(self) -> list[Region]:
        return [Region(r, REGION_NAMES.get(r, r)) for r in self.enabled_regions()]

    # -- offers ----------------------------------------------------------------------------------
    def offers(self, region: str | None = None) -> Iterable[Offer]:
        """GPU offers of the enabled regions (or one of them); live prices with the snapshot as fallback."""
        try:
            enabled = self.enabled_regions()
        except WorkbenchError:
            if self.settings.pricing == "live":
                raise
            enabled = price_snapshot.load(self.id).regions()  # "all" regions but AWS cannot say which: the snapshot's
        wanted = [r for r in ([region] if region else enabled) if r in enabled]
        return [o for batch in self._fan_out(wanted, self._offers.region) for o in batch]

    # -- launch and listing ------------------------------------------------------------------------
    def launch(self, req: LaunchRequest) -> list[Instance]:
        check_launch(self.profile.name, req, self.enabled_regions(), self.settings.ssh_address)
        return [apply_ssh_address(i, self.settings.ssh_address) for i in self._launcher.launch(req)]

    def _instances_of(self, region: str, raw: list[dict[str, Any]]) -> list[Instance]:
        snap = price_snapshot.load(self.id)
        out = []
        for r in raw:
            row = snap.find(region, r.get("InstanceType", ""))
            out.append(apply_ssh_address(inventory.to_instance(r, self.id, self.profile.name, region,
                                                               fallback_price=row.on_demand if row else None),
                                         self.settings.ssh_address))
        return out

    def _list_region(self, region: str) -> list[Instance]:
        with self._aws("listing instances", "DescribeInstances", region):
            raw = inventory.describe_instances(self._ec2(region), self.context.install_id)
        return self._instances_of(region, raw)

    def instances(self) -> list[Instance]:
        return [i for batch in self._fan_out(self.enabled_regions(), self._list_region) for i in batch]

    def _leftovers_region(self, region: str, launch_ids: Iterable[str] | None = None) -> list[Resource]:
        with self._aws("listing leftovers", "DescribeVolumes", region):
            return inventory.list_leftovers(self._ec2(region), region, self.id, self.profile.name,
                                            self.context.install_id, skip_launches=self._launches.in_flight(),
                                            launch_ids=launch_ids)

    def leftovers(self) -> list[Resource]:
        return [r for batch in self._fan_out(self.enabled_regions(), self._leftovers_region) for r in batch]

    def _listing_region(self, region: str) -> tuple[list[Instance], list[Resource] | None, WorkbenchError | None]:
        busy = self._launches.in_flight()
        with self._aws("listing instances", "DescribeInstances", region):
            raw, left, error = inventory.list_region(self._ec2(region), region, self.id, self.profile.name,
                                                     self.context.install_id, skip_launches=busy)
        failed = self._fail(error, "listing leftovers", "DescribeVolumes", region) if error is not None else None
        return self._instances_of(region, raw), left, failed

    def listing(self) -> Listing:
        """Instances and leftovers of every enabled region in one fan-out: per region, the instance
        listing the leftovers need anyway is asked once, beside the four leftover listings."""
        found = Listing([])
        for insts, left, error in self._fan_out(self.enabled_regions(), self._listing_region):
            found.instances += insts
            if error is not None:
                found.leftovers_error = found.leftovers_error or error
            else:
                found.leftovers += left or []
        if found.leftovers_error is not None:
            found.leftovers = []
        return found

    # -- ending things -----------------------------------------------------------------------------
    def terminate(self, instances: Sequence[Instance]) -> None:
        """Terminate, wait for "terminated", sweep the launches' leftovers, verify; gone is success."""
        groups = by_region(instances, self.id)
        self._fan_out(sorted(groups), lambda region: self._terminate_region(region, groups[region]))

    def _terminate_region(self, region: str, insts: list[Instance]) -> None:
        ec2 = self._ec2(region)
        ids = sorted({i.instance_id for i in insts if i.state != InstanceState.TERMINATED})
        launches = sorted({i.launch_id for i in insts if i.launch_id})
        with self._aws("terminating instances", "TerminateInstances", region):
            fresh = sorted(i.instance_id for i in insts
                           if i.instance_id in ids and teardown.launched_lately(i.launched_at))
            teardown.terminate_new(ec2, fresh, self.settings.poll_s)  # "not found" there is not "gone" yet
            teardown.terminate_ids(ec2, ids)
            still = teardown.wait_terminated(ec2, ids, self.settings.terminate_wait_s, self.settings.poll_s)
        log.info("terminated %d instance(s) in %s", len(ids) - len(still), region)
        if launches:
            self._sweep(region, launches)
        if still:
            raise still_running(region, still, self.settings.terminate_wait_s, "shutting down")

    def _sweep(self, region: str, launch_ids: list[str]) -> None:
        ec2 = self._ec2(region)
        sweep(region, lambda: self._leftovers_region(region, launch_ids),
              lambda found: teardown.delete_all(ec2, found, retry_dependency_s=min(60.0, self.settings.terminate_wait_s),
                                                poll_s=max(self.settings.poll_s, 0.05)),
              cause_of=lambda exc: error_code(exc) or type(exc).__name__)

    def delete(self, resources: Sequence[Resource]) -> None:
        groups = by_region(resources, self.id)

        def one(region: str) -> None:
            failures = teardown.delete_all(self._ec2(region), groups[region],
                                           retry_dependency_s=min(30.0, self.settings.terminate_wait_s),
                                           poll_s=max(self.settings.poll_s, 0.05))
            err = first_failure(failures, lambda res, exc: self._fail(exc, f"deleting {res.kind} {res.resource_id}",
                                                                      "Delete", region))
            if err is not None:
                raise err

        self._fan_out(sorted(groups), one)

    def stop(self, instances: Sequence[Instance]) -> None:
        """Stop (EBS stays and bills); stopped or gone instances are skipped."""
        groups = by_region(instances, self.id)

        def one(region: str) -> None:
            ids = [i.instance_id for i in groups[region] if i.state.active]
            if not ids:
                return
            with self._aws("stopping instances", "StopInstances", region):
                self._ec2(region).stop_instances(InstanceIds=ids)

        self._fan_out(sorted(groups), one)

    # -- AWS's own numbers ---------------------------------------------------------------------------
    def samples(self, instance: Instance) -> list[GpuSample]:
        """New CloudWatch CPU points (kind "cpu") since the last call for this instance.

        CloudWatch has one point a minute at best (five with basic monitoring) and bills
        per request, so it is asked at most once a minute per instance; GPU readings come
        over SSH (``core.remote``), this is the fallback for a machine without an address.
        """
        now = time.monotonic()
        with self._cpu_lock:
            if now - self._cpu_asked.get(instance.instance_id, -CLOUDWATCH_EVERY_S) < CLOUDWATCH_EVERY_S:
                return []
            self._cpu_asked[instance.instance_id] = now
        with self._aws("reading CloudWatch metrics", "GetMetricStatistics", instance.region, "monitoring"):
            found = billing.cpu_samples(self._clients.client("cloudwatch", instance.region), instance.instance_id)
        seen = self._cpu_seen.get(instance.instance_id, 0.0)
        fresh = [s for s in found if s.ts > seen]
        if fresh:
            self._cpu_seen[instance.instance_id] = fresh[-1].ts
        return fresh

    def actual_costs(self, start_day: str, end_day: str) -> list[ActualCost]:
        """Billed cost per launch tag and UTC day from Cost Explorer (the tag counts once activated: see billing.py)."""
        with self._aws("reading Cost Explorer", "GetCostAndUsage", billing.COST_EXPLORER_REGION, "ce"):
            rows = billing.cost_by_launch(self._clients.client("ce", billing.COST_EXPLORER_REGION),
                                          start_day, end_day)
        now = time.time()
        return [ActualCost(provider=self.id, profile=self.profile.name, launch_id=launch, day=day, amount=amount,
                           currency=unit, source=billing.COST_EXPLORER_SOURCE, fetched_at=now)
                for launch, day, amount, unit in rows]

    def spot_price_history(self, instance: Instance, start: float, end: float) -> list[tuple[float, float]]:
        az = instance.extra.get("az") or None
        with self._aws("reading the spot price history", "DescribeSpotPriceHistory", instance.region):
            return pricing.spot_series(self._ec2(instance.region), instance.instance_type, az, start, end)

    def ended_instances(self, instances: Sequence[Instance]) -> list[Instance]:
        """Terminated instances as EC2 still describes them (about an hour): the state reason says spot or not."""
        groups = by_region(instances, self.id)

        def one(region: str) -> list[Instance]:
            ids = sorted({i.instance_id for i in groups[region]})
            try:
                raw = inventory.describe_by_ids(self._ec2(region), ids)
            except Exception as exc:  # noqa: BLE001
                raise self._fail(exc, "describing ended instances", "DescribeInstances", region) from None
            return [inventory.to_instance(r, self.id, self.profile.name, region) for r in raw]

        return [i for batch in self._fan_out(sorted(groups), one) for i in batch]

    # -- the controller machine's identity (IAM role + instance profile: see .controller_identity) ----------
    def controller_identity(self, create: bool = False) -> ControllerIdentity:
        """The role ``controller_role`` (default workbench-controller), its instance profile and the job storage
        role: looked for, or with ``create`` made where the profile may; AuthError naming the refused actions."""
        from .controller_identity import ControllerIdentities

        return ControllerIdentities(self._clients, self.settings, dict(self.profile.settings)).identity(create)

    # -- object storage (S3: see .storage; the storage_* methods are ServesObjectStorage's) ----------
    def _object_store(self) -> S3Storage:
        return self._s3

    # -- console -------------------------------------------------------------------------------------
    def console_url(self, item: Instance | Resource) -> str | None:
        region = item.region
        base = f"https://{region}.console.aws.amazon.com/ec2/home?region={region}#"
        if isinstance(item, Instance):
            return f"{base}InstanceDetails:instanceId={item.instance_id}"
        anchors = {
            inventory.KIND_VOLUME: f"VolumeDetails:volumeId={item.resource_id}",
            inventory.KIND_EIP: f"ElasticIpDetails:AllocationId={item.resource_id}",
            inventory.KIND_SG: f"SecurityGroup:groupId={item.resource_id}",
            inventory.KIND_KEY: f"KeyPairs:search={item.extra.get('key_name') or item.resource_id}",
        }
        anchor = anchors.get(item.kind)
        return base + anchor if anchor else None
