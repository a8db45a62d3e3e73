"""AWS's price snapshot: ``resources/catalog/aws.csv`` (plus the user's refreshed copy), read by core.

Used when the profile says ``pricing=snapshot``, when the live calls fail, and for types the live
``describe_instance_types`` does not list (p3.2xlarge and p3.8xlarge are missing from some
endpoints).  Offers priced from it say so: their price source is "snapshot" with the row's date.
The file's layout and the reader are :mod:`workbench.core.providers.price_snapshot` (one for every
cloud); this module only names AWS's file.
"""

from __future__ import annotations

from pathlib import Path

from workbench.core.providers import price_snapshot
from workbench.core.providers.price_snapshot import COLUMNS, PriceRow as SnapshotRow, PriceSnapshot as Snapshot

__all__ = ["COLUMNS", "PROVIDER", "Snapshot", "SnapshotRow", "default_path", "load", "parse"]

PROVIDER = "aws"


def default_path() -> Path:
    return price_snapshot.bundled_path(PROVIDER)


def parse(text: str, path: Path) -> Snapshot:
    """Parse snapshot text (PluginError naming file:line when it is malformed)."""
    return price_snapshot.parse(text, path, PROVIDER)


def load(path: Path | None = None) -> Snapshot:
    """The snapshot at ``path``; default: the bundled one merged with the user's refreshed copy."""
    return price_snapshot.load(PROVIDER, path)
