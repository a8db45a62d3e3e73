"""Hold rules of the ARM test server: park a matching request until the test releases it.

:class:`Holding` is mixed into :class:`~tests.azure_arm.server.ArmServer`; its :meth:`Holding.handle`
is the server's entry point and hands every request to ``ArmServer._handle`` (after a hold, when
a rule matches).  What a hold guarantees is written in tests/support/holds.py.
"""

from __future__ import annotations

import re
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from holds import Hold  # tests/support (on sys.path under pytest)
except ImportError:  # pragma: no cover - imported from outside the test tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from holds import Hold


@dataclass(frozen=True)
class ArmRequest:
    """A request parked by a hold rule (what ``Hold.wait_arrived`` returns)."""

    method: str
    path: str
    sub: str | None
    client_id: str | None


@dataclass
class HoldRule:
    """Park requests whose lower-cased path matches ``path`` (a regular expression); see :meth:`Holding.hold`."""

    path: str
    method: str | None
    sub: str | None
    hold: Hold

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method != method:
            return False
        if self.sub and f"/subscriptions/{self.sub}".lower() not in path.lower():
            return False
        return re.search(self.path, path.lower()) is not None


class Holding:
    """The server's hold rules (``self.holds``, guarded by ``self.state.lock``)."""

    holds: list[HoldRule]
    state: Any

    def hold(self, path: str, *, method: str | None = None, sub: str | None = None, count: int = 1,
             timeout_s: float = 60.0) -> Hold:
        """Park the next ``count`` requests matching ``path`` (a regular expression on the lower-cased
        path; ``method`` and ``sub`` narrow it) until the test calls ``release()`` on the result.

        A released request is then handled as usual (fault rules included).  A parked request waits
        on its connection's thread; other requests are answered meanwhile.  ``wait_arrived`` returns
        :class:`ArmRequest` s.  Example, a teardown while the VM's PUT is inside the server::

            hold = arm.hold(r"/providers/microsoft.compute/virtualmachines/[^/]+$", method="PUT",
                            sub=account.subscription)
            ... start the launch; (req,) = hold.wait_arrived(); tear down; hold.release() ...
        """
        rule = HoldRule(path, method, sub, Hold(count, timeout_s, what=f"{method or ''} {path}".strip()))
        with self.state.lock:
            self.holds.append(rule)
        return rule.hold

    def release_holds(self, sub: str | None = None) -> None:
        """Drop the hold rules of ``sub`` (all when None); their parked requests go on."""
        with self.state.lock:
            gone = [h for h in self.holds if sub is None or h.sub == sub]
            self.holds = [h for h in self.holds if h not in gone]
        for rule in gone:
            rule.hold.release()

    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> Any:
        """The server's entry point: hold the request when a rule says so, then ``_handle`` it."""
        path = urllib.parse.urlsplit(raw_path).path
        with self.state.lock:
            rule = next((h for h in self.holds if h.matches(method, path) and h.hold.claim()), None)
        if rule is None:
            return self._handle(method, raw_path, headers, body)  # type: ignore[attr-defined]
        segs = [s for s in path.split("/") if s]
        auth = headers.get("Authorization") or ""
        client = self.state.client_for(auth[7:]) if auth.startswith("Bearer ") else None
        sub = segs[1] if len(segs) > 1 and segs[0].lower() == "subscriptions" else None
        rule.hold.park(ArmRequest(method, path, sub, client.client_id if client else None))
        try:
            return self._handle(method, raw_path, headers, body)  # type: ignore[attr-defined]
        finally:
            rule.hold.answered()
