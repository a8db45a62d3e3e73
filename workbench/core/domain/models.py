"""Plain value types shared by core, plugins, CLI and GUI.

All are frozen dataclasses: safe to pass between threads and to cache.
Timestamps are POSIX seconds (float, UTC); money is in the offer's currency
(USD unless a provider prices in another one, always labelled).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping


class InstanceState(str, Enum):
    """Life-cycle of one machine (or, for Local, one job process group)."""

    PENDING = "pending"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"  # OS stopped; AWS: disks bill; Azure: compute still bills
    DEALLOCATED = "deallocated"  # Azure: compute released, disks bill
    TERMINATING = "terminating"
    TERMINATED = "terminated"  # gone; for Local, the job has exited
    UNKNOWN = "unknown"

    @property
    def billable(self) -> bool:
        """True while the provider may still charge for this instance.

        UNKNOWN counts as billable: we cannot prove it is not.
        """
        return self not in (InstanceState.TERMINATED, InstanceState.DEALLOCATED)

    @property
    def active(self) -> bool:
        """True while the machine exists and may run the job."""
        return self in (InstanceState.PENDING, InstanceState.RUNNING)


class OnFinish(str, Enum):
    """What happens to the machine when the job's ``run`` exits."""

    TERMINATE = "terminate"
    STOP = "stop"
    KEEP = "keep"


#: the purchase terms a Prices carries, in the order people compare them
PRICE_TERMS = ("on_demand", "spot", "reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y")


@dataclass(frozen=True)
class PriceDetail:
    """Where one price comes from: its source, its date and its basis.

    ``as_of``: an ISO date; ``<=2026-07-05`` for a date known only as an upper bound ("on or before");
    ``unknown`` when the source gives none.  ``basis``: what kind of figure it is beyond its term (``all
    upfront, effective hourly``, ``average``, or an ``ESTIMATED`` one); empty for a plain list price.
    """

    source: str = ""
    as_of: str = ""
    basis: str = ""


@dataclass(frozen=True)
class Prices:
    """Hourly prices of one offer per purchase term; None where unknown.

    ``source`` and ``as_of`` say where the prices come from; a price that comes from elsewhere (a spot
    price of another source and date than the on-demand one) says so in ``details`` by term.
    """

    on_demand: float | None = None
    spot: float | None = None
    reserved_1y: float | None = None
    reserved_3y: float | None = None
    currency: str = "USD"
    source: str = "unknown"  # e.g. "live: AWS Price List API", "snapshot", "profile setting"
    as_of: str = ""  # ISO date the prices were observed
    savings_plan_1y: float | None = None  # effective hourly under a 1-/3-year savings plan, where published
    savings_plan_3y: float | None = None
    details: Mapping[str, PriceDetail] = field(default_factory=dict)  # term → its own source, date, basis

    def hourly(self, spot: bool = False) -> float | None:
        return self.spot if spot else self.on_demand

    def hourly_detail(self, spot: bool = False) -> PriceDetail:
        """Where the price :meth:`hourly` gives comes from."""
        return self.detail("spot" if spot else "on_demand")

    def detail(self, term: str) -> PriceDetail:
        """Where the price of ``term`` (one of :data:`PRICE_TERMS`) comes from."""
        own = self.details.get(term)
        if own is None:
            return PriceDetail(self.source, self.as_of)
        return PriceDetail(own.source or self.source, own.as_of or self.as_of, own.basis)


@dataclass(frozen=True)
class Offer:
    """One rentable machine shape in one region, with its prices."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gb: float  # per GPU
    vcpus: int
    memory_gb: float
    prices: Prices
    network_gbps: float | None = None
    rdma: bool = False  # RDMA / InfiniBand / EFA
    available: bool = True
    availability_note: str | None = None  # "no quota: request an increase for …"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def hourly(self, spot: bool = False) -> float | None:
        return self.prices.hourly(spot)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["extra"] = dict(self.extra)
        return d


@dataclass(frozen=True)
class GpuRequest:
    """GPUs a job asks for; model None means any GPU.

    ``count`` is the least number of GPUs per machine; ``max_count`` (None: no upper bound) and
    ``max_memory_gb`` make ranges such as dstack's ``H100:1..2`` or ``24GB..40GB:2``.  An exact count or
    memory is a range with equal ends (``H200:8..8``): how SkyPilot and dstack files mean ``H200:8`` and
    dstack's ``24GB``; our own ``A100:8`` stays "at least 8" (:func:`offers.query.matches` honours both).
    ``vendor`` ("NVIDIA", "AMD", …, as in ``gpus.GPU_MODELS``) narrows "any GPU" to one maker's models.
    """

    model: str | None
    count: int = 1
    min_memory_gb: float | None = None
    max_count: int | None = None
    max_memory_gb: float | None = None
    vendor: str | None = None


@dataclass(frozen=True)
class Resources:
    gpu: GpuRequest | None = None
    cpus: int | None = None
    memory_gb: float | None = None
    disk_gb: int = 100
    spot: bool = False
    max_price: float | None = None  # per hour
    network_min_gbps: float | None = None
    rdma: bool = False


@dataclass(frozen=True)
class Guards:
    """Limits that end the bill. Defaults are safe: never silently unlimited."""

    max_runtime_minutes: int | None = 24 * 60
    idle_minutes: int | None = 30
    idle_util_below: float = 5.0
    budget_usd: float | None = None


class StorageMode(str, Enum):
    """How a storage mount moves data (see :class:`StorageMount`)."""

    COPY = "copy"  # source -> machine once, before ``setup`` (datasets)
    SYNC = "sync"  # machine -> source every interval and at the end; restored before a resumed run


@dataclass(frozen=True)
class StorageMount:
    """A folder on the machine tied to object storage (or a local folder uploaded first).

    ``source``: ``s3://bucket/prefix``, ``https://ACCOUNT.blob.core.windows.net/CONTAINER/prefix``,
    ``oss://bucket/prefix``, or an absolute local folder (resolved when the spec is loaded).
    ``path``: where it appears on the machine: absolute, or relative to the job's folder.
    """

    path: str
    source: str
    mode: StorageMode = StorageMode.COPY
    interval_s: int = 300  # sync only: seconds between uploads


@dataclass(frozen=True)
class Recovery:
    """Relaunch the job after an interruption: ``on`` ⊆ {"preemption", "failure"}."""

    max_restarts: int = 3
    on: tuple[str, ...] = ("preemption",)


@dataclass(frozen=True)
class Alternative:
    """One allowed kind of machine: the job runs on an offer that matches any of the spec's alternatives.

    A field left None takes the spec's value (``resources.gpu``, ``resources.spot``, the provider and
    region the launch is planned on); ``instance_type`` None means any type.
    """

    gpu: GpuRequest | None = None
    provider: str | None = None
    region: str | None = None
    instance_type: str | None = None
    spot: bool | None = None


#: how a spec with alternatives picks its offer: the cheapest of all, or the first alternative that has one
CHOOSE_CHEAPEST = "cheapest"
CHOOSE_IN_ORDER = "in_order"


#: ``registry_auth.password: keyring`` (the password saved by ``workbench registry login HOST``), and the launch
#: secret it travels as (read from the keyring in the launching process, never stored)
REGISTRY_KEYRING, REGISTRY_KEYRING_SECRET = "keyring", "WORKBENCH_REGISTRY_PASSWORD"


@dataclass(frozen=True)
class RegistryAuth:
    """A private registry's login: the user, and the launch secret (in ``spec.secrets``) holding the password or
    token — never the value itself, which is asked for at launch like every secret — or :data:`REGISTRY_KEYRING`:
    the password saved in this computer's keyring for the image's registry, read at launch."""

    username: str
    password_secret: str

    @property
    def from_keyring(self) -> bool:
        return self.password_secret == REGISTRY_KEYRING

    @property
    def secret_name(self) -> str:
        """The variable that holds the password in the job's launch secrets."""
        return REGISTRY_KEYRING_SECRET if self.from_keyring else self.password_secret


@dataclass(frozen=True)
class ContainerImage:
    """The container a job's ``setup`` and ``run`` happen in (``image:`` in the spec)."""

    name: str  # registry/name:tag or registry/name@sha256:…; Docker Hub when no registry is named
    registry_auth: RegistryAuth | None = None
    shm_size: str | None = None  # e.g. "16g" (Docker's --shm-size)
    user: str | None = None  # "1000:1000" or a user name inside the image

    @property
    def registry(self) -> str:
        """The registry host the name points at ("docker.io" when none is named)."""
        first = self.name.split("/", 1)[0]
        if "/" in self.name and ("." in first or ":" in first or first == "localhost"):
            return first
        return "docker.io"


#: names of services a port may be known as (the app then knows how to open it)
PORT_SERVICES = ("jupyter", "tensorboard", "vscode", "http")


@dataclass(frozen=True)
class Port:
    """A port of the machine the app forwards to this computer (``ports:`` in the spec), on 127.0.0.1 only."""

    port: int
    name: str | None = None  # one of PORT_SERVICES, or free text shown to the user
    node: str = "head"  # "head" (rank 0) or "all" (every node of a multi-node launch)


# the stored form of image and ports (spec_to_dict); here, not beside the YAML reader: the views read stored
# specs and must not load the YAML parser before the first paint
def image_to_dict(image: ContainerImage | None) -> dict[str, Any] | None:
    if image is None:
        return None
    auth = image.registry_auth
    return {"name": image.name, "shm_size": image.shm_size, "user": image.user,
            "registry_auth": None if auth is None else {"username": auth.username, "password": auth.password_secret}}


def image_from_dict(d: Mapping[str, Any] | None) -> ContainerImage | None:
    if not d:
        return None
    auth = d.get("registry_auth")
    return ContainerImage(str(d["name"]), RegistryAuth(str(auth["username"]), str(auth["password"])) if auth else None,
                          d.get("shm_size"), d.get("user"))


def ports_to_list(ports: tuple[Port, ...]) -> list[dict[str, Any]]:
    return [{"port": p.port, "name": p.name, "node": p.node} for p in ports]


def ports_from_list(items: Any) -> tuple[Port, ...]:
    return tuple(Port(int(p["port"]), p.get("name"), p.get("node") or "head") for p in items or ())


@dataclass(frozen=True)
class JobSpec:
    """A validated job spec (see ``workbench.core.domain.jobspec``)."""

    name: str
    run: str
    setup: str | None = None
    resources: Resources = field(default_factory=Resources)
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None  # absolute path after loading
    on_finish: OnFinish = OnFinish.TERMINATE
    guards: Guards = field(default_factory=Guards)
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    source: str | None = None  # path of the YAML file it came from
    outputs: tuple[str, ...] = ()  # paths on the machine (relative: to the job's working folder) to download
    num_nodes: int = 1  # machines of the one chosen offer; ``resources`` are per node
    outputs_from: str = "head"  # "head" (rank 0) or "all" (every node, one folder each)
    storage: tuple[StorageMount, ...] = ()
    recovery: Recovery | None = None  # None: an interrupted job stays ended
    secrets: tuple[str, ...] = ()  # env names whose values are asked for at launch, never stored
    alternatives: tuple[Alternative, ...] = ()  # allowed machines (e.g. GPU choices); () = resources only
    choose: str = CHOOSE_CHEAPEST  # CHOOSE_CHEAPEST or CHOOSE_IN_ORDER (the first alternative with an offer)
    image: ContainerImage | None = None  # None: setup and run on the machine itself
    ports: tuple[Port, ...] = ()  # forwarded to this computer while the launch runs

    @property
    def asks_for_gpus(self) -> bool:
        """Whether the job, or one of its alternatives, asks for a GPU."""
        return self.resources.gpu is not None or any(a.gpu is not None for a in self.alternatives)


def with_default_idle_guard(spec: JobSpec, idle_given: bool) -> JobSpec:
    """``spec`` as every reader of a job file (ours, SkyPilot's, dstack's) and the wizard leave it: the default
    idle guard watches GPU use, so a job without a GPU gets none (a CPU job read "idle 30 min", a guard that
    could never fire); an idle guard the file sets on purpose (``idle_given``) stays."""
    if spec.asks_for_gpus or idle_given or spec.guards.idle_minutes is None:
        return spec
    return dataclasses.replace(spec, guards=dataclasses.replace(spec.guards, idle_minutes=None))


@dataclass(frozen=True)
class Profile:
    """A named account/configuration of one provider. Secrets live in the keyring, not here."""

    name: str
    provider: str
    region: str | None = None
    endpoint_url: str | None = None
    settings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Identity:
    """Who the credentials authenticate as."""

    account: str
    principal: str
    display: str = ""


@dataclass(frozen=True)
class Region:
    name: str
    display_name: str = ""


@dataclass(frozen=True)
class LaunchRequest:
    """Everything a provider needs to launch one job; ``launch_id`` makes it idempotent."""

    launch_id: str
    spec: JobSpec
    offer: Offer
    profile: str
    tags: Mapping[str, str]
    spot: bool = False
    count: int = 1
    #: values of ``spec.secrets`` given at launch: passed to the job's environment, never stored or logged
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def region(self) -> str:
        return self.offer.region


@dataclass(frozen=True)
class Instance:
    """One machine the app created (for Local: one job's process group)."""

    provider: str
    profile: str
    instance_id: str
    launch_id: str
    region: str
    instance_type: str
    state: InstanceState
    name: str = ""
    gpu_model: str | None = None
    gpu_count: int = 0
    price_per_hour: float = 0.0
    currency: str = "USD"
    spot: bool = False
    launched_at: float | None = None
    exit_code: int | None = None  # the job's exit code once it finished
    host: str | None = None  # address to reach it (ssh), if any
    extra: Mapping[str, Any] = field(default_factory=dict)

    def with_state(self, state: InstanceState, **changes: Any) -> "Instance":
        return dataclasses.replace(self, state=state, **changes)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["state"] = self.state.value
        d["billable"] = self.state.billable
        d["extra"] = dict(self.extra)
        return d


@dataclass(frozen=True)
class Resource:
    """A billable thing other than an instance (disk, IP, NIC, group) tagged by the app."""

    provider: str
    profile: str
    resource_id: str
    kind: str
    region: str
    launch_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["extra"] = dict(self.extra)
        return d


@dataclass(frozen=True)
class GpuSample:
    """One telemetry reading of one GPU (or, without GPUs, of the job's CPU/memory: kind 'cpu')."""

    instance_id: str
    ts: float
    index: int
    util_percent: float
    mem_used_mb: float
    mem_total_mb: float
    name: str = ""
    kind: str = "gpu"
    # schema 3 (the utilization advisor); NaN where not reported, as in readings stored before
    power_w: float = math.nan
    power_limit_w: float = math.nan
    sm_clock_mhz: float = math.nan
    mem_util_percent: float = math.nan
    util_min: float = math.nan  # of the readings a stored (minute) sample averages
    util_max: float = math.nan
    # schema 5: PCIe throughput (nvidia-smi dmon -s t), MB/s; rx is host → GPU
    pcie_rx_mbps: float = math.nan
    pcie_tx_mbps: float = math.nan
    # schema 6: NVLink throughput summed over the GPU's links (nvidia-smi nvlink -gt d), MB/s; rx is what it received
    nvlink_rx_mbps: float = math.nan
    nvlink_tx_mbps: float = math.nan


@dataclass(frozen=True)
class HostSample:
    """The machine around the GPUs, averaged over a minute: CPU, memory, network and disk (schema 3).

    Rates are bytes per second summed over the machine's interfaces (without loopback) and whole
    disks; NaN where the machine did not report them.
    """

    instance_id: str
    ts: float
    cpu_percent: float  # of all CPUs together
    cpus: int
    mem_used_mb: float
    mem_total_mb: float
    net_rx_bps: float
    net_tx_bps: float
    disk_read_bps: float


@dataclass(frozen=True)
class ActualCost:
    """Money a provider says it billed (Cost Explorer / Cost Management) for one launch and one UTC day.

    ``launch_id`` is '' for cost the provider could not attribute to a launch tag.
    """

    provider: str
    profile: str
    launch_id: str
    day: str  # YYYY-MM-DD
    amount: float
    currency: str
    source: str  # e.g. "AWS Cost Explorer"
    fetched_at: float = 0.0
