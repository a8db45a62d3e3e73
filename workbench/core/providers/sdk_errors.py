"""One shape for a cloud plugin's SDK-error table, and one way to call an SDK so only workbench errors leave.

Every cloud answers a failed call with an error *code* (``InsufficientInstanceCapacity``,
``SkuNotAvailable``, ``InvalidAccessKeyId.NotFound`` …) and an HTTP status.  A plugin lists what each
code means as :class:`ErrorRule` rows of an :class:`ErrorTable`, in the order they are tried::

    TABLE = ErrorTable(
        ErrorRule("capacity", CapacityError, "{cloud} has no capacity for {instance}{where} ({code})",
                  hint="try another region or size", codes=("InsufficientInstanceCapacity",)),
        ErrorRule("transient", TransientError, "{cloud} is busy while {what} ({code})",
                  hint="retry in a minute", codes=("Throttling",), statuses=(429,), min_status=500),
    )
    rule = TABLE.find(code, status, text)          # the first rule that matches, or None
    error = rule.build(what=..., code=..., ...)    # the error class with the message and hint filled in

Messages and hints are ``str.format`` templates over the fields the plugin passes (a missing field
reads as empty).  :func:`scrub` passes a built error through :func:`redaction.redact` with the
profile's secret values; :func:`mapped` turns any non-workbench exception raised inside a ``with``
block into the plugin's error (``try/except → raise translate(exc)`` written once).

Pure Python, no SDK import; safe on any thread (tables are immutable).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.redaction import redact


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


@dataclass(frozen=True)
class ErrorRule:
    """What a family of error codes means: the workbench error class, its message and hint templates.

    A rule matches when the code is one of ``codes`` (or starts with one of ``prefixes``), or when the
    HTTP status is in ``statuses`` or at least ``min_status``; ``when`` (a test on the error's text)
    must also hold when given.  ``name`` lets a plugin special-case a family (e.g. naming the quota).
    """

    name: str
    error: type[WorkbenchError]
    message: str
    hint: str | None = None
    codes: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    pattern: str | None = None  # a regular expression the code must match (search)
    statuses: tuple[int, ...] = ()
    min_status: int | None = None
    when: Callable[[str], bool] | None = None

    def matches(self, code: str, status: int, text: str, ignore_case: bool) -> bool:
        c = code.lower() if ignore_case else code
        hit = (c in self._codes(ignore_case) or (bool(c) and c.startswith(self._prefixes(ignore_case)))
               or (self.pattern is not None and bool(c)
                   and re.search(self.pattern, code, re.IGNORECASE if ignore_case else 0) is not None)
               or status in self.statuses or (self.min_status is not None and status >= self.min_status))
        return hit and (self.when is None or self.when(text))

    def _codes(self, ignore_case: bool) -> tuple[str, ...]:
        return tuple(x.lower() for x in self.codes) if ignore_case else self.codes

    def _prefixes(self, ignore_case: bool) -> tuple[str, ...]:
        return tuple(x.lower() for x in self.prefixes) if ignore_case else self.prefixes

    def build(self, **fields: object) -> WorkbenchError:
        """The error with ``message`` and ``hint`` filled in from ``fields`` (missing ones read as '')."""
        values = _Blank({k: "" if v is None else v for k, v in fields.items()})
        hint = self.hint.format_map(values) if self.hint else self.hint
        return self.error(self.message.format_map(values), hint)


class ErrorTable:
    """A plugin's error rules, tried in order (the first match wins)."""

    def __init__(self, *rules: ErrorRule, ignore_case: bool = False) -> None:
        self.rules = rules
        self.ignore_case = ignore_case

    def find(self, code: str, status: int = 0, text: str = "") -> ErrorRule | None:
        """The first rule matching the code, status and text; None when no rule does."""
        return next((r for r in self.rules if r.matches(code or "", status or 0, text, self.ignore_case)), None)

    def rule(self, name: str) -> ErrorRule:
        """The rule called ``name`` (KeyError when there is none: a plugin bug, found by its tests)."""
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(name)

    def codes(self, name: str) -> tuple[str, ...]:
        return self.rule(name).codes


def scrub(error: WorkbenchError, secrets: Iterable[str]) -> WorkbenchError:
    """``error`` with every secret value redacted from its message and hint (the same object)."""
    values = [s for s in secrets if s]
    if values:
        error.message = redact(error.message, values)
        error.hint = redact(error.hint, values) if error.hint else error.hint
        error.args = (error.message,)
    return error


@contextmanager
def mapped(translate: Callable[[BaseException], WorkbenchError]) -> Iterator[None]:
    """Run the block; a workbench error passes unchanged, anything else is raised as ``translate(exc)``.

    ``Exception`` only: KeyboardInterrupt and SystemExit pass as they are.  The original exception is
    not chained (its text may carry SDK internals); the plugin's translation names the cause.
    """
    try:
        yield
    except WorkbenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - translated, never lost
        raise translate(exc) from None
