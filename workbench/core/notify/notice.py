"""What a user is told while away: one :class:`Notice` per event worth a message, and the error a channel
gives when it refused one.

A notice is built from a recovery or guard event (or anything with a kind or an action, a message and a
launch id) by :func:`notice_from_event`, or directly by :func:`notice_for`.  Plain Python, any thread;
the text is English (the controller that sends most notices has no language setting).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from workbench.core.domain.errors import WorkbenchError

#: the events a channel can be told of, in the order a settings page lists them
EVENT_KINDS = ("finished", "failed", "relaunched", "gave_up", "budget")

TITLES = {
    "finished": "Job finished",
    "failed": "Job failed",
    "relaunched": "Job relaunched",
    "gave_up": "Recovery gave up",
    "budget": "Budget reached",
}

#: the first word of every chat message: a DingTalk robot's keyword rule can ask for it
TAG = "[Workbench]"

#: guards whose firing is "budget reached"
_BUDGET_GUARDS = ("budget", "monthly_budget")


class DeliveryError(WorkbenchError):
    """A notification channel refused or could not take a message (a webhook's error code, a mail server's
    refusal).  The message names the channel and its host, never the webhook's URL or any secret."""

    exit_code = 3
    kind = "delivery"


@dataclass(frozen=True)
class Notice:
    """One message to send: ``kind`` is one of :data:`EVENT_KINDS`; ``ts`` POSIX seconds."""

    kind: str
    title: str
    text: str
    launch_id: str = ""
    ts: float = 0.0
    profile: str = ""

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown notice kind {self.kind!r} (one of {', '.join(EVENT_KINDS)})")

    def to_json(self) -> dict[str, object]:
        """The generic webhook's body: ``{event, title, text, launch_id, ts, profile}``."""
        return {"event": self.kind, "title": self.title, "text": self.text, "launch_id": self.launch_id,
                "ts": self.ts, "profile": self.profile}

    def body_text(self) -> str:
        """The message as plain text: the title, the text, then where it happened."""
        lines = [f"{TAG} {self.title}", self.text]
        where = [f"launch {self.launch_id}" if self.launch_id else "", f"profile {self.profile}" if self.profile else ""]
        where_text = ", ".join(w for w in where if w)
        if where_text:
            lines.append(where_text)
        lines.append(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.ts)))
        return "\n".join(line for line in lines if line)


def notice_for(kind: str, message: str, launch_id: str = "", profile: str = "", ts: float | None = None,
               title: str | None = None) -> Notice:
    """A notice of ``kind`` (ValueError for an unknown one); the title defaults to the kind's words and the
    launch id ("Job finished: l-123")."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown notice kind {kind!r} (one of {', '.join(EVENT_KINDS)})")
    if title is None:
        title = f"{TITLES[kind]}: {launch_id}" if launch_id else TITLES[kind]
    return Notice(kind=kind, title=title, text=message, launch_id=launch_id,
                  ts=time.time() if ts is None else float(ts), profile=profile)


def kind_of(event: Any) -> str | None:
    """The notice kind an event-like object stands for, or None when it is nothing to tell.

    Reads attributes only: ``kind`` (when it is already one of :data:`EVENT_KINDS`), else a recovery
    event's ``action`` (relaunched; gave_up; not_recovered → failed) or a guard event's ``guard`` and
    ``action`` (a budget guard ending or stopping a launch, or its 100 % warning → budget; the finished
    guard → finished, or failed when its level is not info, i.e. a non-zero exit).
    """
    kind = getattr(event, "kind", None)
    if isinstance(kind, str) and kind in EVENT_KINDS:
        return kind
    action = getattr(event, "action", None)
    guard = getattr(event, "guard", None)
    level = getattr(event, "level", "info")
    if guard is None:
        return {"relaunched": "relaunched", "gave_up": "gave_up", "not_recovered": "failed"}.get(str(action))
    if guard in _BUDGET_GUARDS:
        if action in ("teardown", "stop") or (action == "warn" and level == "error"):
            return "budget"
        return None
    if guard == "finished" and action in ("pending", "notice"):
        return "finished" if level == "info" else "failed"
    return None


def notice_from_event(event: Any, profile: str = "") -> Notice | None:
    """A notice for a recovery / guard event (see :func:`kind_of`), or None when it is nothing to tell."""
    kind = kind_of(event)
    if kind is None:
        return None
    return notice_for(kind, str(getattr(event, "message", "") or ""), str(getattr(event, "launch_id", "") or ""),
                      profile=profile or str(getattr(event, "profile", "") or ""), ts=getattr(event, "ts", None))
