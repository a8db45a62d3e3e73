"""Launching a job's machine(s) on ECS: idempotent per launch id, rolled back on failure.

Steps in one region (every resource tagged with the launch's tags):

1. Instances already tagged with the launch id → return them (a retried or resumed launch never
   makes a second machine; the ClientTokens make each create call idempotent as well).
2. A VPC of its own (CreateVpc) and, per zone tried, a vSwitch (10.88.<zone>.0/24).  Both calls
   are asynchronous in Alibaba's API (the answer comes while the VPC / vSwitch is still ``Pending``;
   CreateVSwitch into a Pending VPC fails with IncorrectVpcStatus, RunInstances into a Pending
   vSwitch with IncorrectVSwitchStatus), so each is polled (DescribeVpcs / DescribeVSwitches, 1 s
   apart at first, backing off to ``poll_s``) until ``Available`` before it is used, found ones too;
   past ``launch_timeout_s`` the launch fails (TransientError) and is rolled back.
   Zones: the profile's, else the zones DescribeAvailableResource says have stock now (spot:
   cheapest first).
3. The app's RSA key (ImportKeyPair: ECS's key import takes RSA keys) and a security group in the
   VPC allowing SSH (22/tcp) only from ``ssh_cidr`` (default: this computer's public address /32).
4. Image: the profile's, else the newest public image of ``image_family``.
5. RunInstances: pay-as-you-go, encrypted ESSD system disk, a public address
   (InternetMaxBandwidthOut, pay-by-traffic), spot as SpotAsPriceGo or SpotWithPriceLimit (the job's
   max_price), UserData with the guard, and AutoReleaseTime = launch + max runtime + margin: the cloud
   releases the machine even if the app, the laptop and the guard all fail.  No stock in a zone
   (OperationDenied.NoStock) moves on to the next zone.
6. A multi-node launch (``req.count`` N > 1) is the same RunInstances with Amount = MinAmount = N into
   one vSwitch (all or nothing, one zone; no stock for N moves all N to the next zone), a rule that
   lets the group's members reach each other, and a ``workbench:node-rank`` tag per node
   (see :mod:`.cluster`).
7. The controller's machine (tag ``workbench:role=controller``) passes its RAM role (``RamRoleName``
   ``workbench-controller``) and, without a max runtime, gets an AutoReleaseTime two hours ahead, which
   the controller moves with ``extend`` while it has work (:mod:`.controller`).

Any failure after something was made deletes it (by the ids this call got and by the launch tag),
then raises the original error.  Threading: the caller's worker; one launch per launch id at a time (:class:`LaunchTracker`).
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from workbench.core.domain.errors import CapacityError, SpecError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance, LaunchRequest, Resource
from workbench.core.providers.launch_kit import LaunchTracker
from workbench.core.providers.public_address import public_cidr
from workbench.core.providers.sshkeys import ensure_keypair

from . import cluster, inventory, teardown, userdata
from .inventory import (KIND_KEY, KIND_SG, KIND_VPC, KIND_VSWITCH, TAG_CURRENCY, TAG_DISK, TAG_GPU, TAG_MARKET,
                        TAG_PRICE, TAG_SSH_USER, owner_tags, pages)
from .controller import NAME as CONTROLLER_ROLE
from .controller import is_controller, release_deadline
from .offers import OfferBook
from .settings import AlibabaSettings

log = logging.getLogger("workbench.alibaba.launch")
VPC_CIDR = "10.88.0.0/16"
MIN_RELEASE_AHEAD_S = 31 * 60  # ECS refuses an AutoReleaseTime less than 30 minutes ahead


@dataclass(frozen=True)
class Image:
    image_id: str
    name: str
    size_gb: int
    source: str


def release_time(not_after: float | None, margin_s: float, now: float | None = None) -> str | None:
    """The AutoReleaseTime for a deadline: deadline + margin, at least 31 minutes ahead, whole minutes, UTC."""
    if not_after is None:
        return None
    now = time.time() if now is None else now
    at = max(not_after + margin_s, now + MIN_RELEASE_AHEAD_S)
    at = (int(at) // 60 + 1) * 60  # the next whole minute (ECS drops seconds)
    return datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def token(*parts: str) -> str:
    """A ClientToken (ASCII, at most 64 characters) for one create call of a launch."""
    text = "-".join(parts)
    return text if len(text) <= 64 else text[:40] + "-" + hashlib.sha256(text.encode()).hexdigest()[:23]


def zone_cidr(zone: str) -> str:
    index = 10 + max(0, min(25, ord(zone[-1].lower()) - ord("a"))) if zone[-1].isalpha() else 40
    return f"10.88.{index}.0/24"


class Launcher:
    """Launches for one profile (see the module doc); ``launches`` is shared with the leftovers listing."""

    def __init__(self, provider_id: str, profile_name: str, settings: AlibabaSettings, api: Any, offers: OfferBook,
                 install_id: str, data_dir: Path, launches: LaunchTracker) -> None:
        self._id, self._profile, self._s, self._api, self._offers = provider_id, profile_name, settings, api, offers
        self._install_id, self._data_dir, self._launches = install_id, data_dir, launches
        self._images: dict[str, tuple[float, Image]] = {}

    def launch(self, req: LaunchRequest) -> list[Instance]:
        with self._launches.running(req.launch_id):
            return self._launch(req)

    def _as_instances(self, raw: list[dict[str, Any]], region: str, price: float | None = None) -> list[Instance]:
        return [inventory.to_instance(r, self._id, self._profile, region, fallback_price=price,
                                      currency=self._s.currency) for r in raw]

    def _launch(self, req: LaunchRequest) -> list[Instance]:
        region = req.region
        existing = inventory.describe_instances(self._api, region, self._install_id, req.launch_id)
        if existing:
            log.info("launch %s already has %d instance(s) in %s: nothing created", req.launch_id, len(existing), region)
            if req.count > 1:
                known = {r["InstanceId"]: int(v) for r in existing
                         if (v := inventory.ecs_tags_of(r).get(inventory.TAG_NODE_RANK, "")).isdigit()}
                ranks = cluster.rank_plan(sorted(r["InstanceId"] for r in existing), known)
                cluster.tag_ranks(self._api, region, ranks, known)
                return self._ranked(req, self._as_instances(existing, region), ranks)
            return self._as_instances(existing, region)
        cidr = self._s.ssh_cidr or public_cidr(self._s.checkip_url)
        created: dict[str, list[str]] = {"instances": [], "sg": [], "key": [], "vsw": [], "vpc": []}
        try:
            zones = self._zones(req)
            vpc_id = self._vpc(req, created)
            key = self._key(req, created)
            group = self._group(req, vpc_id, cidr, created)
            image = self._image(region)
            return self._run(req, vpc_id, zones, key, group, image, created)
        except BaseException as exc:
            self._rollback(req, created, exc)
            if isinstance(exc, Exception) and not isinstance(exc, WorkbenchError):
                from .errors import translate

                raise translate(exc, "RunInstances", region=region, itype=req.offer.instance_type,
                                secrets=self._api.secret_values()) from None
            raise

    # -- pieces ------------------------------------------------------------------------------
    def _tags(self, req: LaunchRequest, **more: str) -> list[dict[str, str]]:
        tags = {**req.tags, "Name": f"workbench-{req.launch_id}", **more}
        return [{"Key": k, "Value": str(v)} for k, v in tags.items()]

    def _zones(self, req: LaunchRequest) -> list[str]:
        itype = req.offer.instance_type
        if self._s.zones:
            return list(self._s.zones)
        with_stock, without = self._offers.stock(req.region, itype).get(itype, ([], []))
        if not with_stock:
            where = f" (sold out in {', '.join(sorted(without))})" if without else ""
            raise CapacityError(f"Alibaba Cloud has no stock for {itype} in any zone of {req.region}{where}",
                                hint="try another region or GPU type, or retry later")
        spot = req.offer.extra.get("spot_by_zone") or {}
        zones = sorted(with_stock)
        if req.spot and spot:
            zones.sort(key=lambda z: (spot.get(z, float("inf")), z))
        return zones

    def _vpc(self, req: LaunchRequest, created: dict[str, list[str]]) -> str:
        region = req.region
        found = list(pages(self._api, "vpc", "DescribeVpcs", region, ("Vpcs", "Vpc"),
                           Tag=owner_tags(self._install_id, req.launch_id)))
        if found:
            vpc_id = found[0]["VpcId"]
        else:
            vpc_id = self._api.vpc("CreateVpc", region, CidrBlock=VPC_CIDR, VpcName=f"workbench-{req.launch_id}",
                                   Description=f"cloud-gpu-workbench launch {req.launch_id}",
                                   ClientToken=token(req.launch_id, "vpc"), Tag=self._tags(req))["VpcId"]
            created["vpc"].append(vpc_id)

        def status() -> str | None:
            vpcs = self._api.vpc("DescribeVpcs", region, VpcId=vpc_id).get("Vpcs", {}).get("Vpc") or []
            return vpcs[0].get("Status") if vpcs else None

        self._until_available(f"VPC {vpc_id}", region, status)
        return vpc_id

    def _vswitch(self, req: LaunchRequest, vpc_id: str, zone: str, created: dict[str, list[str]]) -> str:
        region = req.region
        found = [w for w in pages(self._api, "vpc", "DescribeVSwitches", region, ("VSwitches", "VSwitch"),
                                  VpcId=vpc_id, ZoneId=zone)]
        if found:
            wid = found[0]["VSwitchId"]
        else:
            wid = self._api.vpc("CreateVSwitch", region, VpcId=vpc_id, ZoneId=zone, CidrBlock=zone_cidr(zone),
                                VSwitchName=f"workbench-{req.launch_id}-{zone}",
                                ClientToken=token(req.launch_id, zone), Tag=self._tags(req))["VSwitchId"]
            created["vsw"].append(wid)

        def status() -> str | None:
            rows = self._api.vpc("DescribeVSwitches", region, VSwitchId=wid, VpcId=vpc_id) \
                .get("VSwitches", {}).get("VSwitch") or []
            return rows[0].get("Status") if rows else None

        self._until_available(f"vSwitch {wid} ({zone})", region, status)
        return wid

    def _until_available(self, what: str, region: str, status: Callable[[], str | None]) -> None:
        """Poll ``status`` until it says Available: after 1 s (or ``poll_s`` if shorter), then twice as
        long each time up to ``poll_s``; not listed yet counts as not Available (the listing can lag the
        create call).  Past ``launch_timeout_s``: TransientError (the caller rolls the launch back)."""
        deadline = time.monotonic() + self._s.launch_timeout_s
        delay = min(self._s.poll_s, 1.0)
        while True:
            now_status = status()
            if now_status == "Available":
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransientError(
                    f"the launch's {what} in {region} was still {now_status or 'not listed'} after "
                    f"{self._s.launch_timeout_s:g} s; Alibaba Cloud makes new networks Available asynchronously",
                    hint="retry the launch (the half-made network is removed), or raise the profile's launch_timeout_s")
            time.sleep(min(delay, left))
            delay = min(delay * 2, self._s.poll_s)

    def _key(self, req: LaunchRequest, created: dict[str, list[str]]) -> str:
        name = f"workbench-{req.launch_id}"
        found = self._api.ecs("DescribeKeyPairs", req.region, KeyPairName=name).get("KeyPairs", {}).get("KeyPair")
        if found:
            return name
        public = ensure_keypair(self._data_dir, comment=f"workbench-{self._install_id}", key_type="rsa").public_openssh
        try:
            self._api.ecs("ImportKeyPair", req.region, KeyPairName=name, PublicKeyBody=public, Tag=self._tags(req))
        except WorkbenchError as exc:
            if "KeyPair.AlreadyExist" in exc.message:  # an attempt whose answer was lost made it
                return name
            raise
        created["key"].append(name)
        return name

    def _group(self, req: LaunchRequest, vpc_id: str, cidr: str, created: dict[str, list[str]]) -> str:
        region = req.region
        found = list(pages(self._api, "ecs", "DescribeSecurityGroups", region, ("SecurityGroups", "SecurityGroup"),
                           VpcId=vpc_id, Tag=owner_tags(self._install_id, req.launch_id)))
        if found:
            gid = found[0]["SecurityGroupId"]
            if req.count > 1:  # an earlier attempt may have stopped before the rule (asking again adds nothing)
                cluster.self_reference(self._api, region, gid)
            return gid
        gid = self._api.ecs("CreateSecurityGroup", region, VpcId=vpc_id, SecurityGroupName=f"workbench-{req.launch_id}",
                            Description=f"cloud-gpu-workbench launch {req.launch_id}: SSH only",
                            SecurityGroupType="normal", ClientToken=token(req.launch_id, "sg"),
                            Tag=self._tags(req))["SecurityGroupId"]
        created["sg"].append(gid)
        self._api.ecs("AuthorizeSecurityGroup", region, SecurityGroupId=gid,
                      Permissions=[{"IpProtocol": "tcp", "PortRange": "22/22", "SourceCidrIp": cidr, "Policy": "accept",
                                    "Priority": "1", "Description": "SSH from the workbench user"}])
        if req.count > 1:
            cluster.self_reference(self._api, region, gid)
        return gid

    def _image(self, region: str) -> Image:
        hit = self._images.get(region)
        if hit is not None and time.monotonic() - hit[0] < self._s.cache_ttl_s:
            return hit[1]
        if self._s.image:
            images = list(pages(self._api, "ecs", "DescribeImages", region, ("Images", "Image"), ImageId=self._s.image))
            if not images:
                raise SpecError(f"the profile's image {self._s.image} does not exist in {region}",
                                hint="set image to an image id of that region, or remove it")
            source = "profile"
        else:
            images = list(pages(self._api, "ecs", "DescribeImages", region, ("Images", "Image"),
                                ImageFamily=self._s.image_family, ImageOwnerAlias="system", OSType="linux",
                                Architecture="x86_64"))
            if not images:
                raise SpecError(f"no public image of family {self._s.image_family} in {region}",
                                hint="set the profile's image (an image id) or image_family")
            source = f"newest of {self._s.image_family}"
        newest = max(images, key=lambda i: i.get("CreationTime", ""))
        image = Image(newest["ImageId"], newest.get("ImageName", ""), int(newest.get("Size") or 20), source)
        self._images[region] = (time.monotonic(), image)
        return image

    def _run(self, req: LaunchRequest, vpc_id: str, zones: list[str], key: str, group: str, image: Image,
             created: dict[str, list[str]]) -> list[Instance]:
        spec, offer, region = req.spec, req.offer, req.region
        itype = offer.instance_type
        price = offer.hourly(req.spot)
        controller = is_controller(req.tags)
        # the controller's system disk is the smallest the image allows (20 GiB cloud_efficiency: what its all-in
        # price counts, core/money/controller_cost); a job's is at least 40 GB
        disk = max(int(spec.resources.disk_gb or 0), image.size_gb, 20 if controller else 40)
        minutes = spec.guards.max_runtime_minutes
        not_after = None if minutes is None else time.time() + minutes * 60
        script = userdata.render(req.launch_id, self._install_id, spec, self._s.ssh_user, not_after=not_after,
                                 install_driver=self._s.gpu_driver == "install")
        more = {TAG_MARKET: "spot" if req.spot else "ondemand", TAG_SSH_USER: self._s.ssh_user, TAG_DISK: str(disk),
                TAG_CURRENCY: offer.prices.currency}
        if price is not None:
            more[TAG_PRICE] = f"{price:.6g}"
        if offer.gpu_model:
            more[TAG_GPU] = f"{offer.gpu_model}:{offer.gpu_count}"
        params: dict[str, Any] = {
            "InstanceType": itype, "ImageId": image.image_id, "SecurityGroupId": group, "KeyPairName": key,
            "InstanceName": f"workbench-{req.launch_id}", "InstanceChargeType": "PostPaid",
            "InternetChargeType": "PayByTraffic", "InternetMaxBandwidthOut": self._s.bandwidth_mbps,
            "SystemDisk": {"Category": "cloud_efficiency" if controller else self._s.disk_category, "Size": disk,
                           "Encrypted": "true"},
            "UserData": userdata.encode(script), "Amount": req.count, "MinAmount": req.count,
            "Tag": self._tags(req, **more),
        }
        if controller:  # its own RAM role (ram:PassRole), never a key; the cloud-side end it moves by `extend`
            params["RamRoleName"] = CONTROLLER_ROLE
            release = release_time(release_deadline(req.tags, not_after), 0.0)
        else:
            release = release_time(not_after, self._s.release_margin_s)
        if release:
            params["AutoReleaseTime"] = release
        if req.spot:
            limit = spec.resources.max_price
            params.update(SpotStrategy="SpotWithPriceLimit" if limit is not None else "SpotAsPriceGo",
                          SpotInterruptionBehavior="Terminate")
            if limit is not None:
                params["SpotPriceLimit"] = float(limit)
        tried: list[str] = []
        last: CapacityError | None = None
        for zone in zones:
            tried.append(zone)
            vsw = self._vswitch(req, vpc_id, zone, created)
            try:
                body = self._api.ecs("RunInstances", region, ZoneId=zone, VSwitchId=vsw,
                                     ClientToken=token(req.launch_id, "run", zone), **params)
            except CapacityError as exc:
                log.info("no stock for %s in %s (%s): trying the next zone", itype, zone, exc.message)
                last = exc
                continue
            ids = list((body.get("InstanceIdSets") or {}).get("InstanceIdSet") or [])
            created["instances"].extend(ids)
            log.info("launched %s: %s in %s (auto-release %s)", req.launch_id, ", ".join(ids), zone, release or "none")
            if len(ids) != req.count:  # MinAmount = Amount: ECS starts all or none; anything else is rolled back
                raise CapacityError(f"Alibaba Cloud started {len(ids)} of the {req.count} machines asked for in {zone}",
                                    hint="a multi-node launch needs every node; retry later or in another region")
            ranks = cluster.rank_plan(ids, {})
            if req.count > 1:
                cluster.tag_ranks(self._api, region, ranks)
            raw = inventory.describe_instances(self._api, region, self._install_id, ids=ids)
            made = self._as_instances(raw, region, price) if raw else [
                Instance(self._id, self._profile, iid, req.launch_id, region, itype,
                         inventory.STATES["Pending"], price_per_hour=price or 0.0, currency=offer.prices.currency,
                         spot=req.spot, gpu_model=offer.gpu_model, gpu_count=offer.gpu_count,
                         extra={"zone": zone, "ssh_user": self._s.ssh_user, "ssh_key_type": "rsa"}) for iid in ids]
            return self._ranked(req, made, ranks) if req.count > 1 else made
        raise CapacityError(f"Alibaba Cloud has no stock for {itype} in any zone of {region} "
                            f"(tried {', '.join(tried) or 'none'})",
                            hint=(last.hint if last else None) or "try another region or GPU type")

    @staticmethod
    def _ranked(req: LaunchRequest, nodes: list[Instance], ranks: dict[str, int]) -> list[Instance]:
        """The nodes in rank order, each knowing its rank and the launch's size."""
        out = [i.with_state(i.state, extra={**i.extra, "node_rank": ranks[i.instance_id], "num_nodes": req.count})
               for i in nodes if i.instance_id in ranks]
        return sorted(out, key=lambda i: i.extra["node_rank"])

    # -- rollback -----------------------------------------------------------------------------
    def _rollback(self, req: LaunchRequest, created: dict[str, list[str]], cause: BaseException) -> None:
        """Delete what this launch made (by id and by tag); never raises (the cause is what the user needs)."""
        region = req.region
        try:
            raw = inventory.describe_instances(self._api, region, self._install_id, req.launch_id)
            ids = sorted(set(created["instances"]) | {r["InstanceId"] for r in raw})
            if ids:
                teardown.release(self._api, region, ids)
                teardown.wait_gone(self._api, region, ids, self._s.terminate_timeout_s, self._s.poll_s)
            found = inventory.list_leftovers(self._api, region, self._id, self._profile, self._install_id,
                                             launch_ids=[req.launch_id], currency=self._s.currency)
            known = {r.resource_id for r in found}
            for kind, key in ((KIND_SG, "sg"), (KIND_KEY, "key"), (KIND_VSWITCH, "vsw"), (KIND_VPC, "vpc")):
                for rid in created[key]:
                    if rid not in known:
                        found.append(Resource(self._id, self._profile, rid, kind, region, req.launch_id,
                                              extra={"key_name": rid} if kind == KIND_KEY else {}))
            failures = teardown.delete_all(self._api, found, retry_s=min(120.0, self._s.terminate_timeout_s),
                                           poll_s=max(self._s.poll_s, 0.05))
            for res, exc in failures:
                log.error("rollback of %s left %s %s: %s", req.launch_id, res.kind, res.resource_id, exc.message)
            if not failures:
                log.info("rolled back launch %s after %s", req.launch_id, type(cause).__name__)
        except Exception as exc:  # noqa: BLE001 - the cause matters more; teardown finds the rest by tag
            log.error("rollback of %s failed (%s); `workbench down %s` removes what is left", req.launch_id,
                      type(exc).__name__, req.launch_id)
