"""Each advisor rule on a synthetic trace with its symptom and on one without it; a healthy run gets nothing.

The traces are built by formula (tests/fixtures/advisor/synthetic/advisor_traces.py says how); offers and
prices are the bundled catalogue snapshots, so the named offers and savings are exact figures.
"""

from __future__ import annotations

import math

import pytest

from workbench.core.telemetry.advisor import Advisory, advise
from workbench.core.telemetry.advice_rules import RULE_IDS, TEMPLATES, TITLES

from advisor_fixtures import offers, traces as T


def run(trace) -> Advisory:
    return advise(trace, offers())


def one(adv: Advisory, rule: str):
    assert adv.ids() == [rule], (adv.ids(), [a.action for a in adv.advice])
    a = adv.advice[0]
    w = a.evidence["window"]
    assert w["start_ts"] < w["end_ts"] and w["start"].endswith("Z") and w["end"].endswith("Z")
    assert a.saving.currency == "USD" and a.saving.amount is not None and a.saving.amount > 0
    assert a.severity in ("high", "medium", "low") and a.action == a.template.format(**a.params)
    return a


@pytest.mark.parametrize("trace", [T.healthy(), T.healthy(period=1.0, hours=0.5), T.two_nodes(util=92, net_gbps=3,
                                                                                              mem_mib=14500),
                                   T.idle_six_of_eight(idle=0), T.fp32_busy(power_share=0.9)],
                         ids=["8xA100", "8xA100-1Hz", "2-nodes", "8xV100", "1xV100-full-power"])
def test_a_healthy_run_gets_no_advice(trace):
    adv = run(trace)
    assert adv.advice == ()
    assert adv.cost and adv.cost > 0
    assert set(adv.not_evaluated) <= {"spot"}  # a trace without a launch spec: checkpointing unknown


def test_batch_size():
    a = one(run(T.batch_small()), "batch_size")
    ev = a.evidence
    assert ev["mem_p95_percent"] < 45 and 50 < ev["util_mean_percent"] < 60
    assert ev["batch_factor"] == 2 and ev["expected_speedup"] == pytest.approx(1.6, abs=0.05)
    assert a.saving.amount == pytest.approx(ev["run_cost"] * (1 - 1 / ev["expected_speedup"]), rel=1e-3)
    assert ev["moderate_minutes_percent"] > 90
    # without the symptom: memory well used at the same utilization
    assert "batch_size" not in run(T.starved(saw=False, cpu=30)).ids()


def test_data_loading_from_a_sawtooth_and_from_saturated_cpus_or_disk():
    a = one(run(T.starved()), "data_loading")
    assert a.evidence["signals"] == ["sawtooth", "cpu_saturated"]
    assert a.evidence["sawtooth_minutes_percent"] > 90 and a.evidence["cpu_p50_percent"] > 90
    assert 50 < a.evidence["util_mean_percent"] < 65
    only_cpu = one(run(T.starved(saw=False)), "data_loading")
    assert only_cpu.evidence["signals"] == ["cpu_saturated"]
    only_saw = one(run(T.starved(cpu=30)), "data_loading")
    assert only_saw.evidence["signals"] == ["sawtooth"]
    disk = one(run(T.starved(saw=False, cpu=30, disk_bps=4e8)), "data_loading")
    assert disk.evidence["signals"] == ["disk_at_limit"] and disk.evidence["disk_read_peak_mb_s"] > 400
    # without the symptom: the same utilization, steady, CPUs and disk idle
    assert run(T.starved(saw=False, cpu=30)).ids() == []


def test_mixed_precision():
    a = one(run(T.fp32_busy()), "mixed_precision")
    assert a.evidence["gpu_model"] == "V100" and a.evidence["power_limit_w"] == 300.0
    assert 40 < a.evidence["power_percent_of_limit"] < 55 and a.evidence["util_mean_percent"] > 95
    assert a.saving.amount == pytest.approx(a.evidence["run_cost"] / 3, rel=1e-3)  # 1.5× faster
    assert a.evidence["sm_clock_busy_p50_mhz"] == 1530.0 and a.evidence["sm_clock_percent_of_max"] == 100.0
    assert run(T.fp32_busy(power_share=0.9)).ids() == []
    # the same low power on a GPU whose clock was held down (heat, a cap): not FP32's sign, no AMP advice
    slowed = run(T.fp32_busy(clock_mhz=900.0))
    assert slowed.ids() == [] and "59% of their maximum SM clock" in slowed.not_evaluated["mixed_precision"]


def test_idle_gpus_names_a_smaller_offer_and_its_price_difference():
    a = one(run(T.idle_six_of_eight()), "idle_gpus")
    assert a.evidence["idle_gpus"] == [f"GPU {i}" for i in range(2, 8)]
    assert a.evidence["offer"] == "p3.8xlarge" and a.params["used"] == 2
    assert a.saving.amount == pytest.approx((24.48 - 12.24) * 2.0, rel=1e-3)  # two hours, one machine
    every = one(run(T.idle_six_of_eight(idle=8)), "idle_gpus")
    assert "No GPU did any work" in every.action and every.saving.amount == pytest.approx(every.evidence["run_cost"])
    assert every.severity == "high"
    assert run(T.idle_six_of_eight(idle=0)).ids() == []


def test_right_size_names_a_cheaper_gpu_that_holds_the_memory_and_the_work():
    a = one(run(T.oversized()), "right_size")
    ev = a.evidence
    assert ev["offer"] == "g6.48xlarge" and ev["offer_gpu_model"] == "L4" and ev["offer_gpus"] == 8
    assert ev["offer_util_needed_percent"] <= 85 and ev["mem_peak_gb"] < 24 / 1.15
    assert a.saving.amount == pytest.approx((32.7726 - 13.3504) * 2.0, rel=1e-3)
    assert run(T.oversized(mem_mib=36000)).ids() == []  # nothing cheaper holds 36 GB


def test_network_on_a_multi_node_trace():
    tr = T.two_nodes()
    assert tr.run.nodes == 2 and len(tr.nodes) == 2 and len(tr.gpus) == 16 and len(tr.hosts) == 2
    a = one(run(tr), "network")
    ev = a.evidence
    assert ev["link_gbit_s"] == 25.0 and 20 < ev["net_p50_gbit_s"] < 25 and ev["offer"] == "p3dn.24xlarge"
    assert a.saving.amount == pytest.approx(ev["run_cost"] - 31.212 * 2 * 2.0 / ev["expected_speedup"], rel=1e-3)
    assert "network" not in run(T.two_nodes(net_gbps=3)).ids()  # the same GPUs, a quiet network
    busy = T.two_nodes(util=92, net_gbps=23.2, mem_mib=14500)  # a full link but busy GPUs: not the bottleneck
    assert run(busy).ids() == []


def test_the_rules_that_read_low_utilization_stay_quiet_behind_a_bottleneck():
    starved_small = T.starved(cpu=97)  # memory 73 %: batch_size would not fire anyway; make it small:
    import dataclasses

    gpus = tuple(dataclasses.replace(g, mem_used=g.mem_used * 0.3) for g in starved_small.gpus)
    adv = run(dataclasses.replace(starved_small, gpus=gpus))
    assert adv.ids() == ["data_loading"]  # not batch_size nor right_size as well


def test_spot_needs_a_checkpointing_on_demand_run_of_an_hour_or_more():
    import dataclasses

    def with_run(tr, **changes):
        return dataclasses.replace(tr, run=dataclasses.replace(tr.run, **changes))

    base = T.healthy()
    a = one(run(with_run(base, checkpoints=True)), "spot")
    # the bundled catalog's spot price of the run's type (p4d.24xlarge: AWS, on or before 2026-07-05)
    assert a.evidence["spot_per_hour"] == 14.091725 and a.evidence["on_demand_per_hour"] == 32.7726
    assert a.saving.amount == pytest.approx((32.7726 - 14.091725) * 2.0, rel=1e-3)
    assert run(with_run(base, checkpoints=True, spot=True)).ids() == []
    assert run(with_run(base, checkpoints=False)).ids() == []
    assert run(with_run(T.healthy(hours=0.5), checkpoints=True)).ids() == []
    assert "spot" in run(base).not_evaluated  # a trace that does not say whether it checkpoints


def test_json_shape_and_every_rule_has_a_title():
    adv = run(T.idle_six_of_eight())
    d = adv.to_json()
    assert set(d) == {"advice", "not_evaluated", "missing", "run"}
    (item,) = d["advice"]
    assert set(item) == {"id", "severity", "title", "evidence", "action", "saving"}
    assert set(item["saving"]) == {"amount", "currency"} and isinstance(item["saving"]["amount"], float)
    assert set(TITLES) == set(RULE_IDS) and len(TEMPLATES) == len(set(TEMPLATES))


def test_no_readings_means_nothing_evaluated_not_advice():
    import dataclasses

    adv = run(dataclasses.replace(T.healthy(), gpus=(), hosts=()))
    assert adv.advice == () and set(adv.not_evaluated) == set(RULE_IDS) and adv.gpus == 0


def test_unknown_values_are_gaps_not_zeros():
    """A GPU whose utilization was [N/A] throughout is not idle (MIG, some vGPUs)."""
    import dataclasses

    import numpy as np

    tr = T.healthy()
    blind = dataclasses.replace(tr.gpus[0], util=np.full(tr.gpus[0].t.size, math.nan),
                                util_min=np.full(tr.gpus[0].t.size, math.nan),
                                util_max=np.full(tr.gpus[0].t.size, math.nan))
    assert run(dataclasses.replace(tr, gpus=(blind, *tr.gpus[1:]))).ids() == []
