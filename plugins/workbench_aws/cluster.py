"""The multi-node pieces of an EC2 launch: placement group, node-to-node rule, EFA, node ranks.

A launch of N > 1 machines (``LaunchRequest.count``) is one ``RunInstances`` with
``MinCount = MaxCount = N`` (EC2 starts all of them or none), plus:

* a **cluster placement group** ``workbench-<launch id>`` (tagged like everything else), so
  the nodes sit close together on the network; it is deleted with the launch (rollback,
  teardown, leftovers) once its instances are gone;
* a **self-referencing rule** in the launch's security group: every protocol from the group
  itself, so the nodes talk to each other (NCCL, gloo, MPI, the inter-node SSH) while SSH
  from outside stays limited to the user's address;
* an **EFA interface** (``InterfaceType=efa``, network card 0) where the type supports it
  (``Offer.rdma``: ``EfaSupported`` in DescribeInstanceTypes); one EFA per node, so types
  with several network cards (p4d, p5) use one of them — enough for NCCL over EFA, not
  their full bandwidth;
* the tag ``workbench:node-rank`` on each instance, by its launch index (0 = head), written
  right after RunInstances, all N at once.

Threading: functions over a client the caller owns; :func:`tag_ranks` fans out on a small
pool of its own (boto3 clients may be shared between threads).  Failure rules: botocore
errors propagate (the launcher translates them and rolls back).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping

from workbench.core.domain.models import LaunchRequest

from .consistency import NEW_INSTANCE, settled

TAG_NODE_RANK = "workbench:node-rank"
TAG_INTERCONNECT = "workbench:interconnect"  # "efa" on nodes launched with an EFA interface
KIND_PLACEMENT_GROUP = "placement-group"


def group_name(launch_id: str) -> str:
    return f"workbench-{launch_id}"


def wants_cluster(req: LaunchRequest) -> bool:
    return req.count > 1


def ensure_placement_group(ec2: Any, req: LaunchRequest, tag_spec: Callable[..., dict[str, Any]],
                           find: Callable[[], list[dict[str, Any]]]) -> tuple[str, bool]:
    """The launch's cluster placement group (name, created now?); an earlier attempt's is reused."""
    found = find()
    if found:
        return found[0]["GroupName"], False
    name = group_name(req.launch_id)
    ec2.create_placement_group(GroupName=name, Strategy="cluster",
                               TagSpecifications=[tag_spec("placement-group", req, name)])
    return name, True


def self_reference(ec2: Any, group_id: str) -> None:
    """Let the group's members reach each other on every protocol (the nodes of one launch)."""
    ec2.authorize_security_group_ingress(GroupId=group_id, IpPermissions=[{
        "IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group_id,
                                                 "Description": "the launch's nodes talk to each other"}]}])


def network_params(req: LaunchRequest, subnet_id: str, group_id: str, public_ip: bool) -> dict[str, Any]:
    """RunInstances network arguments of a multi-node launch: one interface, EFA where the type has it."""
    nic: dict[str, Any] = {"DeviceIndex": 0, "NetworkCardIndex": 0, "SubnetId": subnet_id, "Groups": [group_id],
                           "AssociatePublicIpAddress": public_ip, "DeleteOnTermination": True}
    if req.offer.rdma:
        nic["InterfaceType"] = "efa"
    return {"NetworkInterfaces": [nic]}


def tag_ranks(ec2: Any, made: list[Mapping[str, Any]], poll_s: float = 1.0) -> dict[str, int]:
    """Tag each new instance with its node rank (its launch index); instance id -> rank.

    The ids come straight from RunInstances: CreateTags is asked again while EC2 answers
    InvalidInstanceID.NotFound (not propagated yet, :mod:`.consistency`)."""
    ordered = sorted(made, key=lambda i: (int(i.get("AmiLaunchIndex", 0)), i["InstanceId"]))
    ranks = {i["InstanceId"]: n for n, i in enumerate(ordered)}

    def one(item: tuple[str, int]) -> None:
        settled(lambda: ec2.create_tags(Resources=[item[0]], Tags=[{"Key": TAG_NODE_RANK, "Value": str(item[1])}]),
                NEW_INSTANCE, poll_s)

    with ThreadPoolExecutor(max_workers=min(16, len(ranks)), thread_name_prefix="aws-ranks") as pool:
        list(pool.map(one, ranks.items()))
    return ranks


def list_groups(ec2: Any, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Placement groups matching ``filters`` (our owner/launch tag filters)."""
    return ec2.describe_placement_groups(Filters=filters).get("PlacementGroups") or []


def delete_group(ec2: Any, name: str) -> None:
    ec2.delete_placement_group(GroupName=name)
