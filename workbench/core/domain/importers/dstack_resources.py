"""dstack's ``resources`` (gpu, cpu, memory, disk, with ranges) and durations → ours."""

from __future__ import annotations

import re
from typing import Any, Callable

from yaml.nodes import MappingNode, Node, ScalarNode

from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.domain.importers.base import ImportReader
from workbench.core.domain.jobspec_choices import MAX_GPU_COUNT, describe_alternative, describe_gpu
from workbench.core.domain.models import Alternative, GpuRequest
from workbench.core.domain.yaml_reader import MAX_MINUTES

RES_KEYS = ("cpu", "memory", "shm_size", "gpu", "disk")
GPU_KEYS = ("vendor", "name", "count", "memory", "total_memory", "compute_capability")
#: dstack's vendor names → ours (gpus.GpuModel.vendor); None: not rented here
_VENDORS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Habana", "google": None, "tpu": None, "tenstorrent": None}
_DURATION = re.compile(r"(\d+)\s*([smhdw]?)", re.IGNORECASE)
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

Range = tuple[Any, Any]  # (low, high); None: open


class DstackResources(ImportReader):
    """Mixed into the dstack importer; ``shm`` keeps ``resources.shm_size`` (its node, GB) for the image."""

    shm: tuple[Node, float] | None = None

    def resources_block(self, node: Node | None) -> tuple[dict[str, Any], tuple[Alternative, ...]]:
        """(Resources keyword arguments, alternatives: one per GPU name when several are allowed)."""
        if node is None:
            return {}, ()
        f = self.mapping(node, "resources", RES_KEYS)
        kw: dict[str, Any] = {}
        if "shm_size" in f and not self.is_null(n := f["shm_size"][1]):
            self.shm = (f["shm_size"][0], self.gb(n, "resources.shm_size", self.text(n, "resources.shm_size")))
        if "cpu" in f and not self.is_null(n := f["cpu"][1]):
            low = self.cpu(n)
            if low is not None:
                kw["cpus"] = low
        if "memory" in f and not self.is_null(n := f["memory"][1]):
            low, high = self.range_of(n, "resources.memory", self.gb)
            if low is not None:
                kw["memory_gb"] = low
            self.mapped(n, "resources.memory", f"resources.memory_gb: at least {low or 0:g}"
                        + self.upper(high, "GB", low), "resources")
        if "disk" in f and not self.is_null(n := f["disk"][1]):
            size_node = n
            if isinstance(n, MappingNode):
                size_node = self.mapping(n, "resources.disk", ("size",))["size"][1]
            low, high = self.range_of(size_node, "resources.disk", self.gb)
            if low is not None:
                kw["disk_gb"] = self.whole(n, "resources.disk", low, "the disk size")
            self.mapped(n, "resources.disk", f"resources.disk_gb: {kw.get('disk_gb', 100)}"
                        + (self.upper(high, "GB", low) if high != low else ""), "resources")
        gpus: list[GpuRequest] = []
        if "gpu" in f and not self.is_null(n := f["gpu"][1]):
            gpus = self.gpu_spec(n)
        if len(gpus) == 1:
            kw["gpu"] = gpus[0]
            return kw, ()
        return kw, tuple(Alternative(gpu=g) for g in gpus)

    # -- gpu -------------------------------------------------------------------------
    def gpu_spec(self, node: Node) -> list[GpuRequest]:
        path = "resources.gpu"
        vendor: str | None = None
        names: list[str] = []
        count: Range = (1, 1)
        memory: Range = (None, None)
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, GPU_KEYS)
            for key in ("total_memory", "compute_capability"):
                if key in f:
                    self.ignored(f[key][0], f"{path}.{key}", "not a filter here: the model and per-GPU memory are")
            if "vendor" in f:
                vendor = self.gpu_vendor(f["vendor"][1], f"{path}.vendor", self.string(f["vendor"][1], path))
            if "name" in f:
                names = self.strings(f["name"][1], f"{path}.name")
            if "count" in f:
                count = self.range_of(f["count"][1], f"{path}.count", self.count_value)
            if "memory" in f:
                memory = self.range_of(f["memory"][1], f"{path}.memory", self.gb)
        else:
            text = self.text(node, path).replace(" ", "")
            for token in text.split(":"):
                if not token:
                    self.fail(node, path, f"'{text}' has an empty part")
                kind = _VENDORS.get(token.lower(), "?")
                if kind != "?":
                    vendor = self.gpu_vendor(node, path, token)
                elif token[0].isalpha():
                    names = token.split(",")
                elif any(c.isalpha() for c in token):
                    memory = self.parse_range(node, path, token, self.gb)
                else:
                    count = self.parse_range(node, path, token, self.count_value)
        low, high = count
        low = 1 if low is None else low  # "2" is exactly 2 in dstack (min and max), "2.." at least 2
        if not 1 <= low <= MAX_GPU_COUNT or (high is not None and not low <= high <= MAX_GPU_COUNT):
            self.fail(node, path, f"GPU count must be from 1 to {MAX_GPU_COUNT}, got {low}..{high or ''}")
        gpus: list[GpuRequest] = []
        for name in names or [None]:
            base = self.gpu_name(node, path, name) if name else GpuRequest(None, vendor=vendor or "NVIDIA")
            mem_low, mem_high = memory  # "24GB" is exactly 24 GB in dstack (min and max)
            gpu = GpuRequest(model=base.model, count=low, max_count=high, vendor=base.vendor,
                             min_memory_gb=mem_low if mem_low is not None else base.min_memory_gb,
                             max_memory_gb=mem_high if memory != (None, None) else base.max_memory_gb)
            if gpu not in gpus:
                gpus.append(gpu)
        detail = ("resources.gpu: " + describe_gpu(gpus[0]) if len(gpus) == 1 else
                  f"{len(gpus)} alternatives, the cheapest: " + "; ".join(describe_alternative(Alternative(g))
                                                                          for g in gpus))
        self.mapped(node, path, detail + _reading(count, memory) + _no_such_card(gpus), "resources" if len(gpus) == 1
                    else "alternatives")
        return gpus

    def gpu_vendor(self, node: Node, path: str, text: str) -> str:
        vendor = _VENDORS.get(text.strip().lower(), "?")
        if vendor == "?":
            self.fail(node, path, f"unknown GPU vendor '{text}' — nvidia, amd or intel")
        if vendor is None:
            self.fail(node, path, f"'{text}' accelerators (TPUs and the like) are not rented here")
        return vendor

    # -- cpu -------------------------------------------------------------------------
    def cpu(self, node: Node) -> int | None:
        path = "resources.cpu"
        arch = None
        target: Node = node
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, ("min", "max", "arch", "count"))
            if "arch" in f:
                arch = self.string(f["arch"][1], f"{path}.arch").strip().lower()
            if "count" in f:
                target = f["count"][1]
            elif "min" in f or "max" in f:
                target = node
        elif isinstance(node, ScalarNode):
            text = self.text(node, path).replace(" ", "")
            head, colon, tail = text.partition(":")
            if colon and head.isalpha():
                arch = head.lower()
        if arch not in (None, "x86", "x86_64", "amd64"):
            self.refused(node, path, f"'{arch}' machines cannot be chosen yet: offers here are x86")
            return None
        low, high = self.range_of(target, path, self.count_value, strip_arch=True)
        if low is None:
            return None
        self.mapped(node, path, f"resources.cpus: at least {low}" + self.upper(high, "vCPUs", low), "resources")
        return int(low)

    # -- ranges ----------------------------------------------------------------------
    def range_of(self, node: Node, path: str, parse: Callable[[Node, str, str], Any],
                 strip_arch: bool = False) -> Range:
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, ("min", "max", "arch") if strip_arch else ("min", "max"))
            low = parse(f["min"][1], path, self.text(f["min"][1], path)) if "min" in f else None
            high = parse(f["max"][1], path, self.text(f["max"][1], path)) if "max" in f else None
            return self.ordered(node, path, low, high)
        text = self.text(node, path).replace(" ", "")
        if strip_arch and ":" in text:
            text = text.partition(":")[2]
        return self.parse_range(node, path, text, parse)

    def parse_range(self, node: Node, path: str, text: str, parse: Callable[[Node, str, str], Any]) -> Range:
        if ".." in text:
            a, _, b = text.partition("..")
            if not a and not b:
                self.fail(node, path, "an empty range '..'")
            return self.ordered(node, path, parse(node, path, a) if a else None, parse(node, path, b) if b else None)
        value = parse(node, path, text)
        return value, value

    def ordered(self, node: Node, path: str, low: Any, high: Any) -> Range:
        if low is not None and high is not None and low > high:
            self.fail(node, path, f"the range is backwards: {low:g}..{high:g}")
        return low, high

    def count_value(self, node: Node, path: str, text: str) -> int:
        if not text.isdecimal():
            self.fail(node, path, f"'{text}' is not a whole number")
        return int(text)

    def gb(self, node: Node, path: str, text: str) -> float:
        return self.size_gb(node, path, text)

    def upper(self, high: Any, unit: str, low: Any = None) -> str:
        """How an upper bound of cpu, memory or disk was read: noted, not used (they stay "at least" here)."""
        if not high:
            return ""
        if high == low:
            return f" (exactly {high:g} {unit} in dstack; at least here, the cheapest offer wins)"
        return f" (dstack's upper bound {high:g} {unit} is not used: the cheapest offer wins)"

    # -- durations ---------------------------------------------------------------------
    def dstack_seconds(self, node: Node, path: str, value: Any) -> int:
        """dstack's durations: a number of seconds, or '30s', '90m', '2h', '1d', '1w'."""
        if isinstance(value, int) and not isinstance(value, bool):
            secs = value
        else:
            m = _DURATION.fullmatch(str(value).strip()) if isinstance(value, str) else None
            if not m:
                self.fail(node, path, f"must be a duration like 90m, 2h or 1d, got {self.describe(node, value)}")
            secs = int(m.group(1)) * _SECONDS[m.group(2).lower()]
        if not 0 < secs <= MAX_MINUTES * 60:
            self.fail(node, path, f"must be from 1 second to {MAX_MINUTES // (24 * 60)} days")
        return secs



def _reading(count: Range, memory: Range) -> str:
    """How dstack's count and memory were read: a single value is exact (dstack sends it as min and max)."""
    def one(r: Range, what: str, unit: str) -> str | None:
        low, high = r
        if low is not None and low == high:
            return f"exactly {low:g}{unit} {what}" + ("s" if what == "GPU" and low != 1 else "")
        if low is not None and high is None:
            return f"at least {low:g}{unit} {what}" + ("s" if what == "GPU" and low != 1 else "")
        if high is not None:
            return f"{low or 0:g} to {high:g}{unit} {what}" + ("s" if what == "GPU" else "")
        return None
    parts = [p for p in (one(count, "GPU", ""), one(memory, "per GPU", " GB")) if p]
    return f" — read as {' and '.join(parts)}, as dstack does" if parts else ""


def _no_such_card(gpus: list[GpuRequest]) -> str:
    """A note when a named model never ships with the asked memory (dstack then finds no offer either)."""
    for g in gpus:
        sizes = GPU_MODELS[g.model].memory_gb if g.model in GPU_MODELS else ()
        low, high = g.min_memory_gb or 0, g.max_memory_gb if g.max_memory_gb is not None else float("inf")
        if sizes and not any(low <= size <= high for size in sizes):
            shipped = ", ".join(f"{size:g} GB" for size in sizes)
            return f" — note: {g.model} ships with {shipped}: this matches no offer, here as in dstack"
    return ""
