"""Fixtures for the instance-side guard tests (helpers in guardsim.py)."""

from __future__ import annotations

import pytest

from guardsim import FAKE_NVIDIA_SMI, FAKE_SHUTDOWN, FAKE_SUDO, LID, FakeAzure, Machine


@pytest.fixture
def machine(tmp_path) -> Machine:
    for d in ("bin", "gpu", "state"):
        (tmp_path / d).mkdir()
    for name, text in (("nvidia-smi", FAKE_NVIDIA_SMI), ("shutdown", FAKE_SHUTDOWN), ("sudo", FAKE_SUDO)):
        p = tmp_path / "bin" / name
        p.write_text(text)
        p.chmod(0o755)
    m = Machine(tmp_path)
    m.gpus(97, 95)  # a healthy, busy job
    m.configure(launch_id=LID, cloud="aws", max_runtime_s=3600, idle_s=600, idle_below=5.0,
                on_finish="terminate", finish_grace_s=300, job_dirs=[str(tmp_path / "home" / "*" / ".workbench"
                                                                        / "jobs" / LID)],
                state_path=str(tmp_path / "state" / "guard.json"), console=str(tmp_path / "console.log"),
                gpu_reads=2, gpu_read_interval_s=0)
    return m


@pytest.fixture
def azure():
    fake = FakeAzure()
    yield fake
    fake.close()
