"""A profile's notification channel: what is sent where (:class:`ChannelConfig`, not secret) and the
secrets that reach it (:class:`ChannelSecrets`: the webhook's URL, which carries its token, a signing
secret, the mail password).

The config is kept in the profile's settings under ``notify.*`` keys (:func:`to_settings`,
:func:`from_settings`); the secrets in the keyring (:mod:`.settings`) and, on the controller, in a 0600
file (:mod:`.secret_file`).  :func:`validate` says what is missing or wrong, naming fields, never values.
Plain Python, any thread.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, fields
from typing import Any, Mapping
from urllib.parse import urlsplit

from workbench.core.domain.errors import ConfigError
from workbench.core.notify.notice import EVENT_KINDS

CHANNELS = ("none", "webhook", "smtp")
FORMATS = ("json", "slack", "feishu", "dingtalk", "wecom")
#: formats whose bots can require a signature (the signing secret is used only by them)
SIGNED_FORMATS = ("feishu", "dingtalk")
TLS_MODES = ("starttls", "ssl", "none")
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}

#: the profile settings' prefix: ``notify.channel``, ``notify.format`` …
PREFIX = "notify."
SECRET_KEYS = ("webhook_url", "signing_secret", "smtp_password")


@dataclass(frozen=True)
class ChannelConfig:
    """Where a profile's notices go, without secrets.  ``smtp_port`` 0 is the TLS mode's default port."""

    channel: str = "none"
    format: str = "json"
    events: tuple[str, ...] = EVENT_KINDS
    smtp_host: str = ""
    smtp_port: int = 0
    smtp_tls: str = "starttls"
    mail_from: str = ""
    mail_to: tuple[str, ...] = ()
    smtp_user: str = ""

    def wants(self, kind: str) -> bool:
        """True when this channel is on and asks for notices of ``kind``."""
        return self.channel != "none" and kind in self.events

    @property
    def port(self) -> int:
        return self.smtp_port or DEFAULT_PORTS.get(self.smtp_tls, 587)

    def to_json(self) -> dict[str, Any]:
        return {"channel": self.channel, "format": self.format, "events": list(self.events),
                "smtp_host": self.smtp_host, "smtp_port": self.smtp_port, "smtp_tls": self.smtp_tls,
                "mail_from": self.mail_from, "mail_to": list(self.mail_to), "smtp_user": self.smtp_user}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "notification settings") -> "ChannelConfig":
        """The config of :meth:`to_json` (or a settings dict); ConfigError naming the bad field."""
        try:
            port = int(data.get("smtp_port") or 0)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: smtp_port must be a number, not {data.get('smtp_port')!r}") from None
        config = cls(
            channel=_choice(where, "channel", data.get("channel"), CHANNELS),
            format=_choice(where, "format", data.get("format"), FORMATS),
            events=_events(where, data.get("events")),
            smtp_host=str(data.get("smtp_host") or "").strip(),
            smtp_port=port,
            smtp_tls=_choice(where, "smtp_tls", data.get("smtp_tls"), TLS_MODES),
            mail_from=str(data.get("mail_from") or "").strip(),
            mail_to=_words(data.get("mail_to")),
            smtp_user=str(data.get("smtp_user") or "").strip(),
        )
        if not 0 <= config.smtp_port < 65536:
            raise ConfigError(f"{where}: smtp_port must be from 1 to 65535, not {config.smtp_port}")
        return config


@dataclass(frozen=True)
class ChannelSecrets:
    """The secret half of a channel; ``repr`` shows which are set, never their values."""

    webhook_url: str = field(default="", repr=False)
    signing_secret: str = field(default="", repr=False)
    smtp_password: str = field(default="", repr=False)

    def __repr__(self) -> str:
        return f"ChannelSecrets(set={self.stored()})"

    def stored(self) -> list[str]:
        """The names of the secrets that have a value."""
        return [f.name for f in fields(self) if getattr(self, f.name)]

    def values(self) -> list[str]:
        """Every secret value, and the parts of the webhook URL that may be its token (for scrubbing)."""
        out = [getattr(self, name) for name in self.stored()]
        if self.webhook_url:
            parts = urlsplit(self.webhook_url)
            out += [p for p in parts.path.split("/") if len(p) >= 8]
            out += [kv.partition("=")[2] for kv in parts.query.split("&") if len(kv.partition("=")[2]) >= 8]
            if parts.query:
                out.append(parts.query)
        return out

    def to_json(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in self.stored()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "notification secrets") -> "ChannelSecrets":
        """Secrets from a JSON object of :data:`SECRET_KEYS`; ConfigError naming an unknown or non-text key."""
        unknown = sorted(str(k) for k in data if k not in SECRET_KEYS)
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}",
                              hint=f"the fields are {', '.join(SECRET_KEYS)}")
        bad = sorted(k for k, v in data.items() if not isinstance(v, str))
        if bad:
            raise ConfigError(f"{where}: {', '.join(bad)} must be text")
        return cls(**{k: v.strip() for k, v in data.items()})

    def merged(self, newer: "ChannelSecrets") -> "ChannelSecrets":
        """These secrets with every value ``newer`` has replacing this one's."""
        return ChannelSecrets(**{**self.to_json(), **newer.to_json()})


def host_of(url: str) -> str:
    """The host a webhook URL points at ("hooks.slack.com"): shown in messages instead of the URL."""
    try:
        return urlsplit(url).hostname or "?"
    except ValueError:
        return "?"


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def validate(config: ChannelConfig, secrets: ChannelSecrets, where: str = "notifications") -> None:
    """ConfigError when the channel cannot work as set: the first missing or wrong field, by name."""
    if config.channel == "none":
        return
    if not config.events:
        raise ConfigError(f"{where}: no events chosen", hint=f"events: {', '.join(EVENT_KINDS)}")
    if config.channel == "webhook":
        if not secrets.webhook_url:
            raise ConfigError(f"{where}: no webhook URL is stored",
                              hint="workbench notify set --profile P --channel webhook --secret-stdin")
        try:
            parts = urlsplit(secrets.webhook_url)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("https", "http") or not parts.hostname:
            raise ConfigError(f"{where}: the webhook URL is not an http(s) address")
        if parts.scheme == "http" and not _is_loopback(parts.hostname):
            raise ConfigError(f"{where}: the webhook URL is plain http: its token would cross the network "
                              "unencrypted", hint="use its https:// address")
        if secrets.signing_secret and config.format not in SIGNED_FORMATS:
            raise ConfigError(f"{where}: a {config.format} webhook is not signed; only "
                              f"{' and '.join(SIGNED_FORMATS)} use a signing secret")
        return
    missing = [name for name, value in (("smtp_host", config.smtp_host), ("mail_from", config.mail_from),
                                        ("mail_to", config.mail_to)) if not value]
    if missing:
        raise ConfigError(f"{where}: mail needs {', '.join(missing)}")
    if config.smtp_user and not secrets.smtp_password:
        raise ConfigError(f"{where}: smtp_user is set but no SMTP password is stored",
                          hint="give it with --secret-stdin, or leave smtp_user empty")
    if secrets.smtp_password and config.smtp_tls == "none" and not _is_loopback(config.smtp_host):
        raise ConfigError(f"{where}: smtp_tls none would send the password unencrypted to {config.smtp_host}",
                          hint="use smtp_tls starttls or ssl")


# -- profile settings ------------------------------------------------------

def to_settings(config: ChannelConfig) -> dict[str, str]:
    """The ``notify.*`` profile settings for ``config`` (empty values left out)."""
    data = config.to_json()
    data["smtp_port"] = str(config.smtp_port or "")
    data["events"] = ",".join(config.events) or "-"
    data["mail_to"] = ",".join(config.mail_to)
    return {PREFIX + k: str(v) for k, v in data.items() if str(v)}


def from_settings(profile: str, settings: Mapping[str, str]) -> ChannelConfig:
    """The channel a profile's ``notify.*`` settings describe (none when there are none)."""
    data: dict[str, Any] = {k[len(PREFIX):]: v for k, v in settings.items() if k.startswith(PREFIX)}
    if "events" in data:
        data["events"] = data["events"] or "-"
    return ChannelConfig.from_json(data, where=f"profile {profile!r}: notify settings")


def without_notify(settings: Mapping[str, str]) -> dict[str, str]:
    """A profile's settings less its ``notify.*`` ones."""
    return {k: v for k, v in settings.items() if not k.startswith(PREFIX)}


def _choice(where: str, key: str, raw: Any, allowed: tuple[str, ...]) -> str:
    value = str(raw or allowed[0]).strip().lower()
    if value not in allowed:
        raise ConfigError(f"{where}: {key} must be one of {', '.join(allowed)}, not {raw!r}")
    return value


def _words(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    items = raw.split(",") if isinstance(raw, str) else [str(x) for x in raw]
    return tuple(dict.fromkeys(x.strip() for x in items if x.strip()))


def _events(where: str, raw: Any) -> tuple[str, ...]:
    """Chosen events in :data:`EVENT_KINDS` order; all when not given, none for "-" or an empty list."""
    if raw is None or raw == "":
        return EVENT_KINDS
    chosen = () if raw == "-" else _words(raw)
    if "all" in chosen:
        return EVENT_KINDS
    unknown = [e for e in chosen if e not in EVENT_KINDS]
    if unknown:
        raise ConfigError(f"{where}: unknown event(s) {', '.join(unknown)}",
                          hint=f"events: {', '.join(EVENT_KINDS)} (or all)")
    return tuple(e for e in EVENT_KINDS if e in chosen)
