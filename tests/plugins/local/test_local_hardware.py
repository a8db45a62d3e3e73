"""The NVML side of hardware probing, against a stand-in ``pynvml`` (no GPU on CI).

Only the driver library is replaced: the mapping of its answers to offers
and samples, and the init/shutdown pairing, are what is under test.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest

from workbench_local import hardware

GIB = 1024**3


class FakeNvml(types.ModuleType):
    """Two GPUs; counts init/shutdown calls; can fail at a chosen step."""

    NVML_ERROR_LIBRARY_NOT_FOUND = 12

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(value)
            self.value = value

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__("pynvml")
        self.fail_on = fail_on
        self.inits = self.shutdowns = 0

    def _maybe_fail(self, step: str, value: int = 999) -> None:
        if self.fail_on == step:
            raise self.NVMLError(value)

    def nvmlInit(self) -> None:
        self._maybe_fail("init", self.NVML_ERROR_LIBRARY_NOT_FOUND)
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        self._maybe_fail("handle")
        return index

    def nvmlDeviceGetName(self, handle: int) -> bytes | str:
        return b"NVIDIA H100 80GB HBM3" if handle == 0 else "NVIDIA H100 PCIe"

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(total=80 * GIB, used=(10 + handle) * GIB)

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(gpu=50 + handle)


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(hardware, "_library_missing", False)
    return fake


def test_gpus_are_named_canonically_and_nvml_is_shut_down(fake_nvml: FakeNvml) -> None:
    gpus = hardware.probe_gpus()
    assert [(g.index, g.model, g.memory_total_mb) for g in gpus] == [(0, "H100", 81920.0), (1, "H100", 81920.0)]
    assert gpus[0].raw_name == "NVIDIA H100 80GB HBM3"  # bytes from old bindings decoded
    assert fake_nvml.inits == fake_nvml.shutdowns == 1


def test_gpu_samples_per_device(fake_nvml: FakeNvml) -> None:
    samples = hardware.gpu_samples("local-x")
    assert [(s.index, s.kind, s.name, s.util_percent, s.mem_used_mb) for s in samples] == [
        (0, "gpu", "H100", 50.0, 10240.0),
        (1, "gpu", "H100", 51.0, 11264.0),
    ]
    assert all(s.mem_total_mb == 81920.0 and s.instance_id == "local-x" for s in samples)
    assert fake_nvml.inits == fake_nvml.shutdowns == 1


def test_an_error_mid_probe_means_cpu_only_and_still_shuts_down(fake_nvml: FakeNvml) -> None:
    fake_nvml.fail_on = "handle"
    assert hardware.probe_gpus() == []
    assert hardware.gpu_samples("local-x") == []
    assert fake_nvml.inits == fake_nvml.shutdowns == 2


def test_missing_library_is_remembered(fake_nvml: FakeNvml) -> None:
    fake_nvml.fail_on = "init"
    assert hardware.probe_gpus() == []
    assert fake_nvml.shutdowns == 0  # never initialised, so never shut down
    fake_nvml.fail_on = None
    assert hardware.probe_gpus() == []  # not retried: the driver does not appear at run time
    assert fake_nvml.inits == 0
