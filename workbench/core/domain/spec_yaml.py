"""A JobSpec written back as our YAML form (what ``workbench convert`` prints); it parses to the same spec.

Only fields that differ from the defaults are written, in the order a person reads a spec:
what it is, where it runs, what it needs, then the scripts.  Multi-line scripts are literal
blocks (``|``), written by hand because PyYAML refuses a block for a line with trailing spaces.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from workbench.core.domain.models import CHOOSE_CHEAPEST, GpuRequest, Guards, JobSpec, OnFinish, Resources

_PRINTABLE = re.compile(r"[^\x00-\x08\x0b-\x1f\x7f]*")


def spec_to_yaml(spec: JobSpec) -> str:
    """Our YAML text of ``spec`` (without ``source``, which is where it came from)."""
    return "".join(text for _, text in spec_yaml_blocks(spec))


def spec_yaml_blocks(spec: JobSpec) -> list[tuple[str, str]]:
    """(top-level key, its YAML text) in order, so a caller can put comments between them."""
    fields: list[tuple[str, Any]] = [("name", spec.name)]
    if spec.workdir:
        fields.append(("workdir", spec.workdir))
    if spec.num_nodes != 1:
        fields.append(("num_nodes", spec.num_nodes))
    if spec.outputs_from != "head":
        fields.append(("outputs_from", spec.outputs_from))
    if spec.providers:
        fields.append(("providers", list(spec.providers)))
    if spec.regions:
        fields.append(("regions", list(spec.regions)))
    res = resources_dict(spec.resources)
    if res:
        fields.append(("resources", res))
    if spec.alternatives:
        fields.append(("alternatives", [alternative_dict(a) for a in spec.alternatives]))
        if spec.choose != CHOOSE_CHEAPEST:
            fields.append(("choose", spec.choose))
    if spec.env:
        fields.append(("env", {k: str(v) for k, v in spec.env.items()}))
    if spec.secrets:
        fields.append(("secrets", list(spec.secrets)))
    if spec.image is not None:
        fields.append(("image", _image(spec.image)))
    if spec.ports:
        fields.append(("ports", [p.port if p.name is None and p.node == "head" else
                                 {k: v for k, v in (("port", p.port), ("name", p.name), ("node", p.node))
                                  if v is not None and not (k == "node" and v == "head")} for p in spec.ports]))
    if spec.storage:
        fields.append(("storage", [_mount(m) for m in spec.storage]))
    if spec.recovery is not None:
        fields.append(("recovery", {"max_restarts": spec.recovery.max_restarts, "on": list(spec.recovery.on)}))
    gpu_job = spec.resources.gpu is not None or any(a.gpu is not None for a in spec.alternatives)
    guards = _guards(spec.guards, gpu_job)
    if guards:
        fields.append(("guards", guards))
    if spec.on_finish is not OnFinish.TERMINATE:
        fields.append(("on_finish", spec.on_finish.value))
    if spec.outputs:
        fields.append(("outputs", list(spec.outputs)))
    if spec.setup:
        fields.append(("setup", spec.setup))
    fields.append(("run", spec.run))
    return [(key, _dump(key, value)) for key, value in fields]


def gpu_yaml(gpu: GpuRequest) -> Any:
    """'A100:8', 'H100:1..2', 'any:2', or a mapping when memory or a vendor is asked for."""
    if gpu.min_memory_gb is None and gpu.max_memory_gb is None and gpu.vendor is None:
        text = f"{gpu.model or 'any'}:{gpu.count}"
        return text + (f"..{gpu.max_count}" if gpu.max_count is not None else "")
    d: dict[str, Any] = {"model": gpu.model or "any", "count": gpu.count}
    for key in ("max_count", "min_memory_gb", "max_memory_gb", "vendor"):
        value = getattr(gpu, key)
        if value is not None:
            d[key] = _num(value)
    return d


def resources_dict(r: Resources) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if r.gpu is not None:
        d["gpu"] = gpu_yaml(r.gpu)
    if r.cpus is not None:
        d["cpus"] = r.cpus
    if r.memory_gb is not None:
        d["memory_gb"] = _num(r.memory_gb)
    if r.disk_gb != Resources().disk_gb:
        d["disk_gb"] = r.disk_gb
    if r.spot:
        d["spot"] = True
    if r.max_price is not None:
        d["max_price"] = _num(r.max_price)
    if r.network_min_gbps is not None or r.rdma:
        net: dict[str, Any] = {}
        if r.network_min_gbps is not None:
            net["min_gbps"] = _num(r.network_min_gbps)
        if r.rdma:
            net["rdma"] = True
        d["network"] = net
    return d


def alternative_dict(a: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if a.gpu is not None:
        d["gpu"] = gpu_yaml(a.gpu)
    for key in ("provider", "region", "instance_type", "spot"):
        value = getattr(a, key)
        if value is not None:
            d[key] = value
    return d


def _image(image: Any) -> Any:
    """A name alone when that is all there is, else the mapping (the password as the secret's name)."""
    if image.registry_auth is None and image.shm_size is None and image.user is None:
        return image.name
    out: dict[str, Any] = {"name": image.name}
    if image.registry_auth is not None:
        out["registry_auth"] = {"username": image.registry_auth.username,
                                "password": image.registry_auth.password_secret}
    if image.shm_size is not None:
        out["shm_size"] = image.shm_size
    if image.user is not None:
        out["user"] = image.user
    return out


def _mount(m: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"path": m.path, "source": m.source, "mode": m.mode.value}
    if m.mode.value == "sync" and m.interval_s != 300:
        d["interval"] = f"{m.interval_s}s"
    return d


def _guards(g: Guards, gpu_job: bool = True) -> dict[str, Any]:
    d: dict[str, Any] = {}
    default = Guards()
    if g.max_runtime_minutes != default.max_runtime_minutes and g.max_runtime_minutes is not None:
        d["max_runtime"] = f"{g.max_runtime_minutes}m"
    # what the parser gives when the field is left out: no idle guard for a job without a GPU
    if g.idle_minutes != (default.idle_minutes if gpu_job else None):
        d["idle_minutes"] = "off" if g.idle_minutes is None else g.idle_minutes
    if g.idle_util_below != default.idle_util_below:
        d["idle_util_below"] = _num(g.idle_util_below)
    if g.budget_usd is not None:
        d["budget_usd"] = _num(g.budget_usd)
    return d


def _num(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _dump(key: str, value: Any) -> str:
    if isinstance(value, str) and "\n" in value and _PRINTABLE.fullmatch(value):
        return _literal(key, value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        # one flow mapping per line reads best for alternatives and storage
        lines = [f"{key}:\n"] + [f"  - {_flow(v)}\n" for v in value]
        return "".join(lines)
    return yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=100_000,
                          default_flow_style=False)


def _flow(d: dict[str, Any]) -> str:
    return yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=100_000, default_flow_style=True).strip()


def _literal(key: str, text: str) -> str:
    """``key: |`` with the chomping and indentation indicators the text needs."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    lines = body.split("\n")
    first = next((line for line in lines if line.strip()), "")
    indent = "2" if first[:1] in (" ", "\t") or not lines[0].strip() else ""
    out = [f"{key}: |{indent}{chomp}\n"]
    out.extend(("  " + line if line else "") + "\n" for line in lines)
    out.extend("\n" for _ in range(trailing - 1)) if chomp == "+" else None
    return "".join(out)
