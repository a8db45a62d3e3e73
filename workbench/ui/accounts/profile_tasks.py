"""The profile editor's work off the UI thread: read what is stored, save, test credentials.

Plain Python (no Qt): the profile dialog and the accounts view run these through
``session.run`` (Save as a change: ``session.mutate`` on the profile's lane), never on the UI thread.
Secret values travel one way only, from the form into these functions: they read
what is stored, merge, and give the UI back non-secret values and the *names* of
stored secrets, never their values.  Errors leave scrubbed of the secrets involved.
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import Identity, Profile, Region
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import CredentialField, Provider
from workbench.core.providers.redaction import redact
from workbench.core.providers.registry import construct, get

log = logging.getLogger("workbench.ui.accounts")


def merge_values(fields: Sequence[CredentialField], stored: Mapping[str, str],
                 entered: Mapping[str, str]) -> dict[str, str]:
    """What to store: an empty secret field keeps the stored value; an empty plain field clears it."""
    merged = dict(stored)
    for f in fields:
        value = entered.get(f.key, "")
        if value:
            merged[f.key] = value
        elif not f.secret:
            merged.pop(f.key, None)
    return merged


def _scrubbed(exc: WorkbenchError, secrets: Mapping[str, str]) -> WorkbenchError:
    """The error with every secret value replaced (a provider should never quote one; belt and braces)."""
    values = list(secrets.values())
    exc.message = redact(exc.message, values)
    exc.hint = redact(exc.hint, values) if exc.hint else exc.hint
    exc.args = (exc.message,)
    return exc


def load_stored(accounts: Accounts, profile: Profile) -> tuple[dict[str, str], frozenset[str]]:
    """(stored non-secret values, keys of stored secret values) for editing; reads the keyring."""
    cls = get(accounts.entries, profile.provider)
    if not cls.credential_fields:
        return {}, frozenset()
    stored = accounts.credentials.get(profile.provider, profile.name)
    secret = {f.key for f in cls.credential_fields if f.secret}
    return ({k: v for k, v in stored.items() if k not in secret},
            frozenset(k for k, v in stored.items() if k in secret and v))


def _secrets(accounts: Accounts, cls: type[Provider], profile: Profile, entered: Mapping[str, str],
             editing: bool) -> dict[str, str]:
    fields = cls.credential_fields
    if not fields:
        return {}
    stored = accounts.credentials.get(profile.provider, profile.name) if editing else {}
    merged = merge_values(fields, stored, entered)
    missing = [f.key for f in fields if not f.optional and not merged.get(f.key)]
    if missing:
        raise ConfigError(f"missing required credential field(s): {', '.join(missing)}")
    return merged


def save_profile(accounts: Accounts, profile: Profile, entered: Mapping[str, str], editing: bool) -> Profile:
    """Store the secrets in the keyring (merged with what is stored when editing), then the profile.

    The keyring goes first: if it refuses, nothing is saved and the form stays as it was.
    Raises AuthError (keyring), ConfigError (missing required field), StoreError.
    """
    cls = get(accounts.entries, profile.provider)
    if cls.credential_fields:
        values = _secrets(accounts, cls, profile, entered, editing)
        if values:
            accounts.credentials.set(profile.provider, profile.name, values)
        elif editing:
            accounts.credentials.delete(profile.provider, profile.name)
    accounts.save_profile(profile)
    accounts.forget(profile.name)
    return profile


def check_form(accounts: Accounts, profile: Profile, entered: Mapping[str, str],
               editing: bool) -> tuple[Identity, list[Region]]:
    """Build a provider from the (unsaved) form and prove its credentials; also list its regions.

    Regions are best effort: a provider that cannot list them still passes the test.
    """
    cls = get(accounts.entries, profile.provider)
    secrets = _secrets(accounts, cls, profile, entered, editing)
    try:
        prov = construct(cls, profile, secrets, accounts.context)
        identity = prov.check_credentials()
    except WorkbenchError as exc:
        raise _scrubbed(exc, secrets) from None
    try:
        regions = list(prov.regions())
    except WorkbenchError as exc:
        log.info("could not list regions of %s/%s: %s", profile.provider, profile.name, exc.message)
        regions = []
    return identity, regions


def setting_choices(accounts: Accounts, profile: Profile, entered: Mapping[str, str],
                    editing: bool) -> Mapping[str, list[tuple[str, str]]]:
    """Values the provider offers for its ``setting_fields`` with these credentials ({} when it cannot say).

    Asked beside a credentials test, also when the test fails (Azure: an identity that sees several
    subscriptions has to pick one before anything else works).
    """
    cls = get(accounts.entries, profile.provider)
    if not cls.setting_fields:
        return {}
    secrets = _secrets(accounts, cls, profile, entered, editing)
    try:
        return construct(cls, profile, secrets, accounts.context).setting_choices()
    except WorkbenchError as exc:
        log.info("no setting choices for %s/%s: %s", profile.provider, profile.name, _scrubbed(exc, secrets).message)
        return {}


def check_saved(accounts: Accounts, profile: Profile) -> Identity:
    """Prove a saved profile's credentials with a freshly built provider (the cache is forgotten)."""
    accounts.forget(profile.name)
    try:
        return accounts.provider(profile).check_credentials()
    except WorkbenchError as exc:
        try:
            stored = accounts.credentials.get(profile.provider, profile.name)
        except WorkbenchError:
            stored = {}
        raise _scrubbed(exc, stored) from None


# --------------------------------------------------------------------------
