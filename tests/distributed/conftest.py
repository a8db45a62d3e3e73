"""The multi-node tests with the real engines: Debian's CPU torch (gloo) and OpenMPI with mpi4py.

They need ``python3-torch``, ``openmpi-bin`` and ``python3-mpi4py`` (about 160 MB to download and
660 MB installed). ``make test`` (and ``make test-distributed``, this folder alone) installs them and
sets WORKBENCH_DISTRIBUTED=1; a bare ``pytest`` without that variable does not collect this folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

#: Debian's python3-torch and python3-mpi4py exist for Debian's own Python only
TORCH_PYTHON = "/usr/bin/python3"

collect_ignore_glob = [] if os.environ.get("WORKBENCH_DISTRIBUTED") == "1" else ["test_*.py"]


@pytest.fixture(scope="session", autouse=True)
def engines() -> None:
    """Fail (never skip) with the install line when an engine is missing."""
    missing = []
    for module in ("torch", "mpi4py"):
        if subprocess.run([TORCH_PYTHON, "-c", f"import {module}"], capture_output=True).returncode != 0:
            missing.append({"torch": "python3-torch", "mpi4py": "python3-mpi4py"}[module])
    if not shutil.which("mpirun"):
        missing.append("openmpi-bin")
    if missing:
        pytest.fail("the distributed tests need: apt-get install --no-install-recommends " + " ".join(missing)
                    + "  (make test installs them)")
