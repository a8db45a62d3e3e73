"""The Provider contract every cloud plugin implements.

Threading: one provider object per profile (``Accounts.provider`` caches it) is
called from many threads at once: the GUI's read pool (refresh, offers, telemetry),
its launch lane, and the teardown, guard and recovery lanes, each of its own;
remote-job threads; and a CLI process beside the app holds a provider of its own on
the same account.  So every method may run concurrently with any other, on this
object and in other processes: no per-call state on ``self`` without a lock.  The one
ordering the app guarantees is :mod:`workbench.core.lifecycle.launch_gate`'s, per
profile and across processes: a teardown waits for the launches in flight (asking a
:class:`SupportsCancelLaunch` provider to stop them early), and a launch does not
start while a teardown covering it waits or runs.  Every method may block on the
network; none may touch Qt.

Optional abilities are the ``Supports*`` classes below: callers test them with
``isinstance`` (or ``issubclass`` on a registry entry's class), never by looking a
method up by name.

Failure rules: raise only :mod:`workbench.core.domain.errors` types.  ``terminate``
and ``delete`` treat "already gone" as success.  ``launch`` is idempotent per
``req.launch_id`` and leaves nothing behind when it fails.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

from workbench.core.domain.models import (ActualCost, GpuSample, Identity, Instance, LaunchRequest, Offer, Profile,
                                          Region, Resource)

if TYPE_CHECKING:
    from workbench.core.domain.models import JobSpec
    from workbench.core.providers.price_fetch import Fetcher
    from workbench.core.providers.price_snapshot import PriceRow, PriceSnapshot

TAG_MANAGED = "workbench:managed"
TAG_LAUNCH = "workbench:launch"
TAG_OWNER = "workbench:owner"


def launch_tags(launch_id: str, install_id: str) -> dict[str, str]:
    """The tags every resource of a launch carries; reconcile and teardown find things by them."""
    return {TAG_MANAGED: "true", TAG_LAUNCH: launch_id, TAG_OWNER: install_id}


@dataclass
class Listing:
    """What one :meth:`Provider.listing` found: the instances, and the leftovers or why they could not be listed."""

    instances: list[Instance]
    leftovers: list[Resource] = field(default_factory=list)
    leftovers_error: Exception | None = None  # the instances are still right when only this failed


@dataclass(frozen=True)
class CredentialField:
    """One field of a provider's credential form; ``secret`` fields are stored in the keyring only."""

    key: str
    label: str
    secret: bool = False
    optional: bool = False
    help: str = ""


@dataclass(frozen=True)
class SettingField:
    """A profile setting the profile form asks for by name (stored in ``Profile.settings``, not the keyring).

    After the credentials were proved, :meth:`Provider.setting_choices` may offer values to pick.
    """

    key: str
    label: str
    optional: bool = True
    help: str = ""


@dataclass(frozen=True)
class ProviderContext:
    """What the app lends a provider: its install id (the owner tag) and its data directory.

    ``machine_identity``: the provider runs on a machine of the account (the controller, issue 33) with no
    stored secret, as that machine's own cloud identity (AWS instance profile, Azure managed identity, Alibaba
    ECS RAM role); the non-secret fields naming it arrive as the provider's secrets
    (:attr:`ControllerIdentity.machine`).
    """

    install_id: str
    data_dir: Path
    machine_identity: bool = False


class Provider(ABC):
    """A cloud (or this computer) that can run GPU jobs."""

    id: ClassVar[str]
    display_name: ClassVar[str]
    credential_fields: ClassVar[tuple[CredentialField, ...]] = ()
    #: settings the profile form shows as fields of their own (e.g. Azure's subscription)
    setting_fields: ClassVar[tuple[SettingField, ...]] = ()
    #: True when the job runs on the machine through the app's SSH runner (clouds); False when the
    #: provider runs jobs itself (Local) or its machines have no SSH (test doubles).
    runs_jobs_over_ssh: ClassVar[bool] = True
    #: The user's own machines (this computer, their cluster): a job there that costs nothing is precious
    #: (it may have waited days in a queue): Stop all billing lists it apart, unticked, and ``down --all``
    #: asks before ending it.
    own_hardware: ClassVar[bool] = False
    #: Modules of the cloud SDK the provider needs (e.g. ``("boto3", "botocore")``).  Discovery checks
    #: that they can be imported, without importing them: a provider whose SDK is missing is listed as
    #: unavailable with the exact install command instead of failing later with ModuleNotFoundError.
    sdk_modules: ClassVar[tuple[str, ...]] = ()
    #: The extra of the provider's distribution that installs those modules (``"aws"`` →
    #: ``pip install 'cloud-gpu-workbench[aws]'``); None when the SDK comes some other way.
    install_extra: ClassVar[str | None] = None

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        self.profile = profile
        self.context = context
        self._secrets = dict(secrets)

    @classmethod
    def default_region(cls) -> str | None:
        """Region used when a profile names none."""
        return None

    @abstractmethod
    def check_credentials(self) -> Identity:
        """Prove the credentials work; raise AuthError naming the cause (never the secret)."""

    @abstractmethod
    def regions(self) -> list[Region]:
        """Regions this profile may use."""

    @abstractmethod
    def offers(self, region: str | None = None) -> Iterable[Offer]:
        """GPU machine shapes with prices; ``region`` None means the profile's regions."""

    @abstractmethod
    def launch(self, req: LaunchRequest) -> list[Instance]:
        """Start the job's machine(s); return quickly (PENDING is fine).

        Idempotent per ``req.launch_id``: a second call returns the existing
        instances and creates nothing.  On failure, roll back whatever was
        created and raise.
        """

    @abstractmethod
    def instances(self) -> list[Instance]:
        """Every instance tagged by this app (this install), in all regions."""

    @abstractmethod
    def terminate(self, instances: Sequence[Instance]) -> None:
        """End the given instances; an instance that is already gone is a success."""

    @abstractmethod
    def leftovers(self) -> list[Resource]:
        """Billable resources tagged by us that no live instance uses (disks, IPs, groups…)."""

    @abstractmethod
    def delete(self, resources: Sequence[Resource]) -> None:
        """Delete leftovers; already gone is a success."""

    def listing(self) -> Listing:
        """:meth:`instances` and :meth:`leftovers` together, as ``status`` and teardown need both.

        Raises when the instances cannot be listed; a leftover listing that fails is kept in
        ``leftovers_error`` beside the instances.  This default runs the two side by side (the
        leftovers on a helper thread); a provider whose two listings overlap (AWS: the leftovers
        need the live instances) overrides it with one fan-out that asks each thing once.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.id}-leftovers") as pool:
            left = pool.submit(self.leftovers)
            found = Listing(self.instances())
            try:
                found.leftovers = left.result()
            except Exception as exc:  # noqa: BLE001 - reported beside the instances
                found.leftovers_error = exc
        return found

    def setting_choices(self) -> Mapping[str, list[tuple[str, str]]]:
        """Values to pick for ``setting_fields`` once signed in: key → [(value, label)].  Blocks (network).

        Asked after a credentials test, also a failed one (Azure: an identity that sees several
        subscriptions must choose one); the default offers nothing.
        """
        return {}

    def console_url(self, item: Instance | Resource) -> str | None:
        """A web address where a person can see (and end) ``item`` in the provider's own console.

        Shown beside things that are still billing after a teardown, so the user can
        check by hand.  Must not block or call the network (it is asked on the UI's
        behalf for every remaining item); the default, None, means "no console link".
        """
        return None


def id_problem(cls: type[Provider], entry_name: str) -> str | None:
    """Why ``cls`` cannot be the provider registered as ``entry_name`` (its ``id`` differs or is missing); None
    when it can.  ``id`` has no default, so a plugin class may lack it: the one attribute read by name."""
    declared = getattr(cls, "id", None)
    return None if declared == entry_name else f"provider id {declared!r} does not match entry point name"


class SupportsStop(ABC):
    """Capability: stop (or deallocate) without deleting disks."""

    @abstractmethod
    def stop(self, instances: Sequence[Instance]) -> None: ...


class SupportsExtend(ABC):
    """Capability: move a cloud-side deadline (Alibaba AutoReleaseTime, Azure auto-shutdown) when a run is extended.

    ``not_after`` is the launch's new end (POSIX seconds); the provider adds its own margin.  Blocks on the
    network; raises a WorkbenchError when the cloud refuses (the app then keeps the old max runtime).
    Returns False when nothing of the cloud's follows the max runtime (e.g. a fixed shutdown time).
    """

    @abstractmethod
    def extend(self, instances: Sequence[Instance], not_after: float) -> bool | None: ...


class SupportsTelemetry(ABC):
    """Capability: read one round of GPU (or CPU) samples for an instance."""

    @abstractmethod
    def samples(self, instance: Instance) -> list[GpuSample]: ...


class SupportsBilling(ABC):
    """Capability: the provider's own record of billed cost (AWS Cost Explorer, Azure Cost Management).

    Such APIs are slow, lag by hours and may charge per request (Cost Explorer:
    USD 0.01), so callers cache the answer (``workbench.core.money.billing_sync``).
    """

    @abstractmethod
    def actual_costs(self, start_day: str, end_day: str) -> list[ActualCost]:
        """Billed cost per launch tag and UTC day, ``start_day`` to ``end_day`` inclusive (ISO dates)."""


class SupportsSpotHistory(ABC):
    """Capability: the spot price an instance paid over time (for spend as it was, not as it is)."""

    @abstractmethod
    def spot_price_history(self, instance: Instance, start: float, end: float) -> list[tuple[float, float]]:
        """(POSIX seconds, price per hour) points for ``instance`` between ``start`` and ``end``, oldest first."""


class SupportsEndReason(ABC):
    """Capability: say why machines that are no longer listed ended (recovery tells a spot
    interruption from a failure by it).  Returns the instances as the cloud last saw them, with
    ``extra["state_reason"]`` / ``extra["spot_interrupted"]`` where it says; unknown ones are left out."""

    @abstractmethod
    def ended_instances(self, instances: Sequence[Instance]) -> list[Instance]: ...


class SupportsPublicPrices(ABC):
    """Capability: read the cloud's public price list, with no account and no cloud SDK.

    Used by ``workbench catalog update`` (and the GUI's "Update prices") to refresh the price catalog
    (:mod:`workbench.core.providers.price_snapshot`) that compares clouds before any account exists.
    A class method: no profile, no credentials.  Blocks on the network (call it on a worker thread);
    raises TransientError when the list cannot be read, Cancelled when ``fetch`` was stopped.
    """

    #: regions refreshed when the user names none (the snapshot's regions are added to these)
    public_price_regions: ClassVar[tuple[str, ...]] = ()
    #: what the rows' ``source`` column says, e.g. "AWS Price List offer files"
    public_price_source: ClassVar[str] = ""

    @classmethod
    @abstractmethod
    def public_prices(cls, regions: Sequence[str], known: "PriceSnapshot", fetch: "Fetcher") -> list["PriceRow"]:
        """Rows (the price-snapshot layout) for ``regions``; ``known`` gives shapes the list may lack."""


class SupportsCancelLaunch(ABC):
    """Capability: stop a launch whose :meth:`Provider.launch` call is still running (Azure: a launch waits
    minutes for its VM).

    Called from any thread other than the launch's own (the launch gate when a teardown covering the launch
    starts waiting, the GUI's Cancel); the launch then rolls back what it made and raises.  Must not block
    for long.
    """

    @abstractmethod
    def cancel_launch(self, launch_id: str) -> bool:
        """Ask the launch ``launch_id`` to stop; False when none of that id is in flight here."""


class SupportsMfa(ABC):
    """Capability: the profile's credentials need a one-time code (AWS: an MFA device).

    Calls fail with an AuthError of kind ``"mfa_required"`` until a code is given; the GUI then asks the user
    and hands the code over here (from a worker thread), then refreshes: the next call that needs a session
    trades the code for one.  The code is kept in memory only.
    """

    @abstractmethod
    def provide_mfa_code(self, code: str) -> None:
        """Keep ``code`` for the next session; raises AuthError when it cannot be a code (AWS: six digits)."""


#: a launch whose ``LaunchRequest.tags`` carry ``TAG_ROLE: ROLE_CONTROLLER`` is the account's controller machine
#: (``workbench.core.controller``): a provider that :class:`SupportsController` gives it the controller's cloud
#: identity (AWS instance profile, Azure managed identity, Alibaba RAM role) and nothing else changes.
TAG_ROLE = "workbench:role"
ROLE_CONTROLLER = "controller"


@dataclass(frozen=True)
class ControllerIdentity:
    """The cloud identity a controller machine runs as (never the user's own keys).

    ``name``: the role / identity (AWS role and instance profile, Azure user-assigned identity, Alibaba RAM
    role); ``ready``: it exists with its policy; ``created``: what this call created; ``missing``: the exact
    permissions or resources an administrator must grant or create when the user may not (empty when ready);
    ``policy_files``: the documents under ``resources/policies/`` that say what it may do; ``machine``: the
    non-secret fields the plugin on the controller machine signs in with as that identity (e.g. an Azure managed
    identity's client id and subscription), carried in ``controller.json`` (empty when the cloud needs none).
    """

    name: str
    ready: bool
    created: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    policy_files: tuple[str, ...] = ()
    details: Mapping[str, str] = field(default_factory=dict)
    machine: Mapping[str, str] = field(default_factory=dict)


class SupportsController(ABC):
    """Capability: the cloud identity of the account's controller machine.

    ``controller_identity(create=False)`` only looks (``workbench controller status``); ``create=True`` makes
    what is missing where the user's credentials may (the app asks the user once per account first).  Blocks
    on the network; raises WorkbenchError (AuthError naming what to ask an administrator for) when it cannot.
    A launch tagged ``TAG_ROLE: ROLE_CONTROLLER`` runs as this identity.
    """

    @abstractmethod
    def controller_identity(self, create: bool = False) -> ControllerIdentity: ...


class SupportsBatchJobs(ABC):
    """Capability: the "machine" is a scheduler's login node (Slurm); the job runs as a batch job.

    The SSH runner (:class:`workbench.core.remote.job.RemoteJob`) connects to the login node, uploads the workdir and
    renders the job folder's files as for a machine; the provider then changes them for its scheduler
    (:meth:`batch_files`: a batch script around ``supervise.sh``, a ``submit.sh`` that queues it, the run spread over
    the job's nodes) and queues the job (:meth:`submit`).  The job folder must be on a file system the compute nodes
    share with the login node (a cluster's home).  GPU readings come from the provider (the GPUs are
    on the compute nodes, not on the login node the SSH runner reaches): :meth:`gpu_readings`, polled by
    :mod:`workbench.core.remote.batchstream` while the job runs.  All block on the network.
    """

    @abstractmethod
    def batch_files(self, instance: Instance, spec: "JobSpec", job_dir: str,
                    files: Mapping[str, str]) -> dict[str, str]:
        """The job folder's files for the scheduler, from ``files`` as rendered for a machine; with ``submit.sh``."""

    @abstractmethod
    def submit(self, conn: Any, instance: Instance, job_dir: str) -> str:
        """Queue the job once over ``conn`` (a :class:`workbench.core.remote.connection.Connection` to the login node;
        idempotent: "already" when it was); raises a WorkbenchError naming the refusal."""

    @abstractmethod
    def gpu_readings(self, instance: Instance) -> list[Any]:
        """One round of the running job's GPUs on all its nodes (``telemetry.nvidia_smi.Reading``s, indexes across
        nodes: node rank × GPUs per node + the node's own index); [] when it does not run."""
