"""The ``local`` fixture: a temp data dir and unique install id, swept of processes afterwards."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from .helpers import LocalSetup


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSetup]:
    setup = LocalSetup(data_dir=tmp_path / "data", install_id=f"test-{uuid.uuid4().hex[:10]}")
    try:
        yield setup
    finally:
        setup.sweep()
