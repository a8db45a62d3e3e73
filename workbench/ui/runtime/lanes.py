"""The TaskRunner's lanes, by name: which background calls take turns with which.

A lane is one worker thread; the calls given to it run one after another, in the order given.
Everything without a lane runs on the shared read pool, side by side.  Pass these, never a bare
string (a test checks): a misspelt lane is a new thread, and two calls meant to take turns would
race without a sound.

A lane orders only its own calls, in this process.  A launch and a teardown of one profile are in
different lanes, and a CLI process may run either beside the app: what orders them is core's
:mod:`~workbench.core.lifecycle.launch_gate` (a teardown waits for the launches in flight, a launch
waits for a teardown), across threads and processes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lane:
    """A named lane (see the module doc); compare and hash by name."""

    name: str

    def __str__(self) -> str:
        return self.name


#: Terminate, Stop, Stop all billing, a cancelled launch's teardown: one teardown at a time
TEARDOWN = Lane("teardown")
#: the app's guard polls, "keep running" and extensions: an extension never races a poll deciding on the old deadline
GUARDS = Lane("guards")
#: recovery's polls (relaunching interrupted launches): one at a time
RECOVERY = Lane("recovery")
#: reading the clouds' public price lists into the catalog: one update at a time
PRICES = Lane("prices")
#: "while you were away": reading the controllers' boards after a refresh, one read at a time
AWAY = Lane("away")
#: an account's controller: its install started on its machine, its first heartbeat awaited (minutes)
CONTROLLER = Lane("controller")
#: a launch's ports forwarded to this computer: opened and stopped in the order asked (Instances ▸ Open port…)
PORTS = Lane("ports")


def profile_lane(profile: str) -> Lane:
    """The lane of one profile's launches and account changes (save, remove, an MFA code), in the order the user
    gave them (profile names are unique across providers)."""
    return Lane(f"profile:{profile}")
