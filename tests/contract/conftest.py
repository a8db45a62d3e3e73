"""Parametrise the contract suite over every provider harness."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from workbench.core.providers.contract import Provider

from .harness import HARNESSES, ProviderHarness


@pytest.fixture(params=[pytest.param(e, id=e.id, marks=list(e.marks)) for e in HARNESSES])
def harness(request: pytest.FixtureRequest) -> Iterator[ProviderHarness]:
    made = request.param.factory()
    try:
        yield made
    finally:
        made.cleanup()


@pytest.fixture
def provider(harness: ProviderHarness, tmp_path: Path) -> Provider:
    return harness.make_provider(tmp_path)
