"""Printing for the CLI: aligned tables for people, stable JSON for scripts, and the exit codes they read.

Every command module prints through these helpers (errors per profile, warnings, money, durations), so a
message reads the same from every command and ``--json`` keeps one shape.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Sequence, TextIO

if TYPE_CHECKING:
    from workbench.core.domain.errors import WorkbenchError

#: the process's exit codes (docs/cli.md): done; bad input or refused; bad usage; a provider failed;
#: something is still billing
EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_PROVIDER, EXIT_BILLING = 0, 1, 2, 3, 4


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


def print_warning(warning: str | None) -> None:
    """A warning on stderr, as ``warning: …`` (nothing for None)."""
    if warning:
        err(f"warning: {warning}")


def errors_json(errors: list[tuple[str, "WorkbenchError"]], store: Any = None) -> list[dict[str, Any]]:
    """Profiles that could not be asked, for ``--json``.  With ``store``: ``may_bill`` says whether the app
    launched something there that may still bill."""
    from workbench.core.money.billing_status import launched_on

    return [{"profile": name, **exc.to_json(), **({"may_bill": bool(launched_on(store, name))} if store else {})}
            for name, exc in errors]


def print_errors(errors: list[tuple[str, "WorkbenchError"]], store: Any = None) -> None:
    """"cannot check P: why"; "may still be billing" only where the store says the app launched something."""
    from workbench.core.money.billing_status import launched_on

    for name, exc in errors:
        may = store is not None and bool(launched_on(store, name))
        err(f"cannot check {name}: {exc}" + (" — something this app launched there may still be billing"
                                            if may else ""))


def stale_warning(dates: list[str]) -> str | None:
    """"prices from DATE …" for the oldest shown date older than 90 days; None when all are fresh.

    The text carries no "warning:" of its own: ``--json`` puts it under the key ``warning``, and the
    text output prints it with :func:`print_warning`."""
    from workbench.core.providers.price_snapshot import (STALE_AFTER_DAYS, age_days, date_rank, describe_date,
                                                         is_stale)

    old = sorted((d for d in dates if d and is_stale(d)), key=date_rank)
    if not old:
        return None
    return (f"prices from {describe_date(old[0])} ({age_days(old[0])} days old, more than {STALE_AFTER_DAYS}): "
            "run `workbench catalog update` for the current public prices")
