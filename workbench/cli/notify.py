"""``workbench notify show|set|test``: a profile's channel for notices while away (docs/cli.md)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys

from workbench.cli.context import CliContext
from workbench.cli.output import emit_json, table
from workbench.core.domain.errors import ConfigError
from workbench.core.notify import settings
from workbench.core.notify.channel import SIGNED_FORMATS, ChannelConfig, ChannelSecrets, host_of
from workbench.core.notify.notice import notice_for
from workbench.core.notify.notifier import send

#: flags of `notify set` → config fields
_FIELDS = {"channel": "channel", "format": "format", "events": "events", "smtp_host": "smtp_host",
           "smtp_port": "smtp_port", "smtp_tls": "smtp_tls", "mail_from": "mail_from", "mail_to": "mail_to",
           "smtp_user": "smtp_user"}


def cmd_notify(ctx: CliContext, args: argparse.Namespace) -> int:
    if args.action == "show":
        return _show(ctx, args)
    if args.action == "set":
        return _set(ctx, args)
    return _test(ctx, args)


def _target(config: ChannelConfig, secrets: ChannelSecrets | None) -> str:
    """Where notices go, in words without secrets: the webhook's host, or the mail server and recipients."""
    if config.channel == "webhook":
        return f"{config.format} webhook at {host_of(secrets.webhook_url)}" if secrets and secrets.webhook_url \
            else f"{config.format} webhook (no URL stored)"
    if config.channel == "smtp":
        return f"{config.smtp_host}:{config.port} ({config.smtp_tls}) to {', '.join(config.mail_to)}"
    return "-"


def _entry(ctx: CliContext, name: str) -> dict[str, object]:
    config = settings.load(ctx.accounts, name)
    secrets = settings.load_secrets(ctx.accounts, name) if config.channel != "none" else ChannelSecrets()
    return {"profile": name, "config": config.to_json(), "secrets_stored": secrets.stored(),
            "target": _target(config, secrets) if config.channel != "none" else None}


def _show(ctx: CliContext, args: argparse.Namespace) -> int:
    names = [ctx.accounts.profile(args.profile).name] if args.profile else [p.name for p in ctx.accounts.profiles()]
    entries = [_entry(ctx, n) for n in names]
    if ctx.json:
        emit_json({"notify": entries})
        return 0
    table(["PROFILE", "CHANNEL", "EVENTS", "TO", "SECRETS"],
          [(e["profile"], e["config"]["channel"], ",".join(e["config"]["events"]) if e["target"] else "-",  # type: ignore[index]
            e["target"] or "-", ", ".join(e["secrets_stored"]) or "-") for e in entries])  # type: ignore[arg-type]
    return 0


def _one_profile(ctx: CliContext, given: str | None, with_channel: bool = False) -> str:
    if given:
        return ctx.accounts.profile(given).name
    names = [p.name for p in ctx.accounts.profiles()]
    candidates = [n for n in names if settings.load(ctx.accounts, n).channel != "none"] if with_channel else names
    if len(candidates) == 1:
        return candidates[0]
    raise ConfigError("say which profile: --profile NAME", hint=f"profiles: {', '.join(names)}")


def _read_secrets(config: ChannelConfig, args: argparse.Namespace) -> tuple[ChannelSecrets | None, bool]:
    """(secrets given, whether they replace all stored ones): from stdin with --secret-stdin, else asked
    for on a terminal (empty keeps the stored value); (None, True) when none are given."""
    if args.secret_stdin:
        text = sys.stdin.read().strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                raise ConfigError("--secret-stdin: standard input is not a JSON object",
                                  hint='e.g. {"webhook_url": "https://…", "signing_secret": "SEC…"}') from None
            if not isinstance(data, dict):
                raise ConfigError("--secret-stdin: standard input is not a JSON object")
            return ChannelSecrets.from_json(data, "--secret-stdin"), False
        if "\n" in text:
            raise ConfigError("--secret-stdin: give one line (the webhook URL or the mail password) or a JSON object")
        if config.channel == "webhook":
            return ChannelSecrets(webhook_url=text), True
        if config.channel == "smtp":
            return ChannelSecrets(smtp_password=text), True
        return None, True
    if not sys.stdin.isatty():
        return None, True
    asked: dict[str, str] = {}
    if config.channel == "webhook":
        asked["webhook_url"] = getpass.getpass("Webhook URL (not shown; empty keeps the stored one): ")
        if config.format in SIGNED_FORMATS:
            asked["signing_secret"] = getpass.getpass("Signing secret (empty: keep the stored one, or none): ")
    elif config.channel == "smtp" and config.smtp_user:
        asked["smtp_password"] = getpass.getpass(f"SMTP password of {config.smtp_user} (empty keeps the stored one): ")
    return ChannelSecrets(**{k: v.strip() for k, v in asked.items()}), True


def _set(ctx: CliContext, args: argparse.Namespace) -> int:
    name = _one_profile(ctx, args.profile)
    current = settings.load(ctx.accounts, name)
    data = current.to_json()
    given = {field: getattr(args, flag) for flag, field in _FIELDS.items() if getattr(args, flag) is not None}
    if current.channel == "none" and "channel" not in given and given:
        raise ConfigError("say which channel: --channel webhook or --channel smtp")
    data.update(given)
    if "events" in given and not str(given["events"]).strip():
        data["events"] = "-"
    config = ChannelConfig.from_json(data, "workbench notify set")
    secrets, merge = _read_secrets(config, args) if config.channel != "none" else (None, True)
    stored = settings.save(ctx.accounts, name, config, secrets, merge=merge)
    if ctx.json:
        emit_json({"profile": name, "config": config.to_json(), "secrets_stored": stored.stored(),
                   "target": _target(config, stored) if config.channel != "none" else None})
    elif config.channel == "none":
        print(f"notifications of {name} are off (their secrets are deleted)")
    else:
        print(f"notifications of {name}: {_target(config, stored)}; events: {', '.join(config.events)}")
        print(f"next: workbench notify test --profile {name}")
    return 0


def _test(ctx: CliContext, args: argparse.Namespace) -> int:
    name = _one_profile(ctx, args.profile, with_channel=True)
    config = settings.load(ctx.accounts, name)
    secrets = settings.load_secrets(ctx.accounts, name) if config.channel != "none" else ChannelSecrets()
    notice = notice_for(args.kind, "A test notice from Cloud GPU Workbench: this channel works.", "test", name,
                        title=f"Test notice ({args.kind})")
    send(config, secrets, notice)
    if ctx.json:
        emit_json({"sent": True, "profile": name, "channel": config.channel, "kind": args.kind,
                   "target": _target(config, secrets)})
    else:
        print(f"sent a test notice to {_target(config, secrets)}")
    return 0
