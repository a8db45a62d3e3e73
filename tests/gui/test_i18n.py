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


#: words that stay as they are in the Chinese UI: product and provider names, keys, units, standards
NAMES = {"alibaba", "aws", "azure", "local", "ctrl", "shift", "gnome", "kwallet", "keepassxc", "secret", "service",
         "gnome-keyring", "vcpu", "nvidia", "slurm", "yaml", "skypilot", "dstack", "jupyter", "tensorboard",
         "workbench", "python", "docker", "linux", "windows", "macos", "keychain", "https", "http", "gbps", "rdma"}
#: the providers' own names, as they call themselves
PROPER_NAMES = ("Amazon Web Services", "Microsoft Azure", "Alibaba Cloud")


def _english_words(text: str, names: set[str] = NAMES, proper: tuple[str, ...] = ()) -> list[str]:
    """Words of four or more Latin letters that are not names (tokens with digits, dots or dashes are ids)."""
    text = re.sub(r"<[^>]+>", " ", text or "")
    for name in (*PROPER_NAMES, *proper):
        text = text.replace(name, " ")
    words = []
    for token in re.split(r"[\s,;:()（）“”\"'/·|…]+", text):
        if not token or re.search(r"[\d._\-@]", token):
            continue
        for word in re.findall(r"[A-Za-z]{4,}", token):
            if word.lower() not in names:
                words.append(word)
    return words


def _data_names() -> set[str]:
    """Names that stay as they are in table cells: regions, instance types and GPU models of the catalog."""
    from workbench.core.money.planner import snapshot_offers

    return {w.lower() for o in snapshot_offers() for v in (o.region, o.instance_type, o.gpu_model or "")
            for w in re.findall(r"[A-Za-z]+", v)}


def _cells(view) -> list[str]:
    """The display text of every cell of a table (the first 300 rows)."""
    from PySide6.QtCore import Qt

    model = view.model()
    return [str(model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole) or "")
            for r in range(min(300, model.rowCount())) for c in range(model.columnCount())]


def test_every_view_in_chinese_shows_no_english_words(qtbot, accounts, monkeypatch):
    """Issue 29: walk every view of the main window in zh_CN; a label, button, box title, tab, column
    header or table cell with an English word (names aside) fails: the cells include what the core writes
    (the planner's notes, price sources, availability)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QGroupBox, QLabel, QTabBar

    monkeypatch.setenv("WORKBENCH_LANG", "zh_CN")
    try:
        assert i18n.install("zh_CN") == "zh_CN"
        from workbench.ui.shell.main_window import VIEWS, MainWindow

        win = MainWindow(accounts, refresh_ms=60_000)
        qtbot.addWidget(win)
        win.resize(1400, 900)
        win.show()
        found: dict[str, set[str]] = {}
        names = NAMES | _data_names()
        # providers' names as they call themselves (test plugins included: whichever a test put on the path)
        providers = tuple(e.display_name for e in accounts.entries.values() if e.display_name)
        pages = [(key, None) for key, _, _ in VIEWS] + [("prices", "show_planner")]  # the planner tab too
        for key, show in pages:
            view = win.view(key)
            win.show_view(key)
            if show:  # the planner: its table is walked once the plan is in
                with qtbot.waitSignal(view.planner.planned, timeout=30_000):
                    getattr(view, show)()
            qtbot.waitUntil(view.isVisible, timeout=5_000)
            qtbot.wait(300)  # the view's first worker answers (offers, accounts) have landed or not: both fine
            texts = [w.text() for w in view.findChildren(QLabel) + view.findChildren(QAbstractButton)
                     if w.isVisible()]
            texts += [w.title() for w in view.findChildren(QGroupBox) if w.isVisible()]
            texts += [bar.tabText(i) for bar in view.findChildren(QTabBar) for i in range(bar.count())]
            texts += [str(v.model().headerData(c, Qt.Orientation.Horizontal) or "")
                      for v in view.findChildren(QAbstractItemView) if v.isVisible() and v.model() is not None
                      for c in range(v.model().columnCount())]
            texts += [cell for v in view.findChildren(QAbstractItemView) if v.isVisible() and v.model() is not None
                      for cell in _cells(v)]
            for text in texts:
                if _english_words(text, names, providers):
                    found.setdefault(key, set()).add(text[:120])
        assert found == {}, f"English in the Chinese UI: {found}"
    finally:
        i18n.install("en")
