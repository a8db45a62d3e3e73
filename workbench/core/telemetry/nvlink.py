"""NVLink throughput per GPU from ``nvidia-smi nvlink -gt d``, and its per-minute means.

``nvidia-smi nvlink -gt d`` prints each GPU's NVLink data counters: CUMULATIVE kibibytes sent
and received per link since the driver loaded, one block per GPU::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)
             Link 0: Data Tx: 8299479 KiB
             Link 0: Data Rx: 7492431 KiB
             Link 1: Data Tx: 8299472 KiB
    GPU 1: …

(shape from public examples of its output and of scripts that sum ``Data Tx`` over the links and
take per-second deltas).  A GPU without NVLink prints its ``GPU N:`` line and no ``Link`` line: it
gets no NVLink numbers (never zero).

Counters, not rates: :func:`nvlink_command` runs a shell loop on the machine that, every
``period_s``, prints a marker line with the machine's clock (``#nvlink <epoch seconds>``), the
command's output and an end line (``#nvlink-end``).  :class:`NvlinkParser` takes the complete
polls (a poll cut short by the channel is dropped), sums each GPU's links per direction and turns
two consecutive polls into a rate: MB/s = 10**6 bytes per second over the marker times' difference
(the receipt time when a marker has no usable time).  No rate (NaN) for an interval in which
a link counter went down (a counter reset: driver reload, GPU reset), the set of links changed,
or a unit was not understood; the next interval has one again.  Units: ``KiB`` (what the driver
prints), ``B``, ``MiB`` and ``GiB`` are converted; any other unit is rejected: that GPU and
direction has no rate while it lasts, and :attr:`NvlinkParser.rejected_units` names the unit (the
stream logs it).  Lines that are none of these are ignored.

The loop stops (its channel ends) when ``nvidia-smi nvlink`` fails (an old driver without
``-gt``, no NVLink support) or prints no ``Data`` line at all (no GPU has NVLink): one call,
then nothing more runs on that machine, and its other telemetry goes on.  Because the counters
are cumulative, a longer period loses no traffic: the minute means are the same, only the
newest rate is older.

:class:`NvlinkMinutes` sums, per (minute, GPU), the megabytes and seconds of the intervals that
ended in it, so a minute's mean is the traffic over the time covered (not a mean of rates), and
hands it to the hub when it stores that minute.

Pure parsing and arithmetic: no I/O; one parser and one :class:`NvlinkMinutes` per machine.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass

import numpy as np

from workbench.core.telemetry.link_minutes import LinkMinutes

BEGIN, END = "#nvlink", "#nvlink-end"
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}  # → bytes
_GPU = re.compile(r"^\s*GPU\s+(\d+)\s*:")
_LINK = re.compile(r"^\s*Link\s+(\d+)\s*:\s*Data\s+(Tx|Rx)\s*:\s*(\d+)\s*(\S+)\s*$", re.IGNORECASE)

Poll = dict[int, dict[str, dict[int, float]]]  # GPU → "rx"/"tx" → link → bytes (NaN: unit not understood)


def nvlink_command(period_s: int = 5) -> str:
    """The remote NVLink poller (see the module docstring), under ``sh`` whatever the login shell; ends when its
    channel is closed (SIGPIPE at its next print)."""
    loop = ("while :; do t=$(date +%s.%N); o=$(nvidia-smi nvlink -gt d) || exit $?; "
            'case "$o" in *"Data "[RT]x*) ;; *) exit 4;; esac; '
            f"printf '{BEGIN} %s\\n%s\\n{END}\\n' \"$t\" \"$o\"; sleep {max(1, int(period_s))}; done")
    return "sh -c " + shlex.quote(loop)


@dataclass(frozen=True, eq=False)
class NvlinkBlock:
    """Rates of some GPUs: ``index[i]`` received ``rx[i]`` and sent ``tx[i]`` MB/s over NVLink during the
    ``seconds[i]`` before its poll (NaN: no rate for that interval)."""

    index: np.ndarray  # int64
    rx: np.ndarray  # float64, MB/s (10**6 bytes/s)
    tx: np.ndarray
    seconds: np.ndarray

    def __len__(self) -> int:
        return int(self.index.size)


def _rate(before: dict[int, float], after: dict[int, float], dt: float) -> float:
    """MB/s between two polls of one GPU and direction; NaN on a reset, a changed link set or an unknown unit."""
    if not after or before.keys() != after.keys() or not dt > 0:
        return math.nan
    total = 0.0
    for link, v in after.items():
        d = v - before[link]
        if not d >= 0:  # a counter went down (reset) or is NaN (unit not understood)
            return math.nan
        total += d
    return total / dt / 1e6


class NvlinkParser:
    """Text of the :func:`nvlink_command` loop → :class:`NvlinkBlock` of the rates its complete polls give."""

    def __init__(self) -> None:
        self._rest = ""
        self._poll: Poll | None = None  # the poll being read (between BEGIN and END)
        self._gpu: int | None = None
        self._t = math.nan
        self._prev: Poll = {}
        self._prev_t = math.nan
        self.rejected_units: set[str] = set()

    def _line(self, line: str, now: float, out: list[tuple[int, float, float, float]]) -> None:
        parts = line.split()
        if parts and parts[0] == BEGIN:
            self._poll, self._gpu = {}, None  # an unfinished poll before it is dropped
            try:
                self._t = float(parts[1]) if len(parts) == 2 else math.nan
            except ValueError:
                self._t = math.nan  # e.g. a 'date' without %N
            if not math.isfinite(self._t):
                self._t = now
            return
        if self._poll is None:
            return  # outside a poll
        if parts and parts[0] == END:
            self._finish(out)
            return
        gpu = _GPU.match(line)
        if gpu:
            self._gpu = int(gpu.group(1))
            return
        link = _LINK.match(line)
        if link is None or self._gpu is None:
            return  # not a counter line (garbage, a header, a message)
        n, direction, value, unit = link.groups()
        scale = UNITS.get(unit)
        if scale is None:
            self.rejected_units.add(unit)
        per_gpu = self._poll.setdefault(self._gpu, {"rx": {}, "tx": {}})
        per_gpu[direction.lower()][int(n)] = int(value) * scale if scale is not None else math.nan

    def _finish(self, out: list[tuple[int, float, float, float]]) -> None:
        poll, t = self._poll or {}, self._t
        dt = t - self._prev_t
        for gpu in sorted(poll):
            if not (poll[gpu]["rx"] or poll[gpu]["tx"]):
                continue  # a GPU without NVLink: no numbers
            before = self._prev.get(gpu)
            if before is not None:
                out.append((gpu, _rate(before["rx"], poll[gpu]["rx"], dt), _rate(before["tx"], poll[gpu]["tx"], dt),
                            dt))
        self._prev, self._prev_t = poll, t
        self._poll, self._gpu = None, None

    def feed(self, text: str, now: float) -> NvlinkBlock:
        """Parse what arrived (a read may end mid-line or mid-poll); ``now`` stands in for a marker's time."""
        lines = (self._rest + text).split("\n")
        self._rest = lines.pop()
        out: list[tuple[int, float, float, float]] = []
        for line in lines:
            self._line(line, now, out)
        cols = list(zip(*out)) or [(), (), (), ()]
        return NvlinkBlock(np.asarray(cols[0], np.int64), np.asarray(cols[1], np.float64),
                           np.asarray(cols[2], np.float64), np.asarray(cols[3], np.float64))


class NvlinkMinutes(LinkMinutes):
    """Per minute and GPU index, the megabytes over the seconds of the intervals received (NaN left out)."""

    def add(self, block: NvlinkBlock, ts: float) -> None:
        """Intervals that ended by ``ts`` (when they arrived): they count in ``ts``'s minute."""
        self._add(block.index, block.rx, block.tx, ts, block.seconds)
