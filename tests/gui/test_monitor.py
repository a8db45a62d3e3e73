"""The Monitor view against real Local jobs (and the fake cloud for a provider without telemetry)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from workbench.core.domain.errors import TransientError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import GpuSample, Instance, InstanceState, Profile
from workbench.ui.monitor import monitor_view as monitor
from workbench.ui.monitor.monitor_view import MonitorView, PollResult, instance_key
from workbench.ui.runtime.session import Session


def launch(accounts, yaml: str, provider: str = "local") -> Instance:
    return execute(accounts, choose_offer(accounts, parse_spec(yaml), provider=provider))[0]


def make_view(qtbot, session, **kw) -> MonitorView:
    view = MonitorView(session, **kw)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    return view


def refreshed(qtbot, session: Session, instance_id: str) -> Instance:
    with qtbot.waitSignal(session.snapshot_changed, timeout=10_000):
        session.refresh()
    return next(i for i in session.snapshot.instances if i.instance_id == instance_id)


def x_span(view: MonitorView) -> float:
    lo, hi = view.plots.util_plot.viewRange()[0]
    return hi - lo


def test_live_samples_of_a_local_job_are_plotted_stored_and_windowed(qtbot, session, accounts):
    started = launch(accounts, "name: mon\nrun: sleep 30\nguards:\n  max_runtime: 5m\n")
    view = make_view(qtbot, session, poll_ms=250)
    inst = refreshed(qtbot, session, started.instance_id)
    view.show_instance(inst)
    assert view.instance_box.currentData() == instance_key(inst)
    assert view.instance_box.count() == 2  # "Choose an instance…" and the job, not a duplicate

    qtbot.waitUntil(view.plots.has_data, timeout=10_000)
    sets = view.series[instance_key(inst)]
    key = sets.keys()[0]
    assert len(sets.series[key]) > 0
    x, y = view.plots.curves[key].util.getData()
    assert len(x) > 0 and len(x) == len(y) and np.all((y >= 0) & (y <= 100))
    x, mem = view.plots.curves[key].mem.getData()
    assert len(x) > 0 and mem[-1] > 0  # the job's RSS (or the GPU's used memory)
    assert view.pages.currentIndex() == 1 and view.banner.isHidden()
    if key[0] == "cpu":  # no GPU here: the plots say so
        assert view.plots.title(view.plots.util_plot) == "CPU utilization (%)"
        legend = view.plots.mem_legend.items[0][1].text
        assert legend.startswith("Job memory (RSS)") and "(of " not in legend  # the computer's RAM is not the job's
    else:
        assert "GPU 0" in view.plots.util_legend.items[0][1].text
    qtbot.waitUntil(lambda: len(accounts.store.samples(inst.instance_id)) > 0, timeout=5_000)

    view.window_box.setCurrentIndex(0)
    assert x_span(view) == pytest.approx(300, rel=0.01)
    view.window_box.setCurrentIndex(1)
    assert x_span(view) == pytest.approx(3600, rel=0.01)
    view.window_box.setCurrentIndex(2)  # all: since launch, a few seconds (30 s minimum span)
    assert x_span(view) < 120
    view.window_box.setCurrentIndex(0)


def test_redraws_stay_at_or_below_two_a_second_under_a_flood_of_samples(qtbot, session):
    inst = Instance("local", "local", "flood-1", "flood-abc", "local", "cpu", InstanceState.TERMINATED,
                    name="flood", launched_at=time.time() - 60)
    view = make_view(qtbot, session)
    view.show_instance(inst)
    qtbot.waitUntil(lambda: view.pages.currentIndex() == 0 and "not running" in view.message.text())
    base, fed, i = view.redraw_count, 0, 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        now = time.time()
        batch = [GpuSample("flood-1", now + k * 1e-4, g, float((i + g) % 100), 1000.0 + i, 81_920.0, "A100")
                 for k in range(5) for g in range(4)]
        fed += view.add_samples(inst, batch)
        i += 1
        qtbot.wait(2)
    elapsed = time.monotonic() - t0
    redraws = view.redraw_count - base
    assert fed > 500 and view.pages.currentIndex() == 1
    assert 1 <= redraws <= 2 * elapsed + 1, (redraws, elapsed)
    assert len(view.plots.curves) == 4  # one line per GPU
    assert "GPU 3 · A100" in [label.text for _, label in view.plots.util_legend.items]
    assert view.plots.mem_unit == "GB"
    assert view.plots.curves[("gpu", 0, "A100")].total.value() == pytest.approx(80.0)
    qtbot.waitUntil(lambda: not view._dirty, timeout=5_000)  # the last readings' redraw happened
    n, ticks = view.redraw_count, []
    view.redraw_timer.timeout.connect(lambda: ticks.append(view.redraw_count))
    qtbot.waitUntil(lambda: len(ticks) >= 2, timeout=5_000)  # the redraw timer fired twice more ...
    assert view.redraw_count == n  # ... and with nothing new, nothing was redrawn


def test_spend_plot_shows_cost_burn_rate_and_the_budget_line(qtbot, session, accounts):
    accounts.save_profile(Profile("local", "local", region="local", settings={"price_per_hour": "3.6"}))
    started = launch(accounts, "name: spendy\nrun: sleep 30\nguards:\n  max_runtime: 5m\n  budget_usd: 5\n")
    view = make_view(qtbot, session, poll_ms=250)
    view.show_instance(refreshed(qtbot, session, started.instance_id))
    plots = view.plots
    assert plots.budget_line.isVisible() and plots.budget_line.value() == pytest.approx(5.0)
    qtbot.waitUntil(lambda: plots.cost_curve.getData()[0] is not None and len(plots.cost_curve.getData()[0]) >= 2,
                    timeout=10_000)
    _, cost = plots.cost_curve.getData()
    _, burn = plots.burn_curve.getData()
    assert cost[-1] > 0 and burn[-1] == pytest.approx(3.6)
    lo, hi = plots.cost_plot.viewRange()[1]
    assert lo <= 5.0 <= hi  # the budget is in view even while the cost is tiny
    assert "Budget $5.00" in plots.budget_line.label.format


def test_history_is_loaded_from_the_store_for_a_finished_instance(qtbot, session, accounts):
    now = time.time()
    accounts.store.add_samples([GpuSample("old-1", now - 100 + s, 0, 42.0, 2048.0, 16_384.0, "L4")
                                for s in range(50)])
    inst = Instance("local", "local", "old-1", "old-abc", "local", "x", InstanceState.TERMINATED, name="old",
                    exit_code=0)
    view = make_view(qtbot, session)
    view.show_instance(inst)
    qtbot.waitUntil(view.plots.has_data, timeout=5_000)
    assert len(view.series[instance_key(inst)].series[("gpu", 0, "L4")]) == 50
    assert not view.banner.isHidden() and "not running" in view.banner.text()
    # the word Instances uses for it (issue 29: the Monitor said "terminated" for "finished · exit 0")
    assert "(finished · exit 0)" in view.banner.text() and "terminated" not in view.banner.text()
    assert "finished · exit 0" in view._item_text(inst)
    # a machine that ran 50 s fills the plot, not a sliver of the 5-minute window (issue 29)
    assert view.window_seconds == 300.0
    view.redraw()
    lo, hi = view.plots.util_plot.viewRange()[0]
    assert 45 <= hi - lo <= 70, (lo, hi)


def test_empty_states_say_why_there_is_no_plot(qtbot, fake_accounts):
    fake_accounts.add_fake("fake")
    started = launch(fake_accounts, "name: fk\nrun: sleep 1\nresources:\n  gpu: V100\nguards:\n  max_runtime: 5m\n",
                     provider="fakecloud")
    session = Session(fake_accounts)
    try:
        view = make_view(qtbot, session)
        assert view.pages.currentIndex() == 0 and "No instance selected" in view.message.text()
        view.show_instance(refreshed(qtbot, session, started.instance_id))
        qtbot.waitUntil(lambda: "does not report GPU telemetry" in view.message.text(), timeout=5_000)
        assert view.pages.currentIndex() == 0
        gone = Instance("local", "local", "never", "never-abc", "local", "x", InstanceState.TERMINATED, name="gone")
        view.show_instance(gone)
        qtbot.waitUntil(lambda: "no readings were recorded" in view.message.text(), timeout=5_000)
    finally:
        session.shutdown()


def test_a_tick_is_skipped_while_a_poll_runs_and_transient_errors_back_off(qtbot, session, monkeypatch):
    calls, called_at, release = [], [], threading.Event()

    def slow_poll(accounts, inst, load_history):
        calls.append(load_history)
        called_at.append(time.monotonic())
        release.wait(5)
        return PollResult(instance_key(inst), inst.state,
                          error=TransientError("the agent is not answering", hint="it may be rebooting"))

    monkeypatch.setattr(monitor, "poll_instance", slow_poll)
    inst = Instance("local", "local", "slow-1", "slow-abc", "local", "x", InstanceState.RUNNING, name="slow")
    view = make_view(qtbot, session, poll_ms=200)
    ticks: list[float] = []
    view.poll_timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    view.show_instance(inst)
    qtbot.waitUntil(lambda: len(calls) == 1)
    seen = len(ticks)
    qtbot.waitUntil(lambda: len(ticks) >= seen + 3, timeout=5_000)  # three ticks while the poll hangs ...
    assert len(calls) == 1 and view.polling  # ... and none of them polled again
    release.set()
    qtbot.waitUntil(lambda: "not answering" in view.status.text())
    assert view.status.toolTip() == "it may be rebooting"
    assert "Waiting for the first reading" in view.message.text()
    failed_at, retry_at = time.monotonic(), view._retry_at
    assert retry_at > failed_at  # backing off (2 s) after the transient error
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=5_000)
    during = [t for t in ticks if failed_at <= t < retry_at]
    assert len(during) >= 2 and called_at[1] >= retry_at  # the timer ticked in the back-off; none polled
    assert calls == [True, False]  # stored history is read once


def test_memory_legend_names_what_is_plotted(qapp):
    from workbench.ui.monitor.monitor_plots import memory_label

    assert memory_label(("cpu", 0, ""), 24064) == "Job memory (RSS) · this computer has 23.5 GB"
    assert memory_label(("cpu", 0, ""), 0) == "Job memory (RSS)"
    assert memory_label(("gpu", 0, "V100"), 16384) == "GPU 0 · V100 (of 16.0 GB)"
