"""Who relaunches attempt N: a claim both the app and the controller see, on the board.

Recovery used to claim a relaunch through a row in the local store, which only processes sharing that store
see.  The app and the controller have different stores, so for a launch handed to the controller the claim
is an object on the board, ``claims/<root id>/attempt-<n>.json``, created with a conditional write
(S3 ``If-None-Match: *``, atomic in the service): of two processes that notice the same ended attempt at
once, exactly one creates it and relaunches; the other stands aside and later reads the outcome.

A claim's life::

    claimed   (owner, planned launch id, time)     written by the winner before anything is launched
    launched  (+ the new attempt's launch record)  the relaunch worked: everyone imports the attempt
    failed    (+ why)                              no offer anywhere: claimable again after ``retry_s``

A claim stuck in ``claimed`` (its owner died mid-relaunch) is taken over after ``lease_s`` — at once by its
own owner restarting (the controller's next start) — with ``If-Match`` on the ETag read, so again only one
wins; the taker first removes whatever the dead relaunch made (by its planned launch id, from the cloud's
tags), so nothing is left billing.

The local :class:`StoreClaims` keeps the old behaviour for launches no controller watches.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from workbench.core.controller.board import Board
from workbench.core.lifecycle.relaunch_claims import StoreClaims, Ticket

CLAIMED, LAUNCHED, FAILED = "claimed", "launched", "failed"
LEASE_S = 900.0  # a relaunch (teardown verified + launch) that takes longer than this is taken as dead


def claim_key(root_id: str, attempt: int) -> str:
    return f"claims/{root_id}/attempt-{attempt}.json"


class BoardClaims(StoreClaims):
    """Claims on the board (see the module doc).  ``owner`` names this process's side ("app:<host>",
    "controller:<launch id>")."""

    def __init__(self, board: Board, owner: str, retry_s: float, clock: Callable[[], float] = time.time,
                 lease_s: float = LEASE_S) -> None:
        self.board, self.owner, self.retry_s, self.clock, self.lease_s = board, owner, retry_s, clock, lease_s

    def _fresh(self, root_id: str, attempt: int, detail: str) -> dict[str, Any]:
        return {"root_id": root_id, "attempt": attempt, "owner": self.owner, "state": CLAIMED, "ts": self.clock(),
                "detail": detail, "launch_id": None}

    def take(self, root_id: str, attempt: int, detail: str) -> Ticket | None:
        key = claim_key(root_id, attempt)
        mine = self._fresh(root_id, attempt, detail)
        etag = self.board.put(key, mine, if_absent=True)
        if etag is not None:
            return Ticket(root_id, attempt, etag, record=mine)
        got = self.board.get(key)
        if got is None:  # deleted in between: one more try, still atomic
            etag = self.board.put(key, mine, if_absent=True)
            return Ticket(root_id, attempt, etag, record=mine) if etag is not None else None
        old, old_etag = got
        age = self.clock() - float(old.get("ts") or 0)
        state = old.get("state")
        if state == LAUNCHED:
            return None
        if state == CLAIMED and not (old.get("owner") == self.owner or age >= self.lease_s):
            return None
        if state == FAILED and age < self.retry_s:
            return None
        etag = self.board.put(key, mine, if_match=old_etag)
        if etag is None:
            return None  # someone else took it over first
        abandoned = old.get("launch_id") if state == CLAIMED else None
        return Ticket(root_id, attempt, etag, abandoned=abandoned, record=mine)

    def abandoned(self, root_id: str, attempt: int) -> bool:
        got = self.board.get(claim_key(root_id, attempt))
        if got is None:
            return False
        old = got[0]
        age = self.clock() - float(old.get("ts") or 0)
        return old.get("state") == CLAIMED and (old.get("owner") == self.owner or age >= self.lease_s)

    def _update(self, ticket: Ticket, **fields: Any) -> None:
        record = {**ticket.record, **fields, "ts": self.clock()}
        etag = self.board.put(claim_key(ticket.root_id, ticket.attempt), record, if_match=ticket.etag)
        if etag is not None:
            ticket.etag, ticket.record = etag, record

    def planned(self, ticket: Ticket, launch_id: str) -> None:
        self._update(ticket, launch_id=launch_id)

    def launched(self, ticket: Ticket, record: dict[str, Any]) -> None:
        self._update(ticket, state=LAUNCHED, launch_id=record.get("launch_id"), result=record)

    def failed(self, ticket: Ticket, why: str) -> None:
        self._update(ticket, state=FAILED, why=why)

    def outcomes(self, root_id: str) -> list[dict[str, Any]]:
        """Every claim of ``root_id`` (attempt order)."""
        rows = [rec for _, rec in self.board.records(f"claims/{root_id}")]
        return sorted(rows, key=lambda r: int(r.get("attempt") or 0))
