"""Words the core writes for people, kept translatable: a template and its values, not a finished string.

The core has no Qt and no language: the CLI shows its words in English, the app in the user's language.
A sentence the core builds from numbers (a planner note: "you pay for the whole 1-year term (8,760 h)
even though the job needs 2,160 h") is therefore a :class:`Phrase`: an English ``str.format`` template,
written as a literal in :func:`phrase` so ``scripts/i18n.py`` extracts it into the catalogues, and the
values to fill in.
``str(phrase)`` is the English text (the CLI, logs, ``--json``); the app shows
``tr(phrase.template).format(**phrase.values)`` (``workbench.ui.common.format.say``).

Values are numbers, dates and names (providers, instance types, GPU models): they are formatted by the
template (``{hours:,.0f}``), so a translation keeps them and may move them.  Fixed words without values
are plain strings marked with :func:`N_` (the app passes them through ``tr()`` too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping


def N_(text: str) -> str:  # noqa: N802 (the gettext convention)
    """Marks an English literal for the translation catalogues; returns it unchanged."""
    return text


@dataclass(frozen=True)
class Phrase:
    """One translatable sentence: ``template.format(**values)``."""

    template: str
    values: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.template.format(**self.values)

    def __format__(self, spec: str) -> str:  # a phrase inside another phrase's values
        return format(str(self), spec)

    def to_json(self) -> dict[str, object]:
        return {"template": self.template, "values": dict(self.values)}


def phrase(template: str, **values: object) -> Phrase:
    """``Phrase(template, values)``; the template must be a literal (``scripts/i18n.py`` extracts it)."""
    return Phrase(template, values)


def joined(parts: Iterable[Phrase | str]) -> str:
    """The English text of several phrases as one note ("a; b; c")."""
    return "; ".join(s for s in (str(p) for p in parts) if s)
