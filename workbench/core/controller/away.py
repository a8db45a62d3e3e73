"""The app's side of the controller: what happened while it was away, and who relaunches now.

When the app (or ``workbench watch``) opens, :func:`catch_up` reads each profile's board: the attempts the
controller relaunched (imported into this store, so Instances, Spend and ``workbench attempts`` show them),
how each attempt ended and what it cost, the events since the app last looked (relaunched, gave up, guard
fired, finished) and the controller's heartbeat.  A heartbeat older than :data:`STALE_POLLS` polls (or none)
means the controller cannot be reached: the app says so and takes over (:func:`app_claims`): its own
recovery then relaunches the handed launches, still through the board's claims, so a controller that comes
back never relaunches the same attempt again.  While the controller answers, the app's recovery stands aside
for the launches it watches (they are the controller's to relaunch) and only imports what it did.

Threading: blocks on the boards' buckets; call from a worker.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from workbench.core import paths
from workbench.core.controller import handover
from workbench.core.controller.board import Board
from workbench.core.controller.claims import BoardClaims
from workbench.core.domain.errors import WorkbenchError
from workbench.core.lifecycle.relaunch_claims import StoreClaims, Ticket

log = logging.getLogger("workbench.controller")

STALE_POLLS = 3  # heartbeats missed before the controller counts as unreachable
MIN_STALE_S = 90.0
SEEN = "controller:seen:"  # store setting per profile: the time of the last event shown


@dataclass
class Away:
    """One profile's controller as the app finds it."""

    profile: str
    heartbeat: dict[str, Any] | None
    reachable: bool
    handed: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)  # new since the app last looked
    attempts: list[dict[str, Any]] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)  # attempt launch ids this store did not know
    error: str | None = None

    @property
    def took_over(self) -> bool:
        """The app relaunches the handed launches itself (the controller does not answer)."""
        return bool(self.handed) and not self.reachable

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "reachable": self.reachable, "took_over": self.took_over,
                "heartbeat": self.heartbeat, "handed": self.handed, "events": self.events,
                "attempts": self.attempts, "imported": self.imported, "error": self.error}


def is_reachable(heartbeat: dict[str, Any] | None, now: float) -> bool:
    if not heartbeat or heartbeat.get("ended"):
        return False
    poll = float(heartbeat.get("poll_s") or 30.0)
    return now - float(heartbeat.get("ts") or 0.0) <= max(STALE_POLLS * poll, MIN_STALE_S)


def handed_by_profile(store: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for root, profile in handover.handed(store).items():
        out.setdefault(profile, []).append(root)
    return out


def catch_up(accounts: Any, now: float | None = None, boards: dict[str, Board] | None = None,
             mark_seen: bool = True) -> list[Away]:
    """Read every profile's board that has launches handed to a controller (see the module doc)."""
    now = time.time() if now is None else now
    store = accounts.store
    out = []
    for profile, roots in sorted(handed_by_profile(store).items()):
        try:
            board = (boards or {}).get(profile) or handover.board_of(accounts, profile)
            got = board.get("controller.json")
            beat = got[0] if got else None
            imported = handover.import_outcomes(store, board, roots)
            rows = handover.import_attempts(store, board, roots)
            handover.import_logs(store, board, roots)
            seen = float(store.get_setting(SEEN + profile) or 0.0)
            events = [e for _, e in board.records("events") if float(e.get("ts") or 0) > seen]
            events.sort(key=lambda e: float(e.get("ts") or 0))
            if events and mark_seen:
                store.set_setting(SEEN + profile, repr(max(float(e.get("ts") or 0) for e in events)))
            out.append(Away(profile, beat, is_reachable(beat, now), roots, events, rows, imported))
        except WorkbenchError as exc:
            log.warning("the controller's board of %s cannot be read: %s", profile, exc.message)
            out.append(Away(profile, None, False, roots, error=exc.message))
    return out


class _StandAside(StoreClaims):
    """Claims of a launch the controller watches while it answers: the app never relaunches it."""

    def __init__(self) -> None:
        pass

    def take(self, root_id: str, attempt: int, detail: str) -> Ticket | None:
        return None


def app_claims(accounts: Any, retry_s: float = 300.0, clock: Callable[[], float] = time.time,
               reachable: Callable[[str], bool] | None = None, boards: dict[str, Board] | None = None
               ) -> Callable[[Any], StoreClaims | None]:
    """The ``claims`` of the app's :class:`~workbench.core.lifecycle.recovery.RecoveryEngine` (module doc).

    ``reachable(profile)`` says whether that profile's controller answers (default: read its heartbeat).
    """
    boards = dict(boards or {})
    owner = f"app:{paths.install_id()}"

    def answers(profile: str) -> bool:
        board = boards.get(profile) or handover.board_of(accounts, profile)
        boards[profile] = board
        got = board.get("controller.json")
        return is_reachable(got[0] if got else None, clock())

    def of(root: Any) -> StoreClaims | None:
        profile = handover.handed(accounts.store).get(root.launch_id)
        if profile is None:
            return None
        try:
            if (reachable or answers)(profile):
                return _StandAside()
            board = boards.get(profile) or handover.board_of(accounts, profile)
            boards[profile] = board
        except WorkbenchError as exc:
            log.warning("the controller's board of %s cannot be read (%s): recovery waits", profile, exc.message)
            return _StandAside()
        return BoardClaims(board, owner, retry_s, clock)

    return of
