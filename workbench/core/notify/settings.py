"""A profile's notification channel, kept where the app keeps a profile's settings and secrets.

* The config (:class:`~.channel.ChannelConfig`) is in the profile's settings as ``notify.*`` keys: stored
  with the profile and mirrored (without secrets) to config/profiles.json like every setting.
* The secrets (:class:`~.channel.ChannelSecrets`) are one keyring entry of the credential store, under
  the username ``@notify/<profile>`` (:data:`KEYRING_OWNER`): no cloud's credentials can have that name,
  provider ids have no ``@``.  Nothing secret is written to disk, to the log or into an error.

The CLI's ``workbench notify`` and the app's settings page call these; the app hands
:func:`write_controller_file`'s file to the controller.  Blocks on the keyring (and writes the store);
any thread.  Errors: NotFoundError (no such profile), ConfigError (an invalid channel), AuthError (keyring
trouble, from the credential store).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core import applog
from workbench.core.notify.channel import (ChannelConfig, ChannelSecrets, from_settings, to_settings, validate,
                                           without_notify)
from workbench.core.notify.secret_file import write_secret_file

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

log = logging.getLogger("workbench.notify")

#: the credential store's "provider" part of the keyring username (``@notify/<profile>``)
KEYRING_OWNER = "@notify"


def load(accounts: "Accounts", profile_name: str) -> ChannelConfig:
    """The profile's channel config (channel ``none`` when it has none); NotFoundError for no such profile."""
    profile = accounts.profile(profile_name)
    return from_settings(profile.name, profile.settings)


def load_secrets(accounts: "Accounts", profile_name: str) -> ChannelSecrets:
    """The profile's channel secrets from the keyring (empty when none are stored)."""
    values = accounts.credentials.get(KEYRING_OWNER, profile_name)
    known = {k: v for k, v in values.items() if k in ChannelSecrets.__dataclass_fields__}
    secrets = ChannelSecrets(**known)
    for value in secrets.values():
        applog.register_secret(value)
    return secrets


def save(accounts: "Accounts", profile_name: str, config: ChannelConfig,
         secrets: ChannelSecrets | None = None, merge: bool = True) -> ChannelSecrets:
    """Store the profile's channel; returns the secrets now stored.

    ``secrets`` None keeps the stored ones; given, its values replace the stored ones field by field (an
    empty field keeps the stored value), or with ``merge`` False replace them all.  The channel is checked with the secrets it will have
    (ConfigError before anything is written).  The channel ``none`` deletes the stored secrets.  The
    keyring is written before the settings, so a profile never names a channel whose secrets are missing.
    """
    profile = accounts.profile(profile_name)
    stored = load_secrets(accounts, profile.name)
    merged = stored if secrets is None else stored.merged(secrets) if merge else secrets
    if config.channel == "none":
        merged = ChannelSecrets()
    validate(config, merged, where=f"profile {profile.name!r}: notifications")
    for value in merged.values():
        applog.register_secret(value)
    keep = _relevant(config, merged)
    if keep.stored():
        if keep != stored:
            accounts.credentials.set(KEYRING_OWNER, profile.name, keep.to_json())
    elif stored.stored():
        accounts.credentials.delete(KEYRING_OWNER, profile.name)
    settings = {**without_notify(profile.settings), **({} if config.channel == "none" else to_settings(config))}
    if settings != dict(profile.settings):
        accounts.save_profile(dataclasses.replace(profile, settings=settings))
    log.info("notifications of %s: %s (%s), secrets stored: %s", profile.name, config.channel,
             config.format if config.channel == "webhook" else config.smtp_tls, ", ".join(keep.stored()) or "none")
    return keep


def clear(accounts: "Accounts", profile_name: str) -> None:
    """Turn the profile's notifications off and delete their secrets."""
    save(accounts, profile_name, ChannelConfig())


def write_controller_file(accounts: "Accounts", profile_name: str, path: Path) -> Path:
    """Write the profile's channel (config and secrets) to the controller's 0600 file at ``path``."""
    return write_secret_file(path, profile_name, load(accounts, profile_name), load_secrets(accounts, profile_name))


def _relevant(config: ChannelConfig, secrets: ChannelSecrets) -> ChannelSecrets:
    """Only the secrets the channel uses (a webhook's URL and signing secret, or the mail password)."""
    if config.channel == "webhook":
        return ChannelSecrets(webhook_url=secrets.webhook_url, signing_secret=secrets.signing_secret)
    if config.channel == "smtp":
        return ChannelSecrets(smtp_password=secrets.smtp_password if config.smtp_user else "")
    return ChannelSecrets()
