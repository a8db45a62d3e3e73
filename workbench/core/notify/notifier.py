"""Sending a notice through a profile's channel: :func:`send` (one notice, whatever its kind) and
:class:`Notifier` (what the controller and the app's watcher hold: the channel, filtered by the events
the user asked for).

Blocks while it sends (seconds; longer while a platform throttles); any thread.  Errors are the channel
modules' (ConfigError, AuthError, TransientError, DeliveryError), never carrying a secret.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

from workbench.core import applog
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.notify.channel import ChannelConfig, ChannelSecrets, validate
from workbench.core.notify.notice import Notice, notice_from_event

log = logging.getLogger("workbench.notify")


def send(config: ChannelConfig, secrets: ChannelSecrets, notice: Notice, **options: Any) -> None:
    """Send ``notice`` through the channel now (its event filter is not applied: a test message goes out
    too).  ``options`` go to the channel (``timeout``, ``attempts``, ``backoff``, ``sleep``; mail also
    ``ssl_context``).  ConfigError for the channel ``none`` or one that is set up incompletely."""
    if config.channel == "none":
        raise ConfigError("no notification channel is set up for this profile",
                          hint="workbench notify set --profile P --channel webhook|smtp")
    validate(config, secrets, where=f"notifications of profile {notice.profile!r}" if notice.profile
             else "notifications")
    for value in secrets.values():
        applog.register_secret(value)
    if config.channel == "webhook":
        from workbench.core.notify.webhook import post

        post(config, secrets, notice, **options)
    else:
        from workbench.core.notify.mail import send_mail

        send_mail(config, secrets, notice, **options)


class Notifier:
    """A profile's channel, ready to send: notices of kinds the user did not ask for are dropped.

    Thread-safe (it holds no state that changes).  ``sender`` replaces :func:`send` (tests).
    """

    def __init__(self, config: ChannelConfig, secrets: ChannelSecrets, profile: str = "",
                 sender: Callable[..., None] = send, **options: Any) -> None:
        self.config = config
        self.profile = profile
        self._secrets = secrets
        self._sender = sender
        self._options = options

    def __repr__(self) -> str:
        return f"Notifier(profile={self.profile!r}, channel={self.config.channel!r}, format={self.config.format!r})"

    @classmethod
    def from_file(cls, path: Path, **options: Any) -> "Notifier":
        """The notifier of a controller's secret file (:func:`~.secret_file.load_secret_file`)."""
        from workbench.core.notify.secret_file import load_secret_file

        loaded = load_secret_file(path)
        return cls(loaded.config, loaded.secrets, loaded.profile, **options)

    def wants(self, kind: str) -> bool:
        return self.config.wants(kind)

    def notify(self, notice: Notice) -> bool:
        """Send ``notice`` when its kind is wanted; True when it was sent, False when it was not wanted.
        Raises the channel's error when sending failed."""
        if not self.wants(notice.kind):
            return False
        if not notice.profile and self.profile:
            from dataclasses import replace

            notice = replace(notice, profile=self.profile)
        self._sender(self.config, self._secrets, notice, **self._options)
        return True

    def notify_event(self, event: Any) -> bool:
        """:meth:`notify` for a recovery / guard event; False for an event that is nothing to tell."""
        notice = notice_from_event(event, self.profile)
        return notice is not None and self.notify(notice)

    def try_notify(self, notice: Notice) -> WorkbenchError | None:
        """:meth:`notify` that logs and returns a failure instead of raising it: a watcher goes on with its
        work when a message could not be sent."""
        try:
            self.notify(notice)
        except WorkbenchError as exc:
            log.warning("notice %s for %s not sent: %s", notice.kind, notice.launch_id or "-", exc.message)
            return exc
        return None
