"""SkyPilot's ``resources`` block → our resources, providers/regions, alternatives, recovery, idle guard."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.importers.base import ImportReader
from workbench.core.domain.importers.container import ContainerFields
from workbench.core.domain.jobspec_choices import MAX_GPU_COUNT, describe_alternative, describe_gpu
from workbench.core.domain.models import (CHOOSE_CHEAPEST, CHOOSE_IN_ORDER, Alternative, GpuRequest, Port,
                                          Recovery, Resources)
from workbench.core.domain.yaml_reader import MAX_MINUTES

RES_KEYS = ("infra", "cloud", "region", "zone", "accelerators", "accelerator_args", "cpus", "memory",
            "instance_type", "use_spot", "disk_size", "disk_tier", "network_tier", "image_id", "ports", "labels",
            "autostop", "any_of", "ordered", "job_recovery", "spot_recovery", "max_hourly_cost")
CANDIDATE_KEYS = ("infra", "cloud", "region", "zone", "accelerators", "instance_type", "use_spot")
_NO_VM = ("k8s", "kubernetes", "ssh", "slurm")
_STRATEGIES = ("FAILOVER", "EAGER_NEXT_REGION")
_AUTOSTOP_KEYS = ("idle_minutes", "down", "wait_for", "hook", "hook_timeout")
_AUTOSTOP_RE = re.compile(r"(\d+)\s*([mhdw]?)", re.IGNORECASE)
_AUTOSTOP_UNITS = {"": 1, "m": 1, "h": 60, "d": 24 * 60, "w": 7 * 24 * 60}


@dataclass
class ResBlock:
    """What ``resources`` maps to; ``idle_minutes`` is ... when autostop was not given."""

    resources: Resources = field(default_factory=Resources)
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    choose: str = CHOOSE_CHEAPEST
    recovery: Recovery | None = None
    idle_minutes: Any = ...
    image_ref: str | None = None  # image_id: docker:REF (the login is read with the envs)
    image_node: Node | None = None
    ports: tuple[Port, ...] = ()


@dataclass
class _Candidate:
    gpus: list[GpuRequest | None]
    provider: str | None = None
    region: str | None = None
    instance_type: str | None = None
    spot: bool | None = None
    usable: bool = True  # False: names a cloud this app does not rent from


class SkyResources(ContainerFields, ImportReader):
    """Mixed into the SkyPilot importer."""

    def resources_block(self, node: Node | None) -> ResBlock:
        out = ResBlock()
        if node is None:
            return out
        f = self.mapping(node, "resources", RES_KEYS)
        kw: dict[str, Any] = {}
        if "image_id" in f and not self.is_null(n := f["image_id"][1]):
            text = self.text(n, "resources.image_id").strip() if isinstance(n, ScalarNode) else ""
            if text.startswith("docker:"):
                out.image_node, out.image_ref = n, text[len("docker:"):].strip()
            else:
                self.refused(f["image_id"][0], "resources.image_id",
                             f"{'a machine image (' + text + ')' if text else 'machine images per region'}: a "
                             "custom machine image cannot be used here, the provider's GPU image is — give a "
                             "container instead (image_id: docker:REGISTRY/NAME:TAG) or install what it needs in "
                             "`setup`")
        if "ports" in f and not self.is_null(n := f["ports"][1]):
            out.ports = self.sky_ports(f["ports"][0], n)
        for key, why in (("disk_tier", "disks here are the provider's standard SSD"),
                         ("network_tier", "the offer's own network is used; to require RDMA/EFA write "
                                          "resources.network: {rdma: true}"),
                         ("labels", "this app tags every resource with its own labels"),
                         ("accelerator_args", "settings for Google TPUs, which are not rented here")):
            if key in f:
                self.ignored(f[key][0], f"resources.{key}", why)
        base = self.candidate(f, "resources", _Candidate([None]))
        if "cpus" in f and not self.is_null(f["cpus"][1]):
            kw["cpus"] = self.at_least(f["cpus"][1], "resources.cpus", "vCPUs", integer=True)
        if "memory" in f and not self.is_null(f["memory"][1]):
            kw["memory_gb"] = self.at_least(f["memory"][1], "resources.memory", "GB of memory")
        if "disk_size" in f and not self.is_null(n := f["disk_size"][1]):
            size = int(self.size_gb(n, "resources.disk_size", self.text(n, "resources.disk_size")))
            if not 1 <= size <= 65536:
                self.fail(n, "resources.disk_size", f"must be from 1 GB to 64 TB, got {size} GB")
            kw["disk_gb"] = size
            self.mapped(n, "resources.disk_size", f"resources.disk_gb: {size}", "resources")
        if "max_hourly_cost" in f and not self.is_null(n := f["max_hourly_cost"][1]):
            kw["max_price"] = self.number(n, "resources.max_hourly_cost")
            self.mapped(n, "resources.max_hourly_cost", f"resources.max_price: {kw['max_price']:g} per hour",
                        "resources")
        if base.spot:
            kw["spot"] = True
        candidates = [base]
        for key in ("any_of", "ordered"):
            if key in f:
                if "any_of" in f and "ordered" in f:
                    self.fail(f[key][0], f"resources.{key}", "give any_of or ordered, not both")
                candidates = self.candidates(f[key][1], f"resources.{key}", base)
        if "autostop" in f:
            out.idle_minutes = self.autostop(f["autostop"][1])
        for key in ("job_recovery", "spot_recovery"):
            if key in f:
                out.recovery = self.recovery(f[key][1], f"resources.{key}")
        ordered = "ordered" in f or ("any_of" not in f and "accelerators" in f
                                     and isinstance(f["accelerators"][1], SequenceNode))
        self.fold(out, candidates, ordered, base, kw, node)
        return out

    # -- candidates (one per any_of/ordered entry, and per accelerator choice) ---------------
    def candidate(self, f: dict[str, tuple[Node, Node]], path: str, base: _Candidate) -> _Candidate:
        c = dataclasses.replace(base, gpus=list(base.gpus))
        if "infra" in f and any(k in f for k in ("cloud", "region", "zone")):
            self.fail(f["infra"][0], f"{path}.infra", "give infra or cloud/region/zone, not both")
        if "infra" in f and not self.is_null(n := f["infra"][1]):
            parts = self.string(n, f"{path}.infra").strip().split("/")
            self.location(c, n, f"{path}.infra", parts[0], parts[1] if len(parts) > 1 else None,
                          parts[2] if len(parts) > 2 else None)
        elif any(k in f for k in ("cloud", "region", "zone")):
            def opt(key: str) -> str | None:
                return self.string(f[key][1], f"{path}.{key}").strip() if key in f and not self.is_null(
                    f[key][1]) else None
            node = next(f[k][1] for k in ("cloud", "region", "zone") if k in f)
            self.location(c, node, f"{path}.cloud", opt("cloud") or "*", opt("region"), opt("zone"))
        if "accelerators" in f and not self.is_null(n := f["accelerators"][1]):
            c.gpus = self.accelerators(n, f"{path}.accelerators")
        if "instance_type" in f and not self.is_null(n := f["instance_type"][1]):
            c.instance_type = self.string(n, f"{path}.instance_type").strip()
            self.mapped(n, f"{path}.instance_type", f"instance type {c.instance_type}", "alternatives")
        if "use_spot" in f and not self.is_null(n := f["use_spot"][1]):
            c.spot = self.boolean(n, f"{path}.use_spot")
            self.mapped(n, f"{path}.use_spot", f"{'resources.' if path == 'resources' else ''}spot: "
                        f"{'true' if c.spot else 'false'}",
                        "resources" if path == "resources" else "alternatives")
        return c

    def location(self, c: _Candidate, node: Node, path: str, cloud: str, region: str | None,
                 zone: str | None) -> None:
        cloud = cloud.strip().lower()
        if cloud in _NO_VM or cloud.startswith("k8s"):
            self.refused(node, path, f"'{cloud}' runs jobs in Kubernetes pods or on your own cluster: not "
                                     "supported here; remove it to run on a configured cloud or this computer")
            c.usable = False
            return
        if zone and zone != "*":
            self.ignored(node, f"{path} (zone {zone})", "the zone is chosen by the provider plugin")
        if cloud in ("*", ""):
            c.provider = None
        else:
            c.provider = self.provider(cloud)
            if c.provider is None:
                c.usable = False
                self.ignored(node, path, f"'{cloud}' is not a cloud this app rents from (aws, azure, alibaba, "
                                         "this computer): the job may run on any of them")
                return
        c.region = region if region and region != "*" else None
        where = "/".join(p for p in (c.provider or "any cloud", c.region) if p)
        self.mapped(node, path, f"runs on {where}", "alternatives" if "[" in path else "providers")

    def accelerators(self, node: Node, path: str) -> list[GpuRequest | None]:
        items: list[tuple[Node, str, Any]] = []
        if isinstance(node, SequenceNode):
            items = [(n, self.string(n, path).strip(), None) for n in node.value]
        elif isinstance(node, MappingNode):  # {A100:1, V100:1} (a set) or {V100: 4}
            for key, (key_node, value) in self.mapping(node, path, None).items():
                items.append((key_node, key, None if self.is_null(value) else self.scalar(value, path, "a count")))
        else:
            items = [(node, self.text(node, path).strip(), None)]
        gpus: list[GpuRequest | None] = []
        for item_node, text, count_value in items:
            name, colon, count_text = text.partition(":")
            count: Any = count_value if count_value is not None else (count_text.strip() if colon else 1)
            try:
                number = float(count)
            except (TypeError, ValueError):
                self.fail(item_node, path, f"'{text}': the count must be a number")
            if number != int(number) or not 1 <= number <= MAX_GPU_COUNT:
                self.fail(item_node, path, f"'{text}': GPU count must be a whole number from 1 to {MAX_GPU_COUNT} "
                                           "(fractions of a GPU are not rented here)")
            gpu = self.gpu_name(item_node, path, name, int(number))
            gpu = dataclasses.replace(gpu, max_count=gpu.count)  # SkyPilot's counts are exact
            if gpu not in gpus:
                gpus.append(gpu)
        kind = ("a list: tried in order" if isinstance(node, SequenceNode) else
                "a set: the cheapest" if len(gpus) > 1 else "")
        single = "resources.gpu: " if path == "resources.accelerators" else "gpu: "
        counts = sorted({g.count for g in gpus if g is not None})
        exact = (f" — read as exactly {counts[0]} (SkyPilot counts are exact)" if len(counts) == 1 else
                 " — each count read as exact (SkyPilot counts are exact)")
        self.mapped(node, path, ("GPU choices, " + kind + ": " if kind else single)
                    + "; ".join(describe_gpu(g) for g in gpus) + exact,
                    "resources" if len(gpus) == 1 else "alternatives")
        return list(gpus)

    def candidates(self, node: Node, path: str, base: _Candidate) -> list[_Candidate]:
        if not isinstance(node, SequenceNode) or not node.value:
            self.fail(node, path, f"must be a non-empty list of resources, got {self.describe(node)}")
        out: list[_Candidate] = []
        for i, item in enumerate(node.value):
            item_path = f"{path}[{i}]"
            f = self.mapping(item, item_path, None)
            for key, (key_node, _) in f.items():
                if key not in CANDIDATE_KEYS:
                    self.fail(key_node, f"{item_path}.{key}", f"not supported inside {path.split('.')[-1]} here: "
                                                              f"set it once, outside (allowed inside: "
                                                              f"{', '.join(CANDIDATE_KEYS)})")
            c = self.candidate(f, item_path, base)
            if c.usable:
                out.append(c)
        if not out:
            self.refused(node, path, "none of the choices can run here (every one names Kubernetes or a cloud "
                                     "this app does not rent from)")
            return [base]
        return out

    def fold(self, out: ResBlock, candidates: list[_Candidate], ordered: bool, base: _Candidate,
             kw: dict[str, Any], node: Node) -> None:
        alts: list[Alternative] = []
        for c in candidates:
            for gpu in c.gpus:
                alt = Alternative(gpu=gpu, provider=c.provider, region=c.region, instance_type=c.instance_type,
                                  spot=c.spot)
                if alt not in alts:
                    alts.append(alt)
        if len(alts) == 1 and alts[0].instance_type is None:
            a = alts[0]
            out.resources = Resources(gpu=a.gpu, **kw)
            out.providers = (a.provider,) if a.provider and base.usable else ()
            out.regions = (a.region,) if a.region and a.provider and base.usable else ()
            return
        alts = [dataclasses.replace(a, spot=None) if bool(a.spot) == kw.get("spot", False) else a for a in alts]
        out.resources = Resources(**kw)
        out.alternatives = tuple(alts)
        out.providers = tuple(dict.fromkeys(a.provider for a in alts if a.provider))
        out.choose = CHOOSE_IN_ORDER if ordered else CHOOSE_CHEAPEST
        how = "the first that has an offer, in order" if ordered else "the cheapest"
        text = (f"alternatives: {describe_alternative(alts[0])}" if len(alts) == 1 else
                f"{len(alts)} alternatives, {how}: " + "; ".join(describe_alternative(a) for a in alts))
        self.mapped(node, "resources", text, "alternatives")

    # -- single fields ------------------------------------------------------------------
    def at_least(self, node: Node, path: str, what: str, integer: bool = False) -> Any:
        text = self.text(node, path).strip()
        plus = text.endswith("+")
        value = self.size_gb(node, path, text.rstrip("+")) if not integer else None
        if integer:
            try:
                number = float(text.rstrip("+"))
            except ValueError:
                self.fail(node, path, f"must be a number like 4 or 4+, got '{text}'")
            value = self.whole(node, path, number, "the vCPU count")
        exact = "" if plus else f" (exactly {text} in SkyPilot; at least here, the cheapest offer wins)"
        target = "cpus" if integer else "memory_gb"
        self.mapped(node, path, f"resources.{target}: at least {value:g} {what}{exact}", "resources")
        return value

    def autostop(self, node: Node) -> int | None:
        path = "resources.autostop"
        minutes: int | None
        down = False
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, _AUTOSTOP_KEYS)
            minutes = self.integer(f["idle_minutes"][1], f"{path}.idle_minutes", 1, MAX_MINUTES) \
                if "idle_minutes" in f else 5
            down = "down" in f and self.boolean(f["down"][1], f"{path}.down")
            for key in ("wait_for", "hook", "hook_timeout"):
                if key in f:
                    self.ignored(f[key][0], f"{path}.{key}", "the idle guard here watches GPU use only")
        else:
            value = self.scalar(node, path, "true, false, minutes or a duration")
            if value is True:
                minutes = 5
            elif value is False:
                self.mapped(node, path, "guards.idle_minutes: off (no idle shutdown; the runtime limit still "
                                        "applies)", "guards")
                return None
            else:
                m = _AUTOSTOP_RE.fullmatch(str(value).strip())
                if not m or isinstance(value, bool):
                    self.fail(node, path, f"must be true, false, minutes or a duration like 10m, 2h, got "
                                          f"{self.describe(node, value)}")
                minutes = int(m.group(1)) * _AUTOSTOP_UNITS[m.group(2).lower()]
                if not 1 <= minutes <= MAX_MINUTES:
                    self.fail(node, path, f"must be from 1 minute to {MAX_MINUTES // (24 * 60)} days")
        end = "terminated" if down else "stopped in SkyPilot; here the machine is terminated when the job ends"
        self.mapped(node, path, f"guards.idle_minutes: {minutes} (GPUs idle that long end the job; {end})",
                    "guards")
        return minutes

    def recovery(self, node: Node, path: str) -> Recovery | None:
        strategy: str | None = None
        restarts = 0
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, ("strategy", "max_restarts_on_errors", "recover_on_exit_codes"))
            if "strategy" in f and not self.is_null(f["strategy"][1]):
                strategy = self.string(f["strategy"][1], f"{path}.strategy").strip()
            if "max_restarts_on_errors" in f:
                restarts = self.integer(f["max_restarts_on_errors"][1], f"{path}.max_restarts_on_errors", 0, 100)
            if "recover_on_exit_codes" in f:
                self.ignored(f["recover_on_exit_codes"][0], f"{path}.recover_on_exit_codes",
                             "any failure counts here (recovery.on: failure)")
        elif not self.is_null(node):
            strategy = self.text(node, path).strip()
        if strategy is not None and strategy.lower() == "none":
            self.mapped(node, path, "recovery: off", "recovery")
            return None
        if strategy is not None and strategy.upper() not in _STRATEGIES:
            self.fail(node, path, f"strategy must be one of {', '.join(_STRATEGIES)} or none, got '{strategy}'")
        on = ("preemption", "failure") if restarts > 0 else ("preemption",)
        rec = Recovery(max_restarts=restarts if restarts > 0 else 3, on=on)
        self.mapped(node, path, f"recovery: relaunch after {' or '.join(on)}, at most {rec.max_restarts} times, "
                                "on the cheapest offer still allowed", "recovery")
        return rec

