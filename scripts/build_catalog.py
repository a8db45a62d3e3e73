#!/usr/bin/env python3
"""Build the bundled price catalog (``resources/catalog/<cloud>.csv``) from its sources, reproducibly.

    python scripts/build_catalog.py                 write resources/catalog/{aws,azure,alibaba}.csv
    python scripts/build_catalog.py --check         exit 1 when a bundled file differs from what the
                                                    sources make (tests/unit run this)
    python scripts/build_catalog.py --sources DIR --out DIR

The sources (``resources/catalog/sources/``, described in its SOURCES.md) are public price files in one
long format (``instance_type, region, os, price_kind, currency, price_per_hour, as_of, source,
derived_formula``: one price per row), ``shapes.csv`` (each type's GPUs, vCPUs, memory, network, from
public documentation), ``previous/<cloud>.csv`` (the catalog as it was bundled before, with its dates) and
``refreshed/<cloud>.csv`` (prices ``scripts/update_price_snapshots.py`` read from a cloud's public list).

Rules (issue 32): every price keeps its own kind, source and date (the catalog's per-term columns); per
(region, type, term) the newest dated price wins and an older one stays only where nothing newer gives
that term; a price of unknown date never replaces a dated one, it only fills a gap; a date that is an upper
bound is written ``<=DATE`` ("on or before").  A price another region's figure stood in for ("assumed",
"estimated: East US price x 1.1") is dropped, not kept.  Reserved and savings-plan prices are estimated
(on-demand × a typical discount, basis ``ESTIMATED``) only where no published figure exists, and only for
the clouds whose catalog had such estimates (AWS, Azure).  A type without a documented shape is left out
(the file's header lists them).

Pure Python over the project's own reader and writer (``workbench.core.providers.price_snapshot``); no
network.  Deterministic: the same sources give byte-identical files.
"""

from __future__ import annotations

import argparse
import csv
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.core.domain.models import PriceDetail  # noqa: E402
from workbench.core.providers import price_snapshot as ps  # noqa: E402

SOURCES = ROOT / "resources" / "catalog" / "sources"
OUT = ROOT / "resources" / "catalog"


@dataclass(frozen=True)
class Feed:
    """One public price file and how to read it."""

    provider: str
    file: str
    source: str  # what the catalog says of where these prices come from
    date: str  # as_of as the catalog writes it: a date, <=DATE (upper bound) or unknown
    kinds: dict  # price_kind → (term, basis)
    drop_spot_equal_to_on_demand: bool = False  # placeholders in the source (Azure H100 v5)
    #: more files of the same source and layout: the controller's small CPU types (issue 33, SOURCES.md S4);
    #: read when present (a test's fixture folder may lack them)
    more_files: tuple[str, ...] = ()


FEEDS = {
    "aws": Feed("aws", "aws_ec2_gpu_prices.csv",
                "AWS list prices via Vantage instances.json (ec2instances.info), as tidied by "
                "github.com/jawaadjariwala/AWS-EC2-Pricing-Landscape-Analysis@cbe0a516",
                "<=2026-07-05",
                {"on_demand": ("on_demand", ""), "spot_avg": ("spot", ps.BASIS_SPOT_AVERAGE),
                 "reserved_1y_standard_all_upfront_effective_hourly": ("reserved_1y", ps.BASIS_ALL_UPFRONT),
                 "reserved_3y_standard_all_upfront_effective_hourly": ("reserved_3y", ps.BASIS_ALL_UPFRONT)},
                more_files=("aws_ec2_controller_prices.csv",)),
    "azure": Feed("azure", "azure_vm_gpu_prices.csv",
                  "Azure Retail Prices API via the SkyPilot catalog v6 "
                  "(github.com/skypilot-org/skypilot-catalog@098741e7, Apache-2.0)",
                  ps.UNKNOWN_DATE, {"on_demand": ("on_demand", ""), "spot": ("spot", "")},
                  drop_spot_equal_to_on_demand=True, more_files=("azure_vm_controller_prices.csv",)),
    "alibaba": Feed("alibaba", "alibaba_ecs_gpu_prices.csv",
                    "Alibaba Cloud China-site ECS price list (pay-as-you-go, Linux) via "
                    "github.com/cloudpilot-ai/karpenter-provider-alibabacloud@5d2e0774 (Apache-2.0)",
                    "<=2024-12-30", {"pay_as_you_go": ("on_demand", "")},
                    more_files=("alibaba_ecs_controller_prices.csv",)),
}

#: on-demand × these, where no published reserved or savings-plan price exists (the factors the catalog
#: has used: typical GPU discounts, no upfront); clouds not named get no estimates
ESTIMATE_FACTORS = {
    "aws": {"reserved_1y": 0.64, "reserved_3y": 0.43, "savings_plan_1y": 0.72, "savings_plan_3y": 0.52},
    "azure": {"reserved_1y": 0.63, "reserved_3y": 0.40, "savings_plan_1y": 0.78, "savings_plan_3y": 0.60},
}
ESTIMATED_TERMS = ("reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y")

HEADERS = {
    "aws": "Amazon EC2 GPU instances (Linux, shared tenancy): shapes and prices bundled for offline use, for "
           "comparing before any account exists, and as the fallback when the live APIs fail.",
    "azure": "Azure GPU VM sizes (Linux, pay-as-you-go): shapes and prices bundled for offline use, for comparing "
             "before any account exists, and as the fallback when the Retail Prices API fails.  Rows with gpu_count "
             "0 are the controller's small CPU sizes (issue 33): only a job that asks for no GPU sees them.",
    "alibaba": "Alibaba Cloud ECS GPU instance types (pay-as-you-go, Linux): shapes and prices bundled for use "
               "without an account, offline, and when the live price calls fail.  Rows with gpu_count 0 are the "
               "controller's small CPU types (issue 33): only a job that asks for no GPU sees them.",
}
MISSING = {
    "aws": "No published savings-plan prices and no reserved prices for p3.* and p5en (estimated where missing: "
           "basis ESTIMATED); p5 types have only the 3-year figure.  Spot is Vantage's average at the time the "
           "list was read, not a long-run average; the live spot history replaces it.",
    "azure": "Dates unknown (the source gives none): these prices never replace dated ones.  US regions only; no "
             "reservation or savings-plan prices (estimated: basis ESTIMATED).  Spot prices equal to on-demand in "
             "the source (placeholders) are left out.",
    "alibaba": "Prices are the China site's list, in CNY, for every region (international regions too): they serve "
               "China-site profiles; an international-site profile (billed in USD) has no bundled price.  Missing: "
               "spot (only the live API with an account), subscription (monthly/yearly) prices, reserved "
               "instances and savings plans, and the gn8is / gn8v / ebmgn8v families.",
}


def _shapes(sources: Path) -> dict[tuple[str, str], ps.PriceRow]:
    """(provider, instance type) → a row carrying only its shape, from shapes.csv."""
    out = {}
    with open(sources / "shapes.csv", encoding="utf-8") as fh:
        for row in csv.DictReader(line for line in fh if not line.startswith("#")):
            out[(row["provider"], row["instance_type"].lower())] = ps.PriceRow(
                instance_type=row["instance_type"], gpu_model=row["gpu_model"] or None,
                gpu_count=int(row["gpu_count"]), gpu_memory_gb=float(row["gpu_memory_gb"] or 0),
                vcpus=int(row["vcpus"]), memory_gb=float(row["memory_gb"]),
                network_gbps=float(row["network_gbps"]) if row.get("network_gbps") else None,
                rdma=row["rdma"].strip().lower() == "true", region="", currency="USD",
                on_demand=None, spot=None, reserved_1y=None, reserved_3y=None, savings_plan_1y=None,
                savings_plan_3y=None, as_of=ps.UNKNOWN_DATE)
    return out


def feed_rows(feed: Feed, sources: Path, shapes: dict) -> tuple[list[ps.PriceRow], list[str]]:
    """The feed's prices as catalog rows (one per region and type), and the types left out for want of a shape."""
    prices: dict[tuple[str, str], dict[str, float]] = {}
    currency: dict[tuple[str, str], str] = {}
    types: dict[str, str] = {}
    files = [feed.file, *(f for f in feed.more_files if (sources / f).exists())]
    for name in files:
        with open(sources / name, encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row.get("os", "linux") != "linux" or row["price_kind"] not in feed.kinds:
                    continue
                key = (row["region"], row["instance_type"].lower())
                types[key[1]] = row["instance_type"]
                term = feed.kinds[row["price_kind"]][0]
                prices.setdefault(key, {})[term] = float(row["price_per_hour"])
                currency[key] = row["currency"].split()[0].upper()  # "CNY (inferred, see SOURCES.md)" → CNY
    out, missing = [], set()
    for (region, itype), got in sorted(prices.items()):
        shape = shapes.get((feed.provider, itype))
        if shape is None:
            missing.add(types[itype])
            continue
        if feed.drop_spot_equal_to_on_demand and got.get("spot") is not None and got.get("spot") == got.get("on_demand"):
            del got["spot"]
        details = {t: PriceDetail(feed.source, feed.date, basis) for t, basis in feed.kinds.values() if t in got}
        out.append(replace(shape, region=region, currency=currency[(region, itype)], as_of=feed.date,
                           source=feed.source, details=details,
                           **{t: got.get(t) for t in ps.PRICE_TERMS}))
    return out, sorted(missing)


def previous_rows(provider: str, sources: Path) -> list[ps.PriceRow]:
    """The catalog as it was bundled (``previous/``) and what update_price_snapshots.py read from the public
    lists (``refreshed/``), less what was never a price: figures copied or estimated from another region, and
    the reserved / savings-plan estimates (made again below from the newest on-demand)."""
    return [r for folder in ("previous", "refreshed") for r in _dated_rows(sources / folder / f"{provider}.csv",
                                                                           provider)]


def _dated_rows(path: Path, provider: str) -> list[ps.PriceRow]:
    if not path.exists():
        return []
    out = []
    for r in ps.read(path, provider).rows:
        words = r.source.lower()
        if "assumed" in words or words.startswith("estimated:"):
            continue
        if "ESTIMATED" in r.source:
            r = replace(r, **{t: None for t in ESTIMATED_TERMS})
        out.append(replace(r, source=r.source.split("; reserved and savings plan: ESTIMATED")[0],
                           origin="bundled"))
    return out


def with_estimates(provider: str, rows: list[ps.PriceRow]) -> list[ps.PriceRow]:
    """Reserved and savings-plan prices estimated from the on-demand one where none is published."""
    factors = ESTIMATE_FACTORS.get(provider)
    if not factors:
        return rows
    out = []
    for r in rows:
        if r.on_demand is None:
            out.append(r)
            continue
        od = r.detail("on_demand")
        add = {t: round(r.on_demand * f, 6) for t, f in factors.items() if getattr(r, t) is None}
        details = dict(r.details)
        details.update({t: PriceDetail(od.source, od.as_of, ps.BASIS_ESTIMATED) for t in add})
        out.append(replace(r, **add, details=details))
    return out


def _order(r: ps.PriceRow) -> tuple:
    return (r.region, r.gpu_model or "", r.gpu_count, r.instance_type)


def build(provider: str, sources: Path = SOURCES) -> str:
    """The catalog file of ``provider`` as text."""
    feed = FEEDS[provider]
    new, missing = feed_rows(feed, sources, _shapes(sources))
    merged = ps.merge_rows([*previous_rows(provider, sources), *new])
    rows = sorted(with_estimates(provider, merged), key=_order)
    dates = sorted({r.detail(t).as_of for r in rows for t in ps.PRICE_TERMS if getattr(r, t) is not None},
                   key=ps.date_rank, reverse=True)
    comment = "\n".join([
        "GENERATED by scripts/build_catalog.py from resources/catalog/sources/ (see its SOURCES.md): do not edit;",
        "change the sources and run the builder again.",
        HEADERS[provider],
        "Columns: workbench/core/providers/price_snapshot.py.  Each price has its own source, date and basis",
        "(<term>_source, _as_of, _basis; empty: the row's).  Dates: <=DATE means on or before DATE.",
        f"Newest source: {feed.source} ({str(ps.describe_date(feed.date))}).",
        "Dates of the prices in this file: " + ", ".join(str(ps.describe_date(d)) for d in dates) + ".",
        "Missing: " + MISSING[provider],
        *(["Types of the source left out for want of a documented shape (resources/catalog/sources/"
           "shapes-missing.md): " + ", ".join(missing) + "."] if missing else []),
    ])
    return ps.render(rows, _wrap(comment))


def _wrap(text: str, width: int = 110) -> str:
    return "\n".join(line for para in text.splitlines() for line in textwrap.wrap(para, width) or [""])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sources", type=Path, default=SOURCES)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    bad = 0
    for provider in FEEDS:
        text = build(provider, args.sources)
        target = args.out / f"{provider}.csv"
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                print(f"{target}: differs from what the sources make; run scripts/build_catalog.py")
                bad += 1
        else:
            target.write_text(text, encoding="utf-8")
            print(f"{target}: {text.count(chr(10)) - text.count(chr(10) + '#')} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
