"""The small part of OData ``$filter`` that ARM list calls and the Retail Prices API accept.

Grammar: ``expr := term (('and'|'or') term)*`` with ``and`` binding tighter,
``term := '(' expr ')' | field 'eq' 'literal' | contains(field, 'literal')``.
Field names compare case-insensitively (ARM) and values exactly, except where
the caller asks for case-insensitive values (Retail Prices before 2023 did).
Anything else raises ValueError, which the server answers with HTTP 400 as Azure does.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

_TOKEN = re.compile(r"\s*(\(|\)|,|'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_./:-]*)")

Predicate = Callable[[Mapping[str, Any]], bool]


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"invalid $filter near {text[pos:pos + 20]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def parse(text: str, getter: Callable[[Mapping[str, Any], str], Any] | None = None,
          ignore_case: bool = False) -> Predicate:
    """A predicate for ``text``; ``getter(item, field)`` reads a field (default: case-insensitive key)."""
    get = getter or _get
    toks = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def take(expected: str | None = None) -> str:
        nonlocal pos
        if pos >= len(toks):
            raise ValueError("unexpected end of $filter")
        tok = toks[pos]
        if expected is not None and tok.lower() != expected:
            raise ValueError(f"expected {expected!r} in $filter, found {tok!r}")
        pos += 1
        return tok

    def literal() -> str:
        tok = take()
        if not (tok.startswith("'") and tok.endswith("'")):
            raise ValueError(f"expected a quoted value in $filter, found {tok!r}")
        return tok[1:-1].replace("''", "'")

    def same(a: Any, b: str) -> bool:
        if a is None:
            return False
        return str(a).lower() == b.lower() if ignore_case else str(a) == b

    def term() -> Predicate:
        if peek() == "(":
            take("(")
            inner = expr()
            take(")")
            return inner
        name = take()
        if name.lower() == "contains":
            take("(")
            field = take()
            take(",")
            value = literal()
            take(")")
            return lambda item: value.lower() in str(get(item, field) or "").lower()
        take("eq")
        value = literal()
        return lambda item: same(get(item, name), value)

    def conj() -> Predicate:
        parts = [term()]
        while (peek() or "").lower() == "and":
            take()
            parts.append(term())
        return lambda item: all(p(item) for p in parts)

    def expr() -> Predicate:
        parts = [conj()]
        while (peek() or "").lower() == "or":
            take()
            parts.append(conj())
        return lambda item: any(p(item) for p in parts)

    result = expr()
    if pos != len(toks):
        raise ValueError(f"unexpected {toks[pos]!r} in $filter")
    return result


def _get(item: Mapping[str, Any], field: str) -> Any:
    for k, v in item.items():
        if k.lower() == field.lower():
            return v
    return None
