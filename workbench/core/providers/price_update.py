"""Refreshing the price catalog from the clouds' public price lists (``workbench catalog update``).

For every provider whose class supports :class:`~workbench.core.providers.contract.SupportsPublicPrices`
(AWS: the Price List offer files; Azure: the Retail Prices API; no account, no SDK needed), this
reads the public list for the provider's regions and writes the rows, with today's date, to the
user's price cache (:func:`price_snapshot.cache_path`): every price shown afterwards (offers without
an account, the planner, the plugins' fallback) uses them.  ``scripts/update_price_snapshots.py``
runs the same code with ``target="bundled"``: it writes ``resources/catalog/sources/refreshed/<cloud>.csv``,
a source that ``scripts/build_catalog.py`` merges into the generated ``resources/catalog/*.csv``.

A provider that fails keeps its previous prices and reports why; the others are still refreshed.

Blocking (network; minutes for AWS's large files): run it on a worker.  Progress lines go to
``progress``; ``cancelled`` stops between files.  Only WorkbenchErrors are reported per provider.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from workbench.core.domain.errors import ConfigError, NotFoundError, PluginError, WorkbenchError
from workbench.core.providers import price_snapshot
from workbench.core.providers.contract import SupportsPublicPrices
from workbench.core.providers.price_fetch import Cancelled, Fetcher
from workbench.core.providers.registry import ProviderEntry

log = logging.getLogger("workbench.prices")


@dataclass(frozen=True)
class UpdateResult:
    """What one provider's refresh did: rows written to ``path`` as of ``as_of``, or the error."""

    provider: str
    rows: int = 0
    regions: tuple[str, ...] = ()
    as_of: str = ""
    path: str = ""
    error: WorkbenchError | None = None
    skipped: str = ""  # why nothing was asked (none of the regions named belongs to this cloud)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, object]:
        return {"provider": self.provider, "ok": self.ok, "rows": self.rows, "regions": list(self.regions),
                "as_of": self.as_of, "path": self.path, "error": self.error.to_json() if self.error else None,
                "skipped": self.skipped or None}


def updatable(entries: Mapping[str, ProviderEntry]) -> dict[str, type[SupportsPublicPrices]]:
    """Provider id → class, for every discovered provider that can read a public price list (SDK or not)."""
    out = {}
    for pid, entry in sorted(entries.items()):
        cls = entry.cls or entry.loaded
        if cls is not None and issubclass(cls, SupportsPublicPrices):
            out[pid] = cls
    return out


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def update(entries: Mapping[str, ProviderEntry], providers: Sequence[str] | None = None,
           regions: Sequence[str] | None = None, urls: Mapping[str, str] | None = None, *,
           target: str = "cache", timeout: float = 60.0, progress: Callable[[str], None] | None = None,
           cancelled: Callable[[], bool] | None = None, today: str | None = None) -> list[UpdateResult]:
    """Refresh ``providers`` (default: all that can) and write their rows; one result per provider.

    ``regions``: only these (default: each provider's own list plus the regions already in its
    snapshot); each provider takes the ones it knows (all of them when only one provider is asked).
    ``urls``: provider → base URL of its price list (a mirror or a test server).
    ``target``: "cache" (the user's price cache) or "bundled" (``resources/catalog``, for the script).
    """
    if target not in ("cache", "bundled"):
        raise ConfigError(f"unknown target {target!r}")
    able = updatable(entries)
    wanted = list(providers) if providers else list(able)
    for pid in wanted:
        if pid not in able:
            known = ", ".join(able) or "none"
            raise NotFoundError(f"provider {pid!r} has no public price list the app can read",
                                hint=f"providers with one: {known}")
    say = progress or (lambda _text: None)
    results = []
    for pid in wanted:
        cls = able[pid]
        fetch = Fetcher((urls or {}).get(pid), timeout=timeout, progress=say, cancelled=cancelled)
        try:
            results.append(_update_one(pid, cls, regions, fetch, target, today or _today(), say,
                                       take_all=len(wanted) == 1))
        except Cancelled:
            raise
        except WorkbenchError as exc:
            log.warning("price update of %s failed: %s", pid, exc.message)
            say(f"{pid}: failed: {exc.message}")
            results.append(UpdateResult(pid, error=exc))
        except Exception as exc:  # noqa: BLE001 - a plugin bug must not stop the other clouds
            log.exception("price update of %s failed", pid)
            results.append(UpdateResult(pid, error=PluginError(f"reading the {pid} price list failed: "
                                                                f"{type(exc).__name__}: {exc}")))
    return results


def _update_one(pid: str, cls: type[SupportsPublicPrices], regions: Sequence[str] | None, fetch: Fetcher,
                target: str, today: str, say: Callable[[str], None], take_all: bool = False) -> UpdateResult:
    try:
        known = price_snapshot.load(pid, use_cache=target == "cache")
    except PluginError:
        known = price_snapshot.PriceSnapshot([], None, pid)
    refreshed = price_snapshot.refreshed_path(pid)
    before = price_snapshot.read(refreshed, pid).rows if target == "bundled" and refreshed.exists() else []
    mine = sorted(set(cls.public_price_regions) | set(known.regions()))
    if regions:
        chosen = list(regions) if take_all else [r for r in regions if r in mine]
        if not chosen:
            say(f"{pid}: skipped (none of {', '.join(regions)} is one of its regions)")
            return UpdateResult(pid, skipped=f"none of the regions named is a {pid} region")
    else:
        chosen = mine
    say(f"{pid}: reading the public price list for {', '.join(chosen)}")
    rows = cls.public_prices(chosen, known, fetch)
    if not rows:
        raise PluginError(f"the {pid} price list had no GPU prices for {', '.join(chosen)}",
                          hint="check the region names; prices stay as they were")
    rows = [replace(r, as_of=r.as_of or today, source=r.source or cls.public_price_source) for r in rows]
    path = price_snapshot.cache_path(pid) if target == "cache" else refreshed
    comment = _comment(pid, cls, path, target, today)
    if target == "bundled":
        # a source of the bundled catalog (scripts/build_catalog.py merges it, newest price first): keep the
        # rows of regions not refreshed this time, so the file never shrinks by accident
        fresh = {(r.region, r.instance_type.lower()) for r in rows}
        rows = rows + [r for r in before if (r.region, r.instance_type.lower()) not in fresh
                       and r.region not in chosen]
    price_snapshot.write(path, rows, comment)
    say(f"{pid}: {len(rows)} prices as of {today} written to {path}")
    return UpdateResult(pid, len(rows), tuple(chosen), today, str(path))


def _comment(pid: str, cls: type[SupportsPublicPrices], path: Path, target: str, today: str) -> str:
    head = _leading_comment(path) if target == "bundled" else ""
    if head:
        return head
    return (f"{pid} GPU prices read on {today} from {cls.public_price_source or 'the public price list'} "
            f"by `workbench catalog update`.\nColumns: see workbench/core/providers/price_snapshot.py.")


def _leading_comment(path: Path) -> str:
    """The ``#`` lines at the top of an existing file (the bundled files document their sources there)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    head = []
    for line in lines:
        if not line.startswith("#"):
            break
        head.append(line[1:].strip())
    return "\n".join(head)
