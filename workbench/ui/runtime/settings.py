"""The GUI's settings, typed, on QSettings (the platform's native store).

Only preferences and layout live here; state lives in the store and secrets
in the keyring.  ``schema`` is bumped with a migration when a key changes
meaning.  Tests point QSettings at a throwaway folder via ``WORKBENCH_HOME``.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QSettings

SCHEMA = 1


def _qsettings() -> QSettings:
    home = os.environ.get("WORKBENCH_HOME")
    if home:
        return QSettings(os.path.join(home, "config", "gui.ini"), QSettings.Format.IniFormat)
    return QSettings("cloud-gpu-workbench", "Cloud GPU Workbench")


class UiSettings:
    """Typed accessors; every getter has a safe default."""

    def __init__(self, backend: QSettings | None = None) -> None:
        self.q = backend or _qsettings()
        if int(self.q.value("schema", 0) or 0) < SCHEMA:
            self.q.setValue("schema", SCHEMA)

    def _get(self, key: str, default, kind=str):
        v = self.q.value(key, default)
        try:
            if kind is bool and isinstance(v, str):
                return v.lower() in ("1", "true", "yes")
            return kind(v) if v is not None else default
        except (TypeError, ValueError):
            return default

    # -- appearance / language
    @property
    def language(self) -> str:
        return self._get("ui/language", "system")

    @language.setter
    def language(self, value: str) -> None:
        self.q.setValue("ui/language", value)

    @property
    def theme(self) -> str:
        return self._get("ui/theme", "system")

    @theme.setter
    def theme(self, value: str) -> None:
        self.q.setValue("ui/theme", value)

    # -- layout
    @property
    def last_view(self) -> str:
        return self._get("window/last_view", "instances")

    @last_view.setter
    def last_view(self, value: str) -> None:
        self.q.setValue("window/last_view", value)

    def bytes(self, key: str) -> QByteArray | None:
        v = self.q.value(key)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None

    def set_bytes(self, key: str, value: QByteArray) -> None:
        self.q.setValue(key, value)

    # -- behaviour
    @property
    def refresh_seconds(self) -> int:
        return max(2, self._get("refresh/seconds", 10, int))

    @refresh_seconds.setter
    def refresh_seconds(self, value: int) -> None:
        self.q.setValue("refresh/seconds", int(value))

    @property
    def notifications(self) -> bool:
        return self._get("ui/notifications", True, bool)

    @notifications.setter
    def notifications(self, value: bool) -> None:
        self.q.setValue("ui/notifications", bool(value))

    def sync(self) -> None:
        self.q.sync()
