"""Host rates from /proc text: CPU busy share, network without loopback, whole-disk reads only."""

from __future__ import annotations

import math
import shlex
import subprocess

import pytest

from workbench.core.telemetry.host import MARKER, HostMeter, host_command, parse_block, rates

# Two blocks in the shape of /proc/uptime, /proc/stat, nproc, /proc/meminfo, /proc/net/dev and
# /proc/diskstats on Linux 6.x, written by hand (synthetic) with round numbers: between them 10 s pass,
# 300 of 1000 jiffies are busy, eth0 receives 1e9 and sends 2e8 bytes, lo moves 5e9 (ignored), sda reads
# 2,000,000 sectors while its partition sda1 reads the same sectors again (ignored), loop0 reads (ignored).
BLOCK = """{up} 100.00
cpu  {user} 0 {system} {idle} {iowait} 0 0 0 0 0
8
MemTotal:       65536000 kB
MemAvailable:   32768000 kB
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: {lo} 10 0 0 0 0 0 0 {lo} 10 0 0 0 0 0 0
  eth0: {rx} 10 0 0 0 0 0 0 {tx} 10 0 0 0 0 0 0
   8       0 sda {n} 0 {sda} 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       1 sda1 {n} 0 {sda} 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   7       0 loop0 {n} 0 {sda} 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 259       0 nvme0n1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""


def _block(k: int) -> str:
    return BLOCK.format(up=1000 + 10 * k, user=1000 + 200 * k, system=500 + 100 * k, idle=5000 + 650 * k,
                        iowait=100 + 50 * k, lo=5_000_000_000 * k, rx=1_000_000_000 * k, tx=200_000_000 * k,
                        n=10 * k, sda=2_000_000 * k)


def test_rates_between_two_blocks():
    a, b = parse_block(_block(1)), parse_block(_block(2))
    assert a is not None and a.cpus == 8
    s = rates(a, b, "i-1", 123.0)
    assert s.cpu_percent == pytest.approx(30.0)  # iowait counts as idle
    assert s.net_rx_bps == pytest.approx(1e8) and s.net_tx_bps == pytest.approx(2e7)
    assert s.disk_read_bps == pytest.approx(2_000_000 * 512 / 10)
    assert s.mem_total_mb == pytest.approx(64000.0) and s.mem_used_mb == pytest.approx(32000.0)
    assert rates(b, a, "i-1", 0.0) is None  # uptime went back: a reboot, not a negative rate


def test_the_meter_splits_a_stream_at_markers_whatever_the_chunking():
    text = "motd noise\n" + "".join(f"{MARKER}\n{_block(k)}" for k in range(1, 5)) + f"{MARKER}\n"
    for size in (7, 64, len(text)):
        meter = HostMeter("i-1")
        got = []
        for i in range(0, len(text), size):
            got += meter.feed(text[i:i + size], 1.0)
        assert len(got) == 3 and all(s.cpu_percent == pytest.approx(30.0) for s in got)


def test_incomplete_or_foreign_text_is_not_a_sample():
    assert parse_block("") is None and parse_block("hello\nworld\n") is None
    cut = "\n".join(_block(1).splitlines()[:2])  # no CPU count yet
    assert parse_block(cut) is None
    no_net = "\n".join(ln for ln in _block(1).splitlines() if ":" not in ln or "Mem" in ln)
    snap = parse_block(no_net)
    assert snap is not None and math.isnan(snap.net_rx)


def test_the_remote_loop_runs_here_and_parses():
    """The command the stream sends, run on this machine's /proc through the same argv a shell would use."""
    proc = subprocess.Popen(shlex.split(host_command(1)), stdout=subprocess.PIPE, text=True)
    meter = HostMeter("here")
    got = []
    try:
        for line in proc.stdout:
            got += meter.feed(line, 0.0)
            if got:
                break
    finally:
        proc.kill()
        proc.wait()
    s = got[0]
    assert 0 <= s.cpu_percent <= 100 and s.cpus >= 1 and 0 < s.mem_used_mb < s.mem_total_mb
