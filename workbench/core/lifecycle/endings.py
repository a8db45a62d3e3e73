"""How the app marks a launch it ended on purpose, so recovery never relaunches it.

Teardown (the user's Terminate or `down`, a guard, on_finish) calls :func:`note_teardown`
before it ends anything; :mod:`.recovery` reads the mark.  Kept apart from both so that
neither imports the other.  Threading: any thread (one store write per launch).
"""

from __future__ import annotations

import logging
import time
from typing import Iterable

from workbench.core.domain.errors import WorkbenchError
from workbench.core.store.database import Store
from workbench.core.store.money import GuardRecord

log = logging.getLogger("workbench.recovery")

GUARD = "recovery"
ENDED_BY_APP = "ended_by_app"  # a guard-event key: the app (user, guards, on_finish) tore the launch down


def note_teardown(store: Store, launch_ids: Iterable[str], why: str = "torn down by the app") -> None:
    """Mark ``launch_ids`` as ended on purpose (a failure to write is logged: the teardown matters more)."""
    now = time.time()
    for lid in launch_ids:
        try:
            store.claim_event(GuardRecord(lid, GUARD, ENDED_BY_APP, now, "info", why))
        except WorkbenchError as exc:
            log.warning("could not note the teardown of %s: %s", lid, exc)


def ended_by_app(store: Store, launch_id: str) -> bool:
    return store.has_event(launch_id, GUARD, ENDED_BY_APP)
