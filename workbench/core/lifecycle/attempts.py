"""Which attempt of a recovered launch a launch id is, from its stored spec (light: views label rows with it).

Kept apart from :mod:`workbench.core.lifecycle.recovery` (job specs, storage, the catalog) so that
the instances table can label its rows without loading the recovery engine before the first paint.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_ATTEMPT_ID = re.compile(r"^(.*)-a\d+-[0-9a-f]{4}$")


def attempt_of(launch_id: str, spec: Mapping[str, Any] | None) -> tuple[int, str] | None:
    """(attempt number, first launch id) of a relaunched attempt, from its stored spec; None for a first launch."""
    try:
        n = int(((spec or {}).get("env") or {}).get("WORKBENCH_ATTEMPT") or 0)
    except (TypeError, ValueError):
        return None
    if n < 2:
        return None
    m = _ATTEMPT_ID.match(launch_id)
    return n, (m.group(1) if m else launch_id)
