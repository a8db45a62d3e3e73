"""Telemetry: the nvidia-smi parser on every kept output (synthetic/ and recorded/), the hub's rings and minute history, the SSH stream."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.core.remote.gpustream import GpuStream
from workbench.core.telemetry.hub import NOT_REPORTED, TelemetryHub
from workbench.core.telemetry.nvidia_smi import (LEGACY_FIELDS, QUERY_FIELDS, GpuProblem, LineBuffer, Reading,
                                                 mig_readings, parse_line, parse_mig_list, parse_mig_table,
                                                 query_command)

from .helpers import launch, make_spec, wait_until

NVIDIA_SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia_smi"
REC = NVIDIA_SMI / "synthetic"  # hand-written in the real format (see the README there)


def _rounds(name: str) -> list[list]:
    text = (REC / name / "stream.txt").read_text()
    return [[parse_line(line) for line in block.splitlines()] for block in text.split("\n\n") if block.strip()]


def test_every_recording_asks_for_the_fields_the_app_queries():
    for folder in (p for kind in ("synthetic", "recorded") if (NVIDIA_SMI / kind).is_dir()
                   for p in (NVIDIA_SMI / kind).iterdir() if p.is_dir()):
        fields = LEGACY_FIELDS if folder.name.endswith("_legacy") else QUERY_FIELDS  # an older driver
        assert (folder / "fields").read_text().strip() == ",".join(fields), folder.name
    assert query_command(250).endswith("--format=csv,noheader,nounits -lms 250")


def test_v100_single_gpu_readings():
    rounds = _rounds("v100x1")
    assert len(rounds) == 6 and all(len(r) == 1 for r in rounds)
    r = rounds[3][0]
    assert isinstance(r, Reading)
    assert (r.index, r.name, r.util, r.mem_used, r.mem_total, r.temperature, r.power) == \
        (0, "Tesla V100-SXM2-16GB", 96.0, 10231.0, 16384.0, 45.0, 252.08)
    assert r.uuid.startswith("GPU-")


def test_t4_not_available_and_not_supported_are_nan_not_zero():
    rows = [r[0] for r in _rounds("t4x1")]
    assert math.isnan(rows[0].power) and math.isnan(rows[1].power)  # [N/A]
    assert math.isnan(rows[2].temperature) and rows[2].power == 35.12
    assert math.isnan(rows[3].power) and rows[3].temperature == 52.0  # [Not Supported]
    assert rows[4].util == 79.0 and rows[4].mem_total == 15360.0


def test_a100_mig_slices_are_their_own_devices():
    rounds = _rounds("a100x8_mig")
    assert all(len(r) == 8 for r in rounds)
    first = rounds[1]
    assert math.isnan(first[0].util) and math.isnan(first[1].util)  # MIG enabled: no GPU-level utilisation
    assert all(not math.isnan(r.util) for r in first[2:])
    migs = parse_mig_list((REC / "a100x8_mig" / "list.txt").read_text())
    assert [(m.gpu, m.profile) for m in migs] == [(0, "1g.5gb")] * 7 + [(1, "3g.20gb")] * 2
    assert [m.ordinal for m in migs] == list(range(9)) and all(m.uuid.startswith("MIG-") for m in migs)
    table = parse_mig_table((REC / "a100x8_mig" / "table.txt").read_text())
    assert len(table) == 9 and table[(0, 0)] == (13.0, 4864.0) and table[(1, 1)] == (6213.0, 19968.0)
    slices = mig_readings(migs, table)
    assert {r.kind for r in slices} == {"mig"} and len(slices) == 9
    assert slices[8].name == "3g.20gb on GPU 1" and slices[8].mem_total == 19968.0 and math.isnan(slices[8].util)


def test_h100x8_full_machine_and_lost_gpu():
    full = _rounds("h100x8")
    assert all(len(r) == 8 and all(isinstance(x, Reading) for x in r) for r in full)
    assert full[3][7].power == 706.1 and full[3][0].mem_total == 81559.0
    lost = _rounds("h100x8_lost")
    problems = [x for r in lost for x in r if isinstance(x, GpuProblem)]
    assert len(problems) == 2 and {p.kind for p in problems} == {"lost"}
    assert problems[0].device == "0000:9A:00.0" and "GPU is lost" in problems[0].message
    assert sorted(x.index for x in lost[1] if isinstance(x, Reading)) == [0, 1, 2, 4, 5, 6, 7]
    # a bracketed "[GPU is lost]" field is a problem too, not a reading
    p = parse_line("3, GPU-x, NVIDIA H100 80GB HBM3, [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], "
                   "[GPU is lost]")
    assert isinstance(p, GpuProblem) and p.kind == "lost" and p.device == "3"


def test_driver_not_loaded_and_odd_lines():
    text = (REC / "nodriver" / "fail.txt").read_text()
    p = parse_line(text)
    assert isinstance(p, GpuProblem) and p.kind == "driver"
    assert parse_line("No devices were found").kind == "no_gpu"
    assert parse_line("") is None and parse_line("garbage line") is None
    buf = LineBuffer()
    assert buf.feed(b"0, GPU-a, T4, 1") == []
    assert buf.feed(b"0, 2, 3, 4, 5\r\n1, ") == ["0, GPU-a, T4, 10, 2, 3, 4, 5"]


def test_hub_rings_and_minute_history(remote):
    store = remote.accounts.store
    hub = TelemetryHub(store, capacity=5)
    t0 = 1_700_000_040.0  # a minute boundary
    for k in range(8):  # 8 readings, 10 s apart: minutes t0 (6 readings) and t0+60 (2)
        hub.add("i-1", [Reading(0, "V100", 10.0 * k, 100.0 + k, 16384.0),
                        Reading(0, "1g.5gb on GPU 0", math.nan, 50.0, 4864.0, kind="mig")], t0 + 10 * k)
    got = hub.since("i-1")
    assert len([s for s in got if s.kind == "gpu"]) == 5  # the ring keeps the last 5
    assert [s.ts for s in hub.since("i-1", t0 + 60) if s.kind == "gpu"] == [t0 + 70]
    stored = store.samples("i-1")
    assert [(s.kind, s.ts) for s in stored] == [("gpu", t0), ("mig", t0)]
    gpu, mig = stored
    assert gpu.util_percent == pytest.approx(25.0) and gpu.mem_used_mb == pytest.approx(102.5)
    assert mig.util_percent == NOT_REPORTED and mig.mem_total_mb == 4864.0
    latest = hub.latest("i-1")[("gpu", 0, "V100")]
    assert latest.util == 70.0 and latest.mem_used == 107.0


def _stream(remote, recording: str, tmp_path, period_ms: int = 50) -> tuple[TelemetryHub, GpuStream]:
    remote.server.set_gpu(recording, period_ms)
    inst = launch(remote.accounts, make_spec(tmp_path, "true"))
    hub = TelemetryHub(remote.accounts.store)
    s = GpuStream(hub, inst, remote.data_dir, period_ms=period_ms, backoff_cap=0.2)
    s.backoff.first = 0.05
    s.start()
    return hub, s


def test_stream_over_ssh_with_mig(remote, tmp_path):
    hub, s = _stream(remote, "a100x8_mig", tmp_path)
    try:
        def kinds():
            got = hub.since(s.iid)
            return {(x.kind, x.index) for x in got} if len({(x.kind, x.index) for x in got}) == 17 else None

        seen = wait_until(kinds, 15, "8 GPUs and 9 MIG slices")
        assert {i for k, i in seen if k == "gpu"} == set(range(8)) and {i for k, i in seen if k == "mig"} == set(range(9))
        assert hub.status(s.iid)[0] == "streaming"
    finally:
        s.stop()
        s.join(5)
    assert not s.is_alive()


def test_stream_shows_lost_gpu_and_reconnects_after_a_drop(remote, tmp_path):
    hub, s = _stream(remote, "h100x8_lost", tmp_path)
    try:
        wait_until(lambda: hub.status(s.iid)[2] and len({x.index for x in hub.since(s.iid)}) == 8, 15,
                   "the lost GPU")
        state, _, problems = hub.status(s.iid)
        assert state == "streaming" and problems[0].kind == "lost" and problems[0].device == "0000:9A:00.0"
        assert {x.index for x in hub.since(s.iid)} == set(range(8))  # GPU 3 was there before it was lost
        before = len(hub.since(s.iid))
        assert remote.server.kill_sessions() >= 1
        wait_until(lambda: s.connections >= 2 and len(hub.since(s.iid)) > before + 8, 15, "a reconnect")
    finally:
        s.stop()
        s.join(5)


def test_stream_reports_a_driver_that_is_not_ready(remote, tmp_path):
    hub, s = _stream(remote, "nodriver", tmp_path)
    try:
        wait_until(lambda: hub.status(s.iid)[0] == "driver", 15, "the driver state")
        assert "couldn't communicate with the NVIDIA driver" in hub.status(s.iid)[1]
        remote.server.set_gpu("v100x1", 50)  # the driver finished loading
        wait_until(lambda: hub.since(s.iid), 15, "readings once the driver is up")
        assert hub.status(s.iid)[0] == "streaming"
    finally:
        s.stop()
        s.join(5)
