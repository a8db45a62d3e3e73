"""The run report as one HTML page with SVG plots (no Qt: the CLI writes it; the GUI prints it to PDF).

The markup keeps to what both a browser and Qt's rich-text engine (QTextDocument, used for the
PDF) render: tables, headings, paragraphs and ``<img>`` — no CSS layout.  Plots are SVG; by
default embedded as ``data:`` URIs (a self-contained file), or named through ``image_src`` so
the GUI can hand Qt rendered images.

Every fixed text goes through ``t`` (identity here; the GUI passes its ``tr``) and is listed in
:data:`LABELS`, so the GUI's catalogue has them all.  Pure functions, safe on any thread.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
from typing import Callable, Sequence

import numpy as np

from workbench.core.telemetry.advice_rules import TITLES
from workbench.core.telemetry.advisor import money_text
from workbench.core.telemetry.report import RunReport
from workbench.core.telemetry.series import decimate

L = {
    "title": "Run report: {name}",
    "sub": "Launch {launch} · {where} · generated {when}",
    "cost": "Cost", "duration": "Duration", "price": "Price per hour", "machines": "Machines", "status": "Status",
    "gpus": "GPUs", "advice": "Advice", "no_advice": "No advice: the GPUs were busy and their memory well used.",
    "no_gpu": "No GPU readings were recorded for this launch.",
    "saving": "Saves about {amount} on this run", "saving_unknown": "Saving unknown (no price)",
    "window": "Evidence: {start} – {end}", "per_gpu": "Per-GPU utilization",
    "col_gpu": "GPU", "col_model": "Model", "col_mean": "Mean", "col_p50": "Median", "col_p90": "90th pct.",
    "col_mem": "Peak memory", "col_power": "Mean power", "col_nvlink": "NVLink rx / tx",
    "plot_util": "GPU utilization (%)", "plot_mem": "GPU memory used (GB)", "hours": "hours since start",
    "not_evaluated": "Not evaluated: {rule} ({why})",
    "cpu_job": "This launch ran without a GPU: the GPU advice does not apply. Its CPU and memory use are below.",
    "plot_cpu": "CPU busy (%)", "exit_code": "Exit code", "plot_host_mem": "Memory used (GB)",
    "basis": "Cost is the app's estimate from the price and billed time of each machine, as in Spend; "
             "savings are for this run's duration.",
    "severity_high": "high", "severity_medium": "medium", "severity_low": "low",
    "spot": "spot", "on_demand": "on-demand",
    "dur_h": "{h} h {m:02d} min", "dur_m": "{n} min", "dur_s": "{n} s",
    # a launch's status, as the Launch view shows it
    "status_launching": "launching", "status_running": "running", "status_finished": "finished",
    "status_failed": "failed", "status_terminated": "terminated", "status_recovered": "recovered",
    "status_stopped": "stopped", "status_interrupted": "interrupted", "relaunched": "relaunched as attempt {n}",
    # a job in a container: its image, by digest where known (report.image_digest)
    "image": "Image: {image} · by digest {digest}",
    "image_no_digest": "Image: {image} · digest unknown (the pull did not log it)",
}
LABELS = tuple(L.values())
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf")
SEVERITY_COLORS = {"high": "#c62828", "medium": "#ef6c00", "low": "#616161"}
PLOT_W, PLOT_H = 680, 150
MAX_POINTS = 600


def duration_text(seconds: float, t: Callable[[str], str] = lambda s: s) -> str:
    """``2 h 05 min``, ``12 min``, ``40 s`` (through ``t``)."""
    s = int(max(0.0, seconds))
    if s >= 3600:
        return t(L["dur_h"]).format(h=s // 3600, m=(s % 3600) // 60)
    return t(L["dur_m"]).format(n=s // 60) if s >= 60 else t(L["dur_s"]).format(n=s)


def _num(v: float, fmt: str = "{:.0f}", unit: str = "") -> str:
    return "–" if v is None or v != v else fmt.format(v) + unit


def _ticks(span_h: float) -> list[float]:
    steps = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 6, 12, 24, 48)
    step = next((s for s in steps if span_h / s <= 8), 96)
    return [k * step for k in range(int(span_h / step) + 1)]


def svg_plot(series: Sequence[tuple[str, np.ndarray, np.ndarray]], t0: float, t1: float, y_max: float,
             windows: Sequence[tuple[float, float]] = (), x_label: str = "", width: int = PLOT_W,
             height: int = PLOT_H) -> str:
    """Lines of (label, t, y) over [t0, t1] on 0..y_max; ``windows`` shaded (the advice's evidence)."""
    left, right, top, bottom = 40, 8, 6, 28
    w, h = width - left - right, height - top - bottom
    span = max(t1 - t0, 1.0)
    y_max = y_max if y_max > 0 else 1.0

    def x(t: np.ndarray | float) -> np.ndarray | float:
        return left + (np.asarray(t) - t0) / span * w

    def y(v: np.ndarray | float) -> np.ndarray | float:
        return top + h - np.clip(np.asarray(v), 0, y_max) / y_max * h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>']
    for a, b in windows:
        xa, xb = float(x(max(a, t0))), float(x(min(b, t1)))
        if xb > xa:
            parts.append(f'<rect x="{xa:.1f}" y="{top}" width="{xb - xa:.1f}" height="{h}" fill="#ffcc80" '
                         'fill-opacity="0.35"/>')
    for frac in (0.0, 0.5, 1.0):
        yy = top + h - frac * h
        parts.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + w}" y2="{yy:.1f}" stroke="#dddddd"/>')
        parts.append(f'<text x="{left - 4}" y="{yy + 3:.1f}" text-anchor="end" fill="#444444">'
                     f'{_num(y_max * frac, "{:.0f}" if y_max >= 10 else "{:.1f}")}</text>')
    for tick in _ticks(span / 3600.0):
        xx = float(x(t0 + tick * 3600.0))
        parts.append(f'<line x1="{xx:.1f}" y1="{top + h}" x2="{xx:.1f}" y2="{top + h + 3}" stroke="#444444"/>')
        parts.append(f'<text x="{xx:.1f}" y="{top + h + 13}" text-anchor="middle" fill="#444444">{tick:g}</text>')
    if x_label:
        parts.append(f'<text x="{left + w / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#444444">'
                     f'{html.escape(x_label)}</text>')
    for i, (_label, t, v) in enumerate(series):
        ok = np.isfinite(v)
        t, v = decimate(t[ok], v[ok], MAX_POINTS)
        if t.size < 1:
            continue
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x(t), y(v)))
        parts.append(f'<polyline fill="none" stroke="{COLORS[i % len(COLORS)]}" stroke-width="1" points="{pts}"/>')
    parts.append(f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#888888"/>')
    parts.append("</svg>")
    return "".join(parts)


def plots(report: RunReport, t: Callable[[str], str] = lambda s: s) -> dict[str, str]:
    """The report's SVG plots by file name: utilization and memory of every GPU, evidence windows shaded."""
    tr = report.trace
    t0, t1 = tr.start, tr.start + tr.duration_s
    if not tr.gpus:  # a CPU job: how busy its machine's CPUs were, and how much memory it used
        hosts = [h for h in tr.hosts if h.t.size]
        if not hosts:
            return {}
        out = {"cpu.svg": svg_plot([(h.node, h.t, h.cpu) for h in hosts], t0, t1, 100.0, [], t(L["hours"]))}
        mem = [(h.node, h.t, h.mem_used / 1024.0) for h in hosts
               if h.mem_used is not None and np.isfinite(h.mem_used).any()]
        if mem:
            top = max([h.mem_total / 1024.0 for h in hosts if h.mem_total == h.mem_total]
                      + [float(np.nanmax(m)) for _n, _t, m in mem] + [1.0])
            out["host-memory.svg"] = svg_plot(mem, t0, t1, top, [], t(L["hours"]))
        return out
    windows = [a.window for a in report.advisory.advice]
    util = [(g.label, g.t, g.util) for g in tr.gpus]
    mem = [(g.label, g.t, g.mem_used / 1024.0) for g in tr.gpus]
    mem_top = max([g.mem_total / 1024.0 for g in tr.gpus if g.mem_total == g.mem_total] + [1.0])
    return {"utilization.svg": svg_plot(util, t0, t1, 100.0, windows, t(L["hours"])),
            "memory.svg": svg_plot(mem, t0, t1, mem_top, windows, t(L["hours"]))}


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def render_html(report: RunReport, t: Callable[[str], str] = lambda s: s,
                image_src: Callable[[str, str], str] | None = None) -> str:
    """The report page; ``image_src(name, svg)`` gives each plot's ``src`` (default: a data URI)."""
    e = html.escape
    src = image_src or (lambda name, svg: data_uri(svg))
    when = _dt.datetime.fromtimestamp(report.generated_at).strftime("%Y-%m-%d %H:%M")
    where = " · ".join(x for x in (f"{report.provider}/{report.region}".strip("/"),
                                   f"{report.nodes} × {report.instance_type}" if report.instance_type else "",
                                   t(L["spot"]) if report.spot else t(L["on_demand"])) if x)
    price = "–" if report.price_per_hour is None else money_text(report.price_per_hour, report.currency)
    gpus = sum(1 for _ in report.gpus)
    status = L.get("status_" + report.status)
    rows = [(t(L["cost"]), money_text(report.cost, report.currency)),
            (t(L["duration"]), duration_text(report.duration_s, t)), (t(L["price"]), price),
            (t(L["machines"]), str(report.nodes)),
            (t(L["gpus"]), f"{gpus} × {report.gpu_model}" if report.gpu_model else str(gpus)),
            *([(t(L["exit_code"]), str(report.exit_code))] if report.exit_code is not None else []),
            (t(L["status"]), (t(status) if status else report.status) + (
                " · " + t(L["relaunched"]).format(n=report.relaunched_as) if report.relaunched_as else ""))]
    out = ['<html><head><meta charset="utf-8"><title>', e(t(L["title"]).format(name=report.name)), "</title></head>",
           '<body style="font-family: sans-serif; font-size: 10pt; color: #222222;">',
           f'<h1 style="font-size: 16pt; margin: 0;">{e(t(L["title"]).format(name=report.name))}</h1>',
           f'<p style="color: #555555; margin-top: 2px;">'
           f'{e(t(L["sub"]).format(launch=report.launch_id, where=where, when=when))}</p>',
           '<table cellspacing="0" cellpadding="4" style="border-collapse: collapse;"><tr>']
    out += [f'<td style="background-color: #f2f4f7;"><span style="color: #555555;">{e(k)}</span><br/>'
            f'<b style="font-size: 12pt;">{e(v)}</b></td>' for k, v in rows]
    out.append("</tr></table>")
    if report.image:
        line = (t(L["image"]).format(image=report.image, digest=report.image_digest) if report.image_digest
                else t(L["image_no_digest"]).format(image=report.image))
        out.append(f'<p style="margin: 4px 0;">{e(line)}</p>')
    out.append(f'<h2 style="font-size: 12pt; margin-bottom: 2px;">{e(t(L["advice"]))}</h2>')
    host_plots = plots(report, t) if not report.gpus else {}
    cpu_plot = host_plots.get("cpu.svg")
    if not report.gpus:
        out.append(f"<p>{e(t(L['cpu_job'] if cpu_plot else L['no_gpu']))}</p>")
    elif not report.advisory.advice:
        out.append(f"<p>{e(t(L['no_advice']))}</p>")
    for a in report.advisory.advice:
        color = SEVERITY_COLORS.get(a.severity, "#616161")
        saving = (t(L["saving"]).format(amount=money_text(a.saving.amount, a.saving.currency))
                  if a.saving.amount is not None else t(L["saving_unknown"]))
        w = a.evidence.get("window") or {}
        window = t(L["window"]).format(start=w.get("start", ""), end=w.get("end", ""))
        out.append(f'<p style="margin: 4px 0;"><b style="color: {color};">■ {e(t(a.title))}</b> '
                   f'<span style="color: {color};">({e(t(L["severity_" + a.severity]))})</span> — '
                   f'<b>{e(saving)}</b><br/>{e(t(a.template).format(**a.params))}<br/>'
                   f'<span style="color: #666666;">{e(window)}'
                   "</span></p>")
    for rule, why in (report.advisory.not_evaluated.items() if report.gpus else ()):  # a CPU job: said above
        out.append(f'<p style="color: #777777; margin: 1px 0; font-size: 8pt;">'
                   f'{e(t(L["not_evaluated"]).format(rule=t(TITLES.get(rule, rule)), why=why))}</p>')
    for name, label in (("cpu.svg", L["plot_cpu"]), ("host-memory.svg", L["plot_host_mem"])):
        if name in host_plots:
            out.append(f'<p style="margin: 6px 0 0 0;"><b>{e(t(label))}</b><br/>'
                       f'<img src="{e(src(name, host_plots[name]))}" width="{PLOT_W}" height="{PLOT_H}"/></p>')
    if report.gpus:
        out.append(f'<h2 style="font-size: 12pt; margin-bottom: 2px;">{e(t(L["per_gpu"]))}</h2>')
        out.append('<table cellspacing="0" cellpadding="3" border="1" style="border-collapse: collapse; '
                   'border-color: #cccccc;"><tr style="background-color: #f2f4f7;">')
        nvlink = any(g.nvlink_rx_mbps == g.nvlink_rx_mbps or g.nvlink_tx_mbps == g.nvlink_tx_mbps
                     for g in report.gpus)  # the column only when some machine reported NVLink
        for key in ("col_gpu", "col_model", "col_mean", "col_p50", "col_p90", "col_mem", "col_power") + \
                (("col_nvlink",) if nvlink else ()):
            out.append(f"<th>{e(t(L[key]))}</th>")
        out.append("</tr>")
        for g in report.gpus:
            mem = f"{_num(g.mem_peak_mib / 1024.0, '{:.1f}')} / {_num(g.mem_total_mib / 1024.0, '{:.0f}')} GB"
            cells = (g.label, g.name, _num(g.util_mean, unit=" %"), _num(g.util_p50, unit=" %"),
                     _num(g.util_p90, unit=" %"), mem, _num(g.power_mean_w, unit=" W"))
            if nvlink:
                cells += (f"{_num(g.nvlink_rx_mbps / 1e3, '{:.1f}')} / {_num(g.nvlink_tx_mbps / 1e3, '{:.1f}')} GB/s",)
            out.append("<tr>" + "".join(f'<td align="{"left" if i < 2 else "right"}">{e(c)}</td>'
                                        for i, c in enumerate(cells)) + "</tr>")
        out.append("</table>")
        svgs = plots(report, t)
        for name, label in (("utilization.svg", L["plot_util"]), ("memory.svg", L["plot_mem"])):
            out.append(f'<p style="margin: 6px 0 0 0;"><b>{e(t(label))}</b><br/>'
                       f'<img src="{e(src(name, svgs[name]))}" width="{PLOT_W}" height="{PLOT_H}"/></p>')
    out.append(f'<p style="color: #777777; font-size: 8pt;">{e(t(L["basis"]))}</p></body></html>')
    return "".join(out)


def write_html(report: RunReport, path, t: Callable[[str], str] = lambda s: s) -> None:
    """Write the self-contained page (plots embedded) to ``path``."""
    from pathlib import Path

    Path(path).write_text(render_html(report, t), encoding="utf-8")

