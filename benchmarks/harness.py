"""The rules every `make bench` row follows, in one place.

* A flow that fails raises :class:`BenchmarkFailed` (use :func:`check`): a broken launch, a
  teardown that leaves something, a window that never paints, a subprocess that exits non-zero.
  The table then shows the row as FAILED and `make bench` exits 1; it never prints "met".
* Value and baseline are measured as interleaved samples in the same run (:func:`interleave`:
  A B, B A, A B … so neither side always runs first on a machine whose load drifts), and each is
  shown as min / median / max (:class:`Stats`).
* "met" only when the **median** clears the target (:func:`verdict`).

Threading: plain functions, called from the benchmark's main thread.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable


class BenchmarkFailed(RuntimeError):
    """A step of a measured flow did not do what it must; the row cannot be judged."""


def check(ok: object, what: str) -> None:
    """Raise BenchmarkFailed(what) unless ``ok``: the flow did not do what the row measures."""
    if not ok:
        raise BenchmarkFailed(what)


@dataclass(frozen=True)
class Stats:
    """Samples of one side of a row (seconds, bytes, a fraction … as the row says)."""

    samples: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples:
            raise BenchmarkFailed("no samples were taken")

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    def show(self, fmt: Callable[[float], str]) -> str:
        """'min / median / max' with each number formatted by ``fmt`` (one number when n == 1)."""
        if len(self.samples) == 1:
            return fmt(self.samples[0])
        return f"{fmt(self.min)} / {fmt(self.median)} / {fmt(self.max)}"


def interleave(value: Callable[[], float], baseline: Callable[[], float], n: int = 5) -> tuple[Stats, Stats]:
    """``n`` samples of each, alternating (round k runs value first when k is even, baseline first
    when odd).  Each callable takes one sample and raises when its flow failed."""
    check(n >= 1, "interleave needs at least one sample")
    a: list[float] = []
    b: list[float] = []
    for k in range(n):
        order = ((value, a), (baseline, b)) if k % 2 == 0 else ((baseline, b), (value, a))
        for fn, into in order:
            into.append(float(fn()))
    return Stats(tuple(a)), Stats(tuple(b))


def repeat(sample: Callable[[], float], n: int = 5) -> Stats:
    """``n`` samples of one side (a row without a baseline, or one whose baseline comes along)."""
    return Stats(tuple(float(sample()) for _ in range(n)))


def seconds(fn: Callable[[], object]) -> Callable[[], float]:
    """A sampler that times one call of ``fn`` (which raises when its flow failed)."""

    def sample() -> float:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    return sample


def verdict(median: float, target: float, why_not: str, *, at_least: bool = False) -> str:
    """"met" when the median is at most ``target`` (at least, with ``at_least``), else why not."""
    ok = median >= target if at_least else median <= target
    return "met" if ok else f"NOT met — {why_not}"
