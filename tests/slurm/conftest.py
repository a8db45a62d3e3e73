"""Fixtures for the Slurm tests: one real cluster per test process, a login node per test.

``slurm_cluster`` is tests/support/slurm.py's cluster (munged, slurmctld, three slurmd with stand-in
GPUs), started once per test process (each pytest-xdist worker its own, on ports of its own) under a
scratch folder in /tmp (the second user's commands must reach it; pytest's tmp_path is 0700) and stopped
at the end.  After every test each job is cancelled (``cancel_all``), so the next test finds all GPUs free.

``slurm_login`` is a real loopback sshd (tests/support/sshd.py) whose sessions reach the cluster
(SLURM_CONF, the stand-in nvidia-smi), authorizing ``slurm_app_key``: by default the key of an app data
folder ``slurm_data_dir`` (``ensure_keypair``, as tests/remote/conftest.py does).  A test module with an
app of its own overrides ``slurm_data_dir`` (its app's data folder) or ``slurm_app_key`` (any public key line).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

import slurm as slurm_support


@pytest.fixture(scope="session")
def slurm_cluster():
    why = slurm_support.available()
    if why:
        pytest.fail(f"the Slurm tests need a real cluster: {why}")
    root = Path(tempfile.mkdtemp(prefix="wb-slurm-", dir="/tmp"))
    cluster = slurm_support.start_cluster(root)
    yield cluster
    cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _slurm_jobs_cancelled(slurm_cluster):
    yield
    slurm_cluster.cancel_all()


@pytest.fixture
def slurm_data_dir(tmp_path) -> Path:
    return tmp_path / "wb-data"


@pytest.fixture
def slurm_app_key(slurm_data_dir) -> str:
    from workbench.core.providers.sshkeys import ensure_keypair

    return ensure_keypair(slurm_data_dir).public_openssh


@pytest.fixture
def slurm_login(slurm_cluster, slurm_app_key, tmp_path):
    with slurm_cluster.login_node(tmp_path / "login", slurm_app_key) as server:
        yield server
