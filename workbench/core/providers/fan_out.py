"""Calls side by side: a cloud plugin's per-region calls, and the profiles asked for offers at once.

A provider asks its regions in parallel when it lists machines, leftovers or tears down a launch
spread over regions.  :class:`RegionPool` is the one pool per provider (threads started on first
use, shut down when the provider is collected); :func:`by_region` groups a provider's own items.
:func:`each` is the same for one call's worth of work (:mod:`workbench.core.offers` asks every
profile for offers with it).

Threading: ``map`` may be called from any thread; it blocks until every region answered.
Failure rules: every region finishes before the first error is raised, so no call is left
running behind the caller's back; an error that is not a WorkbenchError goes through the
plugin's own ``wrap`` (its SDK-error mapping).
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence, TypeVar

from workbench.core.domain.errors import WorkbenchError

T = TypeVar("T")
R = TypeVar("R")
MAX_WORKERS = 8


class RegionPool:
    """One provider's threads for per-region calls (``name`` prefixes the threads' names)."""

    def __init__(self, name: str, max_workers: int = MAX_WORKERS) -> None:
        self._name, self._max_workers = name, max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def map(self, regions: Sequence[str], fn: Callable[[str], T],
            wrap: Callable[[Exception], WorkbenchError]) -> list[T]:
        """``fn(region)`` for every region, in order; one region runs on the calling thread."""
        if len(regions) <= 1:
            return [fn(r) for r in regions]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix=self._name)
                weakref.finalize(self, self._pool.shutdown, wait=False)
            pool = self._pool
        futures = [pool.submit(fn, r) for r in regions]
        results, first = [], None
        for fut in futures:
            try:
                results.append(fut.result())
            except Exception as exc:  # noqa: BLE001 - wait for all, then raise the first
                first = first or exc
        if first is not None:
            raise first if isinstance(first, WorkbenchError) else wrap(first)
        return results


def each(items: Sequence[T], fn: Callable[[T], R], name: str, max_workers: int = MAX_WORKERS
         ) -> list[R | BaseException]:
    """``fn(item)`` for every item side by side (one item runs on the calling thread), in order: each
    result, or the exception it raised.  Every item finishes before this returns (none left running
    behind the caller's back); ``name`` prefixes the threads' names.  For one call's worth of fan-out
    (the profiles asked for offers); a provider's regions use its :class:`RegionPool`."""

    def settle(item: T) -> R | BaseException:
        try:
            return fn(item)
        except Exception as exc:  # noqa: BLE001 - handed back to the caller, who decides
            return exc

    if len(items) <= 1:
        return [settle(i) for i in items]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(items)), thread_name_prefix=name) as pool:
        return list(pool.map(settle, items))


def by_region(items: Iterable[Any], provider_id: str) -> dict[str, list[Any]]:
    """A provider's own instances or resources (``provider == provider_id``), grouped by ``region``."""
    out: dict[str, list[Any]] = {}
    for item in items:
        if item.provider == provider_id:
            out.setdefault(item.region, []).append(item)
    return out
