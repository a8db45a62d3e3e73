"""A round of the nvidia-smi stream parsed at once (parse_block) and put into the hub's rings as arrays."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.nvidia_smi import GpuProblem, ReadingBlock, parse_block, parse_line

SYNTHETIC = Path(__file__).resolve().parents[3] / "fixtures" / "nvidia_smi" / "synthetic"


def _lines(name: str) -> list[str]:
    folder = SYNTHETIC / name
    return (folder / ("stream.txt" if (folder / "stream.txt").exists() else "fail.txt")).read_text().splitlines()


def _same(a, b) -> bool:
    """Readings equal field by field, NaN equal to NaN."""
    fa, fb = vars(a), vars(b)
    return fa.keys() == fb.keys() and all(x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
                                          for x, y in zip(fa.values(), fb.values()))


@pytest.mark.parametrize("recording", ["h100x8", "v100x1", "v100x1_legacy", "a100x8_mig", "h100x8_lost", "t4x1",
                                       "nodriver"])
def test_a_round_reads_as_the_lines_do_one_by_one(recording):
    lines = _lines(recording)
    block, problems = parse_block(lines)
    one_by_one = [parse_line(ln) for ln in lines]
    readings = [r for r in one_by_one if r is not None and not isinstance(r, GpuProblem)]
    assert len(block.readings()) == len(readings)
    assert all(_same(a, b) for a, b in zip(block.readings(), readings))
    assert problems == [p for p in one_by_one if isinstance(p, GpuProblem)]


def test_the_fast_path_takes_plain_numbers_and_leaves_the_rest_to_the_line_parser():
    fast, none = parse_block(["0, GPU-a, T4, 35, 1024, 15360, 41, 27.5", "1, GPU-b, T4, 0, 0, 15360, 30, 9.1", ""])
    assert none == [] and fast.index == (0, 1) and fast.name == ("T4", "T4")
    assert fast.values.shape == (2, 9) and np.isnan(fast.values[:, 5:]).all()  # the legacy query: no newer fields
    odd, _ = parse_block(["0, GPU-a, A100, [N/A], 1024, 40960, 41, 60.0, [N/A], 400.00, 1410, 1410"])
    assert math.isnan(odd.values[0, 0]) and odd.values[0, 6] == 400.0
    assert len(parse_block([])[0]) == 0 and len(parse_block(["garbage"])[0]) == 0


def test_blocks_fill_the_rings_and_the_minutes_like_readings_do(tmp_path):
    lines = [ln for ln in _lines("h100x8") if ln.strip()]
    rounds = [lines[k:k + 8] for k in range(0, len(lines) - 7, 8)]
    t0 = 1_700_000_040.0  # a minute boundary
    by_block, by_object = TelemetryHub(), TelemetryHub()
    stored: list[list] = [[], []]

    class Store:
        def __init__(self, into):
            self.into = into

        def add_samples(self, samples):
            self.into.extend(samples)

    by_block.store, by_object.store = Store(stored[0]), Store(stored[1])
    for k in range(70):  # 1 Hz, across a minute
        chunk = rounds[k % len(rounds)]
        assert by_block.add("i-1", parse_block(chunk)[0], t0 + k) == 8
        by_object.add("i-1", [parse_line(ln) for ln in chunk], t0 + k)
    got, want = by_block.since("i-1", t0 + 30), by_object.since("i-1", t0 + 30)
    assert len(got) == len(want) == 8 * 39
    assert all(_same(a, b) for a, b in zip(got, want))
    assert len(stored[0]) == 8 and all(_same(a, b) for a, b in zip(stored[0], stored[1]))
    latest = by_object.latest("i-1")
    assert by_block.latest("i-1").keys() == latest.keys()
    assert all(_same(by_block.latest("i-1")[k], latest[k]) for k in latest)


def test_a_read_holding_two_rounds_keeps_both_and_a_lost_gpu_leaves_a_gap():
    hub = TelemetryHub(capacity=10)
    round_ = [ln for ln in _lines("h100x8") if ln.strip()][:8]
    hub.add("i-1", parse_block(round_ + round_)[0], 10.0)  # a stall: two rounds came in one read
    assert len([s for s in hub.since("i-1") if s.index == 0]) == 2
    seven = ReadingBlock.of([r for r in parse_block(round_)[0].readings() if r.index != 3])
    hub.add("i-1", seven, 11.0)  # GPU 3 fell off the bus: no reading is made up for it
    assert [s.ts for s in hub.since("i-1") if s.index == 3] == [10.0, 10.0]
    assert [s.ts for s in hub.since("i-1") if s.index == 4] == [10.0, 10.0, 11.0]
    rows = hub.since_rows("i-1", 10.5)
    assert set(rows) == {("gpu", i, "NVIDIA H100 80GB HBM3") for i in range(8) if i != 3}


def test_ring_times_keep_their_precision_across_days_in_float32():
    """The rings hold float32 (half the memory); times are seconds after a float64 origin that moves up
    every ~12 days, so a reading's time comes back within 0.125 s, at epoch scale and weeks later."""
    hub = TelemetryHub(capacity=4)
    round_ = [ln for ln in _lines("h100x8") if ln.strip()][:8]
    block = parse_block(round_)[0]
    t0 = 1_764_000_000.25  # December 2025, a quarter second past
    for t in (t0, t0 + 1.5, t0 + 30 * 86400.0, t0 + 30 * 86400.0 + 1.0):  # a month later: the origin moved
        hub.add("i-1", block, t)
    got = [s.ts for s in hub.since("i-1") if s.index == 0]
    assert got == pytest.approx([t0, t0 + 1.5, t0 + 30 * 86400.0, t0 + 30 * 86400.0 + 1.0], abs=0.125)
    assert [s.ts for s in hub.since("i-1", t0 + 30 * 86400.0 - 1) if s.index == 0] == pytest.approx(
        [t0 + 30 * 86400.0, t0 + 30 * 86400.0 + 1.0], abs=0.125)
