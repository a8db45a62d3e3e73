"""NVLink throughput: ``nvidia-smi nvlink -gt d`` counters turned into rates (deltas, resets, GPUs without NVLink,
split reads, units), the poller loop run by a real shell against the fake nvidia-smi, the minute means through
the hub into the store (schema 6) and the Trace, and where the report and the advisor show them."""

from __future__ import annotations

import dataclasses
import math
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from workbench.core.domain.models import GpuSample
from workbench.core.store.database import Store
from workbench.core.telemetry.advisor import advise
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.nvidia_smi import Reading
from workbench.core.telemetry.nvlink import NvlinkBlock, NvlinkMinutes, NvlinkParser, nvlink_command
from workbench.core.telemetry.report import build_report
from workbench.core.telemetry.report_html import render_html
from workbench.core.telemetry.trace import gpu_traces

from advisor_fixtures import offers, traces as T

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "nvidia_smi"
SYN = FIXTURES / "synthetic"  # hand-written (README there)
KIB = 1024 / 1e6  # one KiB in MB


def poll(t: float | str, gpus: dict[int, list[tuple[int, int]]], unit: str = "KiB") -> str:
    """One poll as the remote loop prints it: GPU i's links as (tx, rx) counters."""
    lines = [f"#nvlink {t}"]
    for i, links in gpus.items():
        lines.append(f"GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-0000000{i}-42ec-1dc1-e936-03c617b58fd4)")
        for n, (tx, rx) in enumerate(links):
            lines += [f"         Link {n}: Data Tx: {tx} {unit}", f"         Link {n}: Data Rx: {rx} {unit}"]
    return "\n".join(lines + ["#nvlink-end"]) + "\n"


def test_the_command_polls_the_counters_under_a_time_marker():
    cmd = nvlink_command(5)
    assert "nvidia-smi nvlink -gt d" in cmd and "date +%s.%N" in cmd and "sleep 5" in cmd
    assert "sleep 1;" in nvlink_command(0) and cmd.startswith("sh -c ")  # not the login shell's syntax


def test_rates_are_the_counter_deltas_summed_over_links_per_second_of_the_markers():
    p = NvlinkParser()
    first = p.feed(poll(100.0, {0: [(1000, 500), (2000, 700)], 1: [(0, 0)]}), now=9e9)
    assert len(first) == 0  # one poll: no interval yet
    b = p.feed(poll(102.0, {0: [(1000 + 4000, 500 + 2000), (2000 + 6000, 700 + 0)], 1: [(10_000, 30_000)]}), 9e9)
    assert b.index.tolist() == [0, 1] and b.seconds.tolist() == [2.0, 2.0]
    assert b.tx[0] == pytest.approx(10_000 * KIB / 2) and b.rx[0] == pytest.approx(2000 * KIB / 2)
    assert b.tx[1] == pytest.approx(5000 * KIB) and b.rx[1] == pytest.approx(15_000 * KIB)


def test_a_counter_that_goes_down_gives_no_rate_for_that_interval_and_never_a_negative_one():
    p = NvlinkParser()
    p.feed(poll(0, {0: [(5000, 5000), (5000, 5000)]}), 0)
    reset = p.feed(poll(1, {0: [(6000, 100), (6000, 5100)]}), 0)  # link 0's rx counter restarted (driver reload)
    assert math.isnan(reset.rx[0]) and reset.tx[0] == pytest.approx(2000 * KIB)  # tx is still a fine interval
    again = p.feed(poll(2, {0: [(6000, 1124), (6000, 5100)]}), 0)
    assert again.rx[0] == pytest.approx(1024 * KIB) and again.tx[0] == 0.0
    every = np.concatenate([reset.rx, reset.tx, again.rx, again.tx])
    assert not (every[np.isfinite(every)] < 0).any()
    clock_back = p.feed(poll(1.5, {0: [(7000, 2000), (7000, 6000)]}), 0)  # the machine's clock stepped back
    assert math.isnan(clock_back.rx[0]) and math.isnan(clock_back.tx[0])


def test_a_gpu_without_nvlink_has_no_numbers_and_a_changed_link_set_no_rate():
    p = NvlinkParser()
    p.feed(poll(0, {0: [(0, 0)], 1: [], 2: [(0, 0)]}), 0)
    b = p.feed(poll(1, {0: [(1000, 1000)], 1: [], 2: [(1000, 1000), (5, 5)]}), 0)  # GPU 2 shows one more link
    assert b.index.tolist() == [0, 2] and b.tx[0] == pytest.approx(1000 * KIB)  # GPU 1: no entry, not zero
    assert math.isnan(b.tx[1]) and math.isnan(b.rx[1])
    none = NvlinkParser()
    assert len(none.feed(poll(0, {0: [], 1: []}) + poll(1, {0: [], 1: []}), 0)) == 0


def test_split_reads_cut_polls_and_garbage_give_the_same_rates_as_one_read():
    text = ("Failed to initialize NVML: Driver/library version mismatch\n"  # before any marker: ignored
            + poll(10, {0: [(100, 100)]})
            + "#nvlink 11\nGPU 0: NVIDIA A100\n         Link 0: Data Tx: 999999"  # a poll cut short by the channel...
            + "\n" + poll(12, {0: [(100 + 2048, 100 + 1024)]}).replace(  # ...dropped when the next one begins
                "#nvlink-end", "         Link 0: Data Tx: lots KiB\nsome noise\n         Link 9 Data Tx 5 KiB\n"
                               "#nvlink-end"))
    whole = NvlinkParser().feed(text, 0)
    assert whole.index.tolist() == [0] and whole.seconds.tolist() == [2.0]
    assert whole.tx[0] == pytest.approx(2048 * KIB / 2) and whole.rx[0] == pytest.approx(1024 * KIB / 2)
    p = NvlinkParser()
    parts = [p.feed(text[k:k + 7], 0) for k in range(0, len(text), 7)]
    got = [(int(b.index[j]), float(b.rx[j]), float(b.tx[j])) for b in parts for j in range(len(b))]
    assert got == [(0, float(whole.rx[0]), float(whole.tx[0]))]


def test_binary_units_are_converted_and_another_unit_is_rejected_by_name():
    p = NvlinkParser()
    p.feed(poll(0, {0: [(1, 1)]}, unit="MiB"), 0)
    b = p.feed(poll(1, {0: [(3, 2)]}, unit="MiB"), 0)
    assert b.tx[0] == pytest.approx(2 * 1024 * KIB) and b.rx[0] == pytest.approx(1024 * KIB)
    assert p.rejected_units == set()
    odd = p.feed(poll(2, {0: [(4, 3)]}, unit="KB"), 0)  # not a unit the driver prints: not guessed
    assert math.isnan(odd.tx[0]) and math.isnan(odd.rx[0]) and p.rejected_units == {"KB"}
    after = p.feed(poll(3, {0: [(4096, 4096)]}), 0)  # KiB again, but the last counters were not understood
    assert math.isnan(after.tx[0])
    back = p.feed(poll(4, {0: [(5120, 4096)]}), 0)
    assert back.tx[0] == pytest.approx(1024 * KIB) and back.rx[0] == 0.0


def test_a_marker_without_a_usable_time_uses_the_receipt_time():
    p = NvlinkParser()
    p.feed(poll("1700000000.%N", {0: [(0, 0)]}), now=50.0)  # e.g. a date without %N
    b = p.feed(poll("", {0: [(4000, 0)]}), now=54.0)
    assert b.seconds.tolist() == [4.0] and b.tx[0] == pytest.approx(1000 * KIB)


def _fake_nvidia_smi(tmp_path: Path, recording: str) -> dict:
    """A PATH whose nvidia-smi is the fake one (tests/fixtures/nvidia_smi), replaying ``recording``."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    (tmp_path / "state").mkdir(exist_ok=True)
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.write_text(f'#!/bin/sh\nexec {sys.executable} {FIXTURES / "fake_nvidia_smi.py"} "$@"\n')
    fake.chmod(0o755)
    (tmp_path / "state" / "recording").write_text(recording)
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
            "FAKE_NVIDIA_SMI_STATE": str(tmp_path / "state")}


def _expected_per_second(recording: str) -> dict[int, tuple[float, float]]:
    """(rx, tx) MB/s per GPU from nvlink.txt: its two polls are one second apart."""
    polls = [r.strip("\n") + "\n" for r in (SYN / recording / "nvlink.txt").read_text().split("\n\n") if r.strip()]
    p = NvlinkParser()
    p.feed(f"#nvlink 0\n{polls[0]}#nvlink-end\n", 0)
    b = p.feed(f"#nvlink 1\n{polls[1]}#nvlink-end\n", 0)
    return {int(i): (float(r), float(t)) for i, r, t in zip(b.index, b.rx, b.tx)}


def test_the_loop_run_by_a_shell_gives_the_recordings_rates_and_gpu_7_none(tmp_path):
    env = _fake_nvidia_smi(tmp_path, "h100x8")
    proc = subprocess.Popen(["/bin/sh", "-c", nvlink_command(1)], stdout=subprocess.PIPE, env=env,
                            start_new_session=True)
    text, deadline = b"", time.monotonic() + 30
    try:
        while text.count(b"#nvlink-end\n") < 2 and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                text += chunk
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
        proc.stdout.close()
    assert text.count(b"#nvlink-end\n") >= 2, text[-500:]
    b = NvlinkParser().feed(text.decode(), time.time())
    want = _expected_per_second("h100x8")
    assert sorted(want) == list(range(7)) and want[0][1] == pytest.approx(18 * 500_000 * KIB)  # 18 links, GPU 0
    assert b.index.tolist()[:7] == list(range(7))  # GPU 7 prints no link: no numbers
    for j in range(7):
        # the fake moves its counters on with the clock; the marker is read just before it starts (~50 ms)
        assert (b.rx[j], b.tx[j]) == pytest.approx(want[j], rel=0.25)


@pytest.mark.parametrize("recording, status", [("v100x1", 4), ("nodriver", 9)])
def test_the_loop_ends_at_once_on_a_machine_without_nvlink_or_whose_command_fails(tmp_path, recording, status):
    env = _fake_nvidia_smi(tmp_path, recording)  # v100x1: GPU lines, no Link line; nodriver: nvidia-smi fails
    done = subprocess.run(["/bin/sh", "-c", nvlink_command(1)], capture_output=True, env=env, timeout=30)
    assert done.returncode == status and b"#nvlink" not in done.stdout


def test_minutes_weight_each_interval_by_its_length_and_leave_nan_out():
    m = NvlinkMinutes()
    def blk(i, rx, tx, s):
        return NvlinkBlock(np.array(i), np.array(rx, float), np.array(tx, float), np.array(s, float))

    m.add(blk([0, 1], [100.0, math.nan], [10.0, 7.0], [1.0, 1.0]), 121.0)
    m.add(blk([0], [400.0], [math.nan], [3.0]), 150.0)
    m.add(blk([0], [999.0], [99.0], [1.0]), 185.0)  # the next minute
    assert m.means(120.0, 0) == (pytest.approx((100 + 1200) / 4), 10.0)
    rx, tx = m.means(120.0, 1)
    assert math.isnan(rx) and tx == 7.0 and all(math.isnan(v) for v in m.means(120.0, 5))
    assert m.latest[0] == (999.0, 99.0)
    m.drop_until(120.0)
    assert math.isnan(m.means(120.0, 0)[0]) and m.means(180.0, 0) == (999.0, 99.0)


def test_hub_stores_the_minutes_nvlink_means_and_the_trace_carries_them(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as store:
        hub = TelemetryHub(store)
        p = NvlinkParser()
        t0 = 1_700_000_040.0
        hub.add_nvlink("i-1", p.feed(poll(1000.0, {0: [(0, 0)], 1: []}), t0), t0 + 1)
        hub.add_nvlink("i-1", p.feed(poll(1001.0, {0: [(1_000_000, 2_000_000)], 1: []}), t0), t0 + 2)
        hub.add_nvlink("i-1", p.feed(poll(1004.0, {0: [(2_000_000, 2_000_000)], 1: []}), t0), t0 + 5)
        for k in range(3):
            hub.add("i-1", [Reading(0, "A100", 50.0, 1000.0, 81920.0), Reading(1, "A100", 50.0, 1000.0, 81920.0)],
                    t0 + 20 * k)
        hub.add("i-1", [Reading(0, "A100", 50.0, 1000.0, 81920.0)], t0 + 60)  # closes the minute
        assert hub.nvlink_latest("i-1")[0] == (0.0, pytest.approx(1_000_000 * KIB / 3))
        rows = {s.index: s for s in store.samples("i-1")}
        # 2 GB received in the first second, nothing in the next three: 0.5 GB/s over the minute's 4 s
        assert rows[0].nvlink_rx_mbps == pytest.approx(2_000_000 * KIB / 4)
        assert rows[0].nvlink_tx_mbps == pytest.approx(2_000_000 * KIB / 4)
        assert math.isnan(rows[1].nvlink_rx_mbps) and math.isnan(rows[1].nvlink_tx_mbps)  # stored NULL, read NaN
        g0, g1 = gpu_traces("", store.samples("i-1"))
        assert g0.nvlink_rx.tolist() == [pytest.approx(512.0)] and np.isnan(g1.nvlink_tx).all()


def test_a_machine_without_nvlink_stores_nan_and_a_trace_without_it_is_all_nan(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as store:
        hub = TelemetryHub(store)
        hub.add("i-1", [Reading(0, "T4", 50.0, 1000.0, 15360.0)], 60.0)
        hub.add("i-1", [Reading(0, "T4", 50.0, 1000.0, 15360.0)], 120.0)
        (s,) = store.samples("i-1")
        assert math.isnan(s.nvlink_rx_mbps) and math.isnan(s.nvlink_tx_mbps) and hub.nvlink_latest("i-1") == {}
    (g,) = gpu_traces("", [GpuSample("i", 60.0, 0, 50.0, 1.0, 2.0, "T4")])
    assert g.nvlink_rx.shape == g.t.shape and np.isnan(g.nvlink_rx).all() and np.isnan(g.nvlink_tx).all()


def _with_nvlink(trace, per_gpu: dict[int, float]):
    """GPU i exchanging ``per_gpu[i]`` MB/s each way (the others: no NVLink numbers)."""
    gpus = tuple(dataclasses.replace(g, nvlink_rx=np.full(g.t.size, per_gpu[g.index]),
                                     nvlink_tx=np.full(g.t.size, per_gpu[g.index]))
                 if g.index in per_gpu else g for g in trace.gpus)
    return dataclasses.replace(trace, gpus=gpus)


def test_the_report_shows_each_gpus_nvlink_only_when_recorded(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as store:
        T.to_store(store, _with_nvlink(T.idle_six_of_eight(), {0: 12_000.0, 1: 11_500.0}), "L-nv")
        T.to_store(store, T.idle_six_of_eight(), "L-plain")
        later = T.T0 + 86_400.0
        nv = build_report(store, "L-nv", offers(), now=later)
        plain = build_report(store, "L-plain", offers(), now=later)
    g0, g1, g2 = nv.gpus[:3]
    assert (g0.nvlink_rx_mbps, g0.nvlink_tx_mbps) == (pytest.approx(12_000.0), pytest.approx(12_000.0))
    assert g1.nvlink_rx_mbps == pytest.approx(11_500.0) and math.isnan(g2.nvlink_rx_mbps)
    page = render_html(nv)
    assert "<th>NVLink rx / tx</th>" in page and ">12.0 / 12.0 GB/s<" in page and ">11.5 / 11.5 GB/s<" in page
    assert ">– / – GB/s<" in page  # the GPUs without numbers: unknown, not zero
    assert "NVLink" not in render_html(plain) and all(math.isnan(g.nvlink_rx_mbps) for g in plain.gpus)


def test_idle_gpus_and_network_cite_the_gpus_nvlink_traffic_as_evidence_only():
    idle = T.idle_six_of_eight()
    plain = advise(idle, offers()).advice[0]
    assert plain.id == "idle_gpus" and not any("nvlink" in k for k in plain.evidence)
    cited = advise(_with_nvlink(idle, {i: (9000.0 if i < 2 else 0.0) for i in range(8)}), offers()).advice[0]
    assert cited.id == "idle_gpus" and cited.action == plain.action and cited.saving == plain.saving
    assert cited.evidence["idle_nvlink_p95_gb_s"] == 0.0 and cited.evidence["busy_nvlink_p50_gb_s"] == 18.0
    two = T.two_nodes()
    net = next(a for a in advise(_with_nvlink(two, {i: 2500.0 for i in range(8)}), offers()).advice
               if a.id == "network")
    assert net.evidence["nvlink_p50_gb_s"] == 5.0
    assert "nvlink_p50_gb_s" not in next(a for a in advise(two, offers()).advice if a.id == "network").evidence
