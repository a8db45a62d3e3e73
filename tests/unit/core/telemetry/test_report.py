"""The run report from the store: its numbers are the store's (spend ledger, stored samples), rendered as HTML."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from workbench.core.domain.errors import NotFoundError
from workbench.core.money.spend import SpendBook
from workbench.core.store.database import Store
from workbench.core.telemetry.report import build_report
from workbench.core.telemetry.report_html import LABELS, render_html
from workbench.core.telemetry.trace import trace_from_store

from advisor_fixtures import offers, traces as T

LATER = T.T0 + 86_400.0  # "now": a day after the runs ended


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "state.sqlite3")
    yield s
    s.close()


def test_a_multi_node_launch_reads_back_with_both_nodes_and_its_advice(store):
    T.to_store(store, T.two_nodes(), "L-ddp", spec={"name": "ddp", "run": "torchrun train.py",
                                                    "recovery": {"max_restarts": 3, "on": ["preemption"]}})
    tr = trace_from_store(store, "L-ddp", LATER)
    assert tr.nodes == ["i-node0", "i-node1"] and len(tr.gpus) == 16 and len(tr.hosts) == 2
    assert tr.run.nodes == 2 and tr.run.checkpoints is True and tr.run.instance_type == "p3.16xlarge"
    assert tr.period_s == 60.0  # minute samples, as the app stores them
    report = build_report(store, "L-ddp", offers(), now=LATER)
    assert report.advisory.ids() == ["spot", "network"]  # largest saving first
    book = SpendBook.load(store)
    assert report.cost == pytest.approx(book.launch_total("L-ddp", LATER)) == pytest.approx(24.48 * 2 * 2)
    assert report.duration_s == pytest.approx(7200.0)
    for g in report.gpus:  # per-GPU figures are the stored samples'
        stored = [s.util_percent for s in store.samples(g.node) if s.index == g.index and s.kind == "gpu"]
        assert g.util_mean == pytest.approx(np.mean(stored)) and g.samples == len(stored) == 120
        assert g.mem_peak_mib == pytest.approx(max(s.mem_used_mb for s in store.samples(g.node) if s.index == g.index))


def test_the_sawtooth_survives_minute_averages_through_the_stored_min_and_max(store):
    T.to_store(store, T.starved(cpu=30, hours=1.0), "L-starved")
    tr = trace_from_store(store, "L-starved", LATER)
    assert np.nanmax(tr.gpus[0].util) < 70 and np.nanmax(tr.gpus[0].util_max) > 90  # averages hide it, max keeps it
    report = build_report(store, "L-starved", offers(), now=LATER)
    assert report.advisory.ids() == ["data_loading"]
    assert report.advisory.advice[0].evidence["signals"] == ["sawtooth"]


def test_html_shows_the_store_numbers_every_gpu_and_the_plots(store):
    T.to_store(store, T.idle_six_of_eight(), "L-idle", name="resnet")
    report = build_report(store, "L-idle", offers(), now=LATER)
    page = render_html(report)
    assert "Run report: resnet" in page and "$48.96" in page  # 2 h × $24.48
    assert "2 h 00 min" in page and "1 × p3.16xlarge" in page
    for g in report.gpus:
        assert f"<td align=\"left\">{g.label}</td>" in page
        assert f"{g.util_mean:.0f} %" in page
    assert "Idle GPUs" in page and "p3.8xlarge" in page and "Saves about $24.48 on this run" in page
    svgs = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(svgs) == 2
    util_svg = base64.b64decode(svgs[0]).decode()
    assert util_svg.startswith("<svg") and util_svg.count("<polyline") == 8  # one line per GPU
    assert 'fill="#ffcc80"' in util_svg  # the advice's evidence window, shaded


def test_labels_go_through_the_translator(store):
    T.to_store(store, T.healthy(), "L-ok")
    report = build_report(store, "L-ok", offers(), now=LATER)
    seen: list[str] = []

    def t(s: str) -> str:
        seen.append(s)
        return s.upper() if s == "Per-GPU utilization" else s

    page = render_html(report, t)
    assert "PER-GPU UTILIZATION" in page and "No advice: the GPUs were busy" in page
    assert set(seen) <= set(LABELS) | {a.title for a in report.advisory.advice} | \
        {a.template for a in report.advisory.advice}


def test_an_unknown_launch_is_a_clear_error(store):
    with pytest.raises(NotFoundError, match="no launch 'nope'"):
        build_report(store, "nope", offers())


def test_a_preempted_attempt_that_was_relaunched_reports_interrupted(store):
    # Issue 29: the report said "failed" for a spot attempt the cloud took back and recovery relaunched
    from workbench.core.store.attempts import AttemptRecord

    T.to_store(store, T.idle_six_of_eight(), "L-spot", name="resnet")
    store.add_attempt(AttemptRecord("L-spot", "L-spot", 1, T.T0, "running"))
    store.end_attempt("L-spot", "preemption", "AWS spot interruption notice", T.T0 + 3600)
    store.add_attempt(AttemptRecord("L-spot-a2-beef", "L-spot", 2, T.T0 + 3700, "running"))
    report = build_report(store, "L-spot", offers(), now=LATER)
    assert report.status == "interrupted" and report.relaunched_as == 2
    assert "interrupted · relaunched as attempt 2" in render_html(report)


def test_a_cpu_job_reports_its_cpu_and_exit_code_in_sentences(store):
    # Issue 29: a CPU job's report listed "Not evaluated: idle_gpus …" seven times, no plot, no exit code
    from dataclasses import replace as dc_replace

    from workbench.core.domain.models import HostSample, Instance, InstanceState
    from workbench.core.store.database import LaunchRecord

    store.add_launch(LaunchRecord("L-cpu", "cpu-job", "local", "local", "local", T.T0, status="finished",
                                  spec={"name": "cpu-job", "run": "python prep.py"}))
    inst = Instance("local", "local", "local-L-cpu", "L-cpu", "local", "this-computer", InstanceState.RUNNING,
                    name="cpu-job", launched_at=T.T0)
    store.upsert_instance(inst, ts=T.T0)
    store.add_host_samples([HostSample("local-L-cpu", T.T0 + 60.0 * k, 40.0 + k, 4, 900.0, 16000.0, 0.0, 0.0,
                                       0.0) for k in range(30)])
    store.upsert_instance(dc_replace(inst, state=InstanceState.TERMINATED, exit_code=0), ts=T.T0 + 1800.0)
    report = build_report(store, "L-cpu", offers(), now=LATER)
    page = render_html(report)
    assert report.exit_code == 0 and "Exit code" in page
    assert "This launch ran without a GPU: the GPU advice does not apply" in page
    assert "Not evaluated" not in page and "idle_gpus" not in page
    assert "CPU busy (%)" in page and "Memory used (GB)" in page and page.count("<img") == 2
