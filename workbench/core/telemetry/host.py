"""The machine around the GPUs: CPU, memory, network and disk rates from ``/proc``.

:func:`host_command` is a small shell loop that prints, every ``period_s`` seconds, one block:
a marker line, ``/proc/uptime``, the first line of ``/proc/stat``, the CPU count, two lines of
``/proc/meminfo``, ``/proc/net/dev`` and ``/proc/diskstats``.  It needs nothing but a POSIX
shell and coreutils, so it runs on every Linux image a cloud offers.  :class:`HostMeter` turns
consecutive blocks into rates (:class:`~workbench.core.domain.models.HostSample`): CPU busy %
of all CPUs, network bytes/s in and out summed over the interfaces except loopback, and bytes/s
read from whole disks (partitions, loop, RAM and device-mapper devices are left out so nothing
is counted twice).  Rates use the machine's own uptime between blocks, so a late delivery over
SSH does not distort them.

Pure parsing and arithmetic: no I/O, one meter per stream (not shared between threads).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from workbench.core.domain.models import HostSample

MARKER = "@workbench-host"
_SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size
_PARTITION = re.compile(r"^(?:(?:sd|vd|xvd|hd)[a-z]+\d+|nvme\d+n\d+p\d+|mmcblk\d+p\d+)$")
_VIRTUAL = ("loop", "ram", "dm-", "sr", "zram", "md", "nbd")


def host_command(period_s: int = 5) -> str:
    """The remote loop (see the module docstring); ends when its channel is closed (SIGPIPE)."""
    return ("sh -c 'while :; do echo " + MARKER + "; cat /proc/uptime; head -n1 /proc/stat; nproc; "
            "grep -E \"^(MemTotal|MemAvailable):\" /proc/meminfo; cat /proc/net/dev /proc/diskstats; "
            f"sleep {int(period_s)}; done'")


@dataclass(frozen=True)
class HostSnapshot:
    """Counters of one block (cumulative since boot)."""

    uptime: float
    cpu_busy: float  # jiffies
    cpu_total: float
    cpus: int
    mem_total_kb: float
    mem_available_kb: float
    net_rx: float  # bytes
    net_tx: float
    disk_read: float  # bytes


def parse_block(text: str) -> HostSnapshot | None:
    """One block (without its marker line); None when it is incomplete or not ours."""
    uptime = cpu_busy = cpu_total = math.nan
    cpus = 0
    mem = {"MemTotal": math.nan, "MemAvailable": math.nan}
    rx = tx = disk = 0.0
    seen_net = seen_disk = False
    for i, line in enumerate(text.splitlines()):
        parts = line.split()
        if not parts:
            continue
        if i == 0 and len(parts) == 2 and _is_number(parts[0]):
            uptime = float(parts[0])
        elif parts[0] == "cpu" and len(parts) >= 5:
            ticks = [float(x) for x in parts[1:9]]  # user nice system idle iowait irq softirq steal
            idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0.0)
            cpu_total, cpu_busy = sum(ticks), sum(ticks) - idle
        elif len(parts) == 1 and parts[0].isdigit():
            cpus = int(parts[0])
        elif parts[0].rstrip(":") in mem and len(parts) >= 2:
            mem[parts[0].rstrip(":")] = float(parts[1])
        elif ":" in line and "|" not in line and len(line.split(":", 1)[1].split()) >= 9:
            name, counters = line.split(":", 1)
            fields = counters.split()
            seen_net = True
            if name.strip() != "lo":
                rx += float(fields[0])
                tx += float(fields[8])
        elif len(parts) >= 14 and parts[0].isdigit() and parts[1].isdigit():
            seen_disk = True
            dev = parts[2]
            if not dev.startswith(_VIRTUAL) and not _PARTITION.match(dev):
                disk += float(parts[5]) * _SECTOR
    if math.isnan(uptime) or math.isnan(cpu_total) or not cpus:
        return None
    return HostSnapshot(uptime, cpu_busy, cpu_total, cpus, mem["MemTotal"], mem["MemAvailable"],
                        rx if seen_net else math.nan, tx if seen_net else math.nan, disk if seen_disk else math.nan)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def rates(prev: HostSnapshot, cur: HostSnapshot, instance_id: str, ts: float) -> HostSample | None:
    """The sample between two snapshots; None when the machine rebooted or no time passed."""
    dt = cur.uptime - prev.uptime
    if dt <= 0 or cur.cpu_total < prev.cpu_total:
        return None
    ticks = cur.cpu_total - prev.cpu_total
    cpu = 100.0 * (cur.cpu_busy - prev.cpu_busy) / ticks if ticks > 0 else math.nan

    def rate(a: float, b: float) -> float:
        return max(0.0, (b - a) / dt) if a == a and b == b else math.nan  # a counter reset is not negative

    return HostSample(instance_id=instance_id, ts=ts, cpu_percent=cpu, cpus=cur.cpus,
                      mem_used_mb=(cur.mem_total_kb - cur.mem_available_kb) / 1024.0,
                      mem_total_mb=cur.mem_total_kb / 1024.0, net_rx_bps=rate(prev.net_rx, cur.net_rx),
                      net_tx_bps=rate(prev.net_tx, cur.net_tx), disk_read_bps=rate(prev.disk_read, cur.disk_read))


class HostMeter:
    """Text of the remote loop → :class:`HostSample` rates, one per block after the first."""

    def __init__(self, instance_id: str) -> None:
        self.instance_id = instance_id
        self._pending = ""  # text after the last marker (or before the first: not a block)
        self._started = False
        self._last: HostSnapshot | None = None

    def feed(self, text: str, ts: float) -> list[HostSample]:
        """Add received text; returns the samples of the blocks it completed (a block ends at the next marker)."""
        pieces = (self._pending + text).split(MARKER + "\n")
        self._pending = pieces.pop()
        if pieces and not self._started:
            pieces.pop(0)  # whatever came before the first marker
            self._started = True
        out: list[HostSample] = []
        for block in pieces:
            snap = parse_block(block)
            if snap is None:
                continue
            if self._last is not None:
                sample = rates(self._last, snap, self.instance_id, ts)
                if sample is not None:
                    out.append(sample)
            self._last = snap
        return out


def mean_sample(samples: list[HostSample], ts: float) -> HostSample:
    """The average of ``samples`` (one machine), stamped ``ts`` (a minute's start)."""

    def avg(name: str) -> float:
        vals = [getattr(s, name) for s in samples if getattr(s, name) == getattr(s, name)]
        return sum(vals) / len(vals) if vals else math.nan

    return HostSample(instance_id=samples[0].instance_id, ts=ts, cpu_percent=avg("cpu_percent"),
                      cpus=samples[-1].cpus, mem_used_mb=avg("mem_used_mb"), mem_total_mb=samples[-1].mem_total_mb,
                      net_rx_bps=avg("net_rx_bps"), net_tx_bps=avg("net_tx_bps"), disk_read_bps=avg("disk_read_bps"))
