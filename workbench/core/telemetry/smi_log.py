"""Reading an ``nvidia-smi --query-gpu=… --format=csv -l N`` log recorded anywhere into a :class:`Trace`.

The log the advisor documents is::

    nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,utilization.memory,memory.used,
               memory.total,power.draw,power.limit,clocks.sm --format=csv -l 1 > gpu.csv

Its first line names the columns as nvidia-smi does, with units (``utilization.gpu [%]``,
``memory.used [MiB]``, ``power.draw [W]``; ``clocks.sm`` is printed ``clocks.current.sm [MHz]``);
rows carry the units too (``98 %``, ``70000 MiB``, ``350.12 W``) and ``[N/A]`` (or
``[Not Supported]``…) where the GPU does not report a value.  ``nounits`` logs and logs glued
together (the header repeated) read the same; a log without a header is read when it has exactly
the documented columns.  The columns present are used; the documented ones absent are listed in
``Trace.missing`` (and the rules that need them say they were not evaluated).  Timestamps
(``2024/05/01 12:00:00.123``) are the recording machine's wall clock; the zone is unknown, so the
trace's ``clock`` is ``"log"``.

Pure functions; a malformed file raises ConfigError naming the line.
"""

from __future__ import annotations

import calendar
import csv
import datetime as _dt
import io
import math
import re
from pathlib import Path

from workbench.core.domain.errors import ConfigError
from workbench.core.telemetry.trace import GpuTrace, RunInfo, Trace

#: the documented recording (the order a header-less log must have)
DOCUMENTED = ("timestamp", "index", "name", "utilization.gpu", "utilization.memory", "memory.used", "memory.total",
              "power.draw", "power.limit", "clocks.sm")
#: header names nvidia-smi prints → our field; several drivers spell some of them differently
_ALIASES = {
    "clocks.current.sm": "clocks.sm", "clocks.sm": "clocks.sm",
    "power.draw.instant": "power.draw", "power.draw.average": "power.draw", "power.draw": "power.draw",
    "enforced.power.limit": "power.limit", "power.limit": "power.limit",
    "clocks.max.sm": "clocks.max.sm", "clocks.max.sm_clock": "clocks.max.sm",
    "gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id",
}
_HEADER_FIRST = {"timestamp", "index", "name", "uuid", "pci.bus_id", "utilization.gpu", "memory.used"}


def _field(header: str) -> str:
    name = header.strip().split(" [", 1)[0].strip().lower()
    return _ALIASES.get(name, name)


def _number(text: str) -> float:
    """``98 %``, ``350.12 W``, ``70000 MiB``, ``1410 MHz`` or a bare number; NaN for ``[N/A]`` and the like."""
    head = text.split(None, 1)
    try:
        return float(head[0]) if head else math.nan  # "[N/A]", "[Not Supported]", "ERR!" do not convert
    except ValueError:
        return math.nan


_STAMP = re.compile(r"^(\d{4})[/-](\d{1,2})[/-](\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?$")


def _time(text: str, line: int, cache: dict[str, float]) -> float:
    """POSIX seconds of a log timestamp read as UTC (the zone is unknown); ``cache`` holds whole seconds."""
    t = text.strip()
    whole, _, frac = t.partition(".")
    base = cache.get(whole)
    if base is None:
        m = _STAMP.match(whole)
        if m is None or m.group(7) is not None:
            raise ConfigError(f"line {line}: {t!r} is not an nvidia-smi timestamp (like 2024/05/01 12:00:00.123)")
        try:
            base = float(calendar.timegm(_dt.datetime(*map(int, m.groups()[:6])).timetuple()))
        except ValueError:
            raise ConfigError(f"line {line}: {t!r} is not a valid date and time") from None
        cache[whole] = base
    if frac and not frac.isdigit():
        raise ConfigError(f"line {line}: {t!r} is not an nvidia-smi timestamp (like 2024/05/01 12:00:00.123)")
    return base + (int(frac) / 10 ** len(frac) if frac else 0.0)


def _is_header(row: list[str]) -> bool:
    """A header names fields in its first cell (a data row starts with a time or an index)."""
    return _field(row[0]) in _HEADER_FIRST


def _names_columns(row: list[str]) -> bool:
    """A line of column names: no cell is a number or a timestamp (a data row has both)."""
    def value(cell: str) -> bool:
        t = cell.strip()
        return _number(t) == _number(t) or bool(_STAMP.match(t.partition(".")[0]))

    return len(row) > 1 and not any(value(c) for c in row)


def read_text(text: str, source: str = "the log") -> Trace:
    """Parse a log's text (see the module docstring)."""
    columns: list[str] | None = None
    idx: dict[str, int] = {}
    series: dict[int, dict[str, list]] = {}
    names: dict[int, str] = {}
    totals: dict[int, float] = {}
    present: set[str] = set()
    stamps: dict[str, float] = {}
    wanted = (("util", "utilization.gpu"), ("mem", "memory.used"), ("power", "power.draw"), ("limit", "power.limit"),
              ("clock", "clocks.sm"), ("mem_util", "utilization.memory"))

    def use(cols: list[str]) -> None:
        nonlocal columns, idx
        if "timestamp" not in cols:
            raise ConfigError(f"{source} has no timestamp column", hint="add timestamp to --query-gpu")
        columns, idx = cols, {c: i for i, c in enumerate(cols)}
        present.update(cols)

    for line, row in enumerate(csv.reader(io.StringIO(text), skipinitialspace=True), start=1):
        if not row or not "".join(row).strip():
            continue
        if _is_header(row):
            use([_field(c) for c in row])
            continue
        if columns is None:
            if _names_columns(row):  # a header, but not nvidia-smi's: say so, not "no header line"
                shown = ", ".join(c.strip() for c in row[:6]) + (", …" if len(row) > 6 else "")
                raise ConfigError(f"{source} is not an nvidia-smi log: its header names {shown}, and nvidia-smi's "
                                  "start with timestamp, index or name",
                                  hint="record one with: nvidia-smi --query-gpu=" + ",".join(DOCUMENTED)
                                       + " --format=csv -l 1")
            if len(row) != len(DOCUMENTED):
                raise ConfigError(f"{source} has no header line and {len(row)} columns",
                                  hint="record it with --format=csv (not noheader), or with exactly the fields "
                                       "the docs list, in that order")
            use(list(DOCUMENTED))
        if len(row) != len(columns):
            if "Unable to determine" in row[0] or "GPU is lost" in ",".join(row):
                continue  # a driver message (a GPU fell off the bus) in the middle of the log
            raise ConfigError(f"line {line} of {source} has {len(row)} values but the header names {len(columns)}")
        i = idx.get("index")
        number = _number(row[i]) if i is not None else 0.0
        index = int(number) if number == number else 0
        s = series.get(index)
        if s is None:
            s = series[index] = {k: [] for k in ("t", "util", "mem", "power", "limit", "clock", "mem_util")}
        s["t"].append(_time(row[idx["timestamp"]], line, stamps))
        for key, col in wanted:
            j = idx.get(col)
            s[key].append(_number(row[j]) if j is not None else math.nan)
        j = idx.get("name")
        if j is not None and index not in names and row[j].strip():
            names[index] = row[j].strip()
        j = idx.get("memory.total")
        if j is not None:
            total = _number(row[j])
            if total == total:
                totals[index] = total
    if not series:
        raise ConfigError(f"{source} holds no GPU readings",
                          hint="record with: nvidia-smi --query-gpu=" + ",".join(DOCUMENTED) + " --format=csv -l 1")
    gpus = []
    for index, s in sorted(series.items()):
        order = sorted(range(len(s["t"])), key=lambda i: s["t"][i])

        def col(k: str) -> list[float]:
            return [s[k][i] for i in order]

        gpus.append(GpuTrace.build("", index, names.get(index, ""), col("t"), col("util"), col("mem"),
                                   totals.get(index, math.nan), col("power"), col("limit"), col("clock"),
                                   col("mem_util")))
    missing = tuple(f for f in DOCUMENTED if f not in present)
    return Trace(tuple(gpus), RunInfo(gpu_model=next((g.model for g in gpus if g.model), None),
                                      gpus_per_node=len(gpus)), missing=missing, clock="log")


def read_log(path: Path | str) -> Trace:
    """Read a log file; ConfigError when it cannot be read or is not an nvidia-smi CSV log."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror or exc}") from None
    return read_text(text, str(p))
