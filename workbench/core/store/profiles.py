"""The store's profiles table: a named account of a provider, with its region, endpoint and settings.

No secrets here (they live in the keyring, ``workbench.core.providers.credentials``).
Mixed into :class:`~workbench.core.store.database.Store` (see :mod:`.tables`).
"""

from __future__ import annotations

import json
import sqlite3

from workbench.core.domain.errors import NotFoundError
from workbench.core.domain.models import Profile
from workbench.core.store.tables import Tables, dumps


class ProfileTables(Tables):
    """Store methods for profiles."""

    def save_profile(self, p: Profile) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO profiles (name, provider, region, endpoint_url, settings)"
                " VALUES (?, ?, ?, ?, ?)",
                (p.name, p.provider, p.region, p.endpoint_url, dumps(dict(p.settings))),
            )

    @staticmethod
    def _profile(r: sqlite3.Row) -> Profile:
        return Profile(name=r["name"], provider=r["provider"], region=r["region"],
                       endpoint_url=r["endpoint_url"], settings=json.loads(r["settings"]))

    def get_profile(self, name: str) -> Profile:
        rows = self._query("SELECT * FROM profiles WHERE name = ?", (name,))
        if not rows:
            raise NotFoundError(f"no profile named {name!r}",
                                hint="list them with `workbench profile list`, or add one with `workbench profile add`")
        return self._profile(rows[0])

    def list_profiles(self) -> list[Profile]:
        return [self._profile(r) for r in self._query("SELECT * FROM profiles ORDER BY name")]

    def delete_profile(self, name: str) -> None:
        with self._write() as conn:
            gone = conn.execute("DELETE FROM profiles WHERE name = ?", (name,)).rowcount
        if not gone:
            raise NotFoundError(f"no profile named {name!r}", hint="list them with `workbench profile list`")
