"""Known GPU models: canonical names, memory sizes, and name normalisation.

Clouds and drivers spell GPUs many ways ("Tesla V100-SXM2-16GB",
"NVIDIA A100-SXM4-80GB", "A10G", "nvidia-tesla-t4"); offers and job specs use
the short canonical model ("V100", "A100", "T4").  Facts from the vendors'
public data sheets.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuModel:
    name: str
    memory_gb: tuple[float, ...]  # the sizes it ships with
    vendor: str = "NVIDIA"


GPU_MODELS: dict[str, GpuModel] = {
    m.name: m
    for m in (
        GpuModel("K80", (12,)),
        GpuModel("M60", (8,)),
        GpuModel("P4", (8,)),
        GpuModel("P40", (24,)),
        GpuModel("P100", (16,)),
        GpuModel("V100", (16, 32)),
        GpuModel("T4", (16,)),
        GpuModel("T4G", (16,)),
        GpuModel("A10", (24,)),
        GpuModel("A10G", (24,)),
        GpuModel("A100", (40, 80)),
        GpuModel("A800", (40, 80)),
        GpuModel("H100", (80, 94)),
        GpuModel("H800", (80,)),
        GpuModel("H200", (141,)),
        GpuModel("H20", (96,)),
        GpuModel("B200", (180, 192)),
        GpuModel("L4", (24,)),
        GpuModel("L40", (48,)),
        GpuModel("L40S", (48,)),
        GpuModel("A4000", (16,)),
        GpuModel("A5000", (24,)),
        GpuModel("A6000", (48,)),
        GpuModel("RTX4090", (24,)),
        GpuModel("RTX3090", (24,)),
        GpuModel("MI300X", (192,), "AMD"),
        GpuModel("MI250X", (128,), "AMD"),
        GpuModel("RadeonProV520", (8,), "AMD"),
        GpuModel("Gaudi", (32,), "Habana"),
        GpuModel("Gaudi2", (96,), "Habana"),
        GpuModel("Inferentia", (8,), "AWS"),
        GpuModel("Trainium", (32,), "AWS"),
    )
}

_KEYS = {re.sub(r"[^A-Z0-9]", "", k.upper()): k for k in GPU_MODELS}
# Longest first so "A100" wins over "A10", "L40S" over "L40", "T4G" over "T4".
_BY_LENGTH = sorted(_KEYS, key=len, reverse=True)


def canonical_gpu(name: str) -> str | None:
    """Canonical model for an exact (case/punctuation-insensitive) name, else None."""
    key = re.sub(r"[^A-Z0-9]", "", name.upper())
    return _KEYS.get(key)


def normalize_gpu_name(raw: str) -> str | None:
    """Best canonical model for a vendor/driver string, e.g. 'Tesla V100-SXM2-16GB' -> 'V100'."""
    exact = canonical_gpu(raw)
    if exact:
        return exact
    tokens = [t for t in re.split(r"[^A-Z0-9]+", raw.upper()) if t]
    for token in tokens:  # whole-token match first: "NVIDIA A10G" -> A10G
        if token in _KEYS:
            return _KEYS[token]
    squashed = "".join(tokens)
    for key in _BY_LENGTH:  # then the longest known name inside the string
        if len(key) >= 2 and key in squashed:
            return _KEYS[key]
    return None


def suggest_gpu(name: str) -> str | None:
    """A close known model for a typo ('V1OO' -> 'V100'), for 'did you mean' hints."""
    key = re.sub(r"[^A-Z0-9]", "", name.upper()).replace("O", "0")
    if key in _KEYS:
        return _KEYS[key]
    match = difflib.get_close_matches(key, list(_KEYS), n=1, cutoff=0.5)
    return _KEYS[match[0]] if match else None
