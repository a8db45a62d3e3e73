"""``workbench storage buckets|upload|check`` and the storage part of ``workbench launch``.

``launch`` checks a spec's mounts before it asks for confirmation (bucket exists, access, region,
the copy mounts' size against the disk), prints any transfer-cost warning, and after the "yes"
uploads local-folder sources (progress on stderr, resumable) before anything is launched.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.jobspec import load_spec
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.lifecycle.launch_storage import check_launch_storage, upload_launch_storage
from workbench.core.storage.checks import StoragePlan
from workbench.core.storage.contract import SupportsObjectStorage
from workbench.core.storage.resolve import storage_provider
from workbench.core.storage.upload import UploadProgress, upload_folder
from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_OK, EXIT_PROVIDER, emit_json, err, table

class _ProgressLine:
    """One self-overwriting stderr line per upload, at most five times a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.shown = 0.0

    def __call__(self, p: UploadProgress) -> None:
        now = time.monotonic()
        last = p.files_done >= p.files_total
        if not last and now - self.shown < 0.2:
            return
        self.shown = now
        pct = 100.0 * p.bytes_done / p.bytes_total if p.bytes_total else 100.0
        skipped = f", {p.skipped_files} unchanged" if p.skipped_files else ""
        sys.stderr.write(f"\r{self.label}: {min(pct, 100.0):5.1f}% ({p.files_done}/{p.files_total} files, "
                         f"{p.bytes_done / 1e6:,.1f} of {p.bytes_total / 1e6:,.1f} MB{skipped})")
        if last:
            sys.stderr.write("\n")
        sys.stderr.flush()


def describe_plan(plan: StoragePlan) -> list[str]:
    lines = []
    for m in plan.mounts:
        size = f", {m.bytes / 1e9:,.2f} GB in {m.objects} files" if m.bytes is not None else ""
        up = f" (uploaded first from {m.upload_from})" if m.upload_from else ""
        where = f" [{m.region}]" if m.region else ""
        lines.append(f"  storage {m.mount.mode.value} {m.mount.path} <- {m.uri}{where}{size}{up}")
    return lines


def upload_for_launch(ctx: CliContext, lp: Any, plan: StoragePlan) -> tuple[Any, list]:
    """Upload local-folder sources (a progress line each on stderr); the plan with the spec that names their buckets."""
    lines = {m.index: _ProgressLine(f"uploading {m.upload_from} -> {m.uri}") for m in plan.uploads}
    return upload_launch_storage(ctx.accounts, lp, plan, progress=lambda m, p: lines[m.index](p))


def cmd_storage(ctx: CliContext, args: argparse.Namespace) -> int:
    if args.action == "buckets":
        return _buckets(ctx, args)
    if args.action == "upload":
        return _upload(ctx, args)
    return _check(ctx, args)


def _buckets(ctx: CliContext, args: argparse.Namespace) -> int:
    if args.profile:
        profiles = [ctx.accounts.profile(args.profile)]
    else:
        profiles = [p for p in ctx.accounts.profiles() if p.provider != "local"]
    rows, errors = [], []
    for p in profiles:
        prov = ctx.accounts.provider(p)
        if not isinstance(prov, SupportsObjectStorage):
            if args.profile:
                raise ConfigError(f"profile {p.name!r} ({p.provider}) has no object storage")
            continue
        try:
            rows += [(p.name, uri) for uri in prov.storage_buckets()]
        except Exception as exc:  # noqa: BLE001 - shown, the others are still listed
            errors.append((p.name, getattr(exc, "message", str(exc))))
    if ctx.json:
        emit_json({"buckets": [{"profile": n, "uri": u} for n, u in rows],
                   "errors": [{"profile": n, "message": m} for n, m in errors]})
    else:
        table(["PROFILE", "BUCKET"], rows)
        for n, m in errors:
            err(f"warning: profile {n}: {m}")
    return 3 if errors and not rows else EXIT_OK


def _upload(ctx: CliContext, args: argparse.Namespace) -> int:
    folder = Path(args.folder).expanduser()
    if not folder.is_dir():
        raise NotFoundError(f"{folder} is not a folder")
    try:
        uri = parse_storage_uri(args.uri)
    except ValueError as exc:
        raise ConfigError(f"{args.uri}: {exc}") from None
    if uri.is_local:
        raise ConfigError("the destination must be a bucket address (s3://, https://….blob.core.windows.net/…, oss://)")
    prefer = ctx.accounts.profile(args.profile) if args.profile else None
    _, prov = storage_provider(ctx.accounts, uri, prefer)
    prov.storage_probe(uri)
    show = None if ctx.json else _ProgressLine(f"uploading {folder} -> {uri}")
    report = upload_folder(prov, folder, uri, paths.data_dir() / "storage" / "uploads", show)
    if ctx.json:
        emit_json(report.to_json())
    else:
        print(f"{report.uploaded} files uploaded ({report.bytes_uploaded / 1e6:,.1f} MB), {report.skipped} unchanged "
              f"skipped, in {report.seconds:.1f} s" + (f"; {report.aborted_incomplete} unfinished upload(s) of an "
                                                         "earlier try removed" if report.aborted_incomplete else ""))
    return EXIT_OK


def _check(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.lifecycle.launcher import choose_offer as plan

    spec = load_spec(args.spec)
    lp = plan(ctx.accounts, spec, provider=args.provider, profile=args.profile, region=args.region)
    result = check_launch_storage(ctx.accounts, lp)
    if ctx.json:
        emit_json({"launch": lp.to_json(), "storage": result.to_json()})
    else:
        print(f"on {lp.profile.provider}/{lp.profile.name} {lp.choice.offer.region} {lp.choice.offer.instance_type}:")
        for line in describe_plan(result) or ["  no storage mounts"]:
            print(line)
        for w in result.warnings:
            err(f"warning: {w}")
        print("storage: ok")
    return EXIT_OK
