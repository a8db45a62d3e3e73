"""`workbench catalog show | update`: the price catalog that compares clouds before any account exists."""

from __future__ import annotations

import argparse
import sys

from workbench.core.domain.errors import ConfigError
from workbench.core.providers import price_snapshot
from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_OK, EXIT_PROVIDER, emit_json, err, print_warning, stale_warning, table


def _urls(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        provider, sep, url = item.partition("=")
        if not sep or not provider or not url.startswith(("http://", "https://")):
            raise ConfigError(f"--price-list-url takes PROVIDER=URL (http or https), not {item!r}")
        out[provider.strip()] = url.strip()
    return out


def _summary(provider: str) -> dict[str, object]:
    snap = price_snapshot.load(provider)
    cache = price_snapshot.cache_path(provider)
    bundled = price_snapshot.bundled_path(provider)
    cached_rows = [r for r in snap.rows if r.origin == "cache"]
    return {"provider": provider, "rows": len(snap.rows), "regions": snap.regions(), "as_of": snap.as_of,
            "oldest": snap.oldest, "stale": price_snapshot.is_stale(snap.oldest),
            "age_days": price_snapshot.age_days(snap.oldest),
            "bundled": str(bundled) if bundled.exists() else None,
            "cache": str(cache) if cache.exists() else None,
            "cache_as_of": max((r.as_of for r in cached_rows), key=price_snapshot.date_rank, default=None),
            "sources": sorted({r.source for r in snap.rows if r.source}),
            # every source a price comes from, with its date and how many prices of which term it gives
            "price_sources": _price_sources(snap)}


def _price_sources(snap: price_snapshot.PriceSnapshot) -> list[dict[str, object]]:
    counts: dict[tuple[str, str, str, str], int] = {}
    for r in snap.rows:
        for t in price_snapshot.PRICE_TERMS:
            if getattr(r, t) is not None:
                d = r.detail(t)
                counts[(d.source, d.as_of, t, d.basis)] = counts.get((d.source, d.as_of, t, d.basis), 0) + 1
    rows = [{"source": s, "as_of": a, "date": str(price_snapshot.describe_date(a)), "term": t, "basis": b,
             "prices": n} for (s, a, t, b), n in counts.items()]
    return sorted(rows, key=lambda x: (-price_snapshot.date_rank(str(x["as_of"])), str(x["source"]),
                                       price_snapshot.PRICE_TERMS.index(str(x["term"]))))


def cmd_catalog(ctx: CliContext, args: argparse.Namespace) -> int:
    if args.action == "update":
        return _update(ctx, args)
    wanted = args.provider or price_snapshot.providers()
    rows = [_summary(p) for p in wanted]
    if ctx.json:
        emit_json({"providers": rows, "warning": stale_warning([str(r["oldest"]) for r in rows])})
        return EXIT_OK
    table(["PROVIDER", "PRICES", "REGIONS", "PRICES FROM", "REFRESHED", "FILES"],
          [(r["provider"], r["rows"], ", ".join(r["regions"]),  # type: ignore[arg-type]
            f"{r['oldest']}" + (f" … {r['as_of']}" if r["as_of"] != r["oldest"] else "")
            + (" (old)" if r["stale"] else ""),
            r["cache_as_of"] or "never", "; ".join(str(x) for x in (r["bundled"], r["cache"]) if x))
           for r in rows])
    print("\nwhere the prices come from:")
    table(["PROVIDER", "TERM", "PRICES", "DATE", "SOURCE"],
          [(r["provider"], src["term"] + (f" ({src['basis']})" if src["basis"] else ""), src["prices"],
            src["date"], src["source"]) for r in rows for src in r["price_sources"]])  # type: ignore[union-attr]
    print_warning(stale_warning([str(r["oldest"]) for r in rows]))
    return EXIT_OK


def _update(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.providers.price_update import update

    def progress(line: str) -> None:
        if not ctx.json:
            print(line, flush=True)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    results = update(ctx.accounts.entries, args.provider, args.region, _urls(args.price_list_url),
                     timeout=args.timeout, progress=progress)
    failed = [r for r in results if not r.ok]
    if ctx.json:
        emit_json({"results": [r.to_json() for r in results]})
    else:
        for r in results:
            if r.skipped:
                print(f"{r.provider}: skipped ({r.skipped})")
            elif r.ok:
                print(f"{r.provider}: {r.rows} prices as of {r.as_of} ({', '.join(r.regions)}) → {r.path}")
            else:
                err(f"{r.provider}: not refreshed: {r.error}")
        if failed:
            err("the other prices stay as they were; shown prices keep their own date")
    return EXIT_PROVIDER if failed else EXIT_OK
