"""What a chosen offer means for a job spec with ``alternatives``: which one it matched, spot or not."""

from __future__ import annotations

from workbench.core.domain.jobspec_choices import describe_alternative
from workbench.core.domain.models import Alternative, JobSpec
from workbench.core.offers.query import RankedOffer


def effective_spot(spec: JobSpec, choice: RankedOffer) -> bool:
    """Spot or on-demand for the chosen offer: its alternative's choice, else the spec's."""
    alt = alternative_of(spec, choice)
    return spec.resources.spot if alt is None or alt.spot is None else alt.spot


def alternative_of(spec: JobSpec, choice: RankedOffer) -> Alternative | None:
    if choice.alternative is None or not 0 <= choice.alternative < len(spec.alternatives):
        return None
    return spec.alternatives[choice.alternative]


def describe_match(spec: JobSpec, choice: RankedOffer) -> str | None:
    """'alternative 2 of 4 (1× V100)' for a spec with alternatives, else None."""
    alt = alternative_of(spec, choice)
    if alt is None:
        return None
    assert choice.alternative is not None
    return f"alternative {choice.alternative + 1} of {len(spec.alternatives)} ({describe_alternative(alt)})"
