"""What every group of store tables shares: the Store's locked plumbing and two small helpers.

The table groups (:mod:`.profiles`, :mod:`.launches`, :mod:`.telemetry`,
:mod:`.money`) are mixins of :class:`~workbench.core.store.database.Store`:
they run their SQL through the store's ``_write`` (one ``BEGIN IMMEDIATE``
transaction under the store's lock) and ``_query``, so one connection, one
lock and one set of failure rules serve all of them.
"""

from __future__ import annotations

import json
from typing import Any


class Tables:
    """Base of the table mixins: ``_write``/``_query`` are provided by Store."""

    _write: Any
    _query: Any

    @staticmethod
    def _filters(**given: str | None) -> tuple[str, list[str]]:
        # Keys are our own keyword names (column names), values are bound parameters.
        used = {k: v for k, v in given.items() if v is not None}
        if not used:
            return "", []
        return " WHERE " + " AND ".join(f"{k} = ?" for k in used), list(used.values())


def dumps(value: Any) -> str:
    """JSON for a TEXT column; default=str: a stray non-JSON value in `extra` must not lose a state write."""
    return json.dumps(value, default=str, separators=(",", ":"))
