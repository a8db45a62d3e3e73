"""The job spec's GPU request (with ranges) and its ``alternatives``: the machines a job may run on.

Split from ``jobspec`` so each stays small; :class:`ChoiceReader` is mixed into its parser.
Our YAML form::

    resources:
      gpu: H100:1..2                      # or A100, A100:8, any:2, or a mapping:
      # gpu: {model: any, count: 2, min_memory_gb: 24, max_memory_gb: 40}
    alternatives:                         # run on the cheapest offer matching any of these
      - {gpu: A100:1, provider: aws, region: us-east-1}
      - {gpu: V100:1, instance_type: p3.2xlarge, spot: true}
    choose: cheapest                      # or in_order: the first alternative that has an offer

An alternative's missing fields take the spec's (``resources.gpu``, ``resources.spot``, and the
provider and region the launch is planned on).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

from yaml.nodes import MappingNode, Node, SequenceNode

from workbench.core.domain.gpus import GPU_MODELS, canonical_gpu, suggest_gpu
from workbench.core.domain.models import CHOOSE_CHEAPEST, CHOOSE_IN_ORDER, Alternative, GpuRequest
from workbench.core.domain.yaml_reader import NodeReader

MAX_GPU_COUNT = 64
MAX_ALTERNATIVES = 32
CHOOSE = (CHOOSE_CHEAPEST, CHOOSE_IN_ORDER)
GPU_FORMS = ("'MODEL', 'MODEL:COUNT' (e.g. V100:1), 'MODEL:MIN..MAX' (e.g. H100:1..2) or a mapping "
             "{model, count, max_count, min_memory_gb, max_memory_gb, vendor}")
_GPU_KEYS = ("model", "count", "max_count", "min_memory_gb", "max_memory_gb", "vendor")
_ALTERNATIVE_KEYS = ("gpu", "provider", "region", "instance_type", "spot")
_RANGE_RE = re.compile(r"(\d+)\s*\.\.\s*(\d+)?")


def gpu_to_dict(gpu: GpuRequest) -> dict[str, Any]:
    """The stored form of a GPU request; the range bounds only when set (older stores lack them)."""
    d = dataclasses.asdict(gpu)
    for key in ("max_count", "max_memory_gb", "vendor"):
        if d[key] is None:
            del d[key]
    return d


def gpu_from_dict(d: Mapping[str, Any] | None) -> GpuRequest | None:
    if not d:
        return None
    names = {f.name for f in dataclasses.fields(GpuRequest)}
    return GpuRequest(**{k: v for k, v in d.items() if k in names})


def alternatives_to_dict(alts: tuple[Alternative, ...]) -> list[dict[str, Any]]:
    return [{"gpu": gpu_to_dict(a.gpu) if a.gpu else None, "provider": a.provider, "region": a.region,
             "instance_type": a.instance_type, "spot": a.spot} for a in alts]


def alternatives_from_dict(items: Any) -> tuple[Alternative, ...]:
    return tuple(Alternative(gpu=gpu_from_dict(i.get("gpu")), provider=i.get("provider"), region=i.get("region"),
                             instance_type=i.get("instance_type"), spot=i.get("spot")) for i in items or ())


def describe_gpu(gpu: GpuRequest | None) -> str:
    """'1-2× H100', '2× any GPU 24-40 GB', 'no GPU' — for messages and the plan."""
    if gpu is None:
        return "no GPU"
    count = str(gpu.count)
    if gpu.max_count is not None and gpu.max_count != gpu.count:
        count = f"{gpu.count}-{gpu.max_count}"
    text = f"{count}× {gpu.model or ('any ' + gpu.vendor + ' GPU' if gpu.vendor else 'any GPU')}"
    low, high = gpu.min_memory_gb, gpu.max_memory_gb
    if low is not None and high is not None:
        text += f" {low:g} GB" if low == high else f" {low:g}-{high:g} GB"
    elif low is not None:
        text += f" ≥{low:g} GB"
    elif high is not None:
        text += f" ≤{high:g} GB"
    return text


def describe_alternative(alt: Alternative) -> str:
    parts = [describe_gpu(alt.gpu)] if alt.gpu else []
    if alt.instance_type:
        parts.append(alt.instance_type)
    where = "/".join(p for p in (alt.provider, alt.region) if p)
    if where:
        parts.append(f"on {where}")
    if alt.spot is not None:
        parts.append("spot" if alt.spot else "on-demand")
    return ", ".join(parts) or "as resources"


class ChoiceReader(NodeReader):
    """Readers for ``resources.gpu``, ``alternatives`` and ``choose``."""

    def gpu(self, node: Node, path: str) -> GpuRequest | None:
        if self.is_null(node):
            return None  # CPU only
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, _GPU_KEYS)

            def opt(key: str) -> Node | None:
                return f[key][1] if key in f and not self.is_null(f[key][1]) else None

            model = None
            if (n := opt("model")) is not None:
                model = self.gpu_model(n, f"{path}.model", self.string(n, f"{path}.model"))
            count = self.integer(n, f"{path}.count", 1, MAX_GPU_COUNT) if (n := opt("count")) is not None else 1
            max_count = None
            if (n := opt("max_count")) is not None:
                max_count = self.integer(n, f"{path}.max_count", count, MAX_GPU_COUNT)
            low = self.number(n, f"{path}.min_memory_gb") if (n := opt("min_memory_gb")) is not None else None
            high = None
            if (n := opt("max_memory_gb")) is not None:
                high = self.number(n, f"{path}.max_memory_gb")
                if low is not None and high < low:
                    self.fail(n, f"{path}.max_memory_gb", f"must be at least min_memory_gb ({low:g}), got {high:g}")
            vendor = None
            if (n := opt("vendor")) is not None:
                vendor = self.vendor(n, f"{path}.vendor", self.string(n, f"{path}.vendor"))
            return GpuRequest(model=model, count=count, min_memory_gb=low, max_count=max_count, max_memory_gb=high,
                              vendor=vendor)
        value = self.scalar(node, path, GPU_FORMS)
        if not isinstance(value, str):
            self.fail(node, path, f"must be {GPU_FORMS}, got {self.describe(node, value)}")
        model_text, colon, count_text = value.partition(":")
        model = self.gpu_model(node, path, model_text)
        count, max_count = 1, None
        if colon:
            count_text = count_text.strip()
            ranged = _RANGE_RE.fullmatch(count_text)
            if ranged:
                count = int(ranged.group(1))
                max_count = int(ranged.group(2)) if ranged.group(2) else None
            else:
                count = int(count_text) if count_text.isdecimal() else -1
            if not 1 <= count <= MAX_GPU_COUNT or (max_count is not None and not count <= max_count <= MAX_GPU_COUNT):
                self.fail(node, path, f"GPU count must be a whole number from 1 to {MAX_GPU_COUNT}, got "
                                      f"'{count_text}' in '{value}' (a range like 1..2 also works)")
        return GpuRequest(model=model, count=count, max_count=max_count)

    def gpu_model(self, node: Node, path: str, text: str) -> str | None:
        text = text.strip()
        if not text:
            self.fail(node, path, f"the GPU model is empty: give {GPU_FORMS}")
        if text.lower() == "any":
            return None
        model = canonical_gpu(text)
        if model is None:
            guess = suggest_gpu(text)
            if guess:
                self.fail(node, path, f"unknown GPU model '{text}' — did you mean {guess}?")
            self.fail(node, path, f"unknown GPU model '{text}' — known models: {', '.join(GPU_MODELS)}, or 'any'")
        return model

    def vendor(self, node: Node, path: str, text: str) -> str:
        vendors = {m.vendor.lower(): m.vendor for m in GPU_MODELS.values()}
        name = vendors.get(text.strip().lower())
        if name is None:
            self.fail(node, path, f"unknown GPU vendor '{text}' — known: {', '.join(sorted(set(vendors.values())))}")
        return name

    def alternatives(self, node: Node | None) -> tuple[Alternative, ...]:
        if node is None:
            return ()
        if not isinstance(node, SequenceNode):
            self.fail(node, "alternatives", f"must be a list of {{gpu, provider, region, instance_type, spot}}, "
                                            f"got {self.describe(node)}")
        if len(node.value) > MAX_ALTERNATIVES:
            self.fail(node, "alternatives", f"at most {MAX_ALTERNATIVES} alternatives, got {len(node.value)}")
        out: list[Alternative] = []
        for i, item in enumerate(node.value):
            path = f"alternatives[{i}]"
            f = self.mapping(item, path, _ALTERNATIVE_KEYS)
            kw: dict[str, Any] = {}
            for key, (_, value) in f.items():
                if self.is_null(value):
                    continue
                if key == "gpu":
                    kw["gpu"] = self.gpu(value, f"{path}.gpu")
                elif key == "spot":
                    kw["spot"] = self.boolean(value, f"{path}.spot")
                else:
                    text = self.string(value, f"{path}.{key}").strip()
                    if not text:
                        self.fail(value, f"{path}.{key}", "must not be empty (omit it to take the spec's)")
                    kw[key] = text.lower() if key == "provider" else text
            if not kw:
                self.fail(item, path, "an alternative needs at least one of: " + ", ".join(_ALTERNATIVE_KEYS))
            alt = Alternative(**kw)
            if alt in out:
                self.fail(item, path, f"repeats alternative {out.index(alt)}")
            out.append(alt)
        return tuple(out)

    def choose(self, node: Node | None, has_alternatives: bool) -> str:
        if node is None:
            return CHOOSE_CHEAPEST
        text = self.string(node, "choose").strip().lower()
        if text not in CHOOSE:
            self.fail(node, "choose", f"must be one of {', '.join(CHOOSE)}, got '{text}'")
        if not has_alternatives:
            self.fail(node, "choose", "only a spec with alternatives chooses between them")
        return text
