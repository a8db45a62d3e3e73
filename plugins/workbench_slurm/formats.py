"""Slurm's text formats, read without Slurm: ``-o`` records, host lists, GRES strings, durations, marked sections.

Everything the plugin reads from a login node is the plain text of ``scontrol``/``squeue`` (no JSON: the
``--json`` output needs a Slurm built with its data parser plugin, which Debian's 22.05 lacks).  These are
the formats, checked against the outputs recorded in ``tests/fixtures/slurm/recorded/``:

* ``scontrol show … -o``: one record a line, ``Key=value`` pairs split by spaces, where a value may itself
  hold spaces (``OS=Linux 6.1 #1 SMP``, ``Reason=GPU fell off [root@…]``) or ``=`` (``CfgTRES=cpu=2,mem=8000M``);
* host lists ``node[1-2,5],gpu-a[01-03]``;
* GRES ``gpu:v100:2(S:0-1),gpu:2`` and their use ``gpu:v100:1(IDX:0)``;
* durations ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``, ``UNLIMITED``;
* our own marked sections: ``@@workbench-slurm@@ NAME`` … ``@@workbench-slurm@@ rc=N``, so that one SSH
  round trip carries several commands and a failing one is told from an empty answer.

Pure functions; any thread.
"""

from __future__ import annotations

import calendar
import math
import re
import time
from dataclasses import dataclass

#: the marker of the sections our commands print (never in Slurm's own output)
MARK = "@@workbench-slurm@@"
#: what every command of ours sets: times in UTC, Slurm's standard time format (a user's SLURM_TIME_FORMAT
#: may say "relative" or a strftime of its own)
SLURM_ENV = "env TZ=UTC SLURM_TIME_FORMAT=standard"

_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_:/.]*$")
_NONE_WORDS = {"", "(null)", "N/A", "NONE", "None", "Unknown", "n/a", "(none)"}


def record(line: str) -> dict[str, str]:
    """One ``-o`` record as a dict.  A token without ``=`` (or whose key is not a key) continues the value
    before it, spaces kept single: ``OS=Linux 6.1 #1`` and ``Reason=GPU fell off`` stay whole."""
    out: dict[str, str] = {}
    last: str | None = None
    for token in line.split():
        key, eq, value = token.partition("=")
        if eq and _KEY.match(key) and (last is None or key not in out):
            out[key] = value
            last = key
        elif last is not None:
            out[last] = f"{out[last]} {token}"
    return out


def records(text: str, first_key: str) -> list[dict[str, str]]:
    """The records of an ``-o`` listing: the lines that start with ``first_key=`` (others are notes)."""
    return [record(line) for line in text.splitlines() if line.startswith(first_key + "=")]


def none_if_empty(value: str | None) -> str | None:
    """None for Slurm's ways of saying nothing: ``(null)``, ``N/A``, ``None``, empty."""
    return None if value is None or value.strip() in _NONE_WORDS else value.strip()


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and parentheses: ``a[1-2],b(S:0-1),c``."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_hostlist(text: str | None) -> tuple[str, ...]:
    """``node[1-2,5],gpu-a[01-03]`` → every name, zero padding kept; ``(null)``/empty → ()."""
    text = none_if_empty(text)
    if text is None:
        return ()
    names: list[str] = []
    for part in split_top(text):
        names.extend(_expand_one(part))
    return tuple(names)


def _expand_one(part: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", part)
    if not m:
        return [part]
    head, tail = part[:m.start()], part[m.end():]
    out = []
    for rng in m.group(1).split(","):
        lo, dash, hi = rng.partition("-")
        if not dash:
            values = [lo]
        elif not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
            raise ValueError(f"not a host range: [{rng}] in {part}")
        else:
            values = [str(i).zfill(len(lo)) for i in range(int(lo), int(hi) + 1)]
        for v in values:
            out.extend(_expand_one(head + v + tail))
    return out


@dataclass(frozen=True)
class Gres:
    """One GRES item: ``gpu:v100:2`` → ("gpu", "v100", 2); ``gpu:2`` → ("gpu", None, 2)."""

    name: str
    type: str | None
    count: int


def parse_gres(text: str | None) -> list[Gres]:
    """The items of a ``Gres=``/``GresUsed=`` value; ``(null)`` → [].  Socket and index notes in
    parentheses are dropped; a count with a K/M/G suffix is scaled (Slurm writes big counts so)."""
    text = none_if_empty(text)
    if text is None:
        return []
    out = []
    for item in split_top(text):
        item = re.sub(r"\(.*\)$", "", item).strip()
        parts = [p for p in item.split(":") if p and p != "no_consume"]
        if not parts:
            continue
        count = 1
        m = re.fullmatch(r"(\d+)([KMG]?)", parts[-1]) if len(parts) > 1 else None
        if m:
            count = int(m.group(1)) * {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[m.group(2)]
            parts = parts[:-1]
        out.append(Gres(parts[0], parts[1] if len(parts) > 1 else None, count))
    return out


def gpus_of(gres: list[Gres]) -> dict[str | None, int]:
    """GPU counts by type (None: untyped) of parsed GRES items."""
    out: dict[str | None, int] = {}
    for g in gres:
        if g.name == "gpu":
            out[g.type] = out.get(g.type, 0) + g.count
    return out


_UNLIMITED = {"UNLIMITED", "INFINITE", "NONE", "N/A", "PARTITION_LIMIT"}


def parse_duration(text: str | None) -> int | None:
    """Seconds of a Slurm duration; None for unlimited (``UNLIMITED``, ``INFINITE``, ``NONE``, empty).

    ``2`` = 2 min, ``30:00`` = 30 min (MM:SS), ``1:00:00`` = 1 h, ``1-00:00:00`` = 1 day, ``2-12`` = 2 d 12 h,
    ``1-02:30`` = 1 d 2 h 30 min (Slurm's ``-t`` forms).  Raises ValueError on anything else.
    """
    if text is None or text.strip().upper() in _UNLIMITED or not text.strip():
        return None
    s = text.strip()
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", s)
    if not m:
        raise ValueError(f"not a Slurm time: {text!r}")
    days, a, b, c = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    if days is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
        h, mi, sec = a, int(b or 0), int(c or 0)
        return int(days) * 86400 + h * 3600 + mi * 60 + sec
    if c is not None:  # HH:MM:SS
        return a * 3600 + int(b) * 60 + int(c)
    if b is not None:  # MM:SS
        return a * 60 + int(b)
    return a * 60  # MM


def time_limit(seconds: float) -> str:
    """``sbatch --time`` for ``seconds``, whole minutes rounded UP (Slurm counts minutes): ``"45"`` below an
    hour, else ``"D-HH:MM:SS"`` (``3600`` → ``"0-01:00:00"``, ``90000`` → ``"1-01:00:00"``)."""
    if seconds is None or seconds <= 0 or math.isinf(seconds):
        raise ValueError(f"a time limit must be a positive number of seconds, not {seconds!r}")
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return str(minutes)
    d, rest = divmod(minutes, 1440)
    return f"{d}-{rest // 60:02d}:{rest % 60:02d}:00"


def words(seconds: int | None) -> str:
    """A duration for people: ``2 min``, ``2 h``, ``1 h 30 min``, ``1 d 2 h``, ``no limit``."""
    if seconds is None:
        return "no limit"
    m = math.ceil(seconds / 60)
    d, h, mi = m // 1440, (m % 1440) // 60, m % 60
    parts = [f"{d} d" if d else "", f"{h} h" if h else "", f"{mi} min" if mi else ""]
    return " ".join(p for p in parts if p) or "0 min"


def utc_time(text: str | None) -> float | None:
    """POSIX seconds of Slurm's standard time (``2026-12-05T03:22:00``) printed under ``TZ=UTC``;
    None for ``N/A``, ``Unknown``, ``None`` and empty."""
    text = none_if_empty(text)
    if text is None:
        return None
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


@dataclass(frozen=True)
class Section:
    """What one marked command printed (stdout and stderr together) and its exit status."""

    name: str
    text: str
    rc: int | None  # None: the answer ended before the command's rc line


def sections(text: str) -> dict[str, Section]:
    """The marked sections of an answer; lines before the first marker (a login banner) are dropped."""
    out: dict[str, Section] = {}
    name: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if not line.startswith(MARK + " "):
            if name is not None:
                lines.append(line)
            continue
        word = line[len(MARK) + 1:].strip()
        if word.startswith("rc=") and name is not None:
            rc = int(word[3:]) if word[3:].isdigit() else 255
            out[name] = Section(name, "\n".join(lines), rc)
            name, lines = None, []
        elif not word.startswith("rc="):
            if name is not None:
                out[name] = Section(name, "\n".join(lines), None)
            name, lines = word, []
    if name is not None and name != "end":
        out[name] = Section(name, "\n".join(lines), None)
    return out
