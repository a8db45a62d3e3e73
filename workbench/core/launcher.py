"""Plan and execute a launch: spec → cheapest matching offer → provider.launch.

Crash safety: the launch record is written to the store *before* the
provider is called, and every resource carries the launch's tags, so a
process killed at any point leaves something reconcile can find and
teardown can delete.  A provider failure marks the launch failed (the
provider has already rolled back its own resources).
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from dataclasses import dataclass

from .accounts import Accounts
from .catalog import OfferQuery, RankedOffer, collect
from .faults import crash_point
from .errors import CapacityError, NotFoundError, WorkbenchError
from .jobspec import spec_to_dict
from .models import Instance, JobSpec, LaunchRequest, Profile
from .provider import launch_tags
from .spend import projected_cost
from .store import LaunchRecord

log = logging.getLogger("workbench.launch")


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
        return self.choice.price

    @property
    def projected_cost(self) -> float | None:
        return projected_cost(self.choice.price, self.spec.guards.max_runtime_minutes)

    def to_json(self) -> dict[str, object]:
        o = self.choice.offer
        return {
            "launch_id": self.launch_id, "name": self.spec.name,
            "provider": self.profile.provider, "profile": self.profile.name, "region": o.region,
            "instance_type": o.instance_type, "gpu_model": o.gpu_model, "gpu_count": o.gpu_count,
            "spot": self.spec.resources.spot, "price_per_hour": self.price_per_hour,
            "currency": o.prices.currency, "price_source": o.prices.source, "price_as_of": o.prices.as_of,
            "max_runtime_minutes": self.spec.guards.max_runtime_minutes,
            "projected_cost": self.projected_cost,
        }


def plan(accounts: Accounts, spec: JobSpec, provider: str | None = None, profile: str | None = None,
         region: str | None = None) -> LaunchPlan:
    """Choose where to run ``spec``: the cheapest available offer of the chosen profile.

    Provider preference: the argument, else the spec's first ``providers``
    entry, else the built-in local profile.
    """
    provider = provider or (spec.providers[0] if spec.providers and not profile else None)
    prof = accounts.resolve(provider, profile)
    if region is None and spec.regions and prof.provider != "local":
        region = spec.regions[0]  # the spec's regions name cloud regions, never this computer
    region = region or prof.region
    q = OfferQuery.from_spec(spec, provider=prof.provider, region=region)
    ranked, errors = collect(accounts, q, profiles=[prof])
    if errors:
        raise errors[0][1]
    usable = [r for r in ranked if r.offer.available]
    if not usable:
        want = _describe_request(spec)
        if ranked:
            note = ranked[0].offer.availability_note or "no capacity or quota"
            raise CapacityError(f"no available offer for {want} on {prof.name}: {note}",
                                hint="try another region or provider (`workbench offers`)")
        where = f" in {region}" if region else ""
        raise NotFoundError(f"no offer on profile {prof.name!r}{where} matches {want}",
                            hint="see what exists with `workbench offers`")
    return LaunchPlan(new_launch_id(spec.name), spec, prof, usable[0], len(usable) - 1)


def _describe_request(spec: JobSpec) -> str:
    g = spec.resources.gpu
    if g is None:
        return "a CPU machine"
    return f"{g.count}× {g.model or 'any GPU'}" + (f" ≥{g.min_memory_gb:g} GB" if g.min_memory_gb else "")


def execute(accounts: Accounts, lp: LaunchPlan) -> list[Instance]:
    """Record the launch, call the provider, store the instances.  Raises the provider's error."""
    store = accounts.store
    offer = lp.choice.offer
    store.add_launch(LaunchRecord(
        launch_id=lp.launch_id, name=lp.spec.name, provider=lp.profile.provider, profile=lp.profile.name,
        region=offer.region, created_at=time.time(), status="launching", spec=spec_to_dict(lp.spec),
        projected_cost=lp.projected_cost, currency=offer.prices.currency,
    ))
    crash_point("launch:recorded")
    req = LaunchRequest(launch_id=lp.launch_id, spec=lp.spec, offer=offer, profile=lp.profile.name,
                        tags=launch_tags(lp.launch_id, accounts.context.install_id), spot=lp.spec.resources.spot)
    try:
        instances = accounts.provider(lp.profile).launch(req)
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
    return instances
