"""Launching a job's machine(s) on EC2: idempotent per launch id, rolled back on failure.

Steps in one region:

1. Look for instances already tagged with the launch id (any state): found →
   return them; a retried or resumed launch never creates a second machine.
   (moto does not honour ClientToken, and AWS keeps a token for hours only, so
   the tag lookup is the guarantee; the ClientToken is set as well.)
2. Key pair: the public half of the install's key (``core.providers.sshkeys``), imported
   once per launch (reused when an earlier attempt made it).
3. Security group in the default VPC: SSH (22/tcp) only from ``ssh_cidr``
   (default: this computer's public address /32; 0.0.0.0/0 only with
   ``allow_ssh_from_anywhere=true``).
4. Image: the profile's override, else the public SSM parameter of the Deep
   Learning AMI, else the newest matching ``describe_images`` result.
5. ``run_instances`` with tags on instance, volume and network interface (N machines at once
   for a multi-node launch, with its placement group, node-to-node rule, EFA and node-rank
   tags: :mod:`.cluster`);
   encrypted gp3 root volume deleted on termination; IMDSv2 required;
   shutdown from inside terminates; user data records the start; spot as a
   one-time request with an optional max price.  InsufficientInstanceCapacity
   (or an AZ that does not offer the type) moves on to the next AZ.  The account's controller
   machine (``TAG_ROLE: ROLE_CONTROLLER`` in the request's tags) gets the controller's instance
   profile (:mod:`.controller_identity`), asked again while IAM has not propagated it to EC2.

Any failure after something was created deletes it again (found both by the ids
this call got and by the launch tag), then raises the original error.

EC2 is eventually consistent (:mod:`.consistency`): a call naming the security group or the
instances this launch has just made (the SSH rule, the node-to-node rule, RunInstances with the
new group, the node-rank tags, the rollback's TerminateInstances; the rollback confirms a new group
with DescribeSecurityGroups before deleting it) is asked again with backoff while it answers
InvalidGroup.NotFound / InvalidInstanceID.NotFound.

Threading: runs on the caller's worker thread; launches of the same launch id run one at a
time (:class:`~workbench.core.providers.launch_kit.LaunchTracker`).  Blocks for a few seconds (plus the rollback's
wait for termination when run_instances succeeded and a later step failed).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from workbench.core.domain.errors import CapacityError, ConfigError, SpecError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance, LaunchRequest, Resource
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_LAUNCH, TAG_ROLE
from workbench.core.providers.launch_kit import LaunchTracker
from workbench.core.providers.public_address import public_cidr
from workbench.core.providers.sdk_errors import mapped
from workbench.core.providers.sshkeys import ensure_keypair

from . import cluster, inventory, teardown, userdata
from .codes import error_code
from .consistency import NEW_GROUP, NEW_INSTANCE, new_instance_profile, settled
from .errors import translate
from .clients import Clients
from .settings import AwsSettings

log = logging.getLogger("workbench.aws.launch")

IMAGE_NAME_PATTERNS = ("Deep Learning Base*GPU*Ubuntu*22.04*", "Deep Learning*Ubuntu*", "Deep Learning*")


@dataclass(frozen=True)
class Image:
    image_id: str
    name: str
    root_device: str
    root_size_gb: int
    ssh_user: str
    source: str  # "profile override" / "SSM parameter" / "describe_images"


def ssh_user_for(image_name: str) -> str:
    lowered = image_name.lower()
    if "ubuntu" in lowered:
        return "ubuntu"
    if "amazon linux" in lowered or "amzn" in lowered or "al2" in lowered:
        return "ec2-user"
    return "ubuntu"


class Launcher:
    """Launches for one profile (see the module doc); ``launches`` is shared with the leftovers listing."""

    def __init__(self, provider_id: str, profile_name: str, settings: AwsSettings, clients: Clients,
                 install_id: str, data_dir: Any, launches: LaunchTracker) -> None:
        self._id = provider_id
        self._profile = profile_name
        self._settings = settings
        self._clients = clients
        self._install_id = install_id
        self._data_dir = data_dir
        self._launches = launches
        self._images: dict[str, tuple[float, Image]] = {}

    def _err(self, exc: BaseException, what: str, operation: str, region: str, itype: str = "",
             service: str = "ec2") -> WorkbenchError:
        return translate(exc, what, service=service, operation=operation, region=region, instance_type=itype,
                         secrets=self._clients.secret_values())

    def _call(self, what: str, operation: str, region: str, fn: Any, *, itype: str = "", **kwargs: Any) -> Any:
        with mapped(lambda exc: self._err(exc, what, operation, region, itype)):
            return fn(**kwargs)

    # -- entry -----------------------------------------------------------------------------
    def launch(self, req: LaunchRequest) -> list[Instance]:
        with self._launches.running(req.launch_id):
            return self._launch(req)

    def _existing(self, ec2: Any, req: LaunchRequest) -> list[Instance]:
        raw = self._call("looking for this launch's instances", "DescribeInstances", req.region,
                         inventory.describe_instances, ec2=ec2, install_id=self._install_id,
                         launch_ids=[req.launch_id], states=inventory.ALL_STATES)
        return [inventory.to_instance(r, self._id, self._profile, req.region) for r in raw]

    def _launch(self, req: LaunchRequest) -> list[Instance]:
        region = req.region
        ec2 = self._clients.client("ec2", region)
        existing = self._existing(ec2, req)
        if existing:
            log.info("launch %s already has %d instance(s) in %s: nothing created", req.launch_id,
                     len(existing), region)
            return existing
        cidr = self._settings.ssh_cidr or public_cidr(self._settings.checkip_url)
        created: dict[str, list[str]] = {"key": [], "sg": [], "instances": [], "pg": []}
        try:
            key_name = self._key_pair(ec2, req, created)
            vpc_id, subnets = self._network(ec2, region)
            group_id = self._security_group(ec2, req, vpc_id, cidr, created)
            placement = self._cluster(ec2, req, group_id, created) if cluster.wants_cluster(req) else None
            image = self._image(region)
            return self._run(ec2, req, image, key_name, group_id, subnets, created, placement)
        except BaseException as exc:
            self._rollback(ec2, req, created, exc)
            if isinstance(exc, Exception) and not isinstance(exc, WorkbenchError):
                raise self._err(exc, f"launching {req.offer.instance_type}", "RunInstances", region,
                                req.offer.instance_type) from None
            raise

    # -- pieces ------------------------------------------------------------------------------
    def _tag_spec(self, kind: str, req: LaunchRequest, name: str, **more: str) -> dict[str, Any]:
        tags = {**req.tags, "Name": name, **more}
        return {"ResourceType": kind, "Tags": [{"Key": k, "Value": str(v)} for k, v in tags.items()]}

    def _key_pair(self, ec2: Any, req: LaunchRequest, created: dict[str, list[str]]) -> str:
        name = f"workbench-{req.launch_id}"
        found = self._call("looking for the launch's key pair", "DescribeKeyPairs", req.region,
                           ec2.describe_key_pairs,
                           Filters=[{"Name": f"tag:{TAG_LAUNCH}", "Values": [req.launch_id]}]).get("KeyPairs")
        if found:
            return found[0]["KeyName"]
        public = ensure_keypair(self._data_dir, comment=f"workbench-{self._install_id}").public_openssh
        try:
            answer = ec2.import_key_pair(KeyName=name, PublicKeyMaterial=public.encode(),
                                         TagSpecifications=[self._tag_spec("key-pair", req, name)])
        except Exception as exc:  # noqa: BLE001
            if error_code(exc) == "InvalidKeyPair.Duplicate":  # made by an attempt whose tags we cannot see yet
                return name
            raise self._err(exc, "importing the SSH key", "ImportKeyPair", req.region) from None
        created["key"].append(name)
        return name

    def _cluster(self, ec2: Any, req: LaunchRequest, group_id: str, created: dict[str, list[str]]) -> str:
        """A multi-node launch's node-to-node rule and placement group (see :mod:`.cluster`)."""
        try:
            if group_id in created["sg"]:  # made just now: it may not have propagated yet
                settled(lambda: cluster.self_reference(ec2, group_id), NEW_GROUP, self._settings.poll_s)
            else:
                cluster.self_reference(ec2, group_id)
        except Exception as exc:  # noqa: BLE001
            if error_code(exc) != "InvalidPermission.Duplicate":  # a resumed launch set it already
                raise self._err(exc, "letting the nodes reach each other", "AuthorizeSecurityGroupIngress",
                                req.region) from None
        find = lambda: self._call("looking for the launch's placement group", "DescribePlacementGroups",  # noqa: E731
                                  req.region, cluster.list_groups, ec2=ec2,
                                  filters=[{"Name": f"tag:{TAG_LAUNCH}", "Values": [req.launch_id]}])
        try:
            name, new = cluster.ensure_placement_group(ec2, req, self._tag_spec, find)
        except WorkbenchError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._err(exc, "creating the cluster placement group", "CreatePlacementGroup", req.region) from None
        if new:
            created["pg"].append(name)
        return name

    def _network(self, ec2: Any, region: str) -> tuple[str, dict[str, str]]:
        if self._settings.subnet:
            found = self._call("finding the profile's subnet", "DescribeSubnets", region, ec2.describe_subnets,
                               SubnetIds=[self._settings.subnet]).get("Subnets") or []
            if not found:
                raise ConfigError(f"the profile's subnet {self._settings.subnet} does not exist in {region}")
            return found[0]["VpcId"], {found[0]["AvailabilityZone"]: found[0]["SubnetId"]}
        vpcs = self._call("finding the default VPC", "DescribeVpcs", region, ec2.describe_vpcs,
                          Filters=[{"Name": "isDefault", "Values": ["true"]}]).get("Vpcs") or []
        if not vpcs:
            raise ConfigError(f"the AWS account has no default VPC in {region}",
                              hint=f"create one: aws ec2 create-default-vpc --region {region}")
        vpc_id = vpcs[0]["VpcId"]
        subnets = self._call("finding the default subnets", "DescribeSubnets", region, ec2.describe_subnets,
                             Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                      {"Name": "default-for-az", "Values": ["true"]}]).get("Subnets") or []
        by_az = {s["AvailabilityZone"]: s["SubnetId"] for s in subnets}
        if not by_az:
            raise ConfigError(f"the default VPC in {region} has no default subnets",
                              hint=f"create them: aws ec2 create-default-subnet --availability-zone {region}a")
        return vpc_id, by_az

    def _security_group(self, ec2: Any, req: LaunchRequest, vpc_id: str, cidr: str,
                        created: dict[str, list[str]]) -> str:
        name = f"workbench-{req.launch_id}"
        found = self._call("looking for the launch's security group", "DescribeSecurityGroups", req.region,
                           ec2.describe_security_groups,
                           Filters=[{"Name": f"tag:{TAG_LAUNCH}", "Values": [req.launch_id]}]).get("SecurityGroups")
        if found:
            return found[0]["GroupId"]
        group_id = self._call("creating the security group", "CreateSecurityGroup", req.region,
                              ec2.create_security_group, GroupName=name, VpcId=vpc_id,
                              Description=f"cloud-gpu-workbench launch {req.launch_id}: SSH only",
                              TagSpecifications=[self._tag_spec("security-group", req, name)])["GroupId"]
        created["sg"].append(group_id)
        ssh = [{"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22,
                "IpRanges": [{"CidrIp": cidr, "Description": "SSH from the workbench user"}]}]
        self._call("allowing SSH in the security group", "AuthorizeSecurityGroupIngress", req.region,
                   lambda: settled(lambda: ec2.authorize_security_group_ingress(GroupId=group_id, IpPermissions=ssh),
                                   NEW_GROUP, self._settings.poll_s))
        return group_id

    def _image(self, region: str) -> Image:
        hit = self._images.get(region)
        if hit is not None and time.monotonic() - hit[0] < self._settings.cache_ttl_s:
            return hit[1]
        ec2 = self._clients.client("ec2", region)
        override = self._settings.ami_for(region)
        image: Image | None = None
        if override:
            image = self._describe_image(ec2, region, override, "profile override")
            if image is None:
                raise SpecError(f"the profile's image {override} does not exist in {region}",
                                hint="set ami.<region> to an image of that region, or remove the override")
        if image is None:
            try:
                ssm = self._clients.client("ssm", region)
                ami = ssm.get_parameter(Name=self._settings.ami_ssm_parameter)["Parameter"]["Value"]
                image = self._describe_image(ec2, region, ami, "SSM parameter")
            except Exception as exc:  # noqa: BLE001 - parameter missing / not allowed: fall back
                log.info("SSM image parameter unreadable in %s (%s): searching images", region,
                         error_code(exc) or type(exc).__name__)
        if image is None:
            image = self._search_image(ec2, region)
        self._images[region] = (time.monotonic(), image)
        return image

    def _describe_image(self, ec2: Any, region: str, ami: str, source: str) -> Image | None:
        try:
            images = ec2.describe_images(ImageIds=[ami]).get("Images") or []
        except Exception as exc:  # noqa: BLE001
            if error_code(exc).startswith("InvalidAMIID"):
                return None
            raise self._err(exc, "reading the machine image", "DescribeImages", region) from None
        return self._as_image(images[0], source) if images else None

    @staticmethod
    def _as_image(img: dict[str, Any], source: str) -> Image:
        root = img.get("RootDeviceName") or "/dev/sda1"
        size = 0
        for bdm in img.get("BlockDeviceMappings") or []:
            if bdm.get("DeviceName") == root:
                size = int((bdm.get("Ebs") or {}).get("VolumeSize") or 0)
        name = img.get("Name") or img["ImageId"]
        return Image(img["ImageId"], name, root, size, ssh_user_for(name), source)

    def _search_image(self, ec2: Any, region: str) -> Image:
        for pattern in IMAGE_NAME_PATTERNS:
            images = self._call("searching for a Deep Learning image", "DescribeImages", region, ec2.describe_images,
                                Owners=["amazon"], Filters=[{"Name": "name", "Values": [pattern]},
                                                            {"Name": "state", "Values": ["available"]},
                                                            {"Name": "architecture", "Values": ["x86_64"]}])
            found = images.get("Images") or []
            if found:
                newest = max(found, key=lambda i: i.get("CreationDate", ""))
                return self._as_image(newest, "describe_images")
        raise SpecError(f"no GPU deep-learning image found in {region}",
                        hint="set the profile's ami (or ami.<region>) to an image id")

    def _zones(self, ec2: Any, req: LaunchRequest, subnets: dict[str, str]) -> list[str]:
        itype = req.offer.instance_type
        offered = self._call("listing the zones that offer the type", "DescribeInstanceTypeOfferings", req.region,
                             ec2.describe_instance_type_offerings, LocationType="availability-zone",
                             Filters=[{"Name": "instance-type", "Values": [itype]}]).get("InstanceTypeOfferings")
        zones = sorted({o["Location"] for o in offered or []} & set(subnets)) or sorted(subnets)
        spot_by_az = req.offer.extra.get("spot_by_az") or {}
        if req.spot and spot_by_az:  # cheapest zone first
            zones.sort(key=lambda z: (spot_by_az.get(z, float("inf")), z))
        return zones

    def _run(self, ec2: Any, req: LaunchRequest, image: Image, key_name: str, group_id: str,
             subnets: dict[str, str], created: dict[str, list[str]], placement: str | None = None) -> list[Instance]:
        spec, offer = req.spec, req.offer
        itype = offer.instance_type
        price = offer.hourly(req.spot)
        disk = max(int(spec.resources.disk_gb or 0), image.root_size_gb, 8)
        name = spec.name
        extra_tags = {inventory.TAG_MARKET: "spot" if req.spot else "on-demand",
                      inventory.TAG_SSH_USER: image.ssh_user, inventory.TAG_DISK: str(disk)}
        if price is not None:
            extra_tags[inventory.TAG_PRICE] = f"{price:.6g}"
        if offer.gpu_model:
            extra_tags[inventory.TAG_GPU] = f"{offer.gpu_model}:{offer.gpu_count}"
        if placement is not None and offer.rdma:
            extra_tags[cluster.TAG_INTERCONNECT] = "efa"
        params: dict[str, Any] = {
            "ImageId": image.image_id, "InstanceType": itype, "MinCount": req.count, "MaxCount": req.count,
            "KeyName": key_name,
            "UserData": userdata.render(req.launch_id, self._install_id, spec, image.ssh_user),
            "InstanceInitiatedShutdownBehavior": "terminate",
            "MetadataOptions": {"HttpTokens": "required", "HttpEndpoint": "enabled", "HttpPutResponseHopLimit": 2},
            "BlockDeviceMappings": [{"DeviceName": image.root_device, "Ebs": {
                "VolumeSize": disk, "VolumeType": "gp3", "DeleteOnTermination": True, "Encrypted": True}}],
            "TagSpecifications": [self._tag_spec(kind, req, name, **(extra_tags if kind == "instance" else {}))
                                  for kind in ("instance", "volume", "network-interface")],
        }
        if req.spot:
            spot_options: dict[str, Any] = {"SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}
            if spec.resources.max_price is not None:
                spot_options["MaxPrice"] = f"{spec.resources.max_price:.4f}"
            params["InstanceMarketOptions"] = {"MarketType": "spot", "SpotOptions": spot_options}
        controller = req.tags.get(TAG_ROLE) == ROLE_CONTROLLER
        if controller:  # the controller runs as its own role, never with the user's keys
            params["IamInstanceProfile"] = {"Name": self._settings.controller_role}
        new_group = NEW_GROUP if group_id in created["sg"] else ()

        def not_yet(exc: BaseException) -> bool:
            return error_code(exc) in new_group or (controller and new_instance_profile(exc))

        tried: list[str] = []
        last: WorkbenchError | None = None
        for az in self._zones(ec2, req, subnets):
            tried.append(az)
            token = f"{req.launch_id}-{az}"[-64:]
            if placement is None:
                where: dict[str, Any] = {"SubnetId": subnets[az], "SecurityGroupIds": [group_id],
                                         "Placement": {"AvailabilityZone": az}}
            else:
                public = not (self._settings.ssh_address and self._settings.ssh_address[0] == "private")
                where = {**cluster.network_params(req, subnets[az], group_id, public),
                         "Placement": {"AvailabilityZone": az, "GroupName": placement}}
            try:
                answer = settled(lambda: ec2.run_instances(**params, **where, ClientToken=token), not_yet,
                                 self._settings.poll_s)
            except Exception as exc:  # noqa: BLE001
                err = self._err(exc, f"launching {itype}", "RunInstances", req.region, itype)
                if isinstance(err, TransientError):
                    # the request may have gone through before the answer was lost: the tags tell
                    again = self._existing(ec2, req)
                    if again:
                        created["instances"].extend(i.instance_id for i in again)
                        return self._only_requested(ec2, req, again)
                if isinstance(err, CapacityError):
                    log.info("no capacity for %s in %s (%s): trying the next zone", itype, az, error_code(exc))
                    last = err
                    continue
                raise err from None
            made = answer.get("Instances") or []
            created["instances"].extend(i["InstanceId"] for i in made)
            log.info("launched %s: %s in %s", req.launch_id, ", ".join(i["InstanceId"] for i in made), az)
            mine = [inventory.to_instance(i, self._id, self._profile, req.region, fallback_price=price) for i in made]
            if placement is not None:
                mine = self._ranked(ec2, req, made, mine)
            if (answer.get("ResponseMetadata") or {}).get("RetryAttempts"):
                # a retried RunInstances: AWS dedupes it by ClientToken, other EC2 endpoints may not
                return self._only_requested(ec2, req, mine)
            return mine
        raise CapacityError(f"AWS has no capacity for {itype} in any zone of {req.region} "
                            f"(tried {', '.join(tried) or 'none'})",
                            hint=(last.hint if last else None) or "try another region or instance type")

    def _ranked(self, ec2: Any, req: LaunchRequest, made: list[dict[str, Any]],
                mine: list[Instance]) -> list[Instance]:
        """Tag the nodes with their ranks; the instances in rank order, each knowing its rank."""
        try:
            ranks = cluster.tag_ranks(ec2, made, self._settings.poll_s)
        except Exception as exc:  # noqa: BLE001
            raise self._err(exc, "tagging the nodes with their ranks", "CreateTags", req.region) from None
        out = [i.with_state(i.state, extra={**i.extra, "node_rank": ranks[i.instance_id], "num_nodes": req.count})
               for i in mine]
        return sorted(out, key=lambda i: i.extra["node_rank"])

    def _only_requested(self, ec2: Any, req: LaunchRequest, keep: list[Instance]) -> list[Instance]:
        """Terminate instances of this launch beyond ``keep`` (duplicates of a retried request)."""
        raw = inventory.describe_instances(ec2, self._install_id, [req.launch_id])
        kept = {i.instance_id for i in keep}
        extra = [r["InstanceId"] for r in raw if r["InstanceId"] not in kept]
        if extra and len(kept) >= req.count:
            log.warning("launch %s: terminating %d duplicate instance(s) of a retried request: %s",
                        req.launch_id, len(extra), ", ".join(extra))
            teardown.terminate_ids(ec2, extra)
        return keep

    # -- rollback -----------------------------------------------------------------------------
    def _rollback(self, ec2: Any, req: LaunchRequest, created: dict[str, list[str]], cause: BaseException) -> None:
        """Delete what this launch made (by id and by tag); never raises (the cause is what the user needs)."""
        region = req.region
        try:
            raw = inventory.describe_instances(ec2, self._install_id, [req.launch_id])
            ids = sorted(set(created["instances"]) | {r["InstanceId"] for r in raw})
            if ids:
                teardown.terminate_new(ec2, created["instances"], self._settings.poll_s)
                teardown.terminate_ids(ec2, ids)
                teardown.wait_terminated(ec2, ids, self._settings.terminate_wait_s, self._settings.poll_s)
            leftovers = inventory.list_leftovers(ec2, region, self._id, self._profile, self._install_id,
                                                 launch_ids=[req.launch_id])
            known = {r.resource_id for r in leftovers}
            for gid in created["sg"]:
                if gid not in known:
                    leftovers.append(Resource(self._id, self._profile, gid, inventory.KIND_SG, region, req.launch_id))
            known_keys = {r.extra.get("key_name") for r in leftovers if r.kind == inventory.KIND_KEY}
            for key_name in created["key"]:
                if key_name not in known_keys:
                    leftovers.append(Resource(self._id, self._profile, key_name, inventory.KIND_KEY, region,
                                              req.launch_id, extra={"key_name": key_name}))
            for pg in created["pg"]:
                if pg not in known:
                    leftovers.append(Resource(self._id, self._profile, pg, cluster.KIND_PLACEMENT_GROUP, region,
                                              req.launch_id, extra={"group_name": pg}))
            for gid in created["sg"]:  # made moments ago: a NotFound answer to the delete would not mean gone
                settled(lambda g=gid: ec2.describe_security_groups(GroupIds=[g]), NEW_GROUP, self._settings.poll_s)
            failures = teardown.delete_all(ec2, leftovers, retry_dependency_s=min(60.0, self._settings.terminate_wait_s),
                                           poll_s=max(self._settings.poll_s, 0.05))
            for res, exc in failures:
                log.error("rollback of %s left %s %s: %s", req.launch_id, res.kind, res.resource_id,
                          error_code(exc) or type(exc).__name__)
            if not failures:
                log.info("rolled back launch %s after %s", req.launch_id, type(cause).__name__)
        except Exception as exc:  # noqa: BLE001 - the cause matters more; teardown finds the rest by tag
            log.error("rollback of %s failed (%s); `workbench down %s` removes what is left", req.launch_id,
                      error_code(exc) or type(exc).__name__, req.launch_id)
