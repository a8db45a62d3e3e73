"""Parsing ``nvidia-smi`` output into readings and problems.

:func:`parse_line` reads one line of
``nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,
utilization.memory,power.limit,clocks.sm,clocks.max.sm --format=csv,noheader,nounits`` (the last four
feed the utilization advisor; a line of only the first eight, :data:`LEGACY_FIELDS`, still parses:
the stream falls back to that query where a driver refuses one of the newer fields).
``[N/A]``, ``[Not Supported]`` and other bracketed
values become NaN (not zero: an unknown reading must not look like an idle GPU).  With
MIG enabled a GPU's utilisation is ``[N/A]``; its slices come from ``nvidia-smi -L``
(:func:`parse_mig_list`) and the default view's "MIG devices" table
(:func:`parse_mig_table`) and are readings of kind ``"mig"``.  A GPU that fell off the
bus ("Unable to determine the device handle … GPU is lost") or a driver that does not
answer becomes a :class:`GpuProblem`, shown to the user, never an exception.

Pure functions and values: no I/O, safe from any thread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence


LEGACY_FIELDS = ("index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total", "temperature.gpu",
                 "power.draw")
#: appended (never inserted) so a line's first eight columns mean the same in both queries
QUERY_FIELDS = LEGACY_FIELDS + ("utilization.memory", "power.limit", "clocks.sm", "clocks.max.sm")
#: what nvidia-smi prints on stderr when a field is unknown to this driver
INVALID_FIELD = "is not a valid field to query"

_LOST = re.compile(r"Unable to determine the device handle for (?:GPU\s*)?(\S+?):?\s+(.*)", re.IGNORECASE)
_DRIVER = ("couldn't communicate with the nvidia driver", "nvidia-smi has failed", "driver/library version mismatch")
_MIG_LIST = re.compile(r"^\s*MIG\s+(\S+)\s+Device\s+(\d+):\s*\(UUID:\s*(MIG-[^)\s]+)\)")
_GPU_LIST = re.compile(r"^GPU\s+(\d+):\s*(.+?)\s*\(UUID:\s*(GPU-[^)\s]+)\)")
_MIG_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def query_command(period_ms: int = 1000, fields: Sequence[str] = QUERY_FIELDS) -> str:
    """The persistent stream: one CSV line per GPU every ``period_ms``."""
    return (f"nvidia-smi --query-gpu={','.join(fields)} --format=csv,noheader,nounits "
            f"-lms {int(period_ms)}")


@dataclass(frozen=True)
class Reading:
    """One GPU (or MIG slice) at one moment; NaN where nvidia-smi did not report a value."""

    index: int
    name: str
    util: float
    mem_used: float
    mem_total: float
    temperature: float = math.nan
    power: float = math.nan
    uuid: str = ""
    kind: str = "gpu"
    mem_util: float = math.nan  # % of time the memory was read or written
    power_limit: float = math.nan  # W
    sm_clock: float = math.nan  # MHz
    sm_clock_max: float = math.nan  # MHz


@dataclass(frozen=True)
class GpuProblem:
    """Something wrong with a GPU or the driver: ``kind`` is "lost", "driver" or "no_gpu"."""

    kind: str
    message: str
    device: str = ""  # bus id or index when known


@dataclass(frozen=True)
class MigDevice:
    gpu: int
    device: int
    profile: str
    uuid: str
    ordinal: int  # position among the machine's MIG devices: the series index


def value(text: str) -> float:
    """A numeric field; NaN for ``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``, empty and the like."""
    t = text.strip()
    if not t or t.startswith("[") or t.upper() in ("N/A", "ERR!"):
        return math.nan
    try:
        return float(t)
    except ValueError:
        return math.nan


def parse_line(line: str) -> Reading | GpuProblem | None:
    """One line of the query stream (see the module docstring); None for blank or unknown lines."""
    text = line.strip()
    if not text:
        return None
    m = _LOST.match(text)
    if m:
        return GpuProblem("lost", text, m.group(1))
    low = text.lower()
    if any(s in low for s in _DRIVER):
        return GpuProblem("driver", text)
    if low.startswith("no devices were found"):
        return GpuProblem("no_gpu", text)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (len(QUERY_FIELDS), len(LEGACY_FIELDS)) or not parts[0].isdigit():
        return None
    if any("gpu is lost" in p.lower() for p in parts):
        return GpuProblem("lost", f"GPU {parts[0]} is lost (fell off the bus)", parts[0])
    extra = [value(p) for p in parts[len(LEGACY_FIELDS):]] or [math.nan] * 4
    return Reading(index=int(parts[0]), uuid=parts[1], name=parts[2], util=value(parts[3]),
                   mem_used=value(parts[4]), mem_total=value(parts[5]), temperature=value(parts[6]),
                   power=value(parts[7]), mem_util=extra[0], power_limit=extra[1], sm_clock=extra[2],
                   sm_clock_max=extra[3])


def parse_mig_list(text: str) -> list[MigDevice]:
    """MIG devices from ``nvidia-smi -L``, in order."""
    out: list[MigDevice] = []
    gpu = -1
    for line in text.splitlines():
        g = _GPU_LIST.match(line)
        if g:
            gpu = int(g.group(1))
            continue
        m = _MIG_LIST.match(line)
        if m and gpu >= 0:
            out.append(MigDevice(gpu, int(m.group(2)), m.group(1), m.group(3), len(out)))
    return out


def parse_mig_table(text: str) -> dict[tuple[int, int], tuple[float, float]]:
    """(gpu, MIG device) → (memory used, total) MiB from the default view's "MIG devices" table."""
    out: dict[tuple[int, int], tuple[float, float]] = {}
    section = False
    for line in text.splitlines():
        if "MIG devices:" in line:
            section = True
        elif "Processes:" in line:
            section = False
        elif section:
            m = _MIG_ROW.match(line)
            if m:
                out[(int(m.group(1)), int(m.group(4)))] = (float(m.group(5)), float(m.group(6)))
    return out


def mig_readings(devices: Sequence[MigDevice], table: dict[tuple[int, int], tuple[float, float]]) -> list[Reading]:
    """Readings of the MIG slices found in ``table`` (utilisation is not reported per slice)."""
    out = []
    for d in devices:
        mem = table.get((d.gpu, d.device))
        if mem is not None:
            out.append(Reading(index=d.ordinal, name=f"{d.profile} on GPU {d.gpu}", util=math.nan,
                               mem_used=mem[0], mem_total=mem[1], uuid=d.uuid, kind="mig"))
    return out


class LineBuffer:
    """Bytes from a stream → complete lines (a read may end mid-line)."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, data: bytes) -> list[str]:
        data = self._rest + data
        *lines, self._rest = data.split(b"\n")
        return [ln.decode("utf-8", "replace").rstrip("\r") for ln in lines]
