"""What the cluster has: its partitions and nodes in one snapshot, the GPU shapes they make, the offers the
wizard shows beside the clouds', and a job's request checked against them before anything is queued.

One SSH round trip: :data:`SNAPSHOT_COMMAND` prints the user name, ``scontrol show partition -o`` and
``scontrol -d show node -o`` (``-d`` adds ``GresUsed``: which GPUs jobs hold now) between marker lines, each
with its exit status, so a failing command is reported with Slurm's own words instead of read as an empty
cluster.  Partition membership is read from each node's ``Partitions=`` (no host list to expand).

GPU models: a typed GRES (``gpu:v100:2``) names its model through ``workbench.core.domain.gpus``; an untyped
one (``gpu:2``, common on university clusters) through the profile's partition mapping (``a100=A100``);
without either the shape has no model and says so in a note.

Offers: one per partition shape and GPU count 1..GPUs per node (a job asking 1 GPU of a 2-GPU node gets
one GPU, the rest stay for others).  CPUs and memory are the node's share for that many GPUs (2 GPUs of a
4-GPU, 32-CPU node: 16 CPUs) — what the batch script may ask with ``--cpus-per-gpu``/``--mem-per-gpu``; the
whole node's are in ``extra``.  Price: the profile's rate per GPU-hour × GPUs, else 0 ("your cluster").

Pure functions; any thread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

from workbench.core.domain.errors import ConfigError, PluginError
from workbench.core.domain.gpus import GPU_MODELS, normalize_gpu_name
from workbench.core.domain.models import Offer, Prices
from workbench.core.domain.phrase import Phrase, phrase

from .formats import (MARK, expand_hostlist, gpus_of, none_if_empty, parse_duration, parse_gres, records,
                      sections, words)
from .queue import command_error

_SECTIONS = (("user", "id -un"), ("partitions", "scontrol show partition -o"),
             ("nodes", "scontrol -d show node -o"))
#: one text for the login node: every section between ``MARK NAME`` and ``MARK rc=N`` lines
SNAPSHOT_COMMAND = "sh -c '" + "; ".join(
    f"echo {MARK} {name}; {cmd} 2>&1; echo {MARK} rc=$?" for name, cmd in _SECTIONS) + f"; echo {MARK} end'"

#: node state words (``IDLE+DRAIN``, ``DOWN*``) that mean no new job starts there now
_NOT_USABLE = {"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "MAINT", "NOT_RESPONDING",
               "POWERING_DOWN", "POWER_DOWN", "REBOOT_ISSUED", "REBOOT_REQUESTED", "FUTURE", "UNKNOWN",
               "INVAL", "INVALID_REG", "PLANNED", "RESERVED", "PERFCTRS", "UNK"}


@dataclass(frozen=True)
class Partition:
    """One partition: its nodes, limits and who may use it (None: everyone)."""

    name: str
    nodes: tuple[str, ...]
    max_time_s: int | None
    default: bool
    state: str  # UP, DOWN, DRAIN, INACTIVE
    allow_accounts: tuple[str, ...] | None
    deny_accounts: tuple[str, ...] | None
    allow_qos: tuple[str, ...] | None
    max_nodes: int | None = None


@dataclass(frozen=True)
class Node:
    """One node.  ``gpu_type``: its GRES type (None: untyped); ``gpus``/``gpus_used``: all its GPUs;
    ``gres``: (type, count) per GPU type, for the rare node with two kinds."""

    name: str
    partitions: tuple[str, ...]
    state: str
    cpus: int
    cpus_alloc: int
    memory_mb: int
    memory_alloc_mb: int
    gpu_type: str | None
    gpus: int
    gpus_used: int
    addr: str | None
    gres: tuple[tuple[str | None, int], ...] = ()
    gres_used: tuple[tuple[str | None, int], ...] = ()

    @property
    def usable(self) -> bool:
        """True when a new job may start here now (not down, drained, failing, not responding)."""
        if self.state.endswith("*"):  # "*": the node does not respond
            return False
        flags = {w.rstrip("*~#!%$@^-") for w in self.state.upper().split("+")}
        return not (flags & _NOT_USABLE)

    @property
    def gpus_free(self) -> int:
        """GPUs a new job could get now: none on an unusable node or one whose CPUs are all taken."""
        if not self.usable or self.cpus_alloc >= self.cpus:
            return 0
        return max(0, self.gpus - self.gpus_used)

    def free_of(self, gpu_type: str | None) -> int:
        """GPUs of one GRES type a new job could get now (see :attr:`gpus_free`)."""
        if not self.usable or self.cpus_alloc >= self.cpus:
            return 0
        total = sum(c for t, c in self.gres if t == gpu_type)
        return max(0, total - sum(c for t, c in self.gres_used if t == gpu_type))


@dataclass(frozen=True)
class ClusterSnapshot:
    partitions: tuple[Partition, ...]
    nodes: tuple[Node, ...]
    user: str

    def partition(self, name: str) -> Partition | None:
        return next((p for p in self.partitions if p.name == name), None)

    def nodes_of(self, partition: str) -> list[Node]:
        """The partition's nodes (by the partition's node list, or each node's ``Partitions=``)."""
        p = self.partition(partition)
        names = set(p.nodes) if p is not None else set()
        return [n for n in self.nodes if n.name in names or partition in n.partitions]

    @property
    def default_partition(self) -> Partition | None:
        return next((p for p in self.partitions if p.default), None)


def parse_snapshot(text: str) -> ClusterSnapshot:
    """The snapshot in :data:`SNAPSHOT_COMMAND`'s answer.  A Slurm command that failed raises its error
    (``queue.command_error``: TransientError when the controller did not answer, ConfigError when the login
    node has no Slurm); an answer that is not ours raises PluginError."""
    parts = sections(text)
    missing = [name for name, _ in _SECTIONS if name not in parts]
    if missing:
        first = next((line for line in text.splitlines() if line.strip()), "nothing")
        raise PluginError(f"the login node's answer is not a Slurm snapshot (no {', '.join(missing)}); "
                          f"it began: {first[:120]}",
                          hint="the login shell may print text or fail before the command runs; try ssh to it")
    for name, doing in (("partitions", "reading the partitions"), ("nodes", "reading the nodes"),
                        ("user", "reading the user name")):
        if parts[name].rc != 0:
            if parts[name].rc is None:
                raise PluginError(f"the login node's answer ended while {doing}", hint="try again")
            raise command_error(parts[name].text, doing)
    try:
        nodes = tuple(_node(r) for r in records(parts["nodes"].text, "NodeName"))
        members: dict[str, list[str]] = {}
        for n in nodes:
            for p in n.partitions:
                members.setdefault(p, []).append(n.name)
        partitions = tuple(_partition(r, members) for r in records(parts["partitions"].text, "PartitionName"))
    except (KeyError, ValueError) as exc:
        raise PluginError(f"could not read the cluster's scontrol output: {exc}",
                          hint="this Slurm may print a format the workbench does not know; report it") from None
    if not partitions:
        raise ConfigError("the cluster shows no partition to this user",
                          hint="ask the cluster's administrators which partitions you may use")
    return ClusterSnapshot(partitions, nodes, parts["user"].text.strip().splitlines()[-1] if parts["user"].text.strip() else "")


def _names(value: str | None) -> tuple[str, ...] | None:
    value = none_if_empty(value)
    return None if value is None or value.upper() == "ALL" else tuple(v for v in value.split(",") if v)


def _partition(r: dict[str, str], members: dict[str, list[str]]) -> Partition:
    name = r["PartitionName"]
    nodes = members.get(name)
    max_nodes = r.get("MaxNodes", "UNLIMITED")
    return Partition(
        name=name, nodes=tuple(nodes) if nodes is not None else expand_hostlist(r.get("Nodes")),
        max_time_s=parse_duration(r.get("MaxTime")), default=r.get("Default", "NO").upper() == "YES",
        state=r.get("State", "UP").upper(), allow_accounts=_names(r.get("AllowAccounts")),
        deny_accounts=_names(r.get("DenyAccounts")), allow_qos=_names(r.get("AllowQos")),
        max_nodes=int(max_nodes) if max_nodes.isdigit() else None)


def _int(value: str | None) -> int:
    m = re.match(r"\d+", value or "")
    return int(m.group(0)) if m else 0


def _node(r: dict[str, str]) -> Node:
    total = gpus_of(parse_gres(r.get("Gres")))
    used = gpus_of(parse_gres(r.get("GresUsed")))
    if "GresUsed" not in r:  # without -d: AllocTRES=…,gres/gpu=1,gres/gpu:v100=1 (GPUs tracked as TRES)
        tres = r.get("AllocTRES", "")
        used = {t: int(c) for t, c in re.findall(r"gres/gpu:([^=,]+)=(\d+)", tres)}
        m = re.search(r"gres/gpu=(\d+)", tres)
        if not used and m:  # only the total: the node's one type, if it has one
            used = {next(iter(total)) if len(total) == 1 else None: int(m.group(1))}
    kinds = tuple(sorted(total.items(), key=lambda kv: (-kv[1], kv[0] or "")))
    return Node(
        name=r["NodeName"], partitions=tuple(p for p in (none_if_empty(r.get("Partitions")) or "").split(",") if p),
        state=r.get("State", "UNKNOWN"), cpus=_int(r.get("CPUEfctv") or r.get("CPUTot")),
        cpus_alloc=_int(r.get("CPUAlloc")), memory_mb=_int(r.get("RealMemory")),
        memory_alloc_mb=_int(r.get("AllocMem")), gpu_type=kinds[0][0] if kinds else None,
        gpus=sum(total.values()), gpus_used=sum(used.values()), addr=none_if_empty(r.get("NodeAddr")),
        gres=kinds, gres_used=tuple(used.items()))


# -- shapes and offers ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeGpus:
    """One node of a shape: its GPUs of the shape's type, how many are free now, its CPUs and memory."""

    gpus: int
    free: int
    cpus: int
    memory_gb: float


@dataclass(frozen=True)
class GpuShape:
    """The GPUs of one type in one partition (a job asking that type may land on any of its nodes).
    ``gpus_per_node``: the most one node has; ``cpus_per_node``/``memory_gb``: the smallest such node's;
    ``nodes_free``: nodes where a job could get a GPU now; ``per_node``: each node, for offers by count;
    ``note``: why the model is unknown, if it is."""

    partition: str
    gpu_type: str | None
    gpu_model: str | None
    gpus_per_node: int
    cpus_per_node: int
    memory_gb: float
    nodes_total: int
    nodes_free: int
    gpus_free: int
    gpus_total: int
    max_time_s: int | None
    per_node: tuple[NodeGpus, ...] = ()
    state: str = "UP"
    note: Phrase | None = None

    def able(self, count: int) -> list[NodeGpus]:
        """The nodes with at least ``count`` GPUs of this type (free or not)."""
        return [n for n in self.per_node if n.gpus >= count]


def model_of(gpu_type: str | None, partition: str, model_map: Mapping[str, str]) -> str | None:
    """The display model of a GRES type (``v100`` → ``V100``, ``a100_80g`` → ``A100``), else of the
    partition's mapping (``a100=A100``), else None."""
    if gpu_type:
        known = normalize_gpu_name(gpu_type)
        if known:
            return known
    mapped = model_map.get(partition)
    if mapped:
        return normalize_gpu_name(mapped) or mapped
    return None


def shapes(snapshot: ClusterSnapshot, model_map: Mapping[str, str]) -> list[GpuShape]:
    """The GPU shapes of every partition, in the cluster's order: one per GPU type of its nodes (a node
    with 1 V100 and 1 A100 is in two); CPU-only nodes make none."""
    out = []
    for p in snapshot.partitions:
        groups: dict[str | None, list[NodeGpus]] = {}
        for n in snapshot.nodes_of(p.name):
            for t, c in n.gres:
                if c > 0:
                    groups.setdefault(t, []).append(NodeGpus(c, n.free_of(t), n.cpus, round(n.memory_mb / 1024, 1)))
        for gtype, nodes in groups.items():
            model = model_of(gtype, p.name, model_map)
            note = None
            if model is None and gtype is None:
                note = phrase("the GPUs of partition {partition} have no type in Slurm: name their model in the "
                              "profile's GPU models ({partition}=MODEL, e.g. {partition}=A100)", partition=p.name)
            elif model is None:
                note = phrase("GPU type {gres_type} of partition {partition} is not a model the workbench knows: "
                              "name it in the profile's GPU models ({partition}=MODEL)", gres_type=gtype,
                              partition=p.name)
            out.append(GpuShape(
                partition=p.name, gpu_type=gtype, gpu_model=model, gpus_per_node=max(n.gpus for n in nodes),
                cpus_per_node=min(n.cpus for n in nodes), memory_gb=min(n.memory_gb for n in nodes),
                nodes_total=len(nodes), nodes_free=sum(1 for n in nodes if n.free > 0),
                gpus_free=sum(n.free for n in nodes), gpus_total=sum(n.gpus for n in nodes),
                max_time_s=p.max_time_s, per_node=tuple(nodes), state=p.state, note=note))
    return out


def gpu_memory_gb(model: str | None, gpu_type: str | None) -> float:
    """Memory per GPU: the size the GRES type names (``a100_80g`` → 80), else the model's smallest, else 0."""
    known = GPU_MODELS.get(model or "")
    if known is None:
        return 0.0
    for size in sorted(known.memory_gb, reverse=True):
        if gpu_type and re.search(rf"(?<!\d){size:g}\s*g", gpu_type.lower()):
            return float(size)
    return float(min(known.memory_gb))


def free_now(nodes_free: int, nodes_total: int) -> Phrase:
    """"free now: 3 of 8 nodes", translatable (:func:`offers` puts its English text in the offer)."""
    return phrase("free now: {free} of {total} nodes", free=nodes_free, total=nodes_total)


def offers(shapes: list[GpuShape], *, provider: str, region: str, rate_per_gpu_hour: float | None,
           currency: str, as_of: str) -> list[Offer]:
    """One Offer per shape and GPU count 1..GPUs per node, named ``gpu · 2×V100`` (partition · count×model).

    For ``k`` GPUs only the shape's nodes with at least ``k`` count: ``availability_note`` "free now: F of N
    nodes" (F: nodes with ``k`` GPUs free now; a plain string, as Offer has it: the app rebuilds the
    translatable phrase with :func:`free_now` from ``extra``), ``extra["nodes_total"]``/``["nodes_free"]``,
    and CPUs and memory: the smallest such node's share for ``k`` GPUs.  A partition that is down, drained or
    inactive gives offers that are not available."""
    out: list[Offer] = []
    seen: set[str] = set()
    for s in shapes:
        label = s.gpu_model or s.gpu_type or "GPU"
        for k in range(1, s.gpus_per_node + 1):
            able = s.able(k)
            name = f"{s.partition} · {k}×{label}"
            if name in seen:  # two GRES types of one model in one partition (v100 and v100s → V100)
                name += f" ({s.gpu_type or 'untyped'})"
            seen.add(name)
            free = sum(1 for n in able if n.free >= k)
            usable = s.state == "UP"
            note = str(free_now(free, len(able))) if usable else str(phrase(
                "partition {partition} is {state}: jobs wait until it is up", partition=s.partition, state=s.state))
            prices = Prices(on_demand=(rate_per_gpu_hour or 0.0) * k, currency=currency, as_of=as_of,
                            source="profile setting" if rate_per_gpu_hour else "your cluster")
            node = min(able, key=lambda n: (n.cpus * k // n.gpus, n.memory_gb * k / n.gpus))
            extra = {"partition": s.partition, "gres_type": s.gpu_type, "nodes_total": len(able),
                     "nodes_free": free, "gpus_free": s.gpus_free, "gpus_total": s.gpus_total,
                     "max_time_s": s.max_time_s, "gpus_per_node": node.gpus, "cpus_per_node": node.cpus,
                     "memory_gb_per_node": node.memory_gb}
            if s.note is not None:
                extra["gpu_model_note"] = str(s.note)
            out.append(Offer(
                provider=provider, region=region, instance_type=name, gpu_model=s.gpu_model, gpu_count=k,
                gpu_memory_gb=gpu_memory_gb(s.gpu_model, s.gpu_type), vcpus=max(1, node.cpus * k // node.gpus),
                memory_gb=round(node.memory_gb * k / node.gpus, 1), prices=prices, available=usable,
                availability_note=note, extra=extra))
    return out


# -- a request checked before sbatch ------------------------------------------------------------------------------
def _matches(gres_type: str | None, wanted: str) -> bool:
    if gres_type is None:
        return False
    if gres_type.lower() == wanted.lower():
        return True
    a, b = normalize_gpu_name(gres_type), normalize_gpu_name(wanted)
    return a is not None and a == b


def gres_type(snapshot: ClusterSnapshot, partition: str, wanted: str | None) -> str | None:
    """The raw GRES type to ask ``sbatch --gres`` for ``wanted`` (a GRES type or model: ``V100`` → ``v100``)
    on ``partition``; None for an untyped request (or none of the partition's types matches)."""
    if not wanted:
        return None
    for n in snapshot.nodes_of(partition):
        for t, _ in n.gres:
            if _matches(t, wanted):
                return t
    return None


def _describe(nodes: list[Node]) -> str:
    kinds = sorted({(normalize_gpu_name(t) or t) if t else "GPUs without a type" for n in nodes for t, _ in n.gres})
    return ", ".join(kinds) or "no GPUs"


def check_request(snapshot: ClusterSnapshot, *, partition: str | None, gpu_type: str | None, gpus_per_node: int,
                  nodes: int, time_limit_s: int | None, account: str | None, cpus_per_node: int | None = None,
                  mem_mb_per_node: int | None = None) -> str:
    """The partition a job will use (the default one when ``partition`` is None), or ConfigError saying
    what the partition lacks and what would work: an unknown partition, or one that takes no jobs (drained,
    inactive), GPUs of a type or number it lacks, more CPUs or memory than its nodes have, more nodes than it
    has (or allows), a time beyond its MaxTime, an account it does not take.  ``gpu_type``: a GRES type or a
    model (``V100``); None accepts any GPU, typed or not.  (Without ``EnforcePartLimits`` Slurm accepts a job
    over the node, time, CPU or account limits and lets it pend for ever: checked here, before sbatch.)"""
    names = ", ".join(p.name for p in snapshot.partitions)
    if partition is None:
        p = snapshot.default_partition
        if p is None:
            raise ConfigError("the cluster has no default partition", hint=f"name one in the profile: {names}")
    else:
        p = snapshot.partition(partition)
        if p is None:
            raise ConfigError(f"the cluster has no partition {partition}", hint=f"its partitions: {names}")
    if p.state in ("DRAIN", "INACTIVE"):
        raise ConfigError(f"partition {p.name} takes no new jobs now (it is {p.state})",
                          hint=f"pick another partition: {names}")
    members = snapshot.nodes_of(p.name)
    if gpus_per_node > 0:
        fitting = [n for n in members if n.gpus > 0 and (gpu_type is None or any(_matches(t, gpu_type) for t, _ in n.gres))]
        if gpu_type is not None and not fitting:
            with_type = [q.name for q in snapshot.partitions
                         if any(_matches(t, gpu_type) for n in snapshot.nodes_of(q.name) for t, _ in n.gres)]
            raise ConfigError(f"partition {p.name} has no {gpu_type} GPUs (it has: {_describe(members)})",
                              hint=(f"partitions with {gpu_type}: {', '.join(with_type)}" if with_type else
                                    "ask for a GPU model the cluster has, or none"))
        if not fitting:
            gpu_parts = [q.name for q in snapshot.partitions if any(n.gpus for n in snapshot.nodes_of(q.name))]
            raise ConfigError(f"partition {p.name} has no GPUs",
                              hint=f"partitions with GPUs: {', '.join(gpu_parts) or 'none'}")
        def count(n: Node) -> int:
            return sum(c for t, c in n.gres if gpu_type is None or _matches(t, gpu_type))
        most = max(count(n) for n in fitting)
        if gpus_per_node > most:
            model = (normalize_gpu_name(gpu_type) or gpu_type) if gpu_type else _describe(fitting)
            raise ConfigError(f"partition {p.name} has at most {most} GPUs per node ({model}); the job asks "
                              f"{gpus_per_node}", hint=f"ask for at most {most} GPUs per node, and more nodes if "
                                                      "the job runs on several")
        members = [n for n in fitting if count(n) >= gpus_per_node]
    if cpus_per_node and members and cpus_per_node > max(n.cpus for n in members):
        most = max(n.cpus for n in members)
        raise ConfigError(f"partition {p.name}'s nodes have at most {most} CPUs; the job asks {cpus_per_node}",
                          hint=f"ask for at most {most} CPUs")
    if mem_mb_per_node and members and mem_mb_per_node > max(n.memory_mb for n in members):
        most = max(n.memory_mb for n in members)
        raise ConfigError(f"partition {p.name}'s nodes have at most {most / 1024:.1f} GB of memory; the job asks "
                          f"{mem_mb_per_node / 1024:.1f} GB", hint=f"ask for at most {most / 1024:.1f} GB")
    members = [n for n in members if n.cpus >= (cpus_per_node or 0) and n.memory_mb >= (mem_mb_per_node or 0)]
    if nodes > len(members):
        what = f" with {gpus_per_node} GPU{'s' if gpus_per_node > 1 else ''}" if gpus_per_node > 0 else ""
        raise ConfigError(f"partition {p.name} has {len(members)} node{'s' if len(members) != 1 else ''}{what}; "
                          f"the job asks {nodes}", hint=f"ask for at most {len(members)} nodes")
    if p.max_nodes is not None and nodes > p.max_nodes:
        raise ConfigError(f"partition {p.name} allows at most {p.max_nodes} nodes per job; the job asks {nodes}",
                          hint=f"ask for at most {p.max_nodes} nodes")
    if time_limit_s is not None and p.max_time_s is not None and math.ceil(time_limit_s / 60) * 60 > p.max_time_s:
        longer = [q.name for q in snapshot.partitions if q.max_time_s is None or q.max_time_s >= time_limit_s]
        raise ConfigError(f"max runtime {words(time_limit_s)} is beyond partition {p.name}'s limit of "
                          f"{words(p.max_time_s)}",
                          hint=f"lower the max runtime to {words(p.max_time_s)}" +
                               (f", or pick a partition with a longer limit: {', '.join(longer)}" if longer else ""))
    if p.allow_accounts is not None and (account is None or account not in p.allow_accounts):
        raise ConfigError(f"partition {p.name} takes only jobs of the account"
                          f"{'s' if len(p.allow_accounts) > 1 else ''} {', '.join(p.allow_accounts)}"
                          + (f", not {account}" if account else "; the profile names no account"),
                          hint="set one of those accounts in the profile, or pick another partition")
    if p.deny_accounts is not None and account in p.deny_accounts:
        raise ConfigError(f"partition {p.name} does not take jobs of account {account}",
                          hint="set another account in the profile, or pick another partition")
    return p.name
