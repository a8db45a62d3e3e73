"""Load and validate job specs (YAML) into :class:`~workbench.core.domain.models.JobSpec`.

A spec is small, hand-written and decides what gets billed, so validation is
strict and every message points at the line to fix, compiler style::

    train.yaml:7: resources.gpu: unknown GPU model 'V1OO' — did you mean V100?

We compose the YAML into a node tree (SafeLoader, never arbitrary objects)
instead of calling ``safe_load`` because plain dicts lose the line numbers.
Unknown keys are errors with a "did you mean" — a typo like ``max_runtme``
must never silently drop a guard.  An explicit ``null`` on an optional field
means "use the default", except on guards, where it must be deliberate:
``max_runtime`` cannot be switched off, ``idle_minutes: null``/``off``
disables idle shutdown, and ``budget_usd`` must be omitted rather than nulled.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.errors import SpecError
from workbench.core.domain.jobspec_container import (ContainerReader, image_from_dict, image_to_dict, ports_from_list,
                                                    ports_to_list)
from workbench.core.domain.jobspec_choices import (MAX_GPU_COUNT, ChoiceReader, alternatives_from_dict,
                                                   alternatives_to_dict, gpu_from_dict, gpu_to_dict)
from workbench.core.domain.models import (Guards, JobSpec, OnFinish, Recovery, Resources, StorageMode, StorageMount,
                                          with_default_idle_guard)
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.domain.yaml_reader import OFF_WORDS, did_you_mean

__all__ = ["load_spec", "read_spec_text", "parse_spec", "spec_to_dict", "spec_from_dict", "MAX_GPU_COUNT"]

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_TOP_KEYS = ("name", "resources", "setup", "run", "env", "workdir", "outputs", "on_finish", "guards", "providers",
             "regions", "num_nodes", "outputs_from", "storage", "recovery", "secrets", "alternatives", "choose",
             "image", "ports")
_RESOURCE_KEYS = ("gpu", "cpus", "memory_gb", "disk_gb", "spot", "max_price", "network")
_NETWORK_KEYS = ("min_gbps", "rdma")
_GUARD_KEYS = ("max_runtime", "idle_minutes", "idle_util_below", "budget_usd")
_STORAGE_KEYS = ("path", "source", "mode", "interval")
_RECOVERY_KEYS = ("max_restarts", "on")
RECOVERY_REASONS = ("preemption", "failure")
OUTPUTS_FROM = ("head", "all")
MAX_NODES = 64
MAX_RESTARTS = 100
DEFAULT_SYNC_INTERVAL_S = 300
_DICT_VERSION = 1


#: a spec is a few lines of YAML; anything this big is a mistake (a data file, a log) that would
#: otherwise be parsed, stored with the launch and passed to the job's environment
MAX_SPEC_BYTES = 1024 * 1024


def load_spec(path: str | os.PathLike[str]) -> JobSpec:
    """Read and validate the job spec at ``path``.

    Messages name the path as given; a relative ``workdir`` is resolved
    against the spec file's folder.  Raises :class:`SpecError`.
    """
    source = os.fspath(path)
    return parse_spec(read_spec_text(source), source=source, base_dir=Path(source).resolve().parent)


def read_spec_text(path: str | os.PathLike[str]) -> str:
    """The text of the job file at ``path`` (ours or another tool's): at most MAX_SPEC_BYTES of UTF-8.

    Raises :class:`SpecError` naming the path as given when it cannot be read, is too big or is not text.
    """
    source = os.fspath(path)
    try:
        size = Path(source).stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(f"{source}: the job spec is {size / 1e6:.1f} MB; at most {MAX_SPEC_BYTES // 1024} KB",
                            hint="keep data and long scripts in the workdir and refer to them from `run`")
        # utf-8-sig: editors on Windows like to prepend a BOM.
        text = Path(source).read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise SpecError(f"{source}: cannot read job spec: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise SpecError(f"{source}: cannot read job spec: not UTF-8 text ({e.reason} at byte {e.start})") from e
    return text


def parse_spec(text: str, source: str = "<spec>", base_dir: Path | None = None) -> JobSpec:
    """Validate YAML ``text`` into a JobSpec.

    ``source`` names the spec in messages and becomes ``JobSpec.source``;
    ``base_dir`` resolves a relative ``workdir`` (default: the current folder).
    Raises :class:`SpecError` reading ``{source}:{line}: {field}: {problem}``.
    """
    return _Parser(source, base_dir).spec(text)


def spec_to_dict(spec: JobSpec) -> dict[str, Any]:
    """A JSON-serialisable dict of ``spec``, read back by :func:`spec_from_dict`."""
    return {
        "version": _DICT_VERSION,
        "name": spec.name,
        "run": spec.run,
        "setup": spec.setup,
        "resources": {**dataclasses.asdict(spec.resources),
                      "gpu": gpu_to_dict(spec.resources.gpu) if spec.resources.gpu else None},
        "env": dict(spec.env),
        "workdir": spec.workdir,
        "on_finish": spec.on_finish.value,
        "guards": dataclasses.asdict(spec.guards),
        "providers": list(spec.providers),
        "regions": list(spec.regions),
        "source": spec.source,
        "outputs": list(spec.outputs),
        "num_nodes": spec.num_nodes,
        "outputs_from": spec.outputs_from,
        "storage": [{"path": m.path, "source": m.source, "mode": m.mode.value, "interval_s": m.interval_s}
                    for m in spec.storage],
        "recovery": dataclasses.asdict(spec.recovery) if spec.recovery else None,
        "secrets": list(spec.secrets),
        "alternatives": alternatives_to_dict(spec.alternatives),
        "choose": spec.choose,
        "image": image_to_dict(spec.image),
        "ports": ports_to_list(spec.ports),
    }


def spec_from_dict(d: Mapping[str, Any]) -> JobSpec:
    """Rebuild a JobSpec stored with :func:`spec_to_dict`.

    Trusts the stored values (they were validated when launched) and does not
    check that ``workdir`` still exists: history must load after files move.
    Keys from a newer version are ignored.  Raises :class:`SpecError` if ``d``
    is not a stored spec.
    """
    try:
        res = dict(d.get("resources") or {})
        res["gpu"] = gpu_from_dict(res.get("gpu"))
        return JobSpec(
            name=d["name"],
            run=d["run"],
            setup=d.get("setup"),
            resources=_build(Resources, res),
            env={str(k): str(v) for k, v in (d.get("env") or {}).items()},
            workdir=d.get("workdir"),
            on_finish=OnFinish(d.get("on_finish", OnFinish.TERMINATE.value)),
            guards=_build(Guards, d.get("guards") or {}),
            providers=tuple(d.get("providers") or ()),
            regions=tuple(d.get("regions") or ()),
            source=d.get("source"),
            outputs=tuple(d.get("outputs") or ()),
            num_nodes=int(d.get("num_nodes") or 1),
            outputs_from=d.get("outputs_from") or "head",
            storage=tuple(StorageMount(m["path"], m["source"], StorageMode(m.get("mode", "copy")),
                                       int(m.get("interval_s", DEFAULT_SYNC_INTERVAL_S)))
                          for m in d.get("storage") or ()),
            recovery=Recovery(int(rec.get("max_restarts", 3)), tuple(rec.get("on") or ("preemption",)))
            if (rec := d.get("recovery")) else None,
            secrets=tuple(d.get("secrets") or ()),
            alternatives=alternatives_from_dict(d.get("alternatives")),
            choose=d.get("choose") or "cheapest",
            image=image_from_dict(d.get("image")),
            ports=ports_from_list(d.get("ports")),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise SpecError(f"stored job spec is malformed: {type(e).__name__}: {e}") from e


def _build(cls: type, values: Mapping[str, Any]) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


class _Parser(ChoiceReader, ContainerReader):
    """Walks the composed node tree; each method validates one field."""

    # -- the spec ---------------------------------------------------------

    def spec(self, text: str) -> JobSpec:
        root = self.compose(text)
        if root is None or self.is_null(root):
            raise SpecError(f"{self.source}:1: the spec is empty — it needs at least 'name' and 'run'")
        if not isinstance(root, MappingNode):
            self.fail(root, "", f"the top level must be a mapping of fields (name, run, resources, …), "
                                f"got {self.describe(root)}")
        f = self.mapping(root, "", _TOP_KEYS)
        for required in ("name", "run"):
            if required not in f:
                self.fail(root, required, "required field is missing")

        def opt(key: str) -> Node | None:
            node = f[key][1] if key in f else None
            return None if node is None or self.is_null(node) else node

        name = self.string(f["name"][1], "name")
        if not _NAME_RE.fullmatch(name):
            self.fail(f["name"][1], "name", "must be 1-63 letters, digits, '_', '.' or '-', starting "
                                            f"with a letter or digit, got '{name}'")
        run = self.string(f["run"][1], "run")
        if not run.strip():
            self.fail(f["run"][1], "run", "must not be empty: give the command that runs the job")
        setup_node = opt("setup")
        setup = self.string(setup_node, "setup") if setup_node else None
        workdir_node = opt("workdir")
        on_finish_node = opt("on_finish")
        resources = self.resources(opt("resources"))
        alternatives = self.alternatives(opt("alternatives"))
        guards = self.guards(opt("guards"))
        secrets = self.secrets(opt("secrets"), f)
        spec = JobSpec(
            name=name,
            run=run,
            setup=setup if setup and setup.strip() else None,
            resources=resources,
            env=self.env(opt("env")),
            workdir=self.workdir(workdir_node) if workdir_node else None,
            on_finish=self.on_finish(on_finish_node) if on_finish_node else OnFinish.TERMINATE,
            guards=guards,
            providers=tuple(p.lower() for p in self.strings(f["providers"][1], "providers"))
            if "providers" in f else (),
            regions=tuple(self.strings(f["regions"][1], "regions")) if "regions" in f else (),
            source=self.source,
            outputs=self.outputs(f["outputs"][1]) if "outputs" in f else (),
            num_nodes=self.integer(n, "num_nodes", 1, MAX_NODES) if (n := opt("num_nodes")) else 1,
            outputs_from=self.choice(n, "outputs_from", OUTPUTS_FROM) if (n := opt("outputs_from")) else "head",
            storage=self.storage(opt("storage")),
            recovery=self.recovery(opt("recovery")),
            secrets=secrets,
            alternatives=alternatives,
            choose=self.choose(opt("choose"), bool(alternatives)),
            image=self.image(opt("image"), secrets),
            ports=self.ports(opt("ports")),
        )
        return with_default_idle_guard(spec, self.gives(opt("guards"), "idle_minutes"))

    def resources(self, node: Node | None) -> Resources:
        if node is None:
            return Resources()
        f = self.mapping(node, "resources", _RESOURCE_KEYS)
        kw: dict[str, Any] = {}
        for key, (_, value) in f.items():
            path = f"resources.{key}"
            if key == "gpu":
                kw["gpu"] = self.gpu(value, path)
            elif self.is_null(value):
                continue  # null = default
            elif key == "cpus":
                kw[key] = self.integer(value, path, 1)
            elif key == "disk_gb":
                kw[key] = self.integer(value, path, 1, 65536)  # 64 TiB: the largest single cloud disk
            elif key in ("memory_gb", "max_price"):
                kw[key] = self.number(value, path)
            elif key == "spot":
                kw["spot"] = self.boolean(value, path)
            elif key == "network":
                net = self.mapping(value, path, _NETWORK_KEYS)
                if "min_gbps" in net and not self.is_null(net["min_gbps"][1]):
                    kw["network_min_gbps"] = self.number(net["min_gbps"][1], f"{path}.min_gbps")
                if "rdma" in net and not self.is_null(net["rdma"][1]):
                    kw["rdma"] = self.boolean(net["rdma"][1], f"{path}.rdma")
        return Resources(**kw)

    def env(self, node: Node | None) -> dict[str, str]:
        if node is None:
            return {}
        out: dict[str, str] = {}
        for key, (key_node, value) in self.mapping(node, "env", None).items():
            path = f"env.{key}"
            if not _ENV_NAME_RE.fullmatch(key):
                self.fail(key_node, path, "variable names must be letters, digits and '_', not starting "
                                          "with a digit")
            if not isinstance(value, ScalarNode) or self.is_null(value):
                self.fail(value, path, f"must be a string or number, got {self.describe(value)}")
            self.scalar(value, path, "a string or number")  # rejects unknown tags
            # The text as written: '1e-3' stays '1e-3' and 'true' stays 'true' for the shell.
            out[key] = value.value
        return out

    def workdir(self, node: Node) -> str:
        text = self.string(node, "workdir").strip()
        if not text:
            self.fail(node, "workdir", "must not be empty (omit it for no working folder)")
        path = Path(os.path.expanduser(text))
        if not path.is_absolute():
            path = (self.base_dir or Path.cwd()) / path
        path = path.resolve()
        if not path.exists():
            self.fail(node, "workdir", f"folder '{text}' does not exist (looked for {path})")
        if not path.is_dir():
            self.fail(node, "workdir", f"'{text}' is not a folder ({path})")
        return str(path)

    def outputs(self, node: Node) -> tuple[str, ...]:
        """Paths to download when the job ends: relative to its working folder (or absolute), no '..'."""
        out = []
        items = node.value if isinstance(node, SequenceNode) else [node]
        for i, text in enumerate(self.strings(node, "outputs")):
            where = items[min(i, len(items) - 1)]
            path = f"outputs[{i}]" if isinstance(node, SequenceNode) else "outputs"
            if ".." in text.replace("\\", "/").split("/"):
                self.fail(where, path, f"must not contain '..', got '{text}'")
            out.append(text.rstrip("/") or "/")
        return tuple(out)

    def on_finish(self, node: Node) -> OnFinish:
        text = self.string(node, "on_finish").strip().lower()
        choices = [o.value for o in OnFinish]
        if text not in choices:
            hint = did_you_mean(text, choices)
            if "did you mean" not in hint:
                hint = ""
            self.fail(node, "on_finish", f"must be one of {', '.join(choices)}, got '{text}'{hint}")
        return OnFinish(text)

    @staticmethod
    def gives(node: Node | None, key: str) -> bool:
        """True when the mapping ``node`` names ``key`` (whatever its value)."""
        return isinstance(node, MappingNode) and any(
            isinstance(k, ScalarNode) and k.value == key for k, _ in node.value)

    def guards(self, node: Node | None) -> Guards:
        if node is None:
            return Guards()
        kw: dict[str, Any] = {}
        for key, (_, value_node) in self.mapping(node, "guards", _GUARD_KEYS).items():
            path = f"guards.{key}"
            value = self.scalar(value_node, path, "a single value")
            off = value is None or value is False or (isinstance(value, str) and value.strip().lower() in OFF_WORDS)
            if key == "max_runtime":
                if off:
                    # The one guard that always ends the bill: never unlimited by accident.
                    self.fail(value_node, path, "a runtime limit is required so a forgotten job cannot bill "
                                                "forever — give one like '8h' or '2d' (omit it for the default 24h)")
                kw["max_runtime_minutes"] = self.minutes(value_node, path, value)
            elif key == "idle_minutes":
                kw[key] = None if off else self.minutes(value_node, path, value)
            elif key == "idle_util_below":
                kw[key] = self.number(value_node, path, 0.0, 100.0)
            elif key == "budget_usd":
                if value is None:
                    self.fail(value_node, path, "must be a number > 0 (omit the field for no budget)")
                kw[key] = self.number(value_node, path)
        return Guards(**kw)

    def choice(self, node: Node, path: str, choices: Sequence[str]) -> str:
        text = self.string(node, path).strip().lower()
        if text not in choices:
            self.fail(node, path, f"must be one of {', '.join(choices)}, got '{text}'")
        return text

    def storage(self, node: Node | None) -> tuple[StorageMount, ...]:
        """``storage: [{path, source, mode: copy|sync, interval}]``; sources checked, local ones resolved."""
        if node is None:
            return ()
        if not isinstance(node, SequenceNode):
            self.fail(node, "storage", f"must be a list of mounts {{path, source, mode, interval}}, "
                                       f"got {self.describe(node)}")
        mounts: list[StorageMount] = []
        for i, item in enumerate(node.value):
            path = f"storage[{i}]"
            f = self.mapping(item, path, _STORAGE_KEYS)
            for required in ("path", "source"):
                if required not in f or self.is_null(f[required][1]):
                    self.fail(item, f"{path}.{required}", "required field is missing")
            where = self.string(f["path"][1], f"{path}.path").strip().rstrip("/") or "/"
            if ".." in where.split("/"):
                self.fail(f["path"][1], f"{path}.path", f"must not contain '..', got '{where}'")
            if any(m.path == where for m in mounts):
                self.fail(f["path"][1], f"{path}.path", f"'{where}' is mounted twice")
            source_node = f["source"][1]
            source = self.string(source_node, f"{path}.source").strip()
            try:
                uri = parse_storage_uri(source)
            except ValueError as e:
                self.fail(source_node, f"{path}.source", str(e))
            if uri.is_local:
                folder = Path(os.path.expanduser(source))
                folder = ((self.base_dir or Path.cwd()) / folder if not folder.is_absolute() else folder).resolve()
                if not folder.is_dir():
                    self.fail(source_node, f"{path}.source", f"folder '{source}' does not exist (looked for {folder})")
                source = str(folder)
            mode = StorageMode(self.choice(f["mode"][1], f"{path}.mode", [m.value for m in StorageMode])) \
                if "mode" in f and not self.is_null(f["mode"][1]) else StorageMode.COPY
            interval = DEFAULT_SYNC_INTERVAL_S
            if "interval" in f and not self.is_null(f["interval"][1]):
                if mode is not StorageMode.SYNC:
                    self.fail(f["interval"][1], f"{path}.interval", "only a 'sync' mount has an interval")
                value = self.scalar(f["interval"][1], f"{path}.interval", "a duration")
                interval = self.seconds(f["interval"][1], f"{path}.interval", value)
            mounts.append(StorageMount(where, source, mode, interval))
        return tuple(mounts)

    def recovery(self, node: Node | None) -> Recovery | None:
        """``recovery: {max_restarts: 3, on: [preemption, failure]}``; ``off`` for none."""
        if node is None:
            return None
        if isinstance(node, ScalarNode):
            value = self.scalar(node, "recovery", "a mapping {max_restarts, on} or off")
            if value is False or (isinstance(value, str) and value.strip().lower() in OFF_WORDS):
                return None
            self.fail(node, "recovery", f"must be a mapping {{max_restarts, on}} or off, got {self.describe(node)}")
        f = self.mapping(node, "recovery", _RECOVERY_KEYS)
        restarts = 3
        if "max_restarts" in f and not self.is_null(f["max_restarts"][1]):
            restarts = self.integer(f["max_restarts"][1], "recovery.max_restarts", 0, MAX_RESTARTS)
        on: tuple[str, ...] = ("preemption",)
        if "on" in f:
            items = f["on"][1].value if isinstance(f["on"][1], SequenceNode) else [f["on"][1]]
            words = self.strings(f["on"][1], "recovery.on")
            for i, word in enumerate(words):
                if word.lower() not in RECOVERY_REASONS:
                    self.fail(items[min(i, len(items) - 1)], "recovery.on",
                              f"must be preemption and/or failure, got '{word}'{did_you_mean(word, RECOVERY_REASONS)}")
            on = tuple(w.lower() for w in words) or on
        return Recovery(restarts, on)

    def secrets(self, node: Node | None, top: dict[str, tuple[Node, Node]]) -> tuple[str, ...]:
        """Names of variables asked for at launch and never stored; not also set in ``env``."""
        if node is None:
            return ()
        names = self.strings(node, "secrets")
        env_node = top.get("env", (None, None))[1]
        env_keys = {k.value for k, _ in env_node.value} if isinstance(env_node, MappingNode) else set()
        for name in names:
            if not _ENV_NAME_RE.fullmatch(name):
                self.fail(node, "secrets", f"'{name}' is not a variable name (letters, digits and '_')")
            if name in env_keys:
                self.fail(node, "secrets", f"'{name}' is also set in env: a secret's value is asked for at launch, "
                                           "never written in the spec")
        return tuple(names)
