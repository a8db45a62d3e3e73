"""Job files of other tools (SkyPilot task YAML, dstack task configurations) read into our JobSpec.

:func:`load_job_file` reads any job file: our own spec, or a SkyPilot or dstack one recognised by
its keys, and returns an :class:`ImportResult` with the spec and a note on every field.  Pure: no
I/O beyond reading the file and checking that the local paths it names exist.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.domain.errors import SpecError
from workbench.core.domain.importers.base import (IGNORED, KIND_DSTACK, KIND_NAMES, KIND_SKYPILOT, KIND_WORKBENCH,
                                                  MAPPED, REFUSED, FieldNote, ImportResult)
from workbench.core.domain.importers.detect import detect
from workbench.core.domain.importers.dstack import import_dstack
from workbench.core.domain.importers.skypilot import import_skypilot
from workbench.core.domain.jobspec import MAX_SPEC_BYTES, parse_spec

__all__ = ["load_job_file", "import_text", "ImportResult", "FieldNote", "MAPPED", "IGNORED", "REFUSED",
           "KIND_WORKBENCH", "KIND_SKYPILOT", "KIND_DSTACK", "KIND_NAMES"]


def load_job_file(path: str | os.PathLike[str]) -> ImportResult:
    """Read the job file at ``path`` (ours, SkyPilot's or dstack's).  Raises SpecError for bad input.

    Relative paths in the file are read from its folder.  A refused field does not raise: the
    result has ``spec`` None and the notes say why (:meth:`ImportResult.require_spec` raises).
    """
    source = os.fspath(path)
    try:
        size = Path(source).stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(f"{source}: the job spec is {size / 1e6:.1f} MB; at most {MAX_SPEC_BYTES // 1024} KB",
                            hint="keep data and long scripts in the workdir and refer to them from `run`")
        text = Path(source).read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise SpecError(f"{source}: cannot read job spec: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise SpecError(f"{source}: cannot read job spec: not UTF-8 text ({e.reason} at byte {e.start})") from e
    return import_text(text, source, Path(source).resolve().parent)


def import_text(text: str, source: str = "<job>", base_dir: Path | None = None) -> ImportResult:
    """Like :func:`load_job_file` for ``text`` already read; ``base_dir`` resolves relative paths."""
    kind, root = detect(text, source)
    if kind == KIND_SKYPILOT:
        return import_skypilot(root, source, base_dir)  # type: ignore[arg-type]
    if kind == KIND_DSTACK:
        return import_dstack(root, source, base_dir)  # type: ignore[arg-type]
    return ImportResult(KIND_WORKBENCH, source, parse_spec(text, source=source, base_dir=base_dir))
