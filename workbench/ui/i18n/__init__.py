"""Translations: every user-visible string goes through :func:`tr`.

English is the source language.  Catalogues live beside this module as
``workbench_<lang>.ts`` (edited by people, kept in git) and ``.qm`` (compiled
with ``pyside6-lrelease``; ``python scripts/i18n.py`` extracts new strings and
recompiles).  One translation context, ``Workbench``, for the whole app.

Strings that must exist before a QApplication (column titles, enum labels)
are marked with :func:`N_` and translated with ``tr()`` where they are shown.
Placeholders use ``str.format`` names so translators can move them:
``tr("{count} billable").format(count=n)`` — never an f-string inside tr().
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

CONTEXT = "Workbench"
HERE = Path(__file__).resolve().parent
#: languages shipped besides English (the source): code → native name
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}

log = logging.getLogger("workbench.ui.i18n")
_installed: list[QTranslator] = []


def tr(text: str) -> str:
    """The current language's version of ``text`` (a literal, so scripts/i18n.py can extract it)."""
    return QCoreApplication.translate(CONTEXT, text)


def N_(text: str) -> str:  # noqa: N802 (the gettext convention)
    """Marks a literal for extraction without translating it yet."""
    return text


def resolve_language(setting: str | None) -> str:
    """``"system"``/None → the system locale when we ship it, else English."""
    if setting and setting != "system":
        return setting if setting in LANGUAGES else "en"
    name = QLocale.system().name()  # e.g. "zh_CN", "en_US"
    if name in LANGUAGES:
        return name
    if name.startswith("zh"):
        return "zh_CN"
    return "en"


def install(language_setting: str | None) -> str:
    """Load the app's and Qt's own catalogue for the chosen language; returns the language used."""
    app = QCoreApplication.instance()
    lang = resolve_language(language_setting)
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    if lang == "en":
        QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
        return lang
    QLocale.setDefault(QLocale(lang))
    ours = QTranslator(app)
    if ours.load(str(HERE / f"workbench_{lang}.qm")):
        app.installTranslator(ours)
        _installed.append(ours)
    else:
        log.warning("no compiled catalogue for %s; showing English", lang)
        return "en"
    qt = QTranslator(app)  # Qt's own strings: standard buttons, file dialogs
    if qt.load(f"qtbase_{lang}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
        _installed.append(qt)
    return lang
