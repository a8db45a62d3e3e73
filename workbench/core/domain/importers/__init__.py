"""Job files of other tools (SkyPilot task YAML, dstack task configurations) read into our JobSpec.

:func:`load_job_file` reads any job file: our own spec, or a SkyPilot or dstack one recognised by
its keys, and returns an :class:`ImportResult` with the spec and a note on every field.  Pure: no
I/O beyond reading the file and checking that the local paths it names exist.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.domain.importers.base import (IGNORED, KIND_DSTACK, KIND_NAMES, KIND_SKYPILOT, KIND_WORKBENCH,
                                                  MAPPED, REFUSED, FieldNote, ImportResult)
from workbench.core.domain.importers.detect import detect
from workbench.core.domain.importers.dstack import import_dstack
from workbench.core.domain.importers.skypilot import import_skypilot
from workbench.core.domain.jobspec import parse_spec, read_spec_text

__all__ = ["load_job_file", "import_text", "ImportResult", "FieldNote", "MAPPED", "IGNORED", "REFUSED",
           "KIND_WORKBENCH", "KIND_SKYPILOT", "KIND_DSTACK", "KIND_NAMES"]


def load_job_file(path: str | os.PathLike[str]) -> ImportResult:
    """Read the job file at ``path`` (ours, SkyPilot's or dstack's).  Raises SpecError for bad input.

    Relative paths in the file are read from its folder.  A refused field does not raise: the
    result has ``spec`` None and the notes say why (:meth:`ImportResult.require_spec` raises).
    """
    source = os.fspath(path)
    return import_text(read_spec_text(source), source, Path(source).resolve().parent)


def import_text(text: str, source: str = "<job>", base_dir: Path | None = None) -> ImportResult:
    """Like :func:`load_job_file` for ``text`` already read; ``base_dir`` resolves relative paths."""
    kind, root = detect(text, source)
    if kind == KIND_SKYPILOT:
        return import_skypilot(root, source, base_dir)  # type: ignore[arg-type]
    if kind == KIND_DSTACK:
        return import_dstack(root, source, base_dir)  # type: ignore[arg-type]
    return ImportResult(KIND_WORKBENCH, source, parse_spec(text, source=source, base_dir=base_dir))
