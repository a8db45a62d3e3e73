"""``workbench registry login|list|logout``: container registry logins in the keyring (docs/cli.md,
docs/containers.md).  A job spec's ``registry_auth: {username: U, password: keyring}`` takes the password saved
here for its image's registry at launch."""

from __future__ import annotations

import argparse
import getpass
import sys

from workbench.cli.context import CliContext
from workbench.cli.output import emit_json, table
from workbench.core.domain.errors import ConfigError
from workbench.core.providers.registry_logins import RegistryLogins, registry_host


def cmd_registry(ctx: CliContext, args: argparse.Namespace) -> int:
    logins = RegistryLogins(ctx.accounts.credentials)
    if args.action == "login":
        return _login(ctx, logins, args)
    if args.action == "logout":
        return _logout(ctx, logins, args)
    return _list(ctx, logins)


def _password(host: str, username: str, from_stdin: bool) -> str:
    if from_stdin:
        text = sys.stdin.read()
        password = text[:-1] if text.endswith("\n") else text
        password = password[:-1] if password.endswith("\r") else password
    elif sys.stdin.isatty():
        password = getpass.getpass(f"Password or token of {username} at {host} (not shown): ")
    else:
        raise ConfigError("no terminal to ask for the password on", hint="pipe it to --password-stdin")
    if not password:
        raise ConfigError(f"no password or token given for {host}")
    return password


def _login(ctx: CliContext, logins: RegistryLogins, args: argparse.Namespace) -> int:
    host = registry_host(args.registry)  # a bad host is refused before anything is asked
    username = args.username.strip()
    if not username:
        raise ConfigError("a registry login needs a user name", hint="--username USER")
    login = logins.save(host, username, _password(host, username, args.password_stdin))
    if ctx.json:
        emit_json({**login.to_json(), "saved": True})
    else:
        print(f"saved the login of {login.username} at {login.registry} in the keyring "
              f"({ctx.accounts.credentials.backend_name()})")
        print(f"a job spec uses it with: registry_auth: {{username: {login.username}, password: keyring}}")
    return 0


def _logout(ctx: CliContext, logins: RegistryLogins, args: argparse.Namespace) -> int:
    host = registry_host(args.registry)
    deleted = logins.delete(host)
    if ctx.json:
        emit_json({"registry": host, "deleted": deleted})
    else:
        print(f"forgot the login saved for {host}" if deleted else f"no login was saved for {host}")
    return 0


def _list(ctx: CliContext, logins: RegistryLogins) -> int:
    saved = logins.list()
    if ctx.json:
        emit_json({"registries": [login.to_json() for login in saved]})
    elif not saved:
        print("no registry logins saved (save one: workbench registry login HOST --username USER)")
    else:
        table(["REGISTRY", "USER", "SAVED"], [(x.registry, x.username, x.to_json()["saved_at"]) for x in saved])
    return 0
