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
import difflib
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping, NoReturn, Sequence

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.errors import SpecError
from workbench.core.domain.gpus import GPU_MODELS, canonical_gpu, suggest_gpu
from workbench.core.domain.models import GpuRequest, Guards, JobSpec, OnFinish, Resources

__all__ = ["load_spec", "parse_spec", "spec_to_dict", "spec_from_dict", "MAX_GPU_COUNT"]

MAX_GPU_COUNT = 64
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DURATION_RE = re.compile(r"(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?", re.IGNORECASE)
_DURATION_FORMS = "minutes (e.g. 90) or a duration like '90m', '2h', '1d', '1h30m'"
_GPU_FORMS = "'MODEL', 'MODEL:COUNT' (e.g. V100:1) or a mapping {model, count, min_memory_gb}"
_NULL_TAG = "tag:yaml.org,2002:null"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_OFF_WORDS = {"off", "none", "null", "no", "false", "never", "unlimited", "disabled"}

_TOP_KEYS = ("name", "resources", "setup", "run", "env", "workdir", "outputs", "on_finish", "guards", "providers",
             "regions")
_RESOURCE_KEYS = ("gpu", "cpus", "memory_gb", "disk_gb", "spot", "max_price", "network")
_GPU_KEYS = ("model", "count", "min_memory_gb")
_NETWORK_KEYS = ("min_gbps", "rdma")
_GUARD_KEYS = ("max_runtime", "idle_minutes", "idle_util_below", "budget_usd")
_DICT_VERSION = 1


#: a spec is a few lines of YAML; anything this big is a mistake (a data file, a log) that would
#: otherwise be parsed, stored with the launch and passed to the job's environment
MAX_SPEC_BYTES = 1024 * 1024
#: the longest max_runtime / idle time accepted (366 days)
MAX_MINUTES = 366 * 24 * 60


def load_spec(path: str | os.PathLike[str]) -> JobSpec:
    """Read and validate the job spec at ``path``.

    Messages name the path as given; a relative ``workdir`` is resolved
    against the spec file's folder.  Raises :class:`SpecError`.
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
    return parse_spec(text, source=source, base_dir=Path(source).resolve().parent)


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
        "resources": dataclasses.asdict(spec.resources),
        "env": dict(spec.env),
        "workdir": spec.workdir,
        "on_finish": spec.on_finish.value,
        "guards": dataclasses.asdict(spec.guards),
        "providers": list(spec.providers),
        "regions": list(spec.regions),
        "source": spec.source,
        "outputs": list(spec.outputs),
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
        gpu = res.get("gpu")
        res["gpu"] = _build(GpuRequest, gpu) if gpu else None
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
        )
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise SpecError(f"stored job spec is malformed: {type(e).__name__}: {e}") from e


def _build(cls: type, values: Mapping[str, Any]) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    # Lower-case first so 'Name' or 'GPU' still find their field.
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    if match:
        return f" — did you mean '{lowered[match[0]]}'?"
    return f" — expected one of: {', '.join(choices)}"


class _Parser:
    """Walks the composed node tree; each method validates one field."""

    def __init__(self, source: str, base_dir: Path | None) -> None:
        self.source = source
        self.base_dir = base_dir
        self._constructor = SafeConstructor()

    # -- plumbing ---------------------------------------------------------

    def fail(self, node: Node, path: str, problem: str) -> NoReturn:
        where = f"{path}: " if path else ""
        raise SpecError(f"{self.source}:{node.start_mark.line + 1}: {where}{problem}")

    def compose(self, text: str) -> Node | None:
        try:
            return yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark else 1
            problem = e.problem or e.context or str(e)
            if e.problem and e.context and not e.context.startswith("while "):
                # "but found another document" alone does not say what was expected.
                problem = f"{e.context}, {e.problem}"
            raise SpecError(f"{self.source}:{line}: invalid YAML: {problem}") from e
        except yaml.reader.ReaderError as e:  # control characters and the like
            line = text.count("\n", 0, max(e.position, 0)) + 1
            problem = f"unacceptable character #x{e.character:04x}: {e.reason}"
            raise SpecError(f"{self.source}:{line}: invalid YAML: {problem}") from e
        except yaml.YAMLError as e:
            raise SpecError(f"{self.source}:1: invalid YAML: {e}") from e

    @staticmethod
    def is_null(node: Node) -> bool:
        return isinstance(node, ScalarNode) and node.tag == _NULL_TAG

    def scalar(self, node: Node, path: str, expected: str) -> Any:
        """The Python value of a scalar node; lists and mappings are errors."""
        if not isinstance(node, ScalarNode):
            self.fail(node, path, f"must be {expected}, got {self.describe(node)}")
        try:
            return self._constructor.construct_object(node, deep=True)
        except Exception as e:  # noqa: BLE001 - unknown tag, or a date like 2001-13-99 (ValueError)
            self.fail(node, path, f"invalid value: {getattr(e, 'problem', None) or e}")

    def describe(self, node: Node, value: Any = ...) -> str:
        if isinstance(node, MappingNode):
            return "a mapping"
        if isinstance(node, SequenceNode):
            return "a list"
        if value is ...:
            value = self.scalar(node, "", "a scalar")
        if value is None:
            return "null"
        if isinstance(value, bool):
            return f"{str(value).lower()} (a boolean)"
        if isinstance(value, str):
            return f"'{value}' (a string)"
        if isinstance(value, (int, float)):
            return repr(value)
        return f"'{node.value}' (a {type(value).__name__})"

    def mapping(self, node: Node, path: str, known: Sequence[str] | None) -> dict[str, tuple[Node, Node]]:
        """Key name -> (key node, value node); unknown or repeated keys are errors."""
        if not isinstance(node, MappingNode):
            self.fail(node, path, f"must be a mapping, got {self.describe(node)}")
        self.check_tag(node, path, _MAP_TAG)
        seen: set[str] = set()
        for key_node, _ in node.value:
            # PyYAML keeps the last of repeated keys; a forgotten earlier one is a bug.
            if isinstance(key_node, ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    self.fail(key_node, _join(path, key_node.value), "appears twice in the same mapping")
                seen.add(key_node.value)
        try:
            self._constructor.flatten_mapping(node)  # expand '<<' merge keys like safe_load does
        except yaml.YAMLError as e:
            self.fail(node, path, f"invalid merge: {getattr(e, 'problem', None) or e}")
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                self.fail(key_node, path, f"keys must be plain names, got {self.describe(key_node)}")
            key = key_node.value
            if known is not None and key not in known:
                self.fail(key_node, _join(path, key), "unknown field" + _did_you_mean(key, known))
            out[key] = (key_node, value_node)  # later wins: a merge's keys come first
        return out

    def check_tag(self, node: Node, path: str, expected: str) -> None:
        # Scalars go through SafeConstructor, which rejects odd tags; containers we walk
        # ourselves, so '!!python/object' on a mapping must be refused here.
        if node.tag != expected:
            self.fail(node, path, f"unsupported YAML tag '{node.tag}'")

    def string(self, node: Node, path: str) -> str:
        value = self.scalar(node, path, "a string")
        if not isinstance(value, str):
            self.fail(node, path, f"must be a string, got {self.describe(node, value)} — quote it")
        return value

    def integer(self, node: Node, path: str, low: int, high: int | None = None) -> int:
        what = f"a whole number >= {low}" if high is None else f"a whole number from {low} to {high}"
        value = self.scalar(node, path, what)
        # bool is an int subclass: 'cpus: true' must not mean one CPU.
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            self.fail(node, path, f"must be {what}, got {self.describe(node, value)}")
        return value

    def number(self, node: Node, path: str, low: float = 0.0, high: float | None = None) -> float:
        what = f"a number > {low:g}" if high is None else f"a number > {low:g} and <= {high:g}"
        value = self.scalar(node, path, what)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value <= low or (high is not None and value > high):
            self.fail(node, path, f"must be {what}, got {self.describe(node, value)}")
        return float(value)

    def boolean(self, node: Node, path: str) -> bool:
        value = self.scalar(node, path, "true or false")
        if not isinstance(value, bool):
            self.fail(node, path, f"must be true or false, got {self.describe(node, value)}")
        return value

    def strings(self, node: Node, path: str) -> list[str]:
        """A list of non-empty strings, or one string standing for a list of one."""
        if self.is_null(node):
            return []
        if isinstance(node, SequenceNode):
            self.check_tag(node, path, _SEQ_TAG)
        items = node.value if isinstance(node, SequenceNode) else [node]
        out: list[str] = []
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]" if isinstance(node, SequenceNode) else path
            text = self.string(item, item_path).strip()
            if not text:
                self.fail(item, item_path, "must not be empty")
            if text not in out:
                out.append(text)
        return out

    def minutes(self, node: Node, path: str, value: Any) -> int:
        minutes: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            minutes = value
        elif isinstance(value, str):
            text = value.strip()
            match = _DURATION_RE.fullmatch(text)
            if text.isdecimal():
                minutes = int(text)
            elif match and any(match.groups()):
                days, hours, mins = (int(g or 0) for g in match.groups())
                minutes = days * 24 * 60 + hours * 60 + mins
        if minutes is None:
            self.fail(node, path, f"must be {_DURATION_FORMS}, got {self.describe(node, value)}")
        if minutes <= 0:
            self.fail(node, path, f"must be longer than 0 minutes, got {self.describe(node, value)}")
        if minutes > MAX_MINUTES:  # a guard of centuries is no guard: say so instead of accepting it
            self.fail(node, path, f"must be at most {MAX_MINUTES // (24 * 60)} days, got {self.describe(node, value)}")
        return minutes

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
        return JobSpec(
            name=name,
            run=run,
            setup=setup if setup and setup.strip() else None,
            resources=self.resources(opt("resources")),
            env=self.env(opt("env")),
            workdir=self.workdir(workdir_node) if workdir_node else None,
            on_finish=self.on_finish(on_finish_node) if on_finish_node else OnFinish.TERMINATE,
            guards=self.guards(opt("guards")),
            providers=tuple(p.lower() for p in self.strings(f["providers"][1], "providers"))
            if "providers" in f else (),
            regions=tuple(self.strings(f["regions"][1], "regions")) if "regions" in f else (),
            source=self.source,
            outputs=self.outputs(f["outputs"][1]) if "outputs" in f else (),
        )

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

    def gpu(self, node: Node, path: str) -> GpuRequest | None:
        if self.is_null(node):
            return None  # CPU only
        if isinstance(node, MappingNode):
            f = self.mapping(node, path, _GPU_KEYS)
            model = None
            if "model" in f and not self.is_null(f["model"][1]):
                model = self.gpu_model(f["model"][1], f"{path}.model", self.string(f["model"][1], f"{path}.model"))
            count = self.integer(f["count"][1], f"{path}.count", 1, MAX_GPU_COUNT) if "count" in f else 1
            memory = None
            if "min_memory_gb" in f and not self.is_null(f["min_memory_gb"][1]):
                memory = self.number(f["min_memory_gb"][1], f"{path}.min_memory_gb")
            return GpuRequest(model=model, count=count, min_memory_gb=memory)
        value = self.scalar(node, path, _GPU_FORMS)
        if not isinstance(value, str):
            self.fail(node, path, f"must be {_GPU_FORMS}, got {self.describe(node, value)}")
        model_text, colon, count_text = value.partition(":")
        model = self.gpu_model(node, path, model_text)
        count = 1
        if colon:
            count_text = count_text.strip()
            count = int(count_text) if count_text.isdecimal() else -1
            if not 1 <= count <= MAX_GPU_COUNT:
                self.fail(node, path, f"GPU count must be a whole number from 1 to {MAX_GPU_COUNT}, "
                                      f"got '{count_text}' in '{value}'")
        return GpuRequest(model=model, count=count)

    def gpu_model(self, node: Node, path: str, text: str) -> str | None:
        text = text.strip()
        if not text:
            self.fail(node, path, f"the GPU model is empty: give {_GPU_FORMS}")
        if text.lower() == "any":
            return None
        model = canonical_gpu(text)
        if model is None:
            guess = suggest_gpu(text)
            if guess:
                self.fail(node, path, f"unknown GPU model '{text}' — did you mean {guess}?")
            self.fail(node, path, f"unknown GPU model '{text}' — known models: {', '.join(GPU_MODELS)}, or 'any'")
        return model

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
            hint = _did_you_mean(text, choices)
            if "did you mean" not in hint:
                hint = ""
            self.fail(node, "on_finish", f"must be one of {', '.join(choices)}, got '{text}'{hint}")
        return OnFinish(text)

    def guards(self, node: Node | None) -> Guards:
        if node is None:
            return Guards()
        kw: dict[str, Any] = {}
        for key, (_, value_node) in self.mapping(node, "guards", _GUARD_KEYS).items():
            path = f"guards.{key}"
            value = self.scalar(value_node, path, "a single value")
            off = value is None or value is False or (isinstance(value, str) and value.strip().lower() in _OFF_WORDS)
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
