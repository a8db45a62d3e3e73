"""The advisor's and the run report's texts, marked for translation.

The advice titles and action templates, and the report's labels, are written in core
(:mod:`workbench.core.telemetry.advice_rules`, :mod:`workbench.core.telemetry.report_html`), which
has no Qt; they are repeated here as ``N_()`` literals so ``scripts/i18n.py`` puts them in the
catalogue, and a test keeps the two lists equal.  :func:`advice_action` shows an advice's action
in the UI language with its numbers filled in.
"""

from __future__ import annotations

from workbench.core.telemetry.advisor import Advice
from workbench.ui.i18n import N_, tr

ADVICE_STRINGS = (
    N_('Use larger batches'),
    N_('The GPUs wait for data'),
    N_('Train in mixed precision'),
    N_('Idle GPUs'),
    N_('A cheaper GPU fits'),
    N_('The network limits training'),
    N_('Spot would have cost less'),
    N_('GPU memory peaked at {mem_percent}% and utilization averaged {util}% for most of the run: raise the '
       'batch size about {factor}× (and the learning rate with it, with a short warm-up). Expected about '
       '{speedup}× faster.'),
    N_('GPU utilization averaged {util}% while the GPUs waited for input: use more DataLoader workers '
       '(about one per CPU core), pin_memory=True, and a local or memory-mapped copy of the dataset. '
       'Expected up to {speedup}× faster.'),
    N_('The {model} GPUs were busy ({util}%) but drew only {power_percent}% of their power limit, a sign of '
       'FP32 math: train with automatic mixed precision (torch.autocast with bfloat16 or float16). Expected '
       'about {speedup}× faster.'),
    N_('{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. {offer} has {offer_gpus} '
       '{model} GPUs for {offer_price}/h instead of {price}/h.'),
    N_('{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. Ask for {used} GPUs, or make '
       'the job use all of them (for example torchrun --nproc_per_node={per_node}).'),
    N_('No GPU did any work ({total} GPUs near 0%): check that the job runs on the GPU '
       '(torch.cuda.is_available()) or run it on a machine without GPUs.'),
    N_('Peak GPU memory ({mem_gb} GB) and utilization ({util}% of the {model}) fit a cheaper {cand_model} '
       '({cand_mem} GB): {offer} costs {offer_price}/h instead of {price}/h.'),
    N_('The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s '
       'network, while the GPUs averaged {util}%: use {offer} (EFA / InfiniBand, {offer_price}/h) with all '
       'nodes in one placement group.'),
    N_('The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s '
       'network, while the GPUs averaged {util}%: use an instance type with EFA or InfiniBand, with all '
       'nodes in one placement group, and check that NCCL uses it.'),
    N_('This {hours} h on-demand run can resume from its checkpoints: on spot ({offer_price}/h instead of '
       '{price}/h) it would have cost {spot_cost} instead of {cost}, if interruptions cost little time.'),
)
REPORT_LABELS = (
    N_('Run report: {name}'),
    N_('Launch {launch} · {where} · generated {when}'),
    N_('Cost'),
    N_('Duration'),
    N_('Price per hour'),
    N_('Machines'),
    N_('Status'),
    N_('GPUs'),
    N_('Advice'),
    N_('No advice: the GPUs were busy and their memory well used.'),
    N_('No GPU readings were recorded for this launch.'),
    N_('Saves about {amount} on this run'),
    N_('Saving unknown (no price)'),
    N_('Evidence: {start} – {end}'),
    N_('Per-GPU utilization'),
    N_('GPU'),
    N_('Model'),
    N_('Mean'),
    N_('Median'),
    N_('90th pct.'),
    N_('Peak memory'),
    N_('Mean power'),
    N_('NVLink rx / tx'),
    N_('GPU utilization (%)'),
    N_('GPU memory used (GB)'),
    N_('hours since start'),
    N_('Not evaluated: {rule} ({why})'),
    N_("Cost is the app's estimate from the price and billed time of each machine, as in Spend; savings are "
       "for this run's duration."),
    N_('high'),
    N_('medium'),
    N_('low'),
    N_('spot'),
    N_('on-demand'),
    N_('{h} h {m:02d} min'),
    N_('{n} min'),
    N_('{n} s'),
    N_('launching'),
    N_('running'),
    N_('finished'),
    N_('failed'),
    N_('terminated'),
    N_('recovered'),
    N_('stopped'),
    N_('interrupted'),
    N_('relaunched as attempt {n}'),
    N_('This launch ran without a GPU: the GPU advice does not apply. Its CPU and memory use are below.'),
    N_('CPU busy (%)'),
    N_('Exit code'),
    N_('Memory used (GB)'),
    N_('Image: {image} · by digest {digest}'),
    N_('Image: {image} · digest unknown (the pull did not log it)'),
)
SEVERITY = {"high": N_("high"), "medium": N_("medium"), "low": N_("low")}


def advice_title(a: Advice) -> str:
    return tr(a.title)


def advice_action(a: Advice) -> str:
    """The action in the UI language; the English text when a translation lost a placeholder."""
    try:
        return tr(a.template).format(**a.params)
    except (KeyError, IndexError, ValueError):
        return a.action


def severity_label(severity: str) -> str:
    return tr(SEVERITY[severity]) if severity in SEVERITY else severity
