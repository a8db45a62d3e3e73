"""The one reader (and writer) of price snapshots: GPU machine shapes and their published prices per region.

Where they live
    ``resources/catalog/<provider>.csv`` ships with the app (the file's stem is the provider id:
    ``aws.csv``, ``azure.csv``, ``alibaba.csv`` …).  ``workbench catalog update`` writes fresher copies
    of the same layout to the user's price cache (:func:`cache_dir`); :func:`load` merges both, the
    row with the newer ``as_of`` winning per (region, instance type).  A new cloud only adds a CSV:
    nothing here (nor in the planner or the no-account catalog) knows a provider.

The layout (one header line; lines starting with ``#`` are comments and say where the figures come from)
    ========================  ==========================================================================
    instance_type             the provider's name of the machine shape (``p3.16xlarge``,
                              ``Standard_NC24s_v3``, ``ecs.gn6v-c8g1.16xlarge``)
    gpu_model                 canonical GPU name (``V100``, ``A100`` …; see ``core.domain.gpus``)
    gpu_count                 GPUs per machine (whole number)
    gpu_memory_gb             memory per GPU, nominal GB
    vcpus, memory_gb          the machine's vCPUs and RAM (GB)
    network_gbps              network bandwidth, Gbit/s (empty: unknown)
    rdma                      ``true`` when the shape has RDMA / InfiniBand / EFA
    region                    the provider's region code (``us-east-1``, ``eastus``, ``cn-beijing``)
    currency                  ISO code of every price on the row (``USD``, ``CNY``); default USD
    on_demand                 pay-as-you-go price per machine-hour
    spot                      a typical spot / preemptible price per hour (it moves; live data replaces it)
    reserved_1y, reserved_3y  the effective hourly price of a 1- / 3-year reservation (no upfront, or the
                              upfront fee spread over the term), as the provider publishes it
    savings_plan_1y/3y        the effective hourly price under a 1- / 3-year savings plan (AWS EC2
                              Instance Savings Plans, Azure savings plan for compute), where published
    as_of                     ISO date the prices were read from the public price list; ``<=2026-07-05``
                              when the source gives only an upper bound ("on or before"); ``unknown``
    source                    where they were read (``AWS Price List offer file``, ``Azure Retail Prices
                              API`` …)
    <term>_as_of,             per price, where it differs from the row's: its own date, source and basis
    <term>_source,            (``all upfront, effective hourly``, ``average``, an ``ESTIMATED`` figure),
    <term>_basis              for every term above; empty: the row's ``as_of`` / ``source``, no basis
    ========================  ==========================================================================

A price's date orders it against another of the same term (:func:`date_rank`): an exact date beats an
upper bound of the same day, any date beats ``unknown``; :func:`merge` keeps, per term, the newest.

Required columns: ``instance_type, gpu_count, vcpus, memory_gb, region, as_of``; the others may be
left out of a file or left empty on a row (None: not published / not known).  Older layouts are still
read: ``size`` for ``instance_type``, ``efa`` for ``rdma``, and ``<term>_usd`` / ``<term>_cny`` price
columns (the suffix names the currency).

Threading: :func:`load` keeps parsed files in a cache keyed by path and modification time, guarded by a
lock; rows and snapshots are immutable, safe to share between threads.

Failure rules: a bundled file that is missing or malformed raises PluginError naming ``file:line`` (a
broken install); a malformed file in the user's cache is logged and ignored (a cache never stops the
app); :func:`write` raises ConfigError when the cache folder cannot be written.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, PluginError
from workbench.core.domain.models import PRICE_TERMS, Offer, PriceDetail, Prices
from workbench.core.domain.phrase import N_, Phrase, phrase

log = logging.getLogger("workbench.prices")

DETAIL_FIELDS = ("as_of", "source", "basis")
COLUMNS = ("instance_type", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb", "network_gbps",
           "rdma", "region", "currency", *PRICE_TERMS, "as_of", "source",
           *(f"{t}_{f}" for t in PRICE_TERMS for f in DETAIL_FIELDS))
REQUIRED = ("instance_type", "gpu_count", "vcpus", "memory_gb", "region", "as_of")
#: a date known only as an upper bound ("on or before"), and no date at all
UPPER_BOUND, UNKNOWN_DATE = "<=", "unknown"
#: the bases a bundled price can have beyond its term (translated where shown)
BASIS_ALL_UPFRONT = N_("all upfront, effective hourly")
BASIS_SPOT_AVERAGE = N_("average at one time")
BASIS_ESTIMATED = N_("ESTIMATED: on-demand × a typical discount")
_ALIASES = {"size": "instance_type", "efa": "rdma"}
#: shown prices older than this many days carry a "prices from <date>" warning
STALE_AFTER_DAYS = 90
#: the label of offers priced from a snapshot when no account was asked
BUNDLED_LABEL = N_("bundled snapshot")
CACHED_LABEL = N_("price cache")
#: ``Offer.extra`` key marking a cloud's small CPU machine (a catalog row with gpu_count 0: the controller's types,
#: issue 33); the offer query shows such offers only to a job that asks for no GPU (``OfferQuery.cpu_machines``)
CPU_ONLY = "cpu_only"


@dataclass(frozen=True)
class PriceRow:
    """One machine shape in one region with its published prices (see the module doc for the columns)."""

    instance_type: str
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    network_gbps: float | None
    rdma: bool
    region: str
    currency: str
    on_demand: float | None
    spot: float | None
    reserved_1y: float | None
    reserved_3y: float | None
    savings_plan_1y: float | None
    savings_plan_3y: float | None
    as_of: str
    source: str = ""
    origin: str = "bundled"  # "bundled" (ships with the app) or "cache" (written by `catalog update`)
    details: Mapping[str, PriceDetail] = field(default_factory=dict)  # term → where its price comes from

    def detail(self, term: str) -> PriceDetail:
        """The source, date and basis of ``term``'s price (the row's where it names none of its own)."""
        own = self.details.get(term) or PriceDetail()
        return PriceDetail(own.source or self.source, own.as_of or self.as_of, own.basis)

    def prices(self, source: str | None = None) -> Prices:
        """The row's prices as an offer carries them (``source`` overrides the label); each price that has a
        source, date or basis of its own keeps it (``Prices.detail``)."""
        details = {t: self.detail(t) for t in PRICE_TERMS if getattr(self, t) is not None and t in self.details}
        return Prices(on_demand=self.on_demand, spot=self.spot, reserved_1y=self.reserved_1y,
                      reserved_3y=self.reserved_3y, savings_plan_1y=self.savings_plan_1y,
                      savings_plan_3y=self.savings_plan_3y, currency=self.currency,
                      source=source if source is not None else self.label, as_of=self.as_of, details=details)

    @property
    def label(self) -> str:
        """"bundled snapshot" or "price cache" (where the app read the row, for the price source)."""
        return CACHED_LABEL if self.origin == "cache" else BUNDLED_LABEL

    def offer(self, provider: str, *, available: bool = True, note: str | None = None,
              source: str | None = None, extra: dict | None = None) -> Offer:
        """An Offer of this shape priced from the row (``extra`` gets ``price_origin`` and ``price_list``)."""
        cpu = {CPU_ONLY: True} if self.gpu_count == 0 else {}  # the controller's small CPU types
        more = {"price_origin": self.origin, "price_list": self.source, **cpu, **(extra or {})}
        return Offer(provider=provider, region=self.region, instance_type=self.instance_type,
                     gpu_model=self.gpu_model, gpu_count=self.gpu_count, gpu_memory_gb=self.gpu_memory_gb,
                     vcpus=self.vcpus, memory_gb=self.memory_gb, prices=self.prices(source),
                     network_gbps=self.network_gbps, rdma=self.rdma, available=available,
                     availability_note=note, extra=more)

    def to_record(self) -> dict[str, str]:
        """The row as CSV values in :data:`COLUMNS` order (for :func:`write`)."""
        def num(v: float | int | None) -> str:
            return "" if v is None else f"{v:.12g}" if isinstance(v, float) else str(v)

        return {"instance_type": self.instance_type, "gpu_model": self.gpu_model or "",
                "gpu_count": str(self.gpu_count), "gpu_memory_gb": num(self.gpu_memory_gb),
                "vcpus": str(self.vcpus), "memory_gb": num(self.memory_gb), "network_gbps": num(self.network_gbps),
                "rdma": "true" if self.rdma else "false", "region": self.region, "currency": self.currency,
                **{t: num(getattr(self, t)) for t in PRICE_TERMS}, "as_of": self.as_of, "source": self.source,
                **{f"{t}_{f}": getattr(self.details[t], f) if t in self.details else ""
                   for t in PRICE_TERMS for f in DETAIL_FIELDS}}


class PriceSnapshot:
    """The rows of one provider, by (region, instance type); read-only after construction."""

    def __init__(self, rows: Sequence[PriceRow], path: Path | None = None, provider: str = "") -> None:
        self.path = path
        self.provider = provider
        self.rows = list(rows)
        self._by_key = {(r.region, r.instance_type.lower()): r for r in self.rows}
        self._any: dict[str, PriceRow] = {}
        for r in self.rows:
            self._any.setdefault(r.instance_type.lower(), r)

    def __len__(self) -> int:
        return len(self.rows)

    def find(self, region: str, instance_type: str) -> PriceRow | None:
        """The row of ``instance_type`` (case-insensitive) in ``region``, or None."""
        return self._by_key.get((region, instance_type.lower()))

    def region(self, region: str) -> list[PriceRow]:
        return [r for r in self.rows if r.region == region]

    def shape(self, instance_type: str) -> PriceRow | None:
        """Any row of ``instance_type`` (a shape is the same in every region)."""
        return self._any.get(instance_type.lower())

    def regions(self) -> list[str]:
        return sorted({r.region for r in self.rows})

    @property
    def as_of(self) -> str:
        """The newest date of any row ('' for an empty snapshot)."""
        return max((r.as_of for r in self.rows), key=date_rank, default="")

    @property
    def oldest(self) -> str:
        """The oldest known date of any row ('' when none is dated)."""
        return min((r.as_of for r in self.rows if date_of(r.as_of)), key=date_rank, default="")

    def sources(self) -> list[tuple[str, str]]:
        """Every (source, date) a price of this snapshot comes from, newest first."""
        found = {(d.source, d.as_of) for r in self.rows for t in PRICE_TERMS if getattr(r, t) is not None
                 for d in [r.detail(t)]}
        return sorted(found, key=lambda sd: (date_rank(sd[1]), sd[0]), reverse=True)


# -- parsing ----------------------------------------------------------------------------------------
def _opt_float(raw: str | None) -> float | None:
    raw = (raw or "").strip()
    return float(raw) if raw else None


def _normalise_header(header: list[str], where: str) -> tuple[list[str], dict[str, str]]:
    """Column names in the current layout, plus {price column: currency} for ``<term>_<cur>`` columns."""
    names, currency_of = [], {}
    for raw in header:
        name = raw.strip().lower()
        name = _ALIASES.get(name, name)
        base, _, suffix = name.rpartition("_")
        if base in PRICE_TERMS and len(suffix) == 3 and suffix.isalpha():
            currency_of[base] = suffix.upper()
            name = base
        names.append(name)
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise PluginError(f"the price snapshot {where} lacks the column(s) {', '.join(missing)}",
                          hint="see the column list in workbench/core/providers/price_snapshot.py")
    return names, currency_of


def parse(text: str, path: Path | str, provider: str = "", origin: str = "bundled") -> PriceSnapshot:
    """Parse snapshot text (PluginError naming ``path:line`` for anything malformed)."""
    where = str(path)
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise PluginError(f"the price snapshot {where} is empty")
    names, currency_of = _normalise_header(next(csv.reader([lines[0][1]])), where)
    rows = []
    for lineno, line in lines[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(names):
            raise PluginError(f"{where}:{lineno}: expected {len(names)} values, found {len(values)}")
        v = {k: val.strip() for k, val in zip(names, values)}
        try:
            currency = (v.get("currency") or next(iter(set(currency_of.values())), "") or "USD").upper()
            rows.append(PriceRow(
                instance_type=v["instance_type"], gpu_model=v.get("gpu_model") or None,
                gpu_count=int(v["gpu_count"] or 0), gpu_memory_gb=float(v.get("gpu_memory_gb") or 0),
                vcpus=int(v["vcpus"]), memory_gb=float(v["memory_gb"]),
                network_gbps=_opt_float(v.get("network_gbps")), rdma=(v.get("rdma") or "").lower() == "true",
                region=v["region"], currency=currency,
                **{t: _opt_float(v.get(t)) for t in PRICE_TERMS},  # type: ignore[arg-type]
                as_of=_checked_date(v["as_of"]), source=v.get("source", ""), origin=origin,
                details={t: PriceDetail(v.get(f"{t}_source", ""), _checked_date(v.get(f"{t}_as_of", ""), True),
                                        v.get(f"{t}_basis", ""))
                         for t in PRICE_TERMS if any(v.get(f"{t}_{f}") for f in DETAIL_FIELDS)}))
        except (ValueError, TypeError) as exc:
            raise PluginError(f"{where}:{lineno}: bad price snapshot row ({exc})") from None
        if not rows[-1].instance_type or not rows[-1].region:
            raise PluginError(f"{where}:{lineno}: a row needs an instance_type and a region")
    return PriceSnapshot(rows, Path(path), provider)


def read(path: Path, provider: str = "", origin: str = "bundled") -> PriceSnapshot:
    """Read and parse one file (PluginError when it cannot be read or is malformed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"the price snapshot {path} cannot be read: {exc.strerror or exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from None
    return parse(text, path, provider or path.stem, origin)


# -- where the files are -------------------------------------------------------------------------------
def bundled_dir() -> Path:
    return paths.resources_dir() / "catalog"


def cache_dir() -> Path:
    """The user's price cache (``<data>/prices``; not created here)."""
    return paths.price_cache_dir()


def bundled_path(provider: str) -> Path:
    return bundled_dir() / f"{provider}.csv"


def refreshed_path(provider: str) -> Path:
    """Where ``scripts/update_price_snapshots.py`` keeps a cloud's prices read from its public list: a source
    of the bundled catalog, merged in by ``scripts/build_catalog.py`` (the bundled files are generated)."""
    return bundled_dir() / "sources" / "refreshed" / f"{provider}.csv"


def cache_path(provider: str) -> Path:
    return cache_dir() / f"{provider}.csv"


def providers() -> list[str]:
    """Provider ids with a bundled or cached snapshot, sorted."""
    found = set()
    for folder in (bundled_dir(), cache_dir()):
        if folder.is_dir():
            found.update(p.stem for p in folder.glob("*.csv"))
    return sorted(found)


# -- loading with a cache --------------------------------------------------------------------------------
_lock = threading.Lock()
_parsed: dict[tuple[str, float, int], PriceSnapshot] = {}


def _cached_read(path: Path, provider: str, origin: str) -> PriceSnapshot:
    st = path.stat()
    key = (str(path), st.st_mtime, st.st_size)
    with _lock:
        hit = _parsed.get(key)
    if hit is None:
        hit = read(path, provider, origin)
        with _lock:
            for old in [k for k in _parsed if k[0] == key[0]]:
                del _parsed[old]
            _parsed[key] = hit
    return hit


def merge(*snapshots: PriceSnapshot) -> PriceSnapshot:
    """One snapshot of all rows (see :func:`merge_rows`)."""
    first = snapshots[0] if snapshots else None
    return PriceSnapshot(merge_rows(r for snap in snapshots for r in snap.rows), first.path if first else None,
                         first.provider if first else "")


def merge_rows(rows: Iterable[PriceRow]) -> list[PriceRow]:
    """Per (region, instance type) one row: each price the newest of its term (:func:`date_rank`; of two
    alike, the later row's), so an older price stays only where nothing newer gives that term, with its own
    date; a price of unknown date never replaces a dated one, it only fills a gap.  The shape, currency and
    row-level source are the newest row's."""
    groups: dict[tuple[str, str], list[PriceRow]] = {}
    for r in rows:
        groups.setdefault((r.region, r.instance_type.lower()), []).append(r)
    out = []
    for group in groups.values():
        newest = max(reversed(group), key=lambda r: date_rank(r.as_of))  # the first of the latest rows wins ties
        terms: dict[str, object] = {}
        details: dict[str, PriceDetail] = {}
        for t in PRICE_TERMS:
            have = [r for r in group if getattr(r, t) is not None and r.currency == newest.currency]
            if have:
                pick = max(reversed(have), key=lambda r: date_rank(r.detail(t).as_of))
                terms[t] = getattr(pick, t)
                if pick is not newest or t in pick.details:
                    details[t] = pick.detail(t)
            else:
                terms[t] = None
        out.append(dataclasses.replace(newest, **terms, details=details))  # type: ignore[arg-type]
    return out


def load(provider: str, path: Path | None = None, *, use_cache: bool = True) -> PriceSnapshot:
    """The snapshot of ``provider``: the bundled file merged with the user's cached copy (if any).

    ``path`` reads exactly that file instead.  A provider without a bundled file but with a cached one
    gets the cached one; with neither, PluginError.
    """
    if path is not None:
        return _cached_read(path, provider, "bundled")
    parts: list[PriceSnapshot] = []
    bundled = bundled_path(provider)
    if bundled.exists() or not use_cache:
        try:
            parts.append(_cached_read(bundled, provider, "bundled"))
        except FileNotFoundError:
            raise PluginError(f"the price snapshot {bundled} cannot be read: it is missing",
                              hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from None
    if use_cache:
        cached = cache_path(provider)
        try:
            if cached.is_file():
                parts.append(_cached_read(cached, provider, "cache"))
        except (PluginError, OSError) as exc:  # a cache never stops the app
            log.warning("ignoring the cached price list %s: %s", cached, getattr(exc, "message", exc))
    if not parts:
        raise PluginError(f"no price snapshot for provider {provider!r}",
                          hint=f"add resources/catalog/{provider}.csv or run `workbench catalog update`")
    return parts[0] if len(parts) == 1 else merge(*parts)


def offers(provider: str | None = None, folder: Path | None = None) -> list[Offer]:
    """Offers priced from the snapshots (every provider's, or one), for comparing without an account.

    ``folder`` reads every ``*.csv`` there instead of the bundled + cached ones; a file in it that does
    not parse is skipped and logged.  Prices carry the label "bundled snapshot" (or "price cache").
    """
    out: list[Offer] = []
    if folder is not None:
        for f in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
            if provider and f.stem != provider:
                continue
            try:
                out += [r.offer(f.stem) for r in _cached_read(f, f.stem, "bundled").rows]
            except (PluginError, OSError) as exc:
                log.warning("price snapshot %s skipped: %s", f, getattr(exc, "message", exc))
        return out
    for pid in [provider] if provider else providers():
        try:
            out += [r.offer(pid) for r in load(pid).rows]
        except PluginError as exc:
            log.warning("price snapshot of %s skipped: %s", pid, exc.message)
    return out


# -- dates and age ---------------------------------------------------------------------------------------
def _checked_date(raw: str, optional: bool = False) -> str:
    """``raw`` if it is a date this layout knows (ValueError otherwise; '' allowed when ``optional``)."""
    raw = (raw or "").strip()
    if (optional and not raw) or raw == UNKNOWN_DATE or date_of(raw) is not None:
        return raw
    raise ValueError(f"as_of {raw!r} is not a date (YYYY-MM-DD, <=YYYY-MM-DD or unknown)")


def date_of(as_of: str) -> datetime.date | None:
    """The day of ``as_of`` (an ISO date or timestamp, or ``<=`` one: its bound); None for ``unknown``."""
    text = (as_of or "").strip()
    if text.startswith(UPPER_BOUND):
        text = text[len(UPPER_BOUND):].strip()
    try:
        return datetime.date.fromisoformat(text[:10])
    except ValueError:
        return None


def date_rank(as_of: str) -> int:
    """What orders two dates of one price: unknown < on or before D < exactly D < any later day."""
    day = date_of(as_of)
    if day is None:
        return 0
    return day.toordinal() * 2 + (0 if as_of.strip().startswith(UPPER_BOUND) else 1)


def describe_date(as_of: str) -> Phrase:
    """The date as people read it: "2024-12-30", "on or before 2024-12-30", "date unknown"."""
    day = date_of(as_of)
    if day is None:
        return phrase("date unknown")
    if as_of.strip().startswith(UPPER_BOUND):
        return phrase("on or before {date}", date=day.isoformat())
    return phrase("{date}", date=(as_of or "").strip()[:10])


def age_days(as_of: str, today: datetime.date | None = None) -> int | None:
    """Days since ``as_of`` (an ISO date, a timestamp starting with one, or its upper bound: the least age);
    None when it is not a date."""
    day = date_of(as_of)
    if day is None:
        return None
    return ((today or datetime.date.today()) - day).days


def is_stale(as_of: str, today: datetime.date | None = None, days: int = STALE_AFTER_DAYS) -> bool:
    """True when prices of ``as_of`` are older than ``days`` (show "prices from <date>")."""
    age = age_days(as_of, today)
    return age is not None and age > days


# -- writing ---------------------------------------------------------------------------------------------
def render(rows: Iterable[PriceRow], comment: str = "") -> str:
    """CSV text in the current layout (rows in the given order), ``comment`` lines first (prefixed ``# ``)."""
    buf = io.StringIO()
    for line in comment.splitlines():
        buf.write(f"# {line}".rstrip() + "\n")
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(r.to_record())
    return buf.getvalue()


def write(path: Path, rows: Iterable[PriceRow], comment: str = "") -> Path:
    """Write ``rows`` to ``path`` atomically (ConfigError naming the folder when it cannot be written)."""
    text = render(rows, comment)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write the price list {path}: {exc.strerror or exc}",
                          hint=f"make {path.parent} writable, or set {paths.ENV_HOME} to a folder you own") from None
    return path
