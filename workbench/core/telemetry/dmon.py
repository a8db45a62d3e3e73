"""PCIe throughput per GPU from ``nvidia-smi dmon -s t``, and its per-minute means.

``nvidia-smi dmon -s t -d S`` prints, every ``S`` seconds, one line per GPU under a two-line
header (repeated now and then)::

    # gpu   rxpci   txpci
    # Idx    MB/s    MB/s
        0     812      35

``rxpci`` is what the GPU received over PCIe (host → device: input batches), ``txpci`` what it
sent; ``-`` where the driver does not report a value.  The parser reads the columns by the
header's names (not by position), so a driver that prints more columns still parses; a value
that is ``-`` or not a number becomes NaN (never zero).  Units come from the second header
line (MB/s; KB/s and GB/s are converted, anything else is NaN).

:func:`dmon_command` is run on the machine on its own channel beside the query stream; a
machine whose ``nvidia-smi`` has no ``dmon`` (or refuses ``-s t``) just ends that channel and
has no PCIe numbers: nothing else changes.  NVLink is collected beside it by
:mod:`workbench.core.telemetry.nvlink` (``nvidia-smi nvlink -gt d`` counters).

:class:`PcieMinutes` sums a machine's rounds per (minute, GPU) with ``np.bincount`` (no object
per reading) and hands each minute's means to the hub when it stores that minute.

Pure parsing and arithmetic: no I/O; one parser and one :class:`PcieMinutes` per machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.core.telemetry.link_minutes import LinkMinutes

_UNITS = {"MB/s": 1.0, "KB/s": 1e-3, "GB/s": 1e3}  # → MB/s


def dmon_command(period_s: int = 5) -> str:
    """The remote PCIe monitor (see the module docstring); ends when its channel is closed (SIGPIPE)."""
    return f"nvidia-smi dmon -s t -d {max(1, int(period_s))}"


@dataclass(frozen=True, eq=False)
class PcieBlock:
    """Readings of some GPUs: ``index[i]`` received ``rx[i]`` and sent ``tx[i]`` MB/s (NaN: not reported)."""

    index: np.ndarray  # int64
    rx: np.ndarray  # float64, MB/s
    tx: np.ndarray

    def __len__(self) -> int:
        return int(self.index.size)


def _number(text: str, scale: float) -> float:
    try:
        v = float(text)
    except ValueError:
        return math.nan  # "-", "N/A", "ERR!"
    return v * scale if math.isfinite(v) and v >= 0 else math.nan


class DmonParser:
    """Text of ``nvidia-smi dmon -s t`` → :class:`PcieBlock` of the complete lines (a read may end mid-line)."""

    def __init__(self) -> None:
        self._rest = ""
        self._names: list[str] = []  # the last header's column names, lower case
        self._scale = (math.nan, math.nan)  # rx, tx → MB/s

    def _header(self, parts: list[str]) -> None:
        if parts and parts[0].lower() == "gpu":
            self._names = [p.lower() for p in parts]
            self._scale = (math.nan, math.nan)
        elif parts and parts[0].lower() == "idx" and len(parts) == len(self._names):
            unit = dict(zip(self._names, parts))
            self._scale = (_UNITS.get(unit.get("rxpci", ""), math.nan), _UNITS.get(unit.get("txpci", ""), math.nan))

    def feed(self, text: str) -> PcieBlock:
        lines = (self._rest + text).split("\n")
        self._rest = lines.pop()
        idx: list[int] = []
        rx: list[float] = []
        tx: list[float] = []
        for line in lines:
            parts = line.split()
            if not parts:
                continue
            if parts[0].startswith("#"):
                parts[0] = parts[0][1:]
                self._header([p for p in parts if p])
                continue
            names = self._names
            if "rxpci" not in names or len(parts) != len(names) or not parts[names.index("gpu")].isdigit():
                continue  # no header yet, an error message, a line cut short
            idx.append(int(parts[names.index("gpu")]))
            rx.append(_number(parts[names.index("rxpci")], self._scale[0]))
            tx.append(_number(parts[names.index("txpci")], self._scale[1]) if "txpci" in names else math.nan)
        return PcieBlock(np.asarray(idx, np.int64), np.asarray(rx, np.float64), np.asarray(tx, np.float64))


class PcieMinutes(LinkMinutes):
    """Per minute and GPU index, the means of the PCIe readings (each reading weighs one)."""

    def add(self, block: PcieBlock, ts: float) -> None:
        self._add(block.index, block.rx, block.tx, ts)
