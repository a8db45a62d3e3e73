"""Job files of other tools: ``workbench convert FILE``, and reading any job file for ``launch``.

``launch`` and ``convert`` accept our own spec, a SkyPilot task YAML or a dstack task file,
recognised by their keys.  Values for the spec's ``secrets`` are taken at launch only: from
``--env NAME=VALUE``, ``--secret-env NAME`` (this computer's environment), or a hidden prompt;
they are handed to the job and never written to the spec, the store or the log.
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import re
import sys

from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_INPUT, EXIT_OK, emit_json, err
from workbench.core.domain.errors import ConfigError, SpecError
from workbench.core.domain.importers import KIND_NAMES, KIND_WORKBENCH, ImportResult, load_job_file
from workbench.core.domain.importers.report import note_text, render_converted
from workbench.core.domain.jobspec import spec_to_dict
from workbench.core.domain.models import JobSpec
from workbench.core.domain.spec_yaml import spec_to_yaml

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def cmd_convert(ctx: CliContext, args: argparse.Namespace) -> int:
    """Print the workbench spec equivalent to FILE, with a comment on every field; exit 1 if refused."""
    result = load_job_file(args.file)
    if ctx.json:
        out = {"kind": result.kind, "source": result.source,
               "spec": spec_to_dict(result.spec) if result.spec else None,
               "yaml": spec_to_yaml(result.spec) if result.spec else None,
               "fields": [n.to_json() for n in result.notes],
               "refused": [n.to_json() for n in result.refused]}
        if result.spec is None:
            try:
                result.require_spec()
            except SpecError as exc:
                out["error"] = exc.to_json()
        emit_json(out)
    else:
        sys.stdout.write(render_converted(result))
        if result.spec is None:
            err(f"error: {len(result.refused)} field(s) of this {KIND_NAMES[result.kind]} cannot run here yet "
                "(listed above)")
    return EXIT_OK if result.spec is not None else EXIT_INPUT


def load_for_launch(ctx: CliContext, args: argparse.Namespace) -> tuple[JobSpec, dict[str, str], ImportResult]:
    """The spec to launch, the values of its secrets, and how the file was read.

    ``--env NAME=VALUE`` gives a secret its value, or sets (overrides) an ordinary variable
    of the spec; ``--secret-env NAME`` takes NAME from this computer's environment; a secret
    still without a value is asked for on a terminal, else it is an error.
    """
    result = load_job_file(args.spec)
    spec = result.require_spec()
    if result.kind != KIND_WORKBENCH and not ctx.json:
        ignored = [n for n in result.notes if n.status == "ignored"]
        err(f"read {args.spec} as a {KIND_NAMES[result.kind]} ({len(result.notes)} fields; "
            f"`workbench convert {args.spec}` shows each)")
        for n in ignored:
            err(f"  ignored {note_text(n)}")
    overrides: dict[str, str] = {}
    secret_env: dict[str, str] = {}
    for item in getattr(args, "env", None) or []:
        name, eq, value = item.partition("=")
        if not eq or not _NAME.fullmatch(name):
            raise ConfigError(f"--env {item.split('=')[0]!r}: give NAME=VALUE (a variable name, then '=')")
        (secret_env if name in spec.secrets else overrides)[name] = value
    secret_env.update(secrets_from_environment(spec, getattr(args, "secret_env", None)))
    if overrides:
        spec = dataclasses.replace(spec, env={**spec.env, **overrides})
    ask_for_missing_secrets(ctx, spec, secret_env, "at launch", "give each with --env NAME=VALUE or --secret-env "
                                                                "NAME (taken from this computer's environment)")
    return spec, secret_env, result


def secrets_from_environment(spec: JobSpec, names: list[str] | None) -> dict[str, str]:
    """``--secret-env NAME …``: each a secret the spec asks for, taken from this computer's environment."""
    out = {}
    for name in names or []:
        if name not in spec.secrets:
            raise ConfigError(f"--secret-env {name}: the job spec does not ask for {name}",
                              hint="its secrets: " + (", ".join(spec.secrets) or "none"))
        if name not in os.environ:
            raise ConfigError(f"--secret-env {name}: {name} is not set in this computer's environment")
        out[name] = os.environ[name]
    return out


def ask_for_missing_secrets(ctx: CliContext, spec: JobSpec, secret_env: dict[str, str], when: str, hint: str) -> None:
    """The spec's secrets still without a value in ``secret_env``: asked for on a terminal (never echoed,
    never stored), else a ConfigError naming them with ``hint`` (how to give them).  A registry login from the
    keyring (``registry_auth.password: keyring``) is read here, so ``launch --detach`` and ``start`` carry it."""
    from workbench.core.providers.registry_logins import keyring_login, with_keyring_password

    if keyring_login(spec.image):
        secret_env.update(with_keyring_password(ctx.accounts.credentials, spec, secret_env))
    missing = [n for n in spec.secrets if n not in secret_env]
    if missing and not ctx.json and sys.stdin.isatty():
        for name in missing:
            secret_env[name] = getpass.getpass(f"{name} (asked by the job spec; not stored): ")
        missing = []
    if missing:
        raise ConfigError(f"no value for {', '.join(missing)}: the job spec asks for "
                          f"{'it' if len(missing) == 1 else 'them'} {when}", hint=hint)
