"""Per-minute means of a GPU's receive and transmit rates (PCIe from dmon, NVLink from its counters).

Both streams arrive as blocks of (GPU index, rx, tx) rates; the hub folds them into the minute they
arrived in and reads one mean per GPU and minute when it stores that minute.  PCIe readings are
samples (each weighs one); NVLink rates cover intervals of different lengths (each weighs its
seconds, so the mean is the megabytes moved over the time covered).  NaN readings are left out.

Threading: not thread-safe; the hub calls it under its own lock.
"""

from __future__ import annotations

import math

import numpy as np

MINUTE = 60.0


class LinkMinutes:
    """Per minute and GPU index, weighted sums of rx and tx rates and their weights."""

    def __init__(self) -> None:
        self._acc: dict[float, np.ndarray] = {}  # minute → (4, gpus): rx sum, rx weight, tx sum, tx weight
        self.latest: dict[int, tuple[float, float]] = {}  # GPU index → (rx, tx) MB/s of the newest reading

    def _add(self, index: np.ndarray, rx: np.ndarray, tx: np.ndarray, ts: float,
             weights: np.ndarray | None = None) -> None:
        if not len(index):
            return
        minute = ts // MINUTE * MINUTE
        n = int(index.max()) + 1
        acc = self._acc.get(minute)
        if acc is None or acc.shape[1] < n:
            grown = np.zeros((4, n))
            if acc is not None:
                grown[:, : acc.shape[1]] = acc
            acc = self._acc[minute] = grown
        for row, v in ((0, rx), (2, tx)):
            seen = np.isfinite(v)
            w = None if weights is None else weights[seen]
            acc[row, :n] += np.bincount(index[seen], v[seen] if w is None else (v[seen] * w), n)
            acc[row + 1, :n] += np.bincount(index[seen], w, n)
        for i, r, t in zip(index.tolist(), rx.tolist(), tx.tolist()):
            self.latest[i] = (r, t)

    def means(self, minute: float, index: int) -> tuple[float, float]:
        """(rx, tx) MB/s mean of one GPU in one minute; NaN when nothing was reported."""
        acc = self._acc.get(minute)
        if acc is None or index >= acc.shape[1]:
            return math.nan, math.nan
        rx_w, tx_w = acc[1, index], acc[3, index]
        return (acc[0, index] / rx_w if rx_w else math.nan, acc[2, index] / tx_w if tx_w else math.nan)

    def drop_until(self, minute: float) -> None:
        """Forget the minutes up to and including ``minute`` (stored already)."""
        for m in [m for m in self._acc if m <= minute]:
            del self._acc[m]
