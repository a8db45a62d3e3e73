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

import csv
import datetime as _dt
import io
import math
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
_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%f",
                 "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def _field(header: str) -> str:
    name = header.strip().split(" [", 1)[0].strip().lower()
    return _ALIASES.get(name, name)


def _number(text: str) -> float:
    """``98 %``, ``350.12 W``, ``70000 MiB``, ``1410 MHz`` or a bare number; NaN for ``[N/A]`` and the like."""
    t = text.strip()
    if not t or t.startswith("[") or t.upper() in ("N/A", "ERR!"):
        return math.nan
    try:
        return float(t.split()[0])
    except ValueError:
        return math.nan


def _time(text: str, line: int) -> float:
    t = text.strip()
    for fmt in _TIME_FORMATS:
        try:
            return _dt.datetime.strptime(t, fmt).replace(tzinfo=_dt.timezone.utc).timestamp()
        except ValueError:
            continue
    raise ConfigError(f"line {line}: {t!r} is not an nvidia-smi timestamp (like 2024/05/01 12:00:00.123)")


def _is_header(row: list[str]) -> bool:
    """A header names fields in its first cell (a data row starts with a time or an index)."""
    return _field(row[0]) in _HEADER_FIRST


def read_text(text: str, source: str = "the log") -> Trace:
    """Parse a log's text (see the module docstring)."""
    columns: list[str] | None = None
    series: dict[int, dict[str, list]] = {}
    names: dict[int, str] = {}
    totals: dict[int, float] = {}
    present: set[str] = set()
    for line, row in enumerate(csv.reader(io.StringIO(text), skipinitialspace=True), start=1):
        if not row or not "".join(row).strip():
            continue
        if _is_header(row):
            columns = [_field(c) for c in row]
            present |= set(columns)
            continue
        if columns is None:
            if len(row) != len(DOCUMENTED):
                raise ConfigError(f"{source} has no header line and {len(row)} columns",
                                  hint="record it with --format=csv (not noheader), or with exactly the fields "
                                       "the docs list, in that order")
            columns = list(DOCUMENTED)
            present |= set(columns)
        if len(row) != len(columns):
            if line == 1 or "Unable to determine" in row[0] or "GPU is lost" in ",".join(row):
                continue  # a driver message (a GPU fell off the bus) in the middle of the log
            raise ConfigError(f"line {line} of {source} has {len(row)} values but the header names {len(columns)}")
        rec = dict(zip(columns, row))
        index = int(_number(rec["index"])) if "index" in rec and _number(rec["index"]) == _number(rec["index"]) else 0
        if "timestamp" not in rec:
            raise ConfigError(f"{source} has no timestamp column", hint="add timestamp to --query-gpu")
        s = series.setdefault(index, {k: [] for k in ("t", "util", "mem", "power", "limit", "clock", "mem_util")})
        s["t"].append(_time(rec["timestamp"], line))
        for key, col in (("util", "utilization.gpu"), ("mem", "memory.used"), ("power", "power.draw"),
                         ("limit", "power.limit"), ("clock", "clocks.sm"), ("mem_util", "utilization.memory")):
            s[key].append(_number(rec[col]) if col in rec else math.nan)
        if "name" in rec and rec["name"].strip():
            names[index] = rec["name"].strip()
        total = _number(rec.get("memory.total", ""))
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
