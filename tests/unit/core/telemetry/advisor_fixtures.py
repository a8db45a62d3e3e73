"""Shared by the advisor's tests: the synthetic trace builders and the bundled offers."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
SYNTHETIC = ROOT / "tests" / "fixtures" / "advisor" / "synthetic"
RECORDED = ROOT / "tests" / "fixtures" / "advisor" / "recorded"
if str(SYNTHETIC) not in sys.path:
    sys.path.insert(0, str(SYNTHETIC))

import advisor_traces as traces  # noqa: E402,F401  (tests/fixtures/advisor/synthetic)


@lru_cache(maxsize=1)
def offers():
    from workbench.core.money.planner import snapshot_offers

    return tuple(snapshot_offers())
