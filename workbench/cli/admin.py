"""Commands that configure the app: providers, profiles, credentials."""

from __future__ import annotations

import argparse
import sys

from workbench.core import applog
from workbench.core.providers.accounts import BUILTIN_LOCAL
from workbench.core.providers.credentials import parse_credentials_json
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.models import Profile
from workbench.core.providers.registry import get
from workbench.cli.context import CliContext
from workbench.cli.output import emit_json, table

_PROFILE_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def cmd_providers(ctx: CliContext, args: argparse.Namespace) -> int:
    entries = ctx.accounts.entries
    if ctx.json:
        emit_json({"providers": [e.to_json() for e in entries.values()]})
    else:
        table(["ID", "NAME", "STATUS", "FROM"],
              [(e.id, e.display_name, e.status,
                f"{e.distribution or '?'} {e.version or ''}".strip()) for e in entries.values()])
    return 0


def _profile_json(p: Profile, builtin: bool) -> dict[str, object]:
    return {"name": p.name, "provider": p.provider, "region": p.region, "endpoint_url": p.endpoint_url,
            "settings": dict(p.settings), "builtin": builtin}


def cmd_profiles(ctx: CliContext, args: argparse.Namespace) -> int:
    accounts = ctx.accounts
    if args.action in (None, "list"):
        stored = {p.name for p in ctx.store.list_profiles()}
        profiles = accounts.profiles()
        if ctx.json:
            emit_json({"profiles": [_profile_json(p, p.name not in stored) for p in profiles]})
        else:
            table(["NAME", "PROVIDER", "REGION", "ENDPOINT", "SETTINGS"],
                  [(p.name + ("" if p.name in stored else " (built in)"), p.provider, p.region or "-",
                    p.endpoint_url or "-", ", ".join(f"{k}={v}" for k, v in p.settings.items()) or "-")
                   for p in profiles])
        return 0
    if args.action == "add":
        if not args.name or not set(args.name) <= _PROFILE_NAME_OK or len(args.name) > 64:
            raise ConfigError(f"profile names use letters, digits, '-', '_' and '.', not {args.name!r}")
        cls = get(accounts.entries, args.provider)
        settings: dict[str, str] = {}
        for item in args.set or []:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ConfigError(f"--set takes KEY=VALUE, not {item!r}")
            settings[key.strip()] = value.strip()
        profile = Profile(name=args.name, provider=args.provider,
                          region=args.region or cls.default_region(), endpoint_url=args.endpoint_url,
                          settings=settings)
        accounts.save_profile(profile)
        if ctx.json:
            emit_json({"profile": _profile_json(profile, False)})
        else:
            print(f"saved profile {args.name} ({args.provider})")
            if cls.credential_fields and any(not f.optional for f in cls.credential_fields):
                print(f"next: workbench credentials set {args.provider} {args.name} --stdin")
        return 0
    # remove
    if args.name == BUILTIN_LOCAL.name and args.name not in {p.name for p in ctx.store.list_profiles()}:
        raise ConfigError("the built-in local profile cannot be removed")
    accounts.delete_profile(args.name)
    if not ctx.json:
        print(f"removed profile {args.name} (its credentials stay in the keyring until "
              f"`workbench credentials delete`)")
    else:
        emit_json({"removed": args.name})
    return 0


def cmd_credentials(ctx: CliContext, args: argparse.Namespace) -> int:
    accounts = ctx.accounts
    cls = get(accounts.entries, args.provider)
    creds = accounts.credentials
    if args.action == "set":
        if not args.stdin:
            raise ConfigError("credentials are read from standard input only, never from the command line",
                              hint=f"echo '{{...}}' | workbench credentials set {args.provider} {args.profile} --stdin")
        if not cls.credential_fields:
            raise ConfigError(f"provider {args.provider!r} needs no credentials")
        values = parse_credentials_json(sys.stdin.read(), cls.credential_fields)
        for f in cls.credential_fields:
            if f.secret and values.get(f.key):
                applog.register_secret(values[f.key])
        creds.set(args.provider, args.profile, values)
        accounts.forget(args.profile)
        if ctx.json:
            emit_json({"stored": sorted(values), "provider": args.provider, "profile": args.profile})
        else:
            print(f"stored {len(values)} field(s) for {args.provider}/{args.profile} in "
                  f"{creds.backend_name()}")
        return 0
    if args.action == "delete":
        removed = creds.delete(args.provider, args.profile)
        accounts.forget(args.profile)
        if ctx.json:
            emit_json({"deleted": removed})
        else:
            print("deleted" if removed else f"nothing stored for {args.provider}/{args.profile}")
        return 0
    # check
    profile = accounts.profile(args.profile)
    if profile.provider != args.provider:
        raise NotFoundError(f"profile {args.profile!r} belongs to provider {profile.provider!r}")
    identity = accounts.provider(profile).check_credentials()
    if ctx.json:
        emit_json({"ok": True, "account": identity.account, "principal": identity.principal})
    else:
        print(f"ok: {identity.principal} (account {identity.account})")
    return 0
