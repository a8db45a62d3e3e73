"""The converted spec as YAML with a comment on every field of the source file (``workbench convert``)."""

from __future__ import annotations

from workbench.core.domain.importers.base import IGNORED, KIND_NAMES, KIND_WORKBENCH, MAPPED, REFUSED, FieldNote, \
    ImportResult
from workbench.core.domain.spec_yaml import spec_yaml_blocks


def note_text(n: FieldNote) -> str:
    """'line 12: resources.accelerators → resources.gpu: 8× A100' or 'line 3: image: why'."""
    sep = " → " if n.status == MAPPED else ": "
    return f"line {n.line}: {n.field}{sep}{n.detail}"


def render_converted(result: ImportResult) -> str:
    """Our YAML for ``result`` with comments; when a field was refused, only the comments."""
    out = [f"# {result.source}: {'a' if result.kind != KIND_WORKBENCH else 'already a'} "
           f"{KIND_NAMES[result.kind]}" + (", converted by `workbench convert`" if result.kind != KIND_WORKBENCH
                                            else "") + "\n"]
    refused = [n for n in result.notes if n.status == REFUSED]
    ignored = [n for n in result.notes if n.status == IGNORED]
    if refused:
        out.append("# Refused — cannot run here yet, so there is no workbench spec:\n")
        out.extend(f"#   {note_text(n)}\n" for n in refused)
    if ignored:
        out.append("# Ignored — no effect here:\n")
        out.extend(f"#   {note_text(n)}\n" for n in ignored)
    if result.spec is None:
        mapped = [n for n in result.notes if n.status == MAPPED]
        if mapped:
            out.append("# Would be mapped:\n")
            out.extend(f"#   {note_text(n)}\n" for n in mapped)
        return "".join(out)
    blocks = spec_yaml_blocks(result.spec)
    keys = {key for key, _ in blocks}
    by_target: dict[str, list[FieldNote]] = {}
    defaults: list[FieldNote] = []
    for n in result.notes:
        if n.status != MAPPED:
            continue
        target = n.target if n.target in keys else ("resources" if n.target == "alternatives" and "resources" in keys
                                                    else "")
        (by_target.setdefault(target, []) if target else defaults).append(n)
    if defaults:
        out.append("# Mapped to the defaults (nothing to write):\n")
        out.extend(f"#   {note_text(n)}\n" for n in defaults)
    out.append("\n")
    for key, text in blocks:
        out.extend(f"# {note_text(n)}\n" for n in by_target.get(key, []))
        out.append(text)
    return "".join(out)
