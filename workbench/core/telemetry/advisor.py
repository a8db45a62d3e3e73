"""The utilization advisor: rules over a run's telemetry that say what to change and what it saves.

:func:`advise` runs every rule of :mod:`workbench.core.telemetry.advice_rules` over a
:class:`~workbench.core.telemetry.trace.Trace` and returns an :class:`Advisory`: the advice
(each ``{id, severity, evidence, action, saving}``), the rules it could not evaluate and why
(a column the log lacks, no price), and the fields the source lacked.  A healthy run (busy
GPUs, memory well used) gets no advice: every rule needs its symptom over most of the run, and
the rules that read low utilization as "too much GPU" (``batch_size``, ``right_size``) stay
quiet when a bottleneck rule (``idle_gpus``, ``data_loading``, ``network``) already explains it.

Offers and prices come from the caller (the bundled snapshots through
:func:`workbench.core.money.planner.snapshot_offers`, or live ones), filtered with
:mod:`workbench.core.offers`.  Savings are in the run's currency.

Pure computation on arrays: safe on any thread, no I/O.
"""

from __future__ import annotations

from typing import Sequence

from workbench.core.domain.models import Offer
from workbench.core.telemetry import advice_rules
from workbench.core.telemetry.advice_base import (Advice, Advisory, Context, Saving, estimate_price, gpu_stats,
                                                  money_text)
from workbench.core.telemetry.trace import Trace

__all__ = ["Advice", "Advisory", "Saving", "advise", "estimate_price", "money_text"]


def advise(trace: Trace, offers: Sequence[Offer] = ()) -> Advisory:
    """Run every rule (see the module docstring); largest saving first."""
    cost = trace.total_cost()
    ctx = Context(trace, tuple(gpu_stats(g) for g in trace.gpus), tuple(offers), cost, trace.hours)
    found: list[Advice] = []
    skipped: dict[str, str] = {}
    if not trace.gpus:
        skipped = {rid: "the run has no GPU readings" for rid in advice_rules.RULE_IDS}
    else:
        for rid, rule in advice_rules.RULES:
            if rid in advice_rules.QUIET_AFTER_BOTTLENECK and any(a.id in advice_rules.BOTTLENECKS for a in found):
                continue
            outcome = rule(ctx)
            if isinstance(outcome, Advice):
                found.append(outcome)
            elif isinstance(outcome, str):
                skipped[rid] = outcome
    found.sort(key=lambda a: -(a.saving.amount or 0.0))
    return Advisory(tuple(found), skipped, trace.missing, cost, trace.run.currency, trace.hours * 3600.0,
                    len(trace.gpus))
