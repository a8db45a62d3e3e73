"""Every user-visible string is translated to Simplified Chinese, and the compiled catalogue is current."""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import i18n as catalog  # noqa: E402  (scripts/i18n.py)

from workbench.ui import i18n  # noqa: E402

TS = ROOT / "workbench" / "ui" / "i18n" / "workbench_zh_CN.ts"


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def test_every_tr_call_takes_a_literal_or_a_marked_constant():
    _strings, problems = catalog.extract()
    assert problems == []


def test_every_string_has_a_finished_zh_cn_translation():
    missing = catalog.missing("zh_CN")
    assert missing == [], f"{len(missing)} strings lack a zh_CN translation; run `make i18n` and translate"


def test_translations_keep_placeholders_and_mnemonics():
    for src, (text, _finished) in catalog.read_ts(TS).items():
        assert _fields(src) == _fields(text), f"placeholders differ: {src!r} → {text!r}"
        if re.search(r"&\w", src):
            assert "&" in text, f"mnemonic lost: {src!r} → {text!r}"


def test_compiled_catalogue_matches_the_ts(qapp):
    strings, _ = catalog.extract()
    expected = catalog.read_ts(TS)
    t = QTranslator()
    assert t.load(str(TS.with_suffix(".qm"))), "workbench_zh_CN.qm is missing: run `make i18n`"
    # lrelease -removeidentical drops translations equal to their source ("{n} GB"): Qt then shows the source
    stale = [s for s in strings if expected.get(s, ("", False))[1]
             and (t.translate(i18n.CONTEXT, s) or s) != expected[s][0]]
    assert stale == [], f"the .qm is older than the .ts for {len(stale)} strings: run `make i18n`"


def test_window_in_chinese_shows_chinese(qtbot, accounts, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LANG", "zh_CN")
    try:
        assert i18n.install("zh_CN") == "zh_CN"
        from workbench.ui.shell.main_window import MainWindow

        win = MainWindow(accounts, refresh_ms=60_000)
        qtbot.addWidget(win)
        assert win.windowTitle() != "Cloud GPU Workbench"
        assert re.search(r"[\u4e00-\u9fff]", win.stop_all_action.text())
        english = [a.text() for a in win.findChildren(type(win.stop_all_action))
                   if a.text() and re.fullmatch(r"[&A-Za-z …]+", a.text())
                   and a.text() not in i18n.LANGUAGES.values()]  # language names stay native
        assert english == [], f"untranslated actions: {english}"
    finally:
        i18n.install("en")
    assert QCoreApplication.translate(i18n.CONTEXT, "Stop all billing") == "Stop all billing"


@pytest.mark.parametrize("setting,system,expected", [("zh_CN", "en_US", "zh_CN"), ("en", "zh_CN", "en"),
                                                     ("system", "zh_TW", "zh_CN"), ("system", "de_DE", "en")])
def test_language_follows_the_system_with_an_override(monkeypatch, setting, system, expected):
    from PySide6.QtCore import QLocale

    monkeypatch.setattr(QLocale, "system", staticmethod(lambda: QLocale(system)))
    assert i18n.resolve_language(setting) == expected
