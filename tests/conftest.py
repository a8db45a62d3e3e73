"""Makes tests/support importable from every test folder (shared helpers, no fixtures here)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
