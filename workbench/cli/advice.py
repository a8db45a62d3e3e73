"""``workbench advise`` and ``workbench report``: the utilization advisor and the run report, headless.

``advise`` reads a launch's telemetry from the store, or nvidia-smi CSV logs recorded anywhere,
and prints what to change and what it would have saved (``--json``:
``{"advice": [{"id", "severity", "title", "evidence", "action", "saving": {"amount", "currency"}}],
"not_evaluated": {rule: why}, "missing": [field], "run": {...}}``).  ``report`` writes the one-page
run report as HTML (no Qt), or PDF (Qt is imported for that only, offscreen without a display).

Offers and prices the advice names come from the bundled catalogue snapshots, so both commands
work offline.  Exit codes: 0 ok (with or without advice), 1 bad input (unknown launch, unreadable log).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from workbench.cli.context import CliContext
from workbench.cli.output import emit_json, err
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.gpus import canonical_gpu, suggest_gpu
from workbench.core.money.planner import snapshot_offers
from workbench.core.telemetry.advisor import Advisory, advise, estimate_price, money_text
from workbench.core.telemetry.report_html import duration_text
from workbench.core.telemetry.trace import Trace


# -- advise -----------------------------------------------------------------------------------------
def _model(text: str | None) -> str | None:
    if not text:
        return None
    m = canonical_gpu(text)
    if m is None:
        near = suggest_gpu(text)
        raise ConfigError(f"unknown GPU model {text!r}", hint=f"did you mean {near}?" if near else
                          "use a short model name such as V100, A100, H100, L4")
    return m


def _log_trace(args: argparse.Namespace, offers) -> Trace:
    from workbench.core.telemetry.smi_log import read_log

    traces = [read_log(p) for p in args.logs]
    if len(traces) == 1:
        trace = traces[0]
    else:  # one file per machine: the file's name is the node
        gpus = tuple(dataclasses.replace(g, node=Path(p).stem) for p, tr in zip(args.logs, traces) for g in tr.gpus)
        missing = tuple(dict.fromkeys(m for tr in traces for m in tr.missing))
        trace = Trace(gpus, traces[0].run, missing=missing, clock="log")
    run = dataclasses.replace(trace.run, nodes=len(traces), gpus_per_node=max(1, len(traces[0].gpus)),
                              checkpoints=True if args.checkpoints else None)
    model = _model(args.gpu_model)
    if model:
        run = dataclasses.replace(run, gpu_model=model)
    if args.instance_type:
        known = [o for o in offers if o.instance_type == args.instance_type
                 and (not getattr(args, "region", None) or o.region == args.region)]
        if not known:
            where = f" in {args.region}" if getattr(args, "region", None) else ""
            raise ConfigError(f"{args.instance_type!r}{where} is not in the bundled catalogue",
                              hint="leave --instance-type out and give --price-per-hour")
        # the catalogue prices a type in many regions: the one asked for, else the cheapest (a careful user's)
        o = min(known, key=lambda x: (x.prices.on_demand is None, x.prices.on_demand or 0.0, x.region))
        run = dataclasses.replace(run, provider=o.provider, region=o.region, instance_type=o.instance_type,
                                  gpu_model=run.gpu_model or o.gpu_model, price_per_hour=o.prices.on_demand,
                                  currency=o.prices.currency,
                                  price_source=f"{o.prices.source} {o.prices.as_of}".strip())
    if args.price_per_hour is not None:
        run = dataclasses.replace(run, price_per_hour=args.price_per_hour, currency=args.currency.upper(),
                                  price_source="--price-per-hour")
    return estimate_price(dataclasses.replace(trace, run=run), offers)


def _print(adv: Advisory, trace: Trace, what: str) -> None:
    cost = money_text(adv.cost, adv.currency) if adv.cost is not None else "cost unknown"
    shape = f"{trace.run.nodes} × {trace.run.instance_type}" if trace.run.instance_type else \
        f"{len(trace.gpus)} GPU(s) {trace.run.gpu_model or ''}".strip()
    print(f"Advice for {what} ({shape}, {duration_text(adv.duration_s)}, {cost}"
          + (f"; price from {trace.run.price_source}" if trace.run.price_source else "") + "):")
    if not adv.advice:
        print("  No advice: the GPUs were busy and their memory well used." if trace.gpus else
              "  No GPU readings were recorded.")
    for a in adv.advice:
        saving = money_text(a.saving.amount, a.saving.currency)
        print(f"\n  [{a.severity}] {a.title} — saves about {saving}")
        print(f"    {a.action}")
        w = a.evidence.get("window") or {}
        nums = ", ".join(f"{k}={v}" for k, v in a.evidence.items()
                         if k not in ("window", "saving_basis") and v not in (None, "", []))
        print(f"    evidence {w.get('start', '')} – {w.get('end', '')}: {nums}")
    for rule, why in adv.not_evaluated.items():
        print(f"  not evaluated: {rule} ({why})")
    if adv.missing:
        print(f"  missing from the source: {', '.join(adv.missing)}")


def cmd_advise(ctx: CliContext, args: argparse.Namespace) -> int:
    if bool(args.launch_id) == bool(args.logs):
        raise ConfigError("give a LAUNCH_ID or --nvidia-smi-log FILE (one of them)",
                          hint="workbench advise LAUNCH_ID, or workbench advise --nvidia-smi-log gpu.csv")
    offers = snapshot_offers()
    if args.logs:
        trace = _log_trace(args, offers)
        what = ", ".join(args.logs)
    else:
        from workbench.core.telemetry.trace import trace_from_store

        trace = trace_from_store(ctx.store, args.launch_id)
        what = f"launch {args.launch_id}"
    adv = advise(trace, offers)
    if ctx.json:
        emit_json(adv.to_json())
    else:
        _print(adv, trace, what)
    return 0


# -- report -----------------------------------------------------------------------------------------
def cmd_report(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.telemetry.report import build_report
    from workbench.core.telemetry.report_html import render_html

    report = build_report(ctx.store, args.launch_id, snapshot_offers())
    out = Path(args.output or f"workbench-report-{args.launch_id}.{'pdf' if args.pdf else 'html'}")
    try:
        if args.pdf:
            pdf_pages = _write_pdf(report, out)
        else:
            out.write_text(render_html(report), encoding="utf-8")
            pdf_pages = None
    except OSError as exc:
        raise ConfigError(f"cannot write {out}: {exc.strerror or exc}") from None
    if ctx.json:
        emit_json({"path": str(out.resolve()), "format": "pdf" if args.pdf else "html", "pages": pdf_pages,
                   "cost": round(report.cost, 2), "currency": report.currency,
                   "duration_s": round(report.duration_s, 1), **report.advisory.to_json()})
    else:
        print(f"wrote {out} ({money_text(report.cost, report.currency)}, {duration_text(report.duration_s)}, "
              f"{len(report.advisory.advice)} piece(s) of advice)")
    return 0


def _write_pdf(report, out: Path) -> int:
    """Qt renders the PDF: imported here only; offscreen when there is no display."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from workbench.ui.common.report_pdf import ensure_app, write_pdf
    except ImportError as exc:
        err(f"PDF needs Qt (PySide6): {exc}")
        raise ConfigError("PDF output needs Qt, which could not be loaded",
                          hint="write HTML instead (leave out --pdf) and print it from a browser") from None
    ensure_app()
    return write_pdf(report, out)
