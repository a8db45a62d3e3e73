"""The rules every `make bench` row follows (benchmarks/harness.py and the table's runner): samples
interleaved, min / median / max, "met" only on the median, and a flow that fails is a FAILED row and
a failed run, never a verdict."""

from __future__ import annotations

import pytest

from benchmarks import __main__ as bench
from benchmarks.harness import BenchmarkFailed, Stats, check, interleave, repeat, verdict


def test_value_and_baseline_alternate_which_runs_first():
    calls: list[str] = []

    def value() -> float:
        calls.append("v")
        return 2.0

    def baseline() -> float:
        calls.append("b")
        return 1.0

    a, b = interleave(value, baseline, 4)
    assert calls == ["v", "b", "b", "v", "v", "b", "b", "v"]
    assert a.samples == (2.0,) * 4 and b.samples == (1.0,) * 4


def test_stats_show_min_median_max_and_refuse_no_samples():
    s = Stats((3.0, 1.0, 10.0, 2.0, 4.0))
    assert (s.min, s.median, s.max) == (1.0, 3.0, 10.0)
    assert s.show(lambda x: f"{x:.0f}") == "1 / 3 / 10"
    assert Stats((5.0,)).show(str) == "5.0"
    with pytest.raises(BenchmarkFailed):
        Stats(())


def test_one_lucky_sample_does_not_meet_a_target():
    s = Stats((0.01, 0.09, 0.08))  # min clears 0.05, the median does not
    assert verdict(s.median, 0.05, "too slow") == "NOT met — too slow"
    assert verdict(Stats((0.04, 0.05, 0.2)).median, 0.05, "too slow") == "met"
    assert verdict(3.0, 2.0, "too little", at_least=True) == "met"
    assert verdict(1.0, 2.0, "too little", at_least=True).startswith("NOT met")


def test_a_failed_flow_is_a_failed_row_and_a_failed_run():
    def broken_launch() -> bench.Row:
        check(False, "the launch made no running machine")
        raise AssertionError("not reached")

    def crashing() -> bench.Row:
        raise KeyError("region")

    def fine() -> bench.Row:
        s = repeat(lambda: 0.001, 3)
        return bench._row("fine", s, None, bench._ms, "<= 16 ms", verdict(s.median, 0.016, "slow"))

    rows, ok = bench._run({"broken": broken_launch, "crash": crashing, "fine": fine}, [])
    assert not ok
    by = {r.measure: r.verdict for r in rows}
    assert by["broken"] == "FAILED — the launch made no running machine"
    assert by["crash"].startswith("FAILED — KeyError")
    assert by["fine"] == "met"
    assert not any("met" == v for k, v in by.items() if k != "fine")
    rows, ok = bench._run({"broken": broken_launch, "fine": fine}, ["fine"])  # --only skips the broken row
    assert ok and [r.measure for r in rows] == ["fine"]


def test_a_sample_that_raises_stops_the_row():
    def value() -> float:
        raise BenchmarkFailed("teardown left 2 instances")

    with pytest.raises(BenchmarkFailed, match="teardown left"):
        interleave(value, lambda: 1.0, 3)
