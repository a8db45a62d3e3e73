"""Hold rules: a test server keeps a matching request waiting until the test lets it go.

A race test must run the race it names.  Sleeping ("slow RunInstances down by 1.5 s and hope the
teardown lands inside") only makes the race likely; a hold makes it certain: the request that is
raced is parked inside the test server, the test does the racing thing while it is parked, then
releases it and watches what follows.  Both test clouds have them:

* AWS (moto behind our fault wrapper, tests/support/aws_moto.py)::

      hold = moto.faults.hold("RunInstances")            # the next RunInstances waits in the server
      launch = wbhome.popen("launch", spec, "--provider", "aws", "--yes")
      call = hold.wait_arrived()                         # an AwsCall: the launch is inside run_instances
      ... run the teardown (`down`, teardown(), a second process) to its end ...
      hold.release()                                     # moto now carries the request out
      hold.wait_answered()                               # the machine exists in moto; the answer is on its way
      ...

* Azure (our ARM-protocol server, tests/support/azure_arm/)::

      hold = arm.hold(r"/virtualmachines/", method="PUT", sub=account.subscription)
      ... start the launch; hold.wait_arrived(); race; hold.release(); hold.wait_answered() ...

What a hold guarantees, and what it does not:

* ``wait_arrived(n)`` returns once ``n`` matching requests have reached the server and are parked
  (the client has sent them and waits for the answer); nothing of them has been done yet.  It
  returns the held requests (``AwsCall`` / ``ArmRequest``) in arrival order, so a test can check
  which process sent what (``call.access_key``, ``call.params``; ``req.path``, ``req.client_id``).
* ``release()`` lets every held request and every later match go on (the rule is spent);
  ``release(1)`` lets the oldest parked one go and keeps holding the others (order races: let A
  through, check, then B).  A released request then meets the rest of its rule as usual: an AWS
  rule with ``error=``/``respond=``/``latency_s=``/``after=`` still applies after the hold, so
  "hold, then answer Throttling" or "hold, let moto act, then lose the answer" are one rule.
* ``wait_answered(n)`` returns once ``n`` held requests have been carried out by the server
  (moto's / the ARM state changed) and their answers are being sent.  It does not tell that the
  client has read the answer: wait on the client's own evidence for that (a store row, a file,
  its next request: ``moto.faults.find(...)`` / ``arm.seen``).
* Which requests match: the rule's filters (AWS: ``operation``, ``service``, ``when`` predicate on
  the call; ARM: a regular expression on the path, ``method``, ``sub``) and ``count`` — only the
  first ``count`` matches are held (default 1); later ones pass untouched.
* Nothing hangs for ever: a parked request goes on by itself after ``timeout_s`` (default 60 s;
  ``hold.timed_out`` is then True, and the test should fail on it), and resetting the server
  (``moto.reset()`` / ``faults.clear()``, ``arm.clear_faults()``) releases every hold.
* Holding blocks one server thread per parked request; both servers answer each connection on
  its own thread, so other requests (the teardown's) go through meanwhile.

Threading: the server's request threads call :meth:`Hold.park` / :meth:`Hold.answered`; the test
thread calls the ``wait_*`` and ``release`` methods.  Everything is guarded by one condition.
"""

from __future__ import annotations

import threading
from typing import Any


class HoldTimeout(AssertionError):
    """A ``wait_*`` gave up: the request never came (or was never answered) in time."""


class Hold:
    """One hold rule's state (see the module doc).  ``count``: how many matching requests to hold."""

    def __init__(self, count: int = 1, timeout_s: float = 60.0, what: str = "request") -> None:
        self.count = count
        self.timeout_s = timeout_s
        self.what = what
        self.arrived: list[Any] = []  # the parked requests, in order of arrival
        self.timed_out = False
        self._answered = 0
        self._released = 0  # tickets below this number may go on
        self._cond = threading.Condition()

    # -- the server's side -------------------------------------------------------------------
    def claim(self) -> bool:
        """True when one more request may be held (called under the server's rule lock)."""
        with self._cond:
            if len(self.arrived) >= self.count:
                return False
            self.arrived.append(None)  # the slot; park() fills it
            return True

    def park(self, request: Any) -> None:
        """Block the calling server thread until released (or ``timeout_s`` passed)."""
        with self._cond:
            ticket = self.arrived.index(None)
            self.arrived[ticket] = request
            self._cond.notify_all()
            if not self._cond.wait_for(lambda: ticket < self._released, timeout=self.timeout_s):
                self.timed_out = True

    def answered(self) -> None:
        """The server has carried the request out; its answer is being sent."""
        with self._cond:
            self._answered += 1
            self._cond.notify_all()

    # -- the test's side ---------------------------------------------------------------------
    def wait_arrived(self, n: int = 1, timeout: float = 30.0) -> list[Any]:
        """The first ``n`` held requests, once they are all parked in the server."""
        with self._cond:
            ok = self._cond.wait_for(lambda: sum(r is not None for r in self.arrived[:n]) >= n, timeout=timeout)
            if not ok:
                raise HoldTimeout(f"{n} {self.what}(s) to hold never arrived within {timeout:g} s "
                                  f"({sum(r is not None for r in self.arrived)} did)")
            return list(self.arrived[:n])

    def release(self, n: int | None = None) -> None:
        """Let the oldest ``n`` parked requests go on (all of them, and every later match, by default)."""
        with self._cond:
            self._released = 10**9 if n is None else self._released + n
            if n is None:
                self.count = len(self.arrived)  # spent: hold nothing more
            self._cond.notify_all()

    def wait_answered(self, n: int = 1, timeout: float = 30.0) -> None:
        """Until ``n`` held requests were carried out by the server (their answers are on the way)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._answered >= n, timeout=timeout):
                raise HoldTimeout(f"{n} held {self.what}(s) not answered within {timeout:g} s "
                                  f"({self._answered} were; released: {self._released > 0})")

    @property
    def held(self) -> int:
        """How many requests are parked right now."""
        with self._cond:
            return sum(1 for i, r in enumerate(self.arrived) if r is not None and i >= self._released)

