"""Who relaunches attempt N of a launch: the claim recovery takes before it relaunches.

:class:`StoreClaims` claims through the local store's guard events (processes on this computer: the GUI and
``workbench watch``): one claim per attempt and retry period.  A launch handed to the account's controller is
claimed on the board instead (:class:`workbench.core.controller.claims.BoardClaims`, the same interface), which
the app and the controller both see.  :class:`~workbench.core.lifecycle.recovery.RecoveryEngine` asks its
``claims`` callable which one a launch uses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from workbench.core.lifecycle.endings import GUARD
from workbench.core.store.database import Store
from workbench.core.store.money import GuardRecord


@dataclass
class Ticket:
    """A won claim: relaunch attempt ``attempt`` of ``root_id``; ``abandoned`` is a dead relaunch's launch id."""

    root_id: str
    attempt: int
    etag: str | None = None
    abandoned: str | None = None
    record: dict[str, Any] = field(default_factory=dict)


class StoreClaims:
    """Claims in the local store (processes on this computer): one per attempt and retry period."""

    def __init__(self, store: Store, retry_s: float, clock: Callable[[], float] = time.time) -> None:
        self.store, self.retry_s, self.clock = store, retry_s, clock

    def take(self, root_id: str, attempt: int, detail: str) -> Ticket | None:
        now = self.clock()
        bucket = int(now // self.retry_s) if self.retry_s > 0 else int(now)
        if not self.store.claim_event(GuardRecord(root_id, GUARD, f"relaunch:{attempt}:{bucket}", now, "info",
                                                  detail)):
            return None
        return Ticket(root_id, attempt)

    def planned(self, ticket: Ticket, launch_id: str) -> None:
        """The launch id about to be used (a board claim records it for a takeover)."""

    def abandoned(self, root_id: str, attempt: int) -> bool:
        """Whether the relaunch of ``attempt`` was claimed by a process that died half way (may be taken over)."""
        return False

    def launched(self, ticket: Ticket, record: dict[str, Any]) -> None:
        """The relaunch worked (``record``: the new attempt's launch, attempt and spec)."""

    def failed(self, ticket: Ticket, why: str) -> None:
        """The relaunch failed; the next period may try again."""
