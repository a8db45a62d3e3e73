"""The Alibaba Cloud (ECS) provider: GPU instances (gn6i, gn6v, gn6e, gn7, gn7e, gn7i …) priced in CNY.

Profile settings: :mod:`.settings`.  Credentials (keyring): ``access_key_id`` and
``access_key_secret`` (secret); or ``auth=ram_role`` (+ ``role_arn``) to assume a RAM role with
them; or ``auth=cli`` / ``cli_profile`` to use a profile of the Alibaba Cloud CLI.

Parts: :mod:`.clients` (credentials, SDK clients, the one call wrapper with retries),
:mod:`.offers` (types, stock, prices; :mod:`workbench.core.providers.price_snapshot` fallback), :mod:`.launch` (VPC + vSwitch +
security group + key per launch, RunInstances with AutoReleaseTime, rollback), :mod:`.inventory`
(tag-based instances and leftovers), :mod:`.teardown` (release, wait, delete in order, verify),
:mod:`.errors` (the SDK error table), :mod:`.billing` (BSS actual cost), :mod:`.userdata` (boot
script with the guard).  The SDKs are imported on the first call only.

Threading: reads may run on several threads at once; the SDK clients and caches are shared behind
locks.  Failure rules: only workbench errors leave; a listing that fails in one region fails the
whole call; terminate/delete treat "already gone" as success; a secret never appears in a message.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from workbench.core.domain.errors import TransientError
from workbench.core.domain.models import ActualCost, Identity, Instance, InstanceState, LaunchRequest, Offer, Profile, \
    Region, Resource
from workbench.core.providers.contract import (ControllerIdentity, CredentialField, Provider, ProviderContext,
                                               SupportsBilling, SupportsController, SupportsExtend, SupportsSpotHistory,
                                               SupportsStop)
from workbench.core.providers.fan_out import RegionPool, by_region
from workbench.core.providers.launch_kit import LaunchTracker, check_launch
from workbench.core.providers.leftover_sweep import first_failure, still_running, sweep
from workbench.core.providers.profile_settings import apply_ssh_address

from workbench.core.providers import price_snapshot

from . import billing, inventory, teardown
from .clients import ACCESS_KEY_ID, ACCESS_KEY_SECRET, CLI_PROFILE, Api
from .launch import Launcher, release_time
from .offers import OfferBook
from .settings import SITES, parse
from .storage import OssStorageMixin

log = logging.getLogger("workbench.alibaba")
T = TypeVar("T")

REGION_NAMES = {
    "cn-hangzhou": "China (Hangzhou)", "cn-shanghai": "China (Shanghai)", "cn-beijing": "China (Beijing)",
    "cn-zhangjiakou": "China (Zhangjiakou)", "cn-shenzhen": "China (Shenzhen)", "cn-wulanchabu": "China (Ulanqab)",
    "cn-qingdao": "China (Qingdao)", "cn-huhehaote": "China (Hohhot)", "cn-chengdu": "China (Chengdu)",
    "cn-hongkong": "China (Hong Kong)", "ap-southeast-1": "Singapore", "ap-northeast-1": "Japan (Tokyo)",
    "ap-southeast-5": "Indonesia (Jakarta)", "us-west-1": "US (Silicon Valley)", "us-east-1": "US (Virginia)",
    "eu-central-1": "Germany (Frankfurt)",
}


class AlibabaProvider(Provider, SupportsStop, SupportsBilling, SupportsSpotHistory, OssStorageMixin, SupportsExtend,
                      SupportsController):
    """ECS GPU instances, pay-as-you-go and spot, found again by their tags in every enabled region."""

    id = "alibaba"
    display_name = "Alibaba Cloud (ECS)"
    sdk_modules = ("alibabacloud_tea_openapi", "alibabacloud_ecs20140526", "alibabacloud_vpc20160428")
    install_extra = "alibaba"
    credential_fields = (
        CredentialField(ACCESS_KEY_ID, "AccessKey ID", optional=True,
                        help="a RAM user's AccessKey ID (LTAI…); leave empty to use an Alibaba Cloud CLI profile"),
        CredentialField(ACCESS_KEY_SECRET, "AccessKey secret", secret=True, optional=True,
                        help="shown once when the AccessKey was created; stored in the system keyring only"),
        CredentialField(CLI_PROFILE, "Alibaba Cloud CLI profile", optional=True,
                        help="a profile name from ~/.aliyun/config.json (aliyun configure) instead of an AccessKey"),
    )

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)
        self.settings = parse(profile, secrets, context.machine_identity)
        self._api = Api(self.settings, secrets)
        self._offers = OfferBook(self.id, self.settings, self._api)
        self._launches = LaunchTracker()
        self._launcher = Launcher(self.id, profile.name, self.settings, self._api, self._offers, context.install_id,
                                  context.data_dir, self._launches)
        self._regions_pool = RegionPool(f"ali-{profile.name}")

    @classmethod
    def default_region(cls) -> str | None:
        return SITES["china"]

    # -- plumbing ------------------------------------------------------------------------------
    def _fan_out(self, regions: Sequence[str], fn: Callable[[str], T]) -> list[T]:
        """``fn(region)`` for every region side by side; the first error is raised after all finished."""
        return self._regions_pool.map(regions, fn, lambda exc: TransientError(f"{type(exc).__name__}: {exc}"))

    def _where(self, inst: Instance) -> Instance:
        return apply_ssh_address(inst, self.settings.ssh_address)

    # -- account -------------------------------------------------------------------------------
    def check_credentials(self) -> Identity:
        who = self._api.sts("GetCallerIdentity")
        # a read the workbench policy grants: proves a policy is attached, not only that the key signs
        self._api.ecs("DescribeRegions", self.settings.regions[0])
        arn, account = str(who.get("Arn") or ""), str(who.get("AccountId") or "")
        return Identity(account=account, principal=arn,
                        display=f"{arn} (account {account}, {self.settings.site} site, {self._api.describe_source()})")

    def regions(self) -> list[Region]:
        return [Region(r, REGION_NAMES.get(r, r)) for r in self.settings.regions]

    def offers(self, region: str | None = None) -> Iterable[Offer]:
        wanted = [r for r in ([region] if region else self.settings.regions) if r in self.settings.regions]
        return [o for batch in self._fan_out(wanted, self._offers.region) for o in batch]

    # -- lifecycle -------------------------------------------------------------------------------
    def launch(self, req: LaunchRequest) -> list[Instance]:
        check_launch(self.profile.name, req, self.settings.regions, self.settings.ssh_address)
        return [self._where(i) for i in self._launcher.launch(req)]

    def _list_region(self, region: str) -> list[Instance]:
        snap = price_snapshot.load(self.id)
        out = []
        for raw in inventory.describe_instances(self._api, region, self.context.install_id):
            row = snap.find(region, raw.get("InstanceType", ""))
            out.append(self._where(inventory.to_instance(raw, self.id, self.profile.name, region,
                                                         fallback_price=row.on_demand if row else None,
                                                         currency=self.settings.currency)))
        return out

    def instances(self) -> list[Instance]:
        return [i for batch in self._fan_out(list(self.settings.regions), self._list_region) for i in batch]

    def _leftovers_region(self, region: str, launch_ids: Iterable[str] | None = None) -> list[Resource]:
        return inventory.list_leftovers(self._api, region, self.id, self.profile.name, self.context.install_id,
                                        busy=self._launches.in_flight(), launch_ids=launch_ids,
                                        currency=self.settings.currency)

    def leftovers(self) -> list[Resource]:
        return [r for batch in self._fan_out(list(self.settings.regions), self._leftovers_region) for r in batch]

    def terminate(self, instances: Sequence[Instance]) -> None:
        """Release, wait until gone, remove the launches' network and keys, verify; gone is success."""
        groups = by_region(instances, self.id)
        self._fan_out(sorted(groups), lambda region: self._terminate_region(region, groups[region]))

    def _terminate_region(self, region: str, insts: list[Instance]) -> None:
        ids = sorted({i.instance_id for i in insts if i.state != InstanceState.TERMINATED})
        launches = sorted({i.launch_id for i in insts if i.launch_id})
        teardown.release(self._api, region, ids)
        still = teardown.wait_gone(self._api, region, ids, self.settings.terminate_timeout_s, self.settings.poll_s)
        log.info("released %d instance(s) in %s", len(ids) - len(still), region)
        if launches and not still:
            self._sweep(region, launches)
        if still:
            raise still_running(region, still, self.settings.terminate_timeout_s, "being released")

    def _sweep(self, region: str, launch_ids: list[str]) -> None:
        wait_s = min(120.0, self.settings.terminate_timeout_s)
        poll_s = max(self.settings.poll_s, 0.05)
        # DeleteVSwitch and DeleteVpc are asynchronous: a deleted vSwitch / VPC stays listed (Pending /
        # Deleting) for a while; the sweep waits for what it deleted to go, up to the teardown's deadline
        sweep(region, lambda: self._leftovers_region(region, launch_ids),
              lambda found: teardown.delete_all(self._api, found, retry_s=wait_s, poll_s=poll_s),
              settle_s=wait_s, poll_s=poll_s)

    def delete(self, resources: Sequence[Resource]) -> None:
        """Delete leftovers; an economically stopped instance is released and its launch swept like a terminate."""
        stopped = [r for r in resources if r.provider == self.id and r.kind == inventory.KIND_STOPPED]
        if stopped:
            self.terminate([Instance(self.id, r.profile, r.resource_id, r.launch_id or "", r.region, "",
                                     InstanceState.DEALLOCATED) for r in stopped])
        groups = by_region((r for r in resources if r.kind != inventory.KIND_STOPPED), self.id)

        def one(region: str) -> None:
            failures = teardown.delete_all(self._api, groups[region], retry_s=min(60.0, self.settings.terminate_timeout_s),
                                           poll_s=max(self.settings.poll_s, 0.05))
            err = first_failure(failures, lambda res, exc: type(exc)(f"deleting {res.kind} {res.resource_id}: "
                                                                     f"{exc.message}", exc.hint))
            if err is not None:
                raise err

        self._fan_out(sorted(groups), one)

    def stop(self, instances: Sequence[Instance]) -> None:
        """Stop in economical mode (StopCharging): compute stops billing, the disks still bill."""
        for region, insts in by_region(instances, self.id).items():
            ids = [i.instance_id for i in insts if i.state == InstanceState.RUNNING]
            if ids:
                self._api.ecs("StopInstances", region, InstanceId=ids, StoppedMode="StopCharging", ForceStop=False)

    def extend(self, instances: Sequence[Instance], not_after: float) -> None:
        """Move the cloud-side release (AutoReleaseTime) to ``not_after`` + margin, when a run is extended."""
        when = release_time(not_after, self.settings.release_margin_s)
        for inst in instances:
            if inst.provider == self.id and inst.state.billable:
                self._api.ecs("ModifyInstanceAutoReleaseTime", inst.region, InstanceId=inst.instance_id,
                              AutoReleaseTime=when)

    def controller_identity(self, create: bool = False) -> ControllerIdentity:
        """The controller's RAM role ``workbench-controller`` and its policy (:mod:`.controller`), scoped to this
        install's tag and the profile's ``storage_role_arn``.  Blocks; AuthError names
        resources/policies/alibaba-app-controller-additions.json when the user may not create them."""
        from .controller import controller_identity
        from .storage import ROLE_SETTING

        storage_role = (self.profile.settings.get(ROLE_SETTING) or "").strip() or None
        return controller_identity(self._api, self.context.install_id, storage_role, create,
                                   self.profile.settings.get("storage_uri"))

    # -- money --------------------------------------------------------------------------------
    def actual_costs(self, start_day: str, end_day: str) -> list[ActualCost]:
        return billing.actual_costs(self._api, self.id, self.profile.name, self.context.install_id, start_day, end_day)

    def spot_price_history(self, instance: Instance, start: float, end: float) -> list[tuple[float, float]]:
        import calendar
        import time as _time

        fmt = "%Y-%m-%dT%H:%M:%SZ"
        body = self._api.ecs("DescribeSpotPriceHistory", instance.region, InstanceType=instance.instance_type,
                             NetworkType="vpc", ZoneId=instance.extra.get("zone") or None,
                             StartTime=_time.strftime(fmt, _time.gmtime(start)),
                             EndTime=_time.strftime(fmt, _time.gmtime(end)))
        points = []
        for p in (body.get("SpotPrices") or {}).get("SpotPriceType") or []:
            try:
                points.append((float(calendar.timegm(_time.strptime(p["Timestamp"], fmt))), float(p["SpotPrice"])))
            except (KeyError, ValueError):
                continue
        return sorted(points)

    def console_url(self, item: Instance | Resource) -> str | None:
        region = item.region
        if isinstance(item, Instance):
            return f"https://ecs.console.aliyun.com/server/{item.instance_id}/detail?regionId={region}"
        pages = {inventory.KIND_VPC: "vpc", inventory.KIND_VSWITCH: "vswitch", inventory.KIND_EIP: "eip"}
        if item.kind in pages:
            return f"https://vpc.console.aliyun.com/{pages[item.kind]}/{region}/{pages[item.kind]}s/{item.resource_id}"
        return f"https://ecs.console.aliyun.com/?regionId={region}"
