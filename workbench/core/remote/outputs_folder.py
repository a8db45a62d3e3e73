"""Where a launch's outputs are on this computer (the Logs window, Instances ▸ Open outputs, ``download``).

* A job on this computer (Local) runs in its own working folder (the provider reports it as
  ``extra["workdir"]``): its outputs are there.
* A cloud job's outputs are downloaded into ``<job dir>/outputs`` (when the job ends, by on_finish,
  or on demand with ``workbench download`` / Logs ▸ Download results).

Plain functions; any thread.
"""

from __future__ import annotations

from pathlib import Path

from workbench.core import paths
from workbench.core.domain.models import Instance
from workbench.core.money.billing_status import on_this_computer


def outputs_folder(inst: Instance) -> Path:
    """The folder the outputs of ``inst``'s launch are (or will be) in; it may not exist yet for a cloud job."""
    if on_this_computer(inst):
        workdir = inst.extra.get("workdir")
        return Path(str(workdir)) if workdir else paths.job_dir(inst.launch_id)
    return paths.job_dir(inst.launch_id) / "outputs"
