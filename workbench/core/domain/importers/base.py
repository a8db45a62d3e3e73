"""What every importer shares: the field notes, the result, and readers for sizes, GPUs, paths, names.

An importer reads another tool's job file into our :class:`JobSpec` and says, for every field it
met, what became of it: ``mapped`` (to which of our fields), ``ignored`` (and why: it has no effect
here), or ``refused`` (it asks for something that cannot run yet).  Nothing is dropped without a
note.  Malformed input (a wrong type, an unknown field, a size that is not a size) is a
:class:`SpecError` at once, naming ``file:line: field``; refusals are collected so one pass lists
them all.  Pure: no I/O beyond checking that local paths named by the file exist.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yaml.nodes import Node

from workbench.core.domain.errors import SpecError
from workbench.core.domain.gpus import canonical_gpu, suggest_gpu
from workbench.core.domain.models import GpuRequest, JobSpec, StorageMode, StorageMount
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.domain.yaml_reader import NodeReader

MAPPED = "mapped"
IGNORED = "ignored"
REFUSED = "refused"

KIND_WORKBENCH = "workbench"
KIND_SKYPILOT = "skypilot"
KIND_DSTACK = "dstack"
KIND_NAMES = {KIND_WORKBENCH: "workbench job spec", KIND_SKYPILOT: "SkyPilot task", KIND_DSTACK: "dstack task"}

#: clouds this app rents from, as SkyPilot and dstack name them
PROVIDER_NAMES = {"aws": "aws", "azure": "azure", "alibaba": "alibaba", "aliyun": "alibaba", "local": "local"}
_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgtp]i?b?)?\s*", re.IGNORECASE)
_UNIT_GB = {"k": 1 / 1024 ** 2, "m": 1 / 1024, "g": 1.0, "t": 1024.0, "p": 1024.0 ** 2}


@dataclass(frozen=True)
class FieldNote:
    """What became of one field of the imported file."""

    line: int
    field: str  # as written in the source, e.g. "resources.accelerators"
    status: str  # MAPPED, IGNORED or REFUSED
    detail: str  # what it became, or why it was ignored or refused
    target: str = ""  # our top-level field it went to (mapped only)

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "status": self.status, "detail": self.detail,
                "target": self.target or None}


@dataclass(frozen=True)
class ImportResult:
    """A job file read into our spec; ``spec`` is None when a field was refused."""

    kind: str  # KIND_WORKBENCH, KIND_SKYPILOT or KIND_DSTACK
    source: str
    spec: JobSpec | None
    notes: tuple[FieldNote, ...] = ()

    @property
    def refused(self) -> tuple[FieldNote, ...]:
        return tuple(n for n in self.notes if n.status == REFUSED)

    def require_spec(self) -> JobSpec:
        """The spec, or a SpecError naming every refused field (file:line: field: why)."""
        if self.spec is not None:
            return self.spec
        lines = [f"{self.source}:{n.line}: {n.field}: {n.detail}" for n in self.refused]
        raise SpecError("\n".join(lines) or f"{self.source}: nothing to run",
                        hint=f"`workbench convert {self.source}` shows how each field of this "
                             f"{KIND_NAMES[self.kind]} was read")


class ImportReader(NodeReader):
    """A NodeReader that keeps field notes; the base of the SkyPilot and dstack importers."""

    kind = KIND_WORKBENCH

    def __init__(self, source: str, base_dir: Path | None = None) -> None:
        super().__init__(source, base_dir)
        self.notes: list[FieldNote] = []

    # -- notes ----------------------------------------------------------------
    def mapped(self, node: Node, field: str, detail: str, target: str) -> None:
        self.notes.append(FieldNote(node.start_mark.line + 1, field, MAPPED, detail, target))

    def ignored(self, node: Node, field: str, why: str) -> None:
        self.notes.append(FieldNote(node.start_mark.line + 1, field, IGNORED, why))

    def refused(self, node: Node, field: str, why: str) -> None:
        self.notes.append(FieldNote(node.start_mark.line + 1, field, REFUSED, why))

    def result(self, build: Any) -> ImportResult:
        """``build()`` makes the spec unless something was refused (then it may lack parts)."""
        notes = tuple(sorted(self.notes, key=lambda n: n.line))
        if any(n.status == REFUSED for n in notes):
            return ImportResult(self.kind, self.source, None, notes)
        return ImportResult(self.kind, self.source, build(), notes)

    # -- values -----------------------------------------------------------------
    def text(self, node: Node, path: str) -> str:
        """A scalar as text: strings as they are, numbers as written (``disk_size: 256``)."""
        value = self.scalar(node, path, "a string or number")
        if value is None or isinstance(value, bool):
            self.fail(node, path, f"must be a string or number, got {self.describe(node, value)}")
        return value if isinstance(value, str) else str(node.value)

    def size_gb(self, node: Node, path: str, text: str, default_unit: str = "g") -> float:
        """'64GB', '1024MB', '1TB', '32' (GB) → gigabytes (GiB as both tools count them)."""
        m = _SIZE.fullmatch(text)
        if not m:
            self.fail(node, path, f"must be a size like 64, 64GB or 1TB, got '{text}'")
        unit = (m.group(2) or default_unit)[0].lower()
        value = float(m.group(1)) * _UNIT_GB[unit]
        if not value > 0:
            self.fail(node, path, f"must be more than 0, got '{text}'")
        return value

    def whole(self, node: Node, path: str, value: float, what: str) -> int:
        """Round a count or size up to a whole number (a machine has whole CPUs and GB of disk)."""
        if not math.isfinite(value) or value <= 0:
            self.fail(node, path, f"{what} must be more than 0")
        return max(1, math.ceil(value - 1e-9))

    def gpu_name(self, node: Node, path: str, name: str, count: int = 1) -> GpuRequest:
        """A GPU as SkyPilot and dstack name it ('A100-80GB', 'H100', 'a10g') → our request."""
        name = name.strip()
        memory = None
        m = re.fullmatch(r"(.+?)[-_ ](\d+)\s*GB?", name, re.IGNORECASE)
        if m and canonical_gpu(m.group(1)):
            name, memory = m.group(1), float(m.group(2))
        if name.lower().startswith("tpu") or re.fullmatch(r"v\d+[a-z]*-\d+", name, re.IGNORECASE):
            self.fail(node, path, f"'{name}' is a Google TPU: TPUs cannot be rented here")
        model = canonical_gpu(name)
        if model is None:
            guess = suggest_gpu(name)
            more = f" — did you mean {guess}?" if guess else ""
            self.fail(node, path, f"unknown GPU model '{name}'{more}")
        return GpuRequest(model=model, count=count, min_memory_gb=memory, max_memory_gb=memory)

    def env_name(self, node: Node, path: str, name: str) -> str:
        if not _ENV_NAME.fullmatch(name):
            self.fail(node, path, f"'{name}' is not a variable name (letters, digits and '_', not starting "
                                  "with a digit)")
        return name

    def provider(self, name: str) -> str | None:
        """Our provider id for a cloud name, or None for a cloud this app does not rent from."""
        return PROVIDER_NAMES.get(name.strip().lower())

    def job_name(self, node: Node | None, text: str | None) -> str:
        """The job's name: the file's (made safe), else one from the file name or its folder."""
        raw = text if text is not None else _name_from_path(self.source)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw.strip()).strip("-._")[:63] or "job"
        if node is not None:
            if safe == raw:
                self.mapped(node, "name", f"name: {safe}", "name")
            else:
                self.mapped(node, "name", f"name: {safe} (letters, digits, '_', '.', '-' only here)", "name")
        return safe if _NAME_OK.fullmatch(safe) else "job"

    def local_dir(self, node: Node, path: str, text: str) -> Path | None:
        """A local path named by the file: relative to the file's folder, '~' expanded.

        Returns the resolved folder; None when it is a file (the caller refuses it);
        a path that does not exist is an error.
        """
        p = Path(os.path.expanduser(text))
        if not p.is_absolute():
            p = (self.base_dir or Path.cwd()) / p
        p = p.resolve()
        if not p.exists():
            self.fail(node, path, f"'{text}' does not exist (looked for {p})")
        return p if p.is_dir() else None

    def storage_uri(self, node: Node, path: str, uri: str, dest: str, mode: StorageMode,
                    how: str) -> StorageMount | None:
        """A bucket address → a storage mount; a store we cannot reach is refused (None)."""
        try:
            parsed = parse_storage_uri(uri)
        except ValueError as e:
            scheme = uri.partition("://")[0].lower()
            if scheme in ("gs", "gcs", "r2", "cos", "oci", "nebius", "hf"):
                self.refused(node, path, f"'{uri}': {scheme}:// storage cannot be mounted here (S3, Azure Blob "
                                         "and OSS can)")
                return None
            self.fail(node, path, str(e))
        self.mapped(node, path, f"storage: {dest} ← {parsed} ({mode.value}{how})", "storage")
        return StorageMount(dest, str(parsed), mode)


def _name_from_path(source: str) -> str:
    p = Path(source)
    name = p.name
    for suffix in (".dstack.yml", ".dstack.yaml", ".sky.yaml", ".sky.yml", ".yaml", ".yml"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name or p.resolve().parent.name or "job"
