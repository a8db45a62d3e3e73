"""PCIe throughput: ``nvidia-smi dmon -s t`` parsed (incl. ``-`` and a split read), its minute means through the
hub into the store (schema 5) and the advisor's Trace, and the data_loading rule's evidence with and without it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.core.domain.models import GpuSample
from workbench.core.store.database import Store
from workbench.core.telemetry.advice_rules import PCIE_X16_GBS
from workbench.core.telemetry.advisor import advise
from workbench.core.telemetry.dmon import DmonParser, PcieMinutes, dmon_command
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.nvidia_smi import Reading
from workbench.core.telemetry.trace import gpu_traces

from advisor_fixtures import offers, traces as T

SYN = Path(__file__).resolve().parents[3] / "fixtures" / "nvidia_smi" / "synthetic"  # hand-written (README there)


def _replayed(name: str) -> str:
    """What the fake nvidia-smi prints for one pass over ``dmon.txt`` (rounds without the blank lines)."""
    return "".join(r.strip("\n") + "\n" for r in (SYN / name / "dmon.txt").read_text().split("\n\n") if r.strip())


def test_the_command_is_dmon_pcie_at_the_period():
    assert dmon_command(5) == "nvidia-smi dmon -s t -d 5" and dmon_command(0).endswith("-d 1")


def test_parser_reads_the_columns_by_the_header_and_dash_is_not_zero():
    b = DmonParser().feed(_replayed("h100x8"))
    assert len(b) == 32 and b.index.tolist() == list(range(8)) * 4
    assert b.rx[:7].tolist() == [0, 100, 200, 300, 400, 500, 600] and b.rx[8 + 3] == 3300.0 and b.tx[8 + 3] == 53.0
    assert np.isnan(b.rx[b.index == 7]).all() and np.isnan(b.tx[b.index == 7]).all()  # "-": not supported


def test_parser_keeps_a_line_cut_by_a_read_and_ignores_lines_before_a_header():
    p = DmonParser()
    assert len(p.feed("    0     5     6\n")) == 0  # no header yet: columns unknown
    text = _replayed("v100x1")
    cut = text.index("11020") + 2
    first, second = p.feed(text[:cut]), p.feed(text[cut:])
    assert first.rx.tolist() == [0.0, 812.0] and second.rx.tolist() == [11020.0, 11390.0, 4210.0, 15.0]
    assert second.tx.tolist() == [402.0, 397.0, 120.0, 2.0]


def test_parser_converts_units_and_handles_more_columns_and_errors():
    text = ("# gpu   pwr   rxpci   txpci\n# Idx     W    KB/s    MB/s\n    0    70    2048      -\n"
            "Failed to process command line\n    1   ERR!  N/A   7\n")
    b = DmonParser().feed(text)
    assert b.index.tolist() == [0, 1] and b.rx[0] == pytest.approx(2.048) and math.isnan(b.tx[0])
    assert math.isnan(b.rx[1]) and b.tx[1] == 7.0
    odd = DmonParser().feed("# gpu rxpci txpci\n# Idx  B/s  MB/s\n 0 10 20\n")
    assert math.isnan(odd.rx[0]) and odd.tx[0] == 20.0  # an unknown unit is not guessed


def test_minutes_average_per_gpu_leaving_nan_out():
    m = PcieMinutes()
    p = DmonParser()
    m.add(p.feed("# gpu rxpci txpci\n# Idx MB/s MB/s\n 0 100 10\n 1 - -\n"), 120.0)
    m.add(p.feed(" 0 300 30\n 1 50 -\n"), 150.0)
    m.add(p.feed(" 0 999 99\n"), 185.0)  # the next minute
    assert m.means(120.0, 0) == (200.0, 20.0)
    rx, tx = m.means(120.0, 1)
    assert rx == 50.0 and math.isnan(tx)
    assert all(math.isnan(v) for v in m.means(120.0, 5)) and m.latest[0] == (999.0, 99.0)
    m.drop_until(120.0)
    assert all(math.isnan(v) for v in m.means(120.0, 0)) and m.means(180.0, 0) == (999.0, 99.0)


def test_hub_stores_the_minutes_pcie_means_and_the_trace_carries_them(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as store:
        hub = TelemetryHub(store)
        p = DmonParser()
        t0 = 1_700_000_040.0
        hub.add_pcie("i-1", p.feed("# gpu rxpci txpci\n# Idx MB/s MB/s\n 0 1000 10\n 1 - -\n"), t0 + 1)
        hub.add_pcie("i-1", p.feed(" 0 3000 30\n 1 - -\n"), t0 + 31)
        for k in range(3):
            hub.add("i-1", [Reading(0, "A100", 50.0, 1000.0, 40960.0), Reading(1, "A100", 50.0, 1000.0, 40960.0)],
                    t0 + 20 * k)
        hub.add("i-1", [Reading(0, "A100", 50.0, 1000.0, 40960.0)], t0 + 60)  # closes the minute
        assert hub.pcie_latest("i-1")[0] == (3000.0, 30.0)
        rows = {s.index: s for s in store.samples("i-1")}
        assert rows[0].pcie_rx_mbps == 2000.0 and rows[0].pcie_tx_mbps == 20.0
        assert math.isnan(rows[1].pcie_rx_mbps) and math.isnan(rows[1].pcie_tx_mbps)  # stored NULL, read NaN
        g0, g1 = gpu_traces("", store.samples("i-1"))
        assert g0.pcie_rx.tolist() == [2000.0] and np.isnan(g1.pcie_rx).all()


def test_a_machine_without_dmon_stores_nan_pcie_and_a_trace_without_it_is_all_nan(tmp_path):
    with Store.open(tmp_path / "s.sqlite3") as store:
        hub = TelemetryHub(store)
        hub.add("i-1", [Reading(0, "T4", 50.0, 1000.0, 15360.0)], 60.0)
        hub.add("i-1", [Reading(0, "T4", 50.0, 1000.0, 15360.0)], 120.0)
        (s,) = store.samples("i-1")
        assert math.isnan(s.pcie_rx_mbps) and hub.pcie_latest("i-1") == {}
    (g,) = gpu_traces("", [GpuSample("i", 60.0, 0, 50.0, 1.0, 2.0, "T4")])
    assert g.pcie_rx.shape == g.t.shape and np.isnan(g.pcie_rx).all()


def _with_rx(trace, mb_s: float, model: str | None = "keep"):
    gpus = tuple(dataclasses.replace(g, pcie_rx=np.full(g.t.size, mb_s), pcie_tx=np.full(g.t.size, 100.0))
                 for g in trace.gpus)
    run = trace.run if model == "keep" else dataclasses.replace(trace.run, gpu_model=model)
    return dataclasses.replace(trace, gpus=gpus, run=run)


def test_data_loading_cites_pcie_near_the_link_as_its_signal():
    steady = T.starved(saw=False, cpu=30)  # 8×A100 at a steady 57 %: no symptom without PCIe numbers
    assert advise(steady, offers()).ids() == []
    near = 0.8 * PCIE_X16_GBS[4] * 1e3  # A100: PCIe 4.0 x16
    adv = advise(_with_rx(steady, near), offers())
    assert adv.ids() == ["data_loading"]
    ev = adv.advice[0].evidence
    assert ev["signals"] == ["pcie_at_limit"] and ev["pcie_near_limit_minutes_percent"] == 100.0
    assert ev["pcie_rx_p95_gb_s"] == pytest.approx(25.2) and ev["pcie_link"].startswith("PCIe 4.0 x16, 31.5 GB/s")
    # low PCIe traffic: still no advice
    assert advise(_with_rx(steady, 2000.0), offers()).ids() == []


def test_pcie_is_evidence_only_when_the_link_is_unknown_and_absent_without_numbers():
    saw = T.starved(cpu=30)  # the sawtooth triggers the rule by itself
    plain = advise(saw, offers()).advice[0].evidence
    assert "pcie_rx_p95_gb_s" not in plain and plain["signals"] == ["sawtooth"]
    cited = advise(_with_rx(saw, 9000.0), offers()).advice[0].evidence
    assert cited["pcie_rx_p95_gb_s"] == 9.0 and cited["pcie_near_limit_minutes_percent"] == 0.0
    assert cited["signals"] == ["sawtooth"]
    odd = _with_rx(T.starved(saw=False, cpu=30), 30000.0, model="MI300X")
    odd = dataclasses.replace(odd, gpus=tuple(dataclasses.replace(g, name="AMD MI300X") for g in odd.gpus))
    assert advise(odd, offers()).ids() == []  # unknown PCIe generation: no threshold, no advice from PCIe
