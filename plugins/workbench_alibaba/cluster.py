"""The multi-node pieces of an ECS launch: all nodes in one zone, a node-to-node rule, node ranks.

A launch of N > 1 machines (``LaunchRequest.count``) is one ``RunInstances`` with
``Amount = MinAmount = N`` into one vSwitch (so one zone): ECS starts all N or none
(``OperationDenied.NoStock`` when the zone cannot, and the launcher moves on to the next zone
with all N).  Besides that:

* a **self-referencing rule** in the launch's security group: protocol ALL, ports -1/-1, from
  the group itself (``SourceGroupId``), so the nodes talk to each other on every port (NCCL,
  gloo, MPI, the inter-node SSH) while SSH from outside stays limited to the user's address;
  ECS answers success without adding anything when the rule exists, so a resumed launch
  simply asks again;
* the tag ``workbench:node-rank`` on each instance (0 = head), by its place in RunInstances'
  ``InstanceIdSet``, written right after RunInstances with one ``TagResources`` per node (the
  values differ), a few side by side.
  A resumed launch whose nodes lost their ranks (a crash between the two calls) ranks the
  untagged ones into the free ranks, in instance-id order.

No deployment set is made: ECS's deployment-set strategies spread instances over hosts for
availability rather than pack them for latency, and one vSwitch already keeps the nodes in
one zone.  The private addresses the nodes use come from ``VpcAttributes.PrivateIpAddress``
(``extra["private_ip"]``, see :mod:`.inventory`).

Threading: functions over an :class:`~.clients.Api` (any thread); :func:`tag_ranks` fans out on a
small pool of its own.  Errors: workbench errors
from the API propagate (the launcher rolls back).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping

from .inventory import TAG_NODE_RANK


def self_reference(api: Any, region: str, group_id: str) -> None:
    """Let the group's members reach each other on every protocol and port (the nodes of one launch)."""
    api.ecs("AuthorizeSecurityGroup", region, SecurityGroupId=group_id,
            Permissions=[{"IpProtocol": "ALL", "PortRange": "-1/-1", "SourceGroupId": group_id, "Policy": "accept",
                          "Priority": "1", "Description": "the launch's nodes talk to each other"}])


def rank_plan(ordered_ids: Iterable[str], known: Mapping[str, int]) -> dict[str, int]:
    """Every instance's rank: ``known`` ranks kept, the others (in the given order) take the free ranks."""
    ids = list(dict.fromkeys(ordered_ids))
    ranks = {i: r for i, r in known.items() if i in ids}
    free = iter(r for r in range(len(ids)) if r not in set(ranks.values()))
    for iid in ids:
        if iid not in ranks:
            ranks[iid] = next(free)
    return ranks


def tag_ranks(api: Any, region: str, ranks: Mapping[str, int], known: Mapping[str, int] | None = None) -> None:
    """Write ``workbench:node-rank`` on each instance whose tag is missing or different."""
    todo = [(iid, rank) for iid, rank in ranks.items() if (known or {}).get(iid) != rank]
    if not todo:
        return

    def one(item: tuple[str, int]) -> None:
        api.ecs("TagResources", region, ResourceType="instance", ResourceId=[item[0]],
                Tag=[{"Key": TAG_NODE_RANK, "Value": str(item[1])}])

    with ThreadPoolExecutor(max_workers=min(8, len(todo)), thread_name_prefix="ali-ranks") as pool:
        list(pool.map(one, todo))
