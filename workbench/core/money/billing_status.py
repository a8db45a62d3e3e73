"""Which machines cost money, and what a profile that cannot be listed may still bill.

The badge, the tray, the quit guard and Stop all billing count *money*: a job on this computer
(the Local provider) is running, not billing, unless its profile sets an hourly price
(electricity).  A profile the app cannot list is "cannot check": it "may still be billing" only
when the app knows it launched something there (its store remembers a launch or a machine that
was not ended) — a profile where nothing was ever launched bills nothing the app started.

Plain functions over values and the store; any thread.
"""

from __future__ import annotations

import functools
from typing import Iterable

from workbench.core.domain.models import Instance
from workbench.core.store.database import Store

#: the provider that runs jobs on this computer
THIS_COMPUTER = "local"
#: launch statuses after which nothing of the launch is expected to bill
ENDED = ("finished", "failed", "terminated")


def on_this_computer(item: Instance | str) -> bool:
    """True for a job (or provider id) of this computer."""
    return (item if isinstance(item, str) else item.provider) == THIS_COMPUTER


def is_own_hardware(provider_id: str) -> bool:
    """The user's own machines (this computer, their cluster): the provider's ``own_hardware``."""
    return _own(provider_id)


@functools.lru_cache(maxsize=None)
def _own(provider_id: str) -> bool:
    if provider_id == THIS_COMPUTER:
        return True  # the common case, without listing plugins
    from workbench.core.providers.registry import discover

    entry = discover().get(provider_id)
    return entry is not None and entry.cls is not None and bool(entry.cls.own_hardware)


def costs_money(inst: Instance) -> bool:
    """Billable now and priced: every cloud machine that may bill; a job on the user's own hardware (Local,
    their cluster) only with a price set."""
    if not inst.state.billable:
        return False
    try:
        storage = float(inst.extra.get("storage_per_hour") or 0.0)
    except (TypeError, ValueError):
        storage = 0.0
    # priced first: a cloud machine's answer needs no plugin scan (`status --max-age` loads no cloud SDK)
    return inst.price_per_hour > 0 or storage > 0 or not is_own_hardware(inst.provider)


def kept_apart(item: object) -> bool:
    """A job on the user's own hardware that may still run and costs nothing: precious (it may have waited
    days in a queue), so Stop all billing lists it apart, unticked, and ``down --all`` asks before ending it."""
    return isinstance(item, Instance) and is_own_hardware(item.provider) and item.state.billable \
        and not costs_money(item)


def paying(instances: Iterable[Instance]) -> list[Instance]:
    """The instances that cost money now (see :func:`costs_money`)."""
    return [i for i in instances if costs_money(i)]


def running_here(instances: Iterable[Instance]) -> list[Instance]:
    """Jobs alive on this computer (free or not)."""
    return [i for i in instances if on_this_computer(i) and i.state.billable]


def launched_on(store: Store, profile: str, provider: str | None = None) -> list[str]:
    """Launch ids the app started on ``profile`` that may still bill (not known to be ended).

    Read from the store: a launch whose status is not final, or a machine of the profile whose
    last known state may bill.  Empty means the app never left anything there.
    """
    ids = {r.launch_id for r in store.list_launches()
           if r.profile == profile and provider in (None, r.provider) and r.status not in ENDED}
    ids |= {i.launch_id for i in store.list_instances(provider=provider, profile=profile) if i.state.billable}
    return sorted(ids)
