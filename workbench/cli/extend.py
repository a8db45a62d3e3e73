"""``workbench extend LAUNCH_ID --by DURATION``: a running launch gets more time (docs/cli.md)."""

from __future__ import annotations

import argparse

from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_OK, emit_json
from workbench.core.remote.extend import extend_launch, parse_extension


def cmd_extend(ctx: CliContext, args: argparse.Namespace) -> int:
    minutes = parse_extension(args.by)
    result = extend_launch(ctx.accounts, args.launch_id, minutes)
    if args.json:
        emit_json(result.to_json())
    else:
        print(result.summary())
        where = []
        if result.machines_told:
            where.append(f"the guard on {len(result.machines_told)} machine(s)")
        if result.cloud_release_moved:
            where.append("the cloud's own deadline")
        if where:
            print("also moved: " + " and ".join(where))
    return EXIT_OK
