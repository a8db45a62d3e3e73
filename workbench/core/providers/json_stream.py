"""Read a huge JSON document member by member, keeping only the small pieces asked for.

The AWS Price List offer files are one JSON object of several gigabytes (``products`` then
``terms.OnDemand`` then ``terms.Reserved``, each a map of SKU → a small object).  :func:`members`
walks such a document from a file-like object, chunk by chunk, and yields ``(path, key, value)``
for every member of the containers named in ``wanted`` (an object's members or an array's items);
each yielded value is decoded on its own, everything else is decoded and dropped as it passes.
Memory stays at one chunk plus the largest single value.

    for path, sku, product in members(fp, {("products",), ("terms", "OnDemand")}):
        ...

Pure Python on the stdlib's C JSON scanner; safe on any thread (no shared state).  A document that
is not JSON (or a single value bigger than ``max_value_bytes``) raises ValueError naming the offset.
"""

from __future__ import annotations

import codecs
import json
from typing import IO, Any, Iterable, Iterator

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_NUMBER = "0123456789.eE+-"


class _Reader:
    def __init__(self, fp: IO[Any], chunk: int, max_value_bytes: int) -> None:
        self.fp = fp
        self.chunk = chunk
        self.max_value = max_value_bytes
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of the buffer

    def fill(self) -> bool:
        if self.eof:
            return False
        data = self.fp.read(self.chunk)
        text = self.decoder.decode(data if isinstance(data, bytes) else data.encode("utf-8"), final=not data)
        if not data:
            self.eof = True
        self.consumed += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        return bool(data) or bool(text)

    def peek(self) -> str:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return ""

    def expect(self, ch: str) -> None:
        got = self.peek()
        if got != ch:
            raise ValueError(f"expected {ch!r} at offset {self.consumed + self.pos}, found {got or 'the end'!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise ValueError(f"not JSON at offset {self.consumed + exc.pos}: {exc.msg}") from None
                if len(self.buf) - self.pos > self.max_value:
                    raise ValueError(f"a value at offset {self.consumed + self.pos} is larger than "
                                     f"{self.max_value} bytes") from None
                self.fill()
                continue
            # a number may be cut at the chunk's edge ("-2." of "-2.5"): be sure it is complete
            if (isinstance(obj, (int, float)) and not isinstance(obj, bool) and not self.eof
                    and (end == len(self.buf) or self.buf[end] in _NUMBER)):
                self.fill()
                continue
            self.pos = end
            return obj


def members(fp: IO[Any], wanted: Iterable[tuple[str, ...]], *, chunk: int = 1 << 20,
            max_value_bytes: int = 64 << 20) -> Iterator[tuple[tuple[str, ...], str | int, Any]]:
    """Yield ``(path, key, value)`` for each member of every container whose path is in ``wanted``."""
    targets = {tuple(p) for p in wanted}
    prefixes = {t[:i] for t in targets for i in range(len(t))}
    reader = _Reader(fp, chunk, max_value_bytes)
    yield from _walk(reader, (), targets, prefixes)
    if reader.peek() != "":
        raise ValueError(f"unexpected data after the document at offset {reader.consumed + reader.pos}")


def _walk(r: _Reader, path: tuple[str, ...], targets: set, prefixes: set) -> Iterator:
    first = r.peek()
    if first == "[":
        r.pos += 1
        index = 0
        if r.peek() == "]":
            r.pos += 1
            return
        while True:
            if path in targets:
                yield path, index, r.value()
            else:
                r.value()
            index += 1
            sep = r.peek()
            r.pos += 1
            if sep == "]":
                return
            if sep != ",":
                raise ValueError(f"expected ',' or ']' at offset {r.consumed + r.pos - 1}")
    if first != "{":
        raise ValueError(f"expected an object at offset {r.consumed + r.pos}, found {first or 'the end'!r}")
    r.pos += 1
    if r.peek() == "}":
        r.pos += 1
        return
    while True:
        key = r.value()
        if not isinstance(key, str):
            raise ValueError(f"expected a member name at offset {r.consumed + r.pos}")
        r.expect(":")
        sub = path + (key,)
        if path in targets:
            yield path, key, r.value()
        elif sub in targets or sub in prefixes:
            if r.peek() in "{[":
                yield from _walk(r, sub, targets, prefixes)
            else:
                r.value()
        else:
            r.value()
        sep = r.peek()
        r.pos += 1
        if sep == "}":
            return
        if sep != ",":
            raise ValueError(f"expected ',' or '}}' at offset {r.consumed + r.pos - 1}")
