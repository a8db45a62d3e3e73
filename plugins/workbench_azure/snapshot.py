"""Azure's price snapshot: ``resources/catalog/azure.csv`` (plus the user's refreshed copy), read by core.

Used when the profile says ``pricing=snapshot``, when the Retail Prices API fails or has no price for
a size, and (shapes only) when the subscription's size list cannot be read.  Offers priced from it say
so: price source "snapshot" with the row's date.  The file's layout and the reader are
:mod:`workbench.core.providers.price_snapshot` (one for every cloud); this module only names Azure's file.
"""

from __future__ import annotations

from pathlib import Path

from workbench.core.providers import price_snapshot
from workbench.core.providers.price_snapshot import COLUMNS, PriceRow as SnapshotRow, PriceSnapshot as Snapshot

__all__ = ["COLUMNS", "PROVIDER", "Snapshot", "SnapshotRow", "bundled", "load"]

PROVIDER = "azure"


def load(path: Path) -> Snapshot:
    """Parse ``path`` (PluginError naming file:line when it is malformed or cannot be read)."""
    return price_snapshot.read(path, PROVIDER)


def bundled() -> Snapshot:
    """The bundled snapshot merged with the user's refreshed copy (cached while the files are unchanged)."""
    return price_snapshot.load(PROVIDER)
