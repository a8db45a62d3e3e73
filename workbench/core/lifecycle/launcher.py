"""Choose an offer and execute a launch: spec → chosen (default: cheapest) offer → provider.launch.

Crash safety: the launch record is written to the store *before* the
provider is called, and every resource carries the launch's tags, so a
process killed at any point leaves something reconcile can find and
teardown can delete.  A provider failure marks the launch failed (the
provider has already rolled back its own resources); :func:`remains` then
confirms that nothing of the launch is left billing.  The provider call runs
inside the profile's gate (:mod:`.launch_gate`): a teardown waits for it, and
a launch that a teardown covers does not start (``LaunchCancelled``).

Threading: every function here blocks on provider calls and runs on a worker
thread (the CLI's main thread or the GUI's TaskRunner).  ``execute`` reports
its steps through an optional ``progress`` callback, called on that worker
thread with one of the ``STEP_*`` keys (plain strings; the UI translates them).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from workbench.core.providers.accounts import Accounts
from workbench.core.offers.query import RankedOffer
from workbench.core.offers.choice import describe_match, effective_spot
from workbench.core.offers.find import NEVER, find_offers
from workbench.core.offers.order import comparable_price, user_rate
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.crashpoints import crash_point
from workbench.core.lifecycle.launch_gate import ProfileGate
from workbench.core.domain.errors import CapacityError, ConfigError, NotFoundError, WorkbenchError
from workbench.core.domain.jobspec import spec_to_dict
from workbench.core.domain.jobspec_choices import describe_alternative, describe_gpu
from workbench.core.domain.models import Instance, InstanceState, JobSpec, LaunchRequest, Profile, Resource
from workbench.core.providers.contract import SupportsCancelLaunch, launch_tags
from workbench.core.providers.registry_logins import keyring_login, with_keyring_password
from workbench.core.money.spend import projected_cost
from workbench.core.store.database import LaunchRecord
from workbench.core.storage.machine import machine_spec

log = logging.getLogger("workbench.launch")

#: the steps ``execute`` reports, in order
STEP_RECORD = "record"  # writing the launch record to the store
STEP_PROVIDER = "provider"  # asking the provider for a machine
STEP_WAIT = "wait"  # waiting for the machine to start
STEP_RUNNING = "running"  # started (or already finished, for very short jobs)
LAUNCH_STEPS = (STEP_RECORD, STEP_PROVIDER, STEP_WAIT, STEP_RUNNING)


def new_launch_id(name: str) -> str:
    """Readable and unique: '<name>-<6 hex>'; safe as a file name and a cloud tag/group name."""
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:24] or "job"
    return f"{slug}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class LaunchPlan:
    launch_id: str
    spec: JobSpec
    profile: Profile
    choice: RankedOffer
    alternatives: int  # how many other offers matched

    @property
    def price_per_hour(self) -> float | None:
        """Per machine; :attr:`price_per_hour_total` is every node's."""
        return self.choice.price

    @property
    def num_nodes(self) -> int:
        return max(1, self.spec.num_nodes)

    @property
    def price_per_hour_total(self) -> float | None:
        return None if self.choice.price is None else self.choice.price * self.num_nodes

    @property
    def spot(self) -> bool:
        """Spot or on-demand: the chosen alternative's term, else the spec's."""
        return effective_spot(self.spec, self.choice)

    @property
    def matched(self) -> str | None:
        """Which of the spec's alternatives the chosen offer matched ('alternative 2 of 4 (1× V100)')."""
        return describe_match(self.spec, self.choice)

    @property
    def projected_cost(self) -> float | None:
        """Every node running to the max runtime."""
        return projected_cost(self.choice.price, self.spec.guards.max_runtime_minutes, self.num_nodes)

    def to_json(self) -> dict[str, object]:
        o = self.choice.offer
        return {
            "launch_id": self.launch_id, "name": self.spec.name,
            "provider": self.profile.provider, "profile": self.profile.name, "region": o.region,
            "instance_type": o.instance_type, "gpu_model": o.gpu_model, "gpu_count": o.gpu_count,
            "spot": self.spot, "price_per_hour": self.price_per_hour,
            "num_nodes": self.num_nodes, "price_per_hour_total": self.price_per_hour_total,
            "currency": o.prices.currency, "price_source": o.prices.source, "price_as_of": o.prices.as_of,
            "max_runtime_minutes": self.spec.guards.max_runtime_minutes,
            "projected_cost": self.projected_cost,
            "alternative": self.choice.alternative, "matched": self.matched,
        }


def choose_offer(accounts: Accounts, spec: JobSpec, provider: str | None = None, profile: str | None = None,
                 region: str | None = None) -> LaunchPlan:
    """Choose where to run ``spec``: the cheapest available offer of the chosen profile.

    Provider preference: the argument, else the spec's ``providers`` (several: the cheapest usable
    offer across the first profile of each one that has a profile, prices in different currencies
    compared at the user's rate, as SkyPilot's ``any_of`` across clouds does), else the built-in local
    profile.  A spec with ``alternatives`` runs on the cheapest offer matching any of them (or, with
    ``choose: in_order``, the first alternative that has one); a provider, profile or region given here
    wins over the ones its alternatives name.
    """
    if not provider and not profile and len(spec.providers) > 1:
        return _cheapest_across(accounts, spec, region)
    return _choose_on(accounts, spec, provider, profile, region, bool(provider or profile))


def _cheapest_across(accounts: Accounts, spec: JobSpec, region: str | None) -> LaunchPlan:
    """The cheapest plan among the spec's providers that have a profile (the first error when none can)."""
    have = {p.provider for p in accounts.profiles()}
    plans: list[LaunchPlan] = []
    first_error: WorkbenchError | None = None
    for provider in spec.providers:
        if provider not in have:
            continue
        try:
            plans.append(_choose_on(accounts, spec, provider, None, region, False))
        except WorkbenchError as exc:  # this cloud cannot run it: the others may
            log.info("choosing an offer on %s: %s", provider, exc.message)
            first_error = first_error or exc
    if not plans:
        if first_error is not None:
            raise first_error
        raise NotFoundError(f"no profile for any of the spec's providers ({', '.join(spec.providers)})",
                            hint=f"add one with `workbench profiles add {spec.providers[0]} NAME`")
    rate = user_rate(accounts)
    best = min(plans, key=lambda lp: (lp.choice.price is None, comparable_price(lp.choice, rate)))
    others = sum(lp.alternatives + 1 for lp in plans) - 1
    return LaunchPlan(best.launch_id, best.spec, best.profile, best.choice, others)


def _choose_on(accounts: Accounts, spec: JobSpec, provider: str | None, profile: str | None, region: str | None,
               provider_from_user: bool) -> LaunchPlan:
    region_from_user = bool(region)
    provider = provider or (spec.providers[0] if spec.providers and not profile else None)
    defaulted = provider is None and profile is None  # nobody chose: the built-in Local profile
    prof = accounts.resolve(provider, profile)
    if region is None and spec.regions and prof.provider != "local":
        region = spec.regions[0]  # the spec's regions name cloud regions, never this computer
    region = region or prof.region
    found = find_offers(accounts, spec, profiles=[prof], region=region, provider_from_user=provider_from_user,
                        region_from_user=region_from_user, catalog=NEVER)
    if found.errors:
        raise found.errors[0][1]
    ranked = found.ranked
    usable = [r for r in ranked if r.offer.available]
    if not usable:
        want = _describe_request(spec)
        if spec.alternatives and len(found.skipped) == len(spec.alternatives):
            raise NotFoundError(f"none of the spec's {len(spec.alternatives)} alternatives can run on profile "
                                f"{prof.name!r}: " + "; ".join(f"{i + 1} {why}" for i, why in found.skipped),
                                hint="choose a provider the alternatives name, or pass --provider to use "
                                     "their hardware on another one")
        if ranked:
            note = ranked[0].offer.availability_note or "no capacity or quota"
            raise CapacityError(f"no available offer for {want} on {prof.name}: {note}",
                                hint="try another region or provider (`workbench offers`)")
        if defaulted and prof.provider == "local":  # not a profile the user chose: say why it was tried
            req = spec.resources.gpu
            gpu = f" --gpu {req.model}:{req.count}" if req is not None and req.model else ""
            raise NotFoundError(f"this job names no cloud and none was chosen, so it was tried on this computer, "
                                f"which has no {want}",
                                hint=f"see who offers it with `workbench offers{gpu}`, then launch with "
                                     "--provider NAME (add an account first: `workbench profiles add NAME …`)")
        _limits_said(accounts, spec, prof, region)
        where = f" in {region}" if region else ""
        raise NotFoundError(f"no offer on profile {prof.name!r}{where} matches {want}",
                            hint="see what exists with `workbench offers`")
    return LaunchPlan(new_launch_id(spec.name), spec, prof, usable[0], len(usable) - 1)


def _limits_said(accounts: Accounts, spec: JobSpec, prof: Profile, region: str | None) -> None:
    """ConfigError when offers match but for their limits (a cluster partition's time limit or node count)."""
    loose = dataclasses.replace(spec, num_nodes=1,
                                guards=dataclasses.replace(spec.guards, max_runtime_minutes=None))
    found = find_offers(accounts, loose, profiles=[prof], region=region, catalog=NEVER)
    limits = [r.offer for r in found.ranked if (r.offer.extra or {}).get("max_time_s") or
              (r.offer.extra or {}).get("nodes_total") is not None]
    if found.errors or not limits:
        return
    longest = max(limits, key=lambda o: int(o.extra.get("max_time_s") or 0))
    most = max(limits, key=lambda o: int(o.extra.get("nodes_total") or 0))
    minutes = spec.guards.max_runtime_minutes
    if minutes and longest.extra.get("max_time_s") and int(longest.extra["max_time_s"]) < minutes * 60:
        raise ConfigError(f"the job's max runtime of {minutes} min is beyond every partition's time limit on "
                          f"{prof.name} (the longest: {longest.extra.get('partition', longest.instance_type)}, "
                          f"{int(longest.extra['max_time_s']) // 60} min)",
                          hint="lower guards.max_runtime, or split the job into shorter ones that resume")
    if spec.num_nodes > int(most.extra.get("nodes_total") or 0):
        raise ConfigError(f"the job asks for {spec.num_nodes} nodes; the largest partition on {prof.name} has "
                          f"{most.extra.get('nodes_total')}", hint="lower num_nodes")


def plan_offer(accounts: Accounts, spec: JobSpec, choice: RankedOffer, alternatives: int = 0,
               launch_id: str | None = None) -> LaunchPlan:
    """A plan for an offer the user picked (e.g. in the GUI's offer table), not only the cheapest.

    ``launch_id`` lets a caller name the launch before planning (the GUI needs
    it up front to tear a cancelled launch down); default: a new one.

    Raises NotFoundError when the offer's profile no longer exists and
    CapacityError when the offer is marked unavailable (no quota or capacity).
    """
    prof = accounts.profile(choice.profile)
    if prof.provider != choice.offer.provider:
        raise NotFoundError(f"profile {prof.name!r} belongs to provider {prof.provider!r}, "
                            f"not {choice.offer.provider!r}")
    if not choice.offer.available:
        note = choice.offer.availability_note or "no capacity or quota"
        raise CapacityError(f"{choice.offer.instance_type} in {choice.offer.region} is not available on "
                            f"{prof.name}: {note}", hint="choose another offer")
    return LaunchPlan(launch_id or new_launch_id(spec.name), spec, prof, choice, alternatives)


def _describe_request(spec: JobSpec) -> str:
    if spec.alternatives:
        return "any of " + "; ".join(describe_alternative(a) for a in spec.alternatives)
    r = spec.resources
    nodes = f" per node ({spec.num_nodes} nodes)" if spec.num_nodes > 1 else ""
    more = "".join(f" with {what}" for what in (f"{r.cpus} CPUs" if r.cpus else "",
                                                 f"{r.memory_gb:g} GB memory" if r.memory_gb else "") if what)
    return ("a CPU machine" if r.gpu is None else describe_gpu(r.gpu)) + more + nodes


def execute(accounts: Accounts, lp: LaunchPlan, progress: Callable[[str], None] | None = None,
            wait_s: float = 0.0, poll_s: float = 2.0,
            should_stop: Callable[[], bool] | None = None,
            secret_env: Mapping[str, str] | None = None,
            extra_tags: Mapping[str, str] | None = None) -> list[Instance]:
    """Record the launch, call the provider, store the instances.  Raises the provider's error.

    ``secret_env``: the values of ``lp.spec.secrets`` given at launch; they reach the provider
    (the job's environment) and nothing else: not the store, not the log.  A secret without a
    value is an error before anything is recorded.

    ``extra_tags``: more tags for the launch's resources (the controller's launch carries
    ``TAG_ROLE: ROLE_CONTROLLER``); they never replace the app's own tags.

    ``progress`` receives the ``STEP_*`` keys as the launch goes.  With
    ``wait_s`` > 0, after the provider returns this polls its instances until
    the launch's machines have left PENDING (or ``wait_s`` passes, or
    ``should_stop()`` says the user cancelled: the instances are returned as
    they are, and the caller decides whether to tear them down).
    """
    refuse_unsupported(lp.spec)
    if keyring_login(lp.spec.image):  # registry_auth.password: keyring — read here, carried as a launch secret
        secret_env = with_keyring_password(accounts.credentials, lp.spec, secret_env)
    missing = [name for name in lp.spec.secrets if name not in (secret_env or {})]
    if missing:
        raise ConfigError(f"no value for {', '.join(missing)}: the job spec asks for "
                          f"{'it' if len(missing) == 1 else 'them'} at launch",
                          hint="give each with --env NAME=VALUE or --secret-env NAME (taken from this "
                               "computer's environment)")
    report = progress or (lambda step: None)
    launch_secrets.remember(lp.launch_id, secret_env or {})  # memory only: for the job's start on the machine
    store = accounts.store
    offer = lp.choice.offer
    provider = accounts.provider(lp.profile)
    # storage mounts / recovery: the spec the provider runs (Local: the storage agent around it,
    # short-lived credentials in its environment); checked before anything is recorded or billed
    job_spec = machine_spec(accounts, lp.spec, lp.launch_id, lp.profile, provider.runs_jobs_over_ssh)
    report(STEP_RECORD)
    store.add_launch(LaunchRecord(
        launch_id=lp.launch_id, name=lp.spec.name, provider=lp.profile.provider, profile=lp.profile.name,
        region=offer.region, created_at=time.time(), status="launching", spec=spec_to_dict(lp.spec),
        projected_cost=lp.projected_cost, currency=offer.prices.currency,
    ))
    crash_point("launch:recorded")
    req = LaunchRequest(launch_id=lp.launch_id, spec=job_spec, offer=offer, profile=lp.profile.name,
                        tags={**(extra_tags or {}), **launch_tags(lp.launch_id, accounts.context.install_id)},
                        spot=lp.spot,
                        secret_env=dict(secret_env or {}), count=lp.num_nodes)
    report(STEP_PROVIDER)
    try:
        # in flight: ordered with the profile's teardowns (Stop all, down, guards) in any process
        with ProfileGate.of(accounts, lp.profile.provider, lp.profile.name).launching(
                lp.launch_id, cancel=provider.cancel_launch if isinstance(provider, SupportsCancelLaunch) else None):
            instances = provider.launch(req)
    except WorkbenchError as exc:
        store.update_launch(lp.launch_id, status="failed", error=exc.message)
        raise
    except Exception as exc:
        log.exception("provider %s crashed during launch", lp.profile.provider)
        store.update_launch(lp.launch_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        raise WorkbenchError(f"launch failed: {type(exc).__name__}: {exc}") from exc
    crash_point("launch:provider-returned")
    for inst in instances:
        store.upsert_instance(inst)
    crash_point("launch:instances-stored")
    store.update_launch(lp.launch_id, status="running")
    log.info("launched %s on %s/%s: %d instance(s)", lp.launch_id, lp.profile.provider,
             lp.profile.name, len(instances))
    if wait_s > 0:
        report(STEP_WAIT)
        instances = _wait_started(accounts, lp, instances, wait_s, poll_s, should_stop or (lambda: False))
    if not any(i.state == InstanceState.PENDING for i in instances):
        report(STEP_RUNNING)
    return instances


#: spec fields this version reads but cannot honour yet: refused before anything bills, never ignored
NOT_YET: dict[str, str] = {
}


def refuse_unsupported(spec: JobSpec) -> None:
    """ConfigError for a spec that asks for something this version cannot do yet (it would run without it)."""
    asked = [what for field, what in NOT_YET.items() if getattr(spec, field)]
    home = [m.path for m in spec.storage if m.path.startswith("~")] if spec.image is not None else []
    if home:  # the agent on the machine would fill the machine's home folder, which the container does not see
        asked.append(f"a storage mount under ~ ({home[0]}) together with a container image (the container's home "
                     "is not the machine's)")
    if asked:
        raise ConfigError(f"{spec.name} asks for {' and '.join(asked)}, which this version of the app cannot do yet",
                          hint="use an absolute mount path or one relative to the job's folder" if home else
                          "remove image/ports from the spec to run it on the machine itself")


def _wait_started(accounts: Accounts, lp: LaunchPlan, instances: list[Instance], wait_s: float,
                  poll_s: float, should_stop: Callable[[], bool]) -> list[Instance]:
    """Poll until none of the launch's instances is PENDING; a listing error ends the wait, not the launch."""
    deadline = time.monotonic() + wait_s
    provider = accounts.provider(lp.profile)
    while any(i.state == InstanceState.PENDING for i in instances):
        if should_stop() or time.monotonic() >= deadline:
            break
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))
        try:
            listed = [i for i in provider.instances() if i.launch_id == lp.launch_id]
        except WorkbenchError as exc:
            log.warning("waiting for %s to start: listing failed: %s", lp.launch_id, exc)
            break
        if listed:
            instances = listed
            for inst in listed:
                accounts.store.upsert_instance(inst)
    return instances


def remains(accounts: Accounts, profile: str | Profile, launch_id: str) -> list[Instance | Resource]:
    """What of ``launch_id`` still exists and may bill on ``profile``: billable instances and leftovers.

    Used after a failed or cancelled launch to confirm the rollback left
    nothing behind.  Raises the provider's error when it cannot be asked.
    """
    prof = accounts.profile(profile) if isinstance(profile, str) else profile
    provider = accounts.provider(prof)
    alive: list[Instance | Resource] = [i for i in provider.instances()
                                        if i.launch_id == launch_id and i.state.billable]
    alive.extend(r for r in provider.leftovers() if r.launch_id == launch_id)
    return alive
