"""What this computer has: GPUs (through NVML), CPUs and memory (through psutil).

NVML is optional.  A machine without an NVIDIA driver (no ``libnvidia-ml``),
a driver that refuses to initialise, or a broken GPU all read as "no GPUs":
the Local provider then offers a CPU-only machine.  Those failures are logged
at debug level only, because a laptop without a GPU is the normal case, not
an error.

Threading: every function is safe to call from any thread.  NVML keeps a
reference count of ``nvmlInit`` calls, so each probe pairs its own init with
its own ``nvmlShutdown`` (always, in ``finally``) and never leaves the
library loaded between calls.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import psutil

from workbench.core.domain.gpus import normalize_gpu_name
from workbench.core.domain.models import GpuSample

log = logging.getLogger(__name__)

MIB = 1024 * 1024
GIB = 1024 * MIB


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as the driver reports it."""

    index: int
    raw_name: str  # e.g. "NVIDIA GeForce RTX 4090"
    model: str  # canonical ("RTX4090"), or the raw name when unknown
    memory_total_mb: float


def _text(value: Any) -> str:
    # Old nvidia-ml-py releases return bytes, new ones str.
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# Set once libnvidia-ml is known to be missing: a driver does not appear while
# the app runs, and telemetry polls every few seconds, so skip the dlopen retry.
_library_missing = False


class _NvmlUnavailable(Exception):
    """NVML cannot be used on this computer (cached: no driver library)."""


@contextmanager
def _nvml() -> Iterator[Any]:
    """Yield the initialised ``pynvml`` module; raise whatever import/init raises.

    ``nvmlShutdown`` runs only when ``nvmlInit`` succeeded (calling it
    otherwise raises "uninitialized" and would hide the real cause).
    """
    global _library_missing
    if _library_missing:
        raise _NvmlUnavailable("libnvidia-ml not found")
    import pynvml  # imported lazily: a broken install must not break the plugin's import

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        if getattr(exc, "value", None) == pynvml.NVML_ERROR_LIBRARY_NOT_FOUND:
            _library_missing = True
        raise
    try:
        yield pynvml
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down must never mask the result
            log.debug("nvmlShutdown failed", exc_info=True)


def probe_gpus() -> list[GpuInfo]:
    """The NVIDIA GPUs of this computer; [] when there are none or NVML fails in any way."""
    try:
        with _nvml() as nv:
            gpus = []
            for index in range(nv.nvmlDeviceGetCount()):
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                raw = _text(nv.nvmlDeviceGetName(handle))
                memory = nv.nvmlDeviceGetMemoryInfo(handle)
                gpus.append(
                    GpuInfo(
                        index=index,
                        raw_name=raw,
                        model=normalize_gpu_name(raw) or raw,
                        memory_total_mb=round(memory.total / MIB, 1),
                    )
                )
            return gpus
    except Exception as exc:  # noqa: BLE001 - any NVML trouble (incl. missing library) means CPU only
        log.debug("no usable NVIDIA GPUs (%s: %s); offering CPU only", type(exc).__name__, exc)
        return []


def gpu_samples(instance_id: str) -> list[GpuSample]:
    """One reading per GPU (utilisation and memory of the whole device); [] without NVML."""
    try:
        with _nvml() as nv:
            now = time.time()
            samples = []
            for index in range(nv.nvmlDeviceGetCount()):
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                util = nv.nvmlDeviceGetUtilizationRates(handle)
                memory = nv.nvmlDeviceGetMemoryInfo(handle)
                raw = _text(nv.nvmlDeviceGetName(handle))
                samples.append(
                    GpuSample(
                        instance_id=instance_id,
                        ts=now,
                        index=index,
                        util_percent=float(util.gpu),
                        mem_used_mb=round(memory.used / MIB, 1),
                        mem_total_mb=round(memory.total / MIB, 1),
                        name=normalize_gpu_name(raw) or raw,
                        kind="gpu",
                    )
                )
            return samples
    except Exception as exc:  # noqa: BLE001 - telemetry falls back to the CPU sample
        log.debug("NVML telemetry unavailable (%s: %s)", type(exc).__name__, exc)
        return []


def cpu_count() -> int:
    """Logical CPUs (at least 1: psutil returns None where it cannot tell)."""
    return psutil.cpu_count() or 1


def memory_total_mb() -> float:
    """Total physical memory in MiB."""
    return round(psutil.virtual_memory().total / MIB, 1)


def memory_total_gb() -> float:
    """Total physical memory in GiB, one decimal (what offers show)."""
    return round(psutil.virtual_memory().total / GIB, 1)
