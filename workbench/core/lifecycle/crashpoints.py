"""Named crash points for the crash-survival tests.

``crash_point("launch:recorded")`` kills the current process with SIGKILL
when the environment variable ``WORKBENCH_CRASH_AT`` names that point, so
tests can prove that a process dying at any step of a launch leaves
something reconcile finds and teardown removes.  Costs one dict lookup when
unset; never set outside tests.
"""

from __future__ import annotations

import os
import signal

ENV = "WORKBENCH_CRASH_AT"


def crash_point(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
