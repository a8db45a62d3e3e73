"""Read a YAML document as a tree of nodes with line numbers, for strict validators.

PyYAML's ``safe_load`` gives plain dicts, which lose line numbers; a validator of
hand-written files (our job spec, and the SkyPilot / dstack files we import) must
say ``file:line: field: problem``.  :class:`NodeReader` composes the document with
the SafeLoader (never arbitrary objects) and offers typed readers that fail with a
:class:`SpecError` pointing at the node.  Pure: no I/O beyond the text it is given.
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path
from typing import Any, NoReturn, Sequence

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.errors import SpecError

NULL_TAG = "tag:yaml.org,2002:null"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
OFF_WORDS = {"off", "none", "null", "no", "false", "never", "unlimited", "disabled"}
#: the deepest nesting of lists and mappings a spec may have (validators walk it recursively)
MAX_DEPTH = 64
#: the longest duration accepted (366 days)
MAX_MINUTES = 366 * 24 * 60
_DURATION_RE = re.compile(r"(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?\s*(?:(\d+)\s*s(?:ec)?)?",
                          re.IGNORECASE)
DURATION_FORMS = "minutes (e.g. 90) or a duration like '90m', '2h', '1d', '1h30m'"


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """' — did you mean 'x'?' for a near miss, else the list of choices."""
    # Lower-case first so 'Name' or 'GPU' still find their field.
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    if match:
        return f" — did you mean '{lowered[match[0]]}'?"
    return f" — expected one of: {', '.join(choices)}"


def parse_seconds(text: str) -> int | None:
    """'90' (minutes), '90m', '2h', '1d', '1h30m', '30s' → seconds; None when not a duration."""
    text = text.strip()
    if text.isdecimal():
        return int(text) * 60
    match = _DURATION_RE.fullmatch(text)
    if not match or not any(match.groups()):
        return None
    days, hours, mins, secs = (int(g or 0) for g in match.groups())
    return ((days * 24 + hours) * 60 + mins) * 60 + secs


#: PyYAML's problems (a pattern over "context | problem") → what they mean, in the user's words
_PLAIN_YAML = (
    (re.compile(r"expected <block end>, but found '<block sequence start>'"),
     "a list item ('- …') is not indented like the lines before it"),
    (re.compile(r"expected <block end>, but found"),
     "the indentation does not line up: this line is indented differently from the keys before it"),
    (re.compile(r"mapping values are not allowed here"),
     "a second ':' on one line: indent a nested key on a line of its own, or quote a value that contains ': '"),
    (re.compile(r"found character '\\t'"), "a tab character: indent with spaces"),
    (re.compile(r"scanning a quoted scalar .*end of stream"), "a quoted value is never closed"),
    (re.compile(r"flow sequence .*expected ',' or '\]'"), "a '[' list is not closed with ']' (or a comma is missing)"),
    (re.compile(r"flow mapping .*expected ',' or '\}'"), "a '{' mapping is not closed with '}' (or a comma is missing)"),
    (re.compile(r"could not find expected ':'"), "a line that is neither 'key: value' nor a list item: is a ':' missing?"),
    (re.compile(r"found undefined alias"), "an alias (*name) with no anchor (&name) before it"),
)


def plain_yaml_problem(context: str | None, problem: str | None) -> str | None:
    """What a PyYAML parse error means, in plain words (None when it is not one we know)."""
    text = f"{context or ''} | {problem or ''}"
    return next((words for rx, words in _PLAIN_YAML if rx.search(text)), None)


def _check_depth(root: Node | None, source: str) -> None:
    """SpecError when lists and mappings nest deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(root, 1)] if root is not None else []
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SpecError(f"{source}:{node.start_mark.line + 1}: invalid YAML: nested more than {MAX_DEPTH} "
                            "levels deep (a spec never needs that many)")
        if isinstance(node, SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, MappingNode):
            stack.extend((child, depth + 1) for pair in node.value for child in pair)


class NodeReader:
    """Typed readers over composed YAML nodes; every failure names ``source:line: path``."""

    def __init__(self, source: str, base_dir: Path | None = None) -> None:
        self.source = source
        self.base_dir = base_dir
        self._constructor = SafeConstructor()

    def fail(self, node: Node, path: str, problem: str) -> NoReturn:
        where = f"{path}: " if path else ""
        raise SpecError(f"{self.source}:{node.start_mark.line + 1}: {where}{problem}")

    def compose(self, text: str) -> Node | None:
        """The document's node tree; SpecError for invalid YAML or one nested deeper than :data:`MAX_DEPTH`."""
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except RecursionError:  # PyYAML's composer recurses per level: thousands of them exhaust the stack
            raise SpecError(f"{self.source}:1: invalid YAML: nested too deeply (a spec never needs more than "
                            f"{MAX_DEPTH} levels)") from None
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark else 1
            problem = e.problem or e.context or str(e)
            if e.problem and e.context and not e.context.startswith("while "):
                # "but found another document" alone does not say what was expected.
                problem = f"{e.context}, {e.problem}"
            plain = plain_yaml_problem(e.context, e.problem)
            if plain is not None:  # the parser's own words ("<block mapping start>") say nothing to a user
                if "closed" in plain and e.context_mark is not None:  # point at where it was opened
                    mark = e.context_mark
                    line = mark.line + 1
                problem = plain + (f" (column {mark.column + 1})" if mark else "")
            raise SpecError(f"{self.source}:{line}: invalid YAML: {problem}") from e
        except yaml.reader.ReaderError as e:  # control characters and the like
            line = text.count("\n", 0, max(e.position, 0)) + 1
            problem = f"unacceptable character #x{e.character:04x}: {e.reason}"
            raise SpecError(f"{self.source}:{line}: invalid YAML: {problem}") from e
        except yaml.YAMLError as e:
            raise SpecError(f"{self.source}:1: invalid YAML: {e}") from e
        _check_depth(root, self.source)
        return root

    @staticmethod
    def is_null(node: Node) -> bool:
        return isinstance(node, ScalarNode) and node.tag == NULL_TAG

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
        self.check_tag(node, path, MAP_TAG)
        seen: set[str] = set()
        for key_node, _ in node.value:
            # PyYAML keeps the last of repeated keys; a forgotten earlier one is a bug.
            if isinstance(key_node, ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    self.fail(key_node, join(path, key_node.value), "appears twice in the same mapping")
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
                self.fail(key_node, join(path, key), "unknown field" + did_you_mean(key, known))
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
            self.check_tag(node, path, SEQ_TAG)
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

    def seconds(self, node: Node, path: str, value: Any, low_s: int = 1) -> int:
        """A duration in seconds: minutes as a number, or '90m', '2h', '1d', '1h30m', '30s'."""
        secs: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            secs = value * 60
        elif isinstance(value, str):
            secs = parse_seconds(value)
        if secs is None:
            self.fail(node, path, f"must be {DURATION_FORMS}, got {self.describe(node, value)}")
        if secs < max(low_s, 1):
            what = "longer than 0 minutes" if low_s <= 60 and secs <= 0 else f"at least {low_s} seconds"
            self.fail(node, path, f"must be {what}, got {self.describe(node, value)}")
        if secs > MAX_MINUTES * 60:  # a guard of centuries is no guard: say so instead of accepting it
            self.fail(node, path, f"must be at most {MAX_MINUTES // (24 * 60)} days, got {self.describe(node, value)}")
        return secs

    def minutes(self, node: Node, path: str, value: Any) -> int:
        """A duration in whole minutes (> 0)."""
        secs = self.seconds(node, path, value, low_s=1)
        if secs % 60:
            self.fail(node, path, f"must be whole minutes, got {self.describe(node, value)}")
        return secs // 60
