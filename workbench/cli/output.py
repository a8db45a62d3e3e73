"""Printing for the CLI: aligned tables for people, stable JSON for scripts."""

from __future__ import annotations

import json
import sys
from typing import Any, Sequence, TextIO


def emit_json(obj: Any, out: TextIO | None = None) -> None:
    """Write one JSON document and flush it: a script reading a pipe gets it before the process ends."""
    out = out or sys.stdout
    json.dump(obj, out, indent=2, sort_keys=False, default=str)
    out.write("\n")
    out.flush()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")


def money(value: float | None, currency: str = "USD") -> str:
    if value is None:
        return "?"
    sign = "$" if currency == "USD" else ("¥" if currency == "CNY" else f"{currency} ")
    return f"{sign}{value:,.4f}" if 0 < abs(value) < 0.01 else f"{sign}{value:,.2f}"


def duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def err(message: str) -> None:
    sys.stderr.write(message.rstrip() + "\n")
