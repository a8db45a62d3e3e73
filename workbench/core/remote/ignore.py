"""What not to upload: ``.gitignore`` and ``.workbenchignore`` rules, git's syntax.

Both files are read in every folder of the workdir; a folder's rules apply below
it, ``.workbenchignore`` after ``.gitignore`` (so ``!pattern`` there can bring back
something git ignores, e.g. a data file the job needs).  Within a file the last
matching pattern wins.  Supported: comments, ``!`` negation, a trailing ``/`` for
folders only, a leading or inner ``/`` anchoring the pattern to the file's folder,
``*``, ``?``, ``[...]`` and ``**``.  As in git, nothing inside an ignored folder can
be brought back.  ``.git`` is never uploaded.

Threading: pure functions and immutable rules; any thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILES = (".gitignore", ".workbenchignore")
ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True)
class Rule:
    base: str  # folder of the ignore file, relative to the workdir ("" = top), posix
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    text: str


def _translate(pat: str) -> str:
    out, i, n = [], 0, len(pat)
    while i < n:
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = pat[i]
            if c == "*":
                out.append("[^/]*")
            elif c == "?":
                out.append("[^/]")
            elif c == "[":
                j = pat.find("]", i + 2 if pat[i + 1:i + 2] in ("!", "^") else i + 1)
                if j < 0:
                    out.append(re.escape(c))
                else:
                    body = pat[i + 1:j]
                    if body[:1] in ("!", "^"):
                        body = "^" + body[1:]
                    out.append("[" + body.replace("\\", "\\\\") + "]")
                    i = j
            elif c == "\\" and i + 1 < n:
                i += 1
                out.append(re.escape(pat[i]))
            else:
                out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_rules(text: str, base: str = "") -> list[Rule]:
    """Rules of one ignore file whose folder is ``base`` (relative, posix)."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip()
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = re.compile(body if anchored else f"(?:.*/)?{body}")
        rules.append(Rule(base, regex, negate, dir_only, raw))
    return rules


class IgnoreRules:
    """The rules in force for one workdir; rules of sub-folders are added while walking."""

    def __init__(self, rules: list[Rule] | None = None) -> None:
        self.rules = list(rules or [])

    def load_folder(self, root: Path, rel: str) -> None:
        """Add the ignore files found in ``root/rel`` (call before looking at its entries)."""
        for name in IGNORE_FILES:
            f = root / rel / name
            try:
                text = f.read_text(encoding="utf-8", errors="replace")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            self.rules.extend(parse_rules(text, rel))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (posix, relative to the workdir) is ignored, given its parents are not."""
        if rel.rsplit("/", 1)[-1] in ALWAYS_SKIPPED:
            return True
        result = False
        for r in self.rules:
            if r.dir_only and not is_dir:
                continue
            if r.base:
                if not rel.startswith(r.base + "/"):
                    continue
                sub = rel[len(r.base) + 1:]
            else:
                sub = rel
            if r.regex.fullmatch(sub):
                result = not r.negate
        return result
