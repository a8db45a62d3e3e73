"""A short-lived record of the last full listing, so ``status --max-age N`` can answer without the clouds.

``status`` always shows the store (launches, instances, spend); what it asks the clouds for is
the reconcile (which instances exist now) and the leftovers.  After a listing of every profile
without an error, :func:`remember` writes ``listing-cache.json`` beside the store: when it was
taken, the profiles it covered (their settings, hashed), the leftovers it found, and a
fingerprint of the store's instances table.  :func:`recall` gives those leftovers back only when
the caller accepts the age, the profiles are the same, and nothing wrote an instance since
(a launch, a ``down``, another reconcile — the GUI's refresh included — all change the
fingerprint).  Then no plugin, keyring or cloud SDK is loaded at all.

What a recalled answer can miss: changes made outside this app (a machine's guard ending it, a
spot reclaim, the console) within the accepted age.  That is why the default age is 0 (always
ask) and a caller opts in with ``--max-age``.

Threading: plain file I/O; the write is atomic (temporary file + rename).  Never raises for a
missing, old or damaged file: that is a miss.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Iterable

from workbench.core.domain.models import Profile, Resource
from workbench.core.store.database import Store

log = logging.getLogger("workbench.listing_cache")
FILE_NAME = "listing-cache.json"
VERSION = 1


def _path(store: Store) -> Path:
    return store.path.parent / FILE_NAME


def _profiles_key(profiles: Iterable[Profile]) -> str:
    """A digest of the profiles and their settings (no secrets live in a Profile)."""
    parts = sorted(repr((p.name, p.provider, p.region, p.endpoint_url, sorted(p.settings.items())))
                   for p in profiles)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def fingerprint(store: Store) -> list[float]:
    """(rows, newest write) of the instances table: changes whenever anything writes an instance."""
    rows, newest = store.instances_version()
    return [float(rows), newest]


def remember(store: Store, profiles: Iterable[Profile], leftovers: Iterable[Resource],
             now: float | None = None) -> None:
    """Record a listing of ``profiles`` that had no error (call it after the store was reconciled)."""
    entry = {"version": VERSION, "listed_at": time.time() if now is None else now,
             "profiles": _profiles_key(profiles), "fingerprint": fingerprint(store),
             "leftovers": [r.to_json() for r in leftovers]}
    target = _path(store)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".listing-", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entry, f)
        os.replace(tmp, target)
    except OSError as exc:  # a cache that cannot be written is only a slower next status
        log.info("listing cache not written: %s", exc)


def forget(store: Store) -> None:
    """Drop the record (the next ``status`` asks the clouds whatever its ``--max-age``)."""
    try:
        _path(store).unlink(missing_ok=True)
    except OSError:
        pass


def recall(store: Store, profiles: Iterable[Profile], max_age_s: float,
           now: float | None = None) -> tuple[float, list[Resource]] | None:
    """(listed_at, leftovers) of the last listing when it is still good for this caller, else None."""
    if max_age_s <= 0:
        return None
    try:
        entry = json.loads(_path(store).read_text(encoding="utf-8"))
        if entry.get("version") != VERSION:
            return None
        listed_at = float(entry["listed_at"])
        age = (time.time() if now is None else now) - listed_at
        if not 0 <= age <= max_age_s or entry["profiles"] != _profiles_key(profiles):
            return None
        if entry["fingerprint"] != fingerprint(store):
            return None
        leftovers = [Resource(provider=r["provider"], profile=r["profile"], resource_id=r["resource_id"],
                              kind=r["kind"], region=r["region"], launch_id=r.get("launch_id"),
                              extra=r.get("extra") or {}) for r in entry["leftovers"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return listed_at, leftovers
