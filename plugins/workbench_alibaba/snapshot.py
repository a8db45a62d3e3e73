"""Alibaba Cloud's price snapshot: ``resources/catalog/alibaba.csv`` (plus the user's refreshed copy), read by core.

Used without an account, offline, with ``pricing=snapshot``, and when the live calls fail; offers priced
from it say so (source "snapshot" and the row's date).  Rows keep their currency (CNY on the China site).
The layout and the reader are :mod:`workbench.core.providers.price_snapshot` (one for every cloud);
this module only names Alibaba's file.
"""

from __future__ import annotations

from pathlib import Path

from workbench.core.providers import price_snapshot
from workbench.core.providers.price_snapshot import PriceRow as Row, PriceSnapshot as Snapshot

__all__ = ["PROVIDER", "Row", "Snapshot", "bundled", "load"]

PROVIDER = "alibaba"


def load(path: Path) -> Snapshot:
    """Parse ``path`` (PluginError naming file:line when it is malformed or cannot be read)."""
    return price_snapshot.read(path, PROVIDER)


def bundled() -> Snapshot:
    """The bundled snapshot merged with the user's refreshed copy (cached while the files are unchanged)."""
    return price_snapshot.load(PROVIDER)
