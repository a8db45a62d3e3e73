"""Linux shared-library facts from ``objdump -p`` (binutils; PyInstaller needs it anyway).

Used at build time to drop libraries that only trimmed Qt plugins needed, to
work out which system libraries the bundle still needs (the .deb's Depends),
and to check that every library the bundle links resolves.  Linux only.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

_ELF_MAGIC = b"\x7fELF"


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == _ELF_MAGIC
    except OSError:
        return False


@dataclass(frozen=True)
class ElfInfo:
    needed: tuple[str, ...]
    #: symbol versions required from each library, e.g. {"libc.so.6": {"GLIBC_2.34", ...}}
    versions: dict[str, frozenset[str]] = field(default_factory=dict)


@lru_cache(maxsize=None)
def info(path: str) -> ElfInfo:
    """NEEDED entries and required symbol versions of one ELF file (empty for a non-ELF file)."""
    if not is_elf(Path(path)):
        return ElfInfo(())
    out = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=False).stdout
    needed = tuple(re.findall(r"^\s*NEEDED\s+(\S+)", out, flags=re.M))
    versions: dict[str, set[str]] = {}
    current = None
    in_refs = False
    for line in out.splitlines():
        if line.startswith("Version References:"):
            in_refs = True
            continue
        if in_refs:
            m = re.match(r"\s*required from (\S+):", line)
            if m:
                current = m.group(1)
                versions.setdefault(current, set())
                continue
            m = re.match(r"\s*0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+\s+(\S+)", line)
            if m and current:
                versions[current].add(m.group(1))
                continue
            if line.strip() == "":
                in_refs = False
    return ElfInfo(needed, {k: frozenset(v) for k, v in versions.items()})


def needed(path: str | Path) -> tuple[str, ...]:
    return info(str(path)).needed


def orphans(kept: dict[str, str], dropped: dict[str, str], needed_of=needed) -> set[str]:
    """Libraries among ``kept`` that only dropped binaries needed.

    ``kept`` / ``dropped`` map a bundle path (``libgtk-3.so.0``,
    ``PySide6/Qt/plugins/…``) to the file on disk.  A kept library is an
    orphan when something dropped needs it (directly or through other
    libraries) and nothing else kept needs it — so a library loaded only by
    ``ctypes`` (no NEEDED edge anywhere) is never touched.
    """
    by_soname = {Path(dest).name: dest for dest in kept}

    def closure(roots):
        seen, todo = set(), list(roots)
        while todo:
            src = todo.pop()
            for lib in needed_of(src):
                dest = by_soname.get(lib)
                if dest is not None and dest not in seen:
                    seen.add(dest)
                    todo.append(kept[dest])
        return seen

    candidates = closure(dropped.values())
    reached = closure(src for dest, src in kept.items() if dest not in candidates)
    return candidates - reached


def glibc_floor(paths) -> str | None:
    """The highest ``GLIBC_x.y`` symbol version any of ``paths`` requires (the libc6 >= of a Depends)."""
    best: tuple[int, ...] = ()
    for p in paths:
        for names in info(str(p)).versions.values():
            for v in names:
                m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)*)", v)
                if m:
                    best = max(best, tuple(int(x) for x in m.group(1).split(".")))
    return ".".join(map(str, best)) if best else None
