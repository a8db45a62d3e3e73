#!/usr/bin/env python3
"""Refresh the bundled price catalog (``resources/catalog/<provider>.csv``) from the public price lists.

    python scripts/update_price_snapshots.py                     every cloud that has a public list
    python scripts/update_price_snapshots.py --provider aws --region us-east-1
    python scripts/update_price_snapshots.py --price-list-url aws=https://mirror.example/aws

The same code as ``workbench catalog update`` (``workbench.core.providers.price_update``) with the
bundled files as the target: prices are read without any account (AWS Price List offer and Savings
Plans files, Azure Retail Prices API), dated today, into ``resources/catalog/sources/refreshed/<provider>.csv``
(rows of regions not refreshed stay), then ``scripts/build_catalog.py`` rebuilds the bundled files, where a
newer price wins per term.  Needs internet access.  Exit 1 when a provider could not be read (its prices stay
as they were).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from workbench.core.providers.price_update import update  # noqa: E402
from workbench.core.providers.registry import discover  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--provider", action="append", metavar="P", help="only this cloud (repeatable)")
    p.add_argument("--region", action="append", metavar="R", help="only this region (repeatable)")
    p.add_argument("--price-list-url", action="append", default=[], metavar="PROVIDER=URL",
                   help="read PROVIDER's list from this base URL (a mirror)")
    p.add_argument("--timeout", type=float, default=120.0, help="per request, seconds (default 120)")
    args = p.parse_args(argv)
    urls = dict(item.split("=", 1) for item in args.price_list_url)
    results = update(discover(), args.provider, args.region, urls, target="bundled", timeout=args.timeout,
                     progress=lambda line: print(line, flush=True))
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"{r.provider}: NOT updated: {r.error}", file=sys.stderr)
    import build_catalog  # the bundled files are generated from their sources, the refreshed prices among them

    built = build_catalog.main([])
    return 1 if failed or built else 0


if __name__ == "__main__":
    sys.exit(main())
