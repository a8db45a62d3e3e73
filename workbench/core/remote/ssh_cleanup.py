"""Ended machines leave the app's ssh config and known_hosts, whichever teardown ended them.

``down``, Stop all billing, Terminate, a guard, a recovery's sweep and a job's own on_finish all end
machines through :func:`workbench.core.lifecycle.teardown.teardown`; :func:`install` registers
:func:`forget_machines` as its listener, so each of them cleans up.  The CLI and the GUI install it
when they open their accounts (the lifecycle package itself does not know this one).

Threading: called on the teardown's thread; the files are rewritten under their own locks.
"""

from __future__ import annotations

import logging
from pathlib import Path

from workbench.core.lifecycle.teardown import TeardownReport, on_machines_ended
from workbench.core.remote.hostkeys import KnownHosts, host_alias, known_hosts_path
from workbench.core.remote.sshconfig import update

log = logging.getLogger("workbench.remote.ssh")


def forget_machines(data_dir: Path, report: TeardownReport) -> None:
    """Machines verified gone leave the ssh config and known_hosts; a launch keeps its entries while
    anything of it remains.  Does nothing for a data folder that never had an ssh config."""
    left = {getattr(x, "launch_id", None) for x in report.remaining}
    gone = [i for i in report.terminated if i.launch_id not in left and i.host]
    if not gone or not (data_dir / "ssh").is_dir():
        return
    update(data_dir, remove_launches=sorted({i.launch_id for i in gone}))
    known = KnownHosts(known_hosts_path(data_dir))
    for inst in gone:
        known.forget(host_alias(inst.provider, inst.instance_id))
    log.info("removed %d ended machine(s) from the ssh config", len(gone))


def install() -> None:
    """Make every teardown of this process clean up the ssh files (idempotent)."""
    on_machines_ended(forget_machines)
