#!/usr/bin/env python3
"""Keep the translation catalogues in step with the code.

    python scripts/i18n.py            extract tr()/N_() literals from workbench/ui (and N_()/phrase()
                                      literals from workbench/core and plugins/), update every
                                      workbench/ui/i18n/workbench_<lang>.ts, compile the .qm files
    python scripts/i18n.py --check    exit 1 listing strings that lack a finished translation
    python scripts/i18n.py --merge zh_CN FILE.json
                                      take {source: translation} from FILE.json as finished
                                      translations, then update and compile as above

Why our own extractor: the app marks strings with a module-level ``tr()`` (one
context for the whole app), which pyside6-lupdate does not recognise in
Python sources.  The .ts files stay in Qt Linguist's format, so translators
can use Linguist, and ``pyside6-lrelease`` compiles them.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI = ROOT / "workbench" / "ui"
I18N = UI / "i18n"
CONTEXT = "Workbench"
MARKERS = {"tr", "N_"}
#: the core and the plugins have no tr(): they mark fixed words with N_() and sentences with values with
#: phrase() (workbench/core/domain/phrase.py); the app translates both where it shows them
CORE = (ROOT / "workbench" / "core", ROOT / "plugins")
CORE_MARKERS = {"N_", "phrase"}


def _marker(node: ast.Call, markers: set[str] = MARKERS) -> str | None:
    f = node.func
    if isinstance(f, ast.Name) and f.id in markers:
        return f.id
    return None


def _sources(root: Path) -> list[tuple[Path, set[str]]]:
    ui = [(p, MARKERS) for p in [*sorted(root.rglob("*.py")), ROOT / "workbench" / "app.py"]]
    if root != UI:
        return ui
    return ui + [(p, CORE_MARKERS) for core in CORE for p in sorted(core.rglob("*.py"))]


def extract(root: Path = UI) -> tuple[dict[str, list[str]], list[str]]:
    """{source string: ["file:line", …]} and a list of problems (non-literal tr() arguments)."""
    found: dict[str, list[str]] = {}
    problems: list[str] = []
    for path, markers in _sources(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            marker = isinstance(node, ast.Call) and _marker(node, markers)
            if marker:
                arg = node.args[0] if len(node.args) == 1 else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.setdefault(arg.value, []).append(f"{rel}:{node.lineno}")
                elif marker in ("N_", "phrase") or not isinstance(arg, (ast.Name, ast.Subscript, ast.Attribute)):
                    # tr(CONSTANT) / tr(TABLE[i]) show N_()-marked literals; anything else
                    # (an f-string, a concatenation, a .format() inside) cannot be translated
                    problems.append(f"{rel}:{node.lineno}: {marker}() needs a string literal "
                                    "(or an N_()-marked constant); use tr('… {name} …').format(name=…)")
    return found, problems


def read_ts(path: Path) -> dict[str, tuple[str, bool]]:
    """{source: (translation, finished)} from a .ts file."""
    if not path.exists():
        return {}
    out = {}
    for msg in ET.parse(path).getroot().iter("message"):
        src = msg.findtext("source") or ""
        tr_el = msg.find("translation")
        text = (tr_el.text or "") if tr_el is not None else ""
        finished = tr_el is not None and tr_el.get("type") not in ("unfinished", "vanished", "obsolete")
        out[src] = (text, finished and bool(text))
    return out


def write_ts(path: Path, lang: str, strings: dict[str, list[str]], old: dict[str, tuple[str, bool]]) -> None:
    ts = ET.Element("TS", version="2.1", language=lang, sourcelanguage="en")
    ctx = ET.SubElement(ts, "context")
    ET.SubElement(ctx, "name").text = CONTEXT
    for src in sorted(strings):
        msg = ET.SubElement(ctx, "message")
        # file only, no line: line numbers would churn the catalogue on every edit
        ET.SubElement(msg, "location", filename="../../../" + strings[src][0].rsplit(":", 1)[0])
        ET.SubElement(msg, "source").text = src
        text, finished = old.get(src, ("", False))
        t = ET.SubElement(msg, "translation")
        t.text = text
        if not finished:
            t.set("type", "unfinished")
    ET.indent(ts)
    body = ET.tostring(ts, encoding="unicode")
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8")


def lrelease() -> list[str]:
    exe = shutil.which("pyside6-lrelease", path=str(Path(sys.executable).parent)) or shutil.which("pyside6-lrelease")
    if exe:
        return [exe]
    import PySide6  # the wheel ships the binary even when no script was installed

    return [str(Path(PySide6.__file__).parent / "lrelease")]


def compile_qm(ts: Path) -> Path:
    qm = ts.with_suffix(".qm")
    subprocess.run([*lrelease(), "-silent", "-removeidentical", str(ts), "-qm", str(qm)], check=True)
    return qm


def missing(lang: str) -> list[str]:
    strings, _ = extract()
    have = read_ts(I18N / f"workbench_{lang}.ts")
    return [s for s in sorted(strings) if not have.get(s, ("", False))[1]]


def main(argv: list[str]) -> int:
    strings, problems = extract()
    for p in problems:
        print(p, file=sys.stderr)
    langs = [p.stem.split("_", 1)[1] for p in sorted(I18N.glob("workbench_*.ts"))] or ["zh_CN"]
    merged: dict[str, dict[str, str]] = {}
    if "--merge" in argv:
        import json

        i = argv.index("--merge")
        merged[argv[i + 1]] = json.loads(Path(argv[i + 2]).read_text(encoding="utf-8"))
    if "--check" in argv:
        bad = 0
        for lang in langs:
            for s in missing(lang):
                print(f"{lang}: untranslated: {s!r} ({', '.join(strings[s][:2])})")
                bad += 1
        return 1 if bad or problems else 0
    for lang in langs:
        ts = I18N / f"workbench_{lang}.ts"
        old = read_ts(ts)
        old.update({src: (text, bool(text)) for src, text in merged.get(lang, {}).items()})
        write_ts(ts, lang, strings, old)
        compile_qm(ts)
        todo = missing(lang)
        print(f"{ts.relative_to(ROOT)}: {len(strings)} strings, {len(todo)} untranslated")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
