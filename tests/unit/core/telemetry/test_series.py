"""Ring buffers, windows, peak decimation and spend curves of the Monitor view (no Qt)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workbench.core.domain.models import GpuSample
from workbench.core.store.database import LedgerEntry
from workbench.core.telemetry.series import (RingSeries, SeriesSet, benchmark_memory, decimate, group_samples,
                                             peak_decimate, pixel_step, snap_window, spend_curves)

T0 = 1_700_000_000.0


def ramp(n: int, start: float = T0):
    ts = start + np.arange(n, dtype=np.float64)
    return ts, (np.arange(n) % 100).astype(np.float32), np.arange(n, dtype=np.float32)


def test_series_module_does_not_load_qt():
    code = ("import sys, workbench.core.telemetry.series; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ring_wraps_and_keeps_the_newest_in_order():
    ring = RingSeries(fine_capacity=10, coarse_bucket_s=5, coarse_capacity=100)
    ts, util, mem = ramp(25)
    for i in range(25):  # one by one: wraps twice and a half
        assert ring.append(ts[i], util[i], mem[i], mem_total=100.0)
    w = ring.fine()
    assert len(ring) == 10 and ring.count == 25
    np.testing.assert_array_equal(w.t, ts[15:])
    np.testing.assert_array_equal(w.mem, mem[15:])
    assert ring.mem_total == 100.0


def test_batch_bigger_than_the_ring_keeps_its_tail_and_matches_one_by_one():
    a = RingSeries(fine_capacity=7, coarse_bucket_s=3, coarse_capacity=50)
    b = RingSeries(fine_capacity=7, coarse_bucket_s=3, coarse_capacity=50)
    ts, util, mem = ramp(40)
    a.extend(ts[:5], util[:5], mem[:5])
    a.extend(ts[5:], util[5:], mem[5:])  # 35 at once into a ring of 7, mid-way through a bucket
    for i in range(40):
        b.append(ts[i], util[i], mem[i])
    for wa, wb in ((a.fine(), b.fine()), (a.window(), b.window())):
        for x, y in zip(wa, wb):
            np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.fine().t, ts[-7:])


def test_old_or_repeated_readings_are_not_stored_twice():
    ring = RingSeries(fine_capacity=100)
    ts, util, mem = ramp(10)
    assert ring.extend(ts, util, mem) == 10
    assert ring.extend(ts, util, mem) == 0  # history replayed over live readings
    assert ring.extend(ts[[9, 9]] + 1, util[:2], mem[:2]) == 1  # duplicate inside one batch
    assert not ring.append(ts[3], 1.0, 1.0)
    assert ring.count == 11 and len(ring.fine()) == 11


def test_window_selects_the_right_slice():
    ring = RingSeries(fine_capacity=1000)
    ts, util, mem = ramp(600)
    ring.extend(ts, util, mem)
    w = ring.window(ts[100], ts[399])
    assert len(w) == 300
    assert w.t[0] == ts[100] and w.t[-1] == ts[399]
    np.testing.assert_array_equal(w.mem, mem[100:400])
    assert len(ring.window(ts[-1] - 299.5)) == 300  # last 5 minutes
    assert len(ring.window()) == 600
    assert len(ring.window(ts[-1] + 1)) == 0


def test_window_older_than_the_fine_ring_comes_from_min_max_buckets():
    ring = RingSeries(fine_capacity=100, coarse_bucket_s=10, coarse_capacity=1000)
    ts = T0 + np.arange(1000, dtype=np.float64)  # T0 is a multiple of 10: buckets are aligned
    util = np.full(1000, 10, np.float32)
    util[123] = 99.0  # a spike long evicted from the fine ring
    util[124] = 1.0
    ring.extend(ts, util, np.zeros(1000, np.float32))
    w = ring.window()
    assert np.all(np.diff(w.t) >= 0)
    assert w.util.max() == 99.0 and w.util.min() == 1.0
    old = w.t < ts[900]
    assert old.sum() == 2 * 90  # 90 buckets before the fine ring, min and max each
    np.testing.assert_array_equal(w.t[~old], ts[900:])
    spike = w.t[w.util == 99.0][0]
    assert ts[120] <= spike <= ts[123]  # drawn at its bucket, not somewhere else


def test_decimate_keeps_every_buckets_min_and_max_and_bounds_the_count():
    rng = np.random.default_rng(1)
    n, max_points = 10_007, 500
    t = np.arange(n, dtype=np.float64)
    y = rng.normal(size=n).astype(np.float32)
    y[4321] = 50.0
    y[777] = -50.0
    td, yd = decimate(t, y, max_points)
    assert len(td) <= max_points and len(td) == len(yd)
    assert 50.0 in yd and -50.0 in yd
    assert np.all(np.diff(td) >= 0)
    size = -(-n // (max_points // 2))
    for start in range(0, n, size):  # each bucket's extremes survive
        chunk = y[start:start + size]
        assert chunk.max() in yd and chunk.min() in yd
    t2, y2 = decimate(t[:100], y[:100], max_points)
    assert len(t2) == 100  # short data passes through untouched


def test_pixel_decimation_keeps_each_columns_peaks_and_a_new_reading_changes_only_the_last_column():
    rng = np.random.default_rng(2)
    n, width = 86_400, 900
    t = T0 + np.arange(n, dtype=np.float64)
    y = rng.uniform(0, 100, n).astype(np.float32)
    y[50_000] = 250.0  # a one-second spike
    step = pixel_step(n, width)
    assert step == 100.0 and n / step <= width  # 1-2-5 steps: at most one bucket per pixel column
    lo, hi = snap_window(t[0], t[-1], step)
    assert lo <= t[0] and hi >= t[-1] and lo % step == 0 and hi % step == 0
    x, v = peak_decimate(t, y, lo, step)
    assert len(x) == 2 * 864 and len(x) == len(v)
    assert 250.0 in v and v.min() == y.min()  # peaks survive
    assert np.all(x[0::2] == x[1::2]) and np.all(np.diff(x[0::2]) == step)  # min then max, one column each
    bucket = (t - lo) // step
    for b in (0, 500, 863):  # every column holds its bucket's extremes
        inside = y[bucket == b]
        assert (v[2 * b], v[2 * b + 1]) == (inside.min(), inside.max())
    # a new reading in the last bucket: only the last column may change; then nothing changes at all
    t2, y2 = np.r_[t, t[-1] + 0.5], np.r_[y, np.float32(99.5)]
    x2, v2 = peak_decimate(t2, y2, lo, step)
    assert np.array_equal(x2[:-2], x[:-2]) and np.array_equal(v2[:-2], v[:-2])
    x3, v3 = peak_decimate(t2.copy(), y2.copy(), lo, step)
    assert np.array_equal(x3, x2) and np.array_equal(v3, v2)
    few_t, few_y = t[:300], y[:300]  # no more than two readings a column: untouched
    assert peak_decimate(few_t, few_y, lo, 1.0)[0] is few_t


def test_a_window_converts_only_its_own_rows_and_matches_the_whole_ring():
    ring = RingSeries()
    ts, util, mem = ramp(3 * 3600)  # 3 h: the fine ring holds the last 2 h, the coarse one the rest
    ring.extend(ts, util, mem)
    whole = ring.window()
    part = ring.window(ts[-300], ts[-1])
    assert len(part) == 300 and np.array_equal(part.t, ts[-300:]) and np.array_equal(part.util, util[-300:])
    sel = (whole.t >= ts[1000]) & (whole.t <= ts[9000])
    mixed = ring.window(ts[1000], ts[9000])  # coarse buckets before the fine ring, raw readings after
    assert np.array_equal(mixed.t, whole.t[sel]) and np.array_equal(mixed.mem, whole.mem[sel])


def test_memory_per_series_is_bounded_and_allocated_lazily():
    ring = RingSeries()
    assert ring.nbytes == 0
    ts, util, mem = ramp(86_400)  # a day at 1 Hz
    ring.extend(ts, util, mem)
    assert ring.nbytes == RingSeries.bytes_per_series() == 4 * (3 * 7200 + 5 * 2880)
    ring.extend(ts + 86_400, util, mem)
    assert ring.nbytes == RingSeries.bytes_per_series()  # fixed, however long it runs
    assert ring.window(ts[0] + 86_400 - 1).t.size > 0


def test_benchmark_64_instances_8_gpus_24h_is_well_under_250_mb():
    used = benchmark_memory(64, 8, 24)
    assert used == 64 * 8 * RingSeries.bytes_per_series()
    assert used < 100e6


def test_group_samples_and_series_set_split_gpus_and_mig_slices():
    samples = [GpuSample("i", T0 + s, i, 10.0 * i, 100.0 + s, 1000.0, name, kind)
               for s in range(3) for (i, name, kind) in ((0, "A100", "gpu"), (1, "A100", "gpu"),
                                                         (0, "1g.10gb", "mig"), (0, "CPU", "cpu"))]
    batches = group_samples(samples)
    assert set(batches) == {("gpu", 0, "A100"), ("gpu", 1, "A100"), ("mig", 0, "1g.10gb"), ("cpu", 0, "CPU")}
    sets = SeriesSet()
    assert sets.add(batches) == 12 and sets.version == 1
    assert sets.add(batches) == 0 and sets.version == 1  # nothing new: nothing to redraw
    assert sets.keys()[0] == ("gpu", 0, "A100") and sets.keys()[-1] == ("cpu", 0, "CPU")
    assert sets.first_ts == T0 and sets.last_ts == T0 + 2
    np.testing.assert_array_equal(sets.series[("gpu", 1, "A100")].fine().util, [10.0] * 3)


def test_spend_curves_follow_the_ledger():
    e = [LedgerEntry("p", "q", "i", T0, "running", 3.6),
         LedgerEntry("p", "q", "i", T0 + 1000, "stopped", 3.6),
         LedgerEntry("p", "q", "i", T0 + 2000, "terminated", 3.6)]
    c = spend_curves(e, T0 + 3000)
    # stopped still bills (AWS disks / Azure compute); terminated does not
    np.testing.assert_allclose(c.t, [T0, T0 + 1000, T0 + 2000, T0 + 3000])
    np.testing.assert_allclose(c.cost, [0.0, 1.0, 2.0, 2.0])
    assert c.burn[-1] == 0.0 and c.burn[0] == 3.6
    assert len(c.burn_t) == len(c.burn) == 6
    assert spend_curves([], T0).t.size == 0


@pytest.mark.parametrize("gap", [2.0**23, 2.0**25])
def test_timestamps_stay_precise_after_a_very_long_run(gap):
    ring = RingSeries(fine_capacity=10)
    ring.append(T0, 1.0, 1.0)
    ring.append(T0 + gap + 0.25, 2.0, 2.0)
    assert ring.fine().t[-1] == pytest.approx(T0 + gap + 0.25, abs=0.01)
