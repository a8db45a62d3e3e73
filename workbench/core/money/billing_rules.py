"""How each provider turns machine states into billed seconds: rules kept as data.

The rules live in ``resources/billing/<provider>.json`` (``default.json`` for
any provider without its own file), so a provider changing its terms is a data
edit with its source cited in the file, not a code change.  A rule says

* which instance states bill compute (``compute_states``) and which bill the
  machine's disks (``storage_states``, priced by the instance's
  ``extra["storage_per_hour"]``),
* the billing increment and the minimum billed per start (AWS Linux 60 s,
  Azure 300 s since June 2025): each time an instance enters a compute-billing
  state from one that is not, at least ``minimum_seconds_per_start`` are billed;
* a disk list price per GB-month, used with the job spec's ``disk_gb`` when the
  plugin reports no disk price of its own.

Thread-safe: rules are immutable and cached after the first read.  A missing
or malformed rule file falls back to the conservative default rule (bills
every possibly-billable state) and logs a warning; it never raises.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core import paths
from workbench.core.domain.models import InstanceState

log = logging.getLogger("workbench.spend")

#: used when even default.json cannot be read: every state that may bill, bills
_FALLBACK_COMPUTE = frozenset(s for s in InstanceState if s.billable)


@dataclass(frozen=True)
class BillingRule:
    """One provider's billing terms (see the module docstring)."""

    provider: str
    compute_states: frozenset[InstanceState] = _FALLBACK_COMPUTE
    storage_states: frozenset[InstanceState] = frozenset()
    increment_seconds: float = 1.0
    minimum_seconds_per_start: float = 0.0
    description: str = ""
    sources: tuple[str, ...] = field(default=())
    #: list price of the machine's disk per GB-month, for launches whose plugin reports no disk price
    disk_usd_per_gb_month: float = 0.0

    def bills_compute(self, state: InstanceState) -> bool:
        return state in self.compute_states

    def bills_storage(self, state: InstanceState) -> bool:
        return state in self.storage_states

    def billed_seconds(self, run_seconds: float) -> float:
        """Seconds billed for one continuous compute run of ``run_seconds`` (minimum, then increments)."""
        s = max(run_seconds, self.minimum_seconds_per_start, 0.0)
        inc = self.increment_seconds
        if inc > 1.0:
            s = -(-s // inc) * inc  # round up to the increment
        return s


DEFAULT_RULE = BillingRule(provider="*", description="every state that may bill, by the second")


def _rules_dir() -> Path:
    return paths.resources_dir() / "billing"


def parse_rule(data: dict, provider: str) -> BillingRule:
    """A BillingRule from a rule file's JSON object; ValueError when a field is wrong."""
    def states(key: str) -> frozenset[InstanceState]:
        return frozenset(InstanceState(s) for s in data.get(key, []))

    minimum = float(data.get("minimum_seconds_per_start", 0))
    increment = float(data.get("increment_seconds", 1))
    if minimum < 0 or increment <= 0:
        raise ValueError("minimum_seconds_per_start must be >= 0 and increment_seconds > 0")
    return BillingRule(
        provider=provider, compute_states=states("compute_states"), storage_states=states("storage_states"),
        increment_seconds=increment, minimum_seconds_per_start=minimum,
        description=str(data.get("description", "")), sources=tuple(str(s) for s in data.get("sources", [])),
        disk_usd_per_gb_month=float(data.get("disk_usd_per_gb_month", 0.0)),
    )


@functools.lru_cache(maxsize=None)
def _load(provider: str, folder: str) -> BillingRule | None:
    path = Path(folder) / f"{provider}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("billing rule %s is unreadable (%s); using the conservative default", path, exc)
        return None
    try:
        return parse_rule(data, provider)
    except (ValueError, TypeError) as exc:
        log.warning("billing rule %s is invalid (%s); using the conservative default", path, exc)
        return None


def rule_for(provider: str) -> BillingRule:
    """The billing rule of ``provider`` (its own file, else default.json, else DEFAULT_RULE)."""
    folder = str(_rules_dir())
    if provider.replace("_", "").replace("-", "").isalnum():  # never a path from a provider id
        found = _load(provider, folder)
        if found is not None:
            return found
    return _load("default", folder) or DEFAULT_RULE
