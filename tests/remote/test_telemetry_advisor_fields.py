"""Telemetry the utilization advisor needs: the newer nvidia-smi fields, the fallback for a driver that
refuses them, and the machine's CPU/network/disk rates streamed from a real sshd's /proc."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from workbench.core.remote.gpustream import GpuStream
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.nvidia_smi import LEGACY_FIELDS, QUERY_FIELDS, Reading, parse_line

from .helpers import launch, make_spec, wait_until

REC = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia_smi" / "synthetic"  # hand-written (README there)


def test_newer_fields_parse_and_the_eight_field_line_still_does():
    new = [parse_line(ln) for ln in (REC / "v100x1" / "stream.txt").read_text().splitlines() if ln.strip()]
    busy = new[3]
    assert isinstance(busy, Reading) and busy.util == 96.0 and busy.power == 252.08
    assert (busy.mem_util, busy.power_limit, busy.sm_clock, busy.sm_clock_max) == (43.0, 300.0, 1530.0, 1530.0)
    old = [parse_line(ln) for ln in (REC / "v100x1_legacy" / "stream.txt").read_text().splitlines() if ln.strip()]
    assert old[3].util == 96.0 and old[3].power == 252.08
    assert math.isnan(old[3].power_limit) and math.isnan(old[3].sm_clock) and math.isnan(old[3].mem_util)
    mig = parse_line((REC / "a100x8_mig" / "stream.txt").read_text().splitlines()[0])
    assert math.isnan(mig.util) and math.isnan(mig.mem_util) and mig.power_limit == 400.0  # [N/A] stays unknown
    assert len(QUERY_FIELDS) == len(LEGACY_FIELDS) + 4 and QUERY_FIELDS[:8] == LEGACY_FIELDS


def test_hub_minutes_keep_power_clock_and_the_utilization_range(remote):
    store = remote.accounts.store
    hub = TelemetryHub(store)
    t0 = 1_700_000_040.0
    for k, util in enumerate((95.0, 5.0, 90.0, 0.0, 100.0, 10.0)):  # a sawtooth inside one minute
        hub.add("i-1", [Reading(0, "A100", util, 1000.0, 40960.0, power=200.0 + k, power_limit=400.0,
                                sm_clock=1410.0, mem_util=util / 2)], t0 + 10 * k)
    hub.add("i-1", [Reading(0, "A100", 50.0, 1000.0, 40960.0)], t0 + 60)  # the next minute closes it
    (m,) = store.samples("i-1")
    assert m.util_percent == pytest.approx(50.0) and (m.util_min, m.util_max) == (0.0, 100.0)
    assert m.power_w == pytest.approx(202.5) and m.power_limit_w == 400.0 and m.sm_clock_mhz == 1410.0
    assert m.mem_util_percent == pytest.approx(25.0)


def _stream(remote, recording: str, tmp_path, period_ms: int = 50) -> GpuStream:
    remote.server.set_gpu(recording, period_ms)
    inst = launch(remote.accounts, make_spec(tmp_path, "true"))
    hub = TelemetryHub(remote.accounts.store)
    s = GpuStream(hub, inst, remote.data_dir, period_ms=period_ms, backoff_cap=0.2)
    s.backoff.first = 0.05
    s.host_period_s = 1
    s.nvlink_period_s = 1
    s.start()
    return s


def test_a_driver_that_refuses_a_newer_field_gets_the_eight_field_query(remote, tmp_path):
    s = _stream(remote, "v100x1_legacy", tmp_path)
    try:
        got = wait_until(lambda: s.hub.since(s.iid), 15, "readings after the fallback")
        assert s.fields == LEGACY_FIELDS and got[0].kind == "gpu"
        assert s.hub.status(s.iid)[0] == "streaming"
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()


def test_the_machine_reports_cpu_memory_network_and_disk(remote, tmp_path):
    s = _stream(remote, "v100x1", tmp_path)
    try:
        h = wait_until(lambda: s.hub.host_latest(s.iid), 20, "a host reading (two /proc blocks)")
        assert 0.0 <= h.cpu_percent <= 100.0 and h.cpus >= 1
        assert 0 < h.mem_used_mb < h.mem_total_mb
        assert h.net_rx_bps >= 0 and h.net_tx_bps >= 0 and h.disk_read_bps >= 0  # this machine's real counters
        assert s.fields == QUERY_FIELDS
        r = wait_until(lambda: [x for x in s.hub.since(s.iid) if x.power_limit_w == 300.0], 15, "newer fields")
        assert r[0].sm_clock_mhz in (135.0, 1530.0)
    finally:
        s.stop()
        s.join(5)


def test_pcie_rates_stream_beside_the_query_when_the_driver_has_dmon(remote, tmp_path):
    s = _stream(remote, "v100x1", tmp_path)  # its dmon.txt rises to 11390 MB/s host → GPU
    try:
        wait_until(lambda: s.hub.pcie_latest(s.iid).get(0, (0.0,))[0] >= 11020.0, 20, "PCIe rates from dmon")
        assert s.hub.since(s.iid)  # the query stream runs alongside
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()


def test_a_driver_without_dmon_still_streams_the_gpus_and_has_no_pcie(remote, tmp_path):
    s = _stream(remote, "t4x1", tmp_path)  # no dmon.txt: the fake refuses dmon (exit 2)
    try:
        wait_until(lambda: len(s.hub.since(s.iid)) >= 6, 20, "readings after dmon ended")
        assert s.hub.pcie_latest(s.iid) == {} and s.hub.status(s.iid)[0] == "streaming"
        assert s.connections == 1  # the ended dmon channel did not drop the connection
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()


def test_nvlink_rates_stream_beside_the_query_and_pcie_when_the_gpus_have_nvlink(remote, tmp_path):
    s = _stream(remote, "h100x8", tmp_path)  # its nvlink.txt: GPU i sends 9216 (i + 1) MB/s, GPU 7 has no NVLink

    def rates():
        got = s.hub.nvlink_latest(s.iid)
        return got if len(got) == 7 and all(tx == tx and rx == rx for rx, tx in got.values()) else None

    try:
        got = wait_until(rates, 30, "NVLink rates of GPUs 0-6")
        for i, (rx, tx) in got.items():
            # counters move on with the fake's clock; the loop stamps its poll just before the fake starts
            assert tx == pytest.approx(9216.0 * (i + 1), rel=0.25) and rx == pytest.approx(8847.36 * (i + 1), rel=0.25)
        assert 7 not in got  # a GPU without links: no numbers, not zero
        wait_until(lambda: s.hub.pcie_latest(s.iid), 20, "PCIe rates beside NVLink")
        assert s.hub.since(s.iid) and s.connections == 1
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()


def test_a_machine_without_nvlink_still_streams_the_gpus_and_pcie(remote, tmp_path, caplog):
    caplog.set_level(logging.INFO, "workbench.remote.telemetry")
    s = _stream(remote, "v100x1", tmp_path)  # no nvlink.txt: GPU lines without links, the poller ends at once
    try:
        wait_until(lambda: [r for r in caplog.records if "ended with 4" in r.getMessage()], 20, "the poller's end")
        wait_until(lambda: s.hub.pcie_latest(s.iid).get(0, (0.0,))[0] >= 11020.0, 20, "PCIe rates from dmon")
        n = len(s.hub.since(s.iid))
        wait_until(lambda: len(s.hub.since(s.iid)) >= n + 6, 20, "readings after the NVLink poller ended")
        assert s.hub.nvlink_latest(s.iid) == {} and s.hub.status(s.iid)[0] == "streaming"
        assert s.connections == 1  # the ended poller did not drop the connection
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()
