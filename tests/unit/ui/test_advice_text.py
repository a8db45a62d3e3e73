"""The advice and report texts written in core are all marked for translation in the UI, word for word."""

from __future__ import annotations

import ast
import string
from pathlib import Path

from workbench.core.telemetry import advice_rules
from workbench.core.telemetry.report_html import LABELS

UI_TEXT = Path(__file__).resolve().parents[3] / "workbench" / "ui" / "common" / "advice_text.py"


def _marked() -> set[str]:
    tree = ast.parse(UI_TEXT.read_text(encoding="utf-8"))
    return {n.args[0].value for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "N_" and isinstance(n.args[0], ast.Constant)}


def test_every_core_text_is_marked_in_the_ui():
    core = set(advice_rules.TITLES.values()) | set(advice_rules.TEMPLATES) | set(LABELS)
    marked = _marked()
    assert core - marked == set(), "copy the new texts into workbench/ui/common/advice_text.py"
    assert marked - core <= {"high", "medium", "low"}, "texts the core no longer has: remove them"


def test_templates_name_only_the_params_the_rules_fill():
    for template in advice_rules.TEMPLATES:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        assert fields and all(f.isidentifier() for f in fields), template
