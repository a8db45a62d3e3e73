"""The headless face of the workbench: the same core services as the GUI, with --json output.

Exit codes are a public contract (scripts rely on them):
  0 ok · 1 user/input error · 2 usage error · 3 cloud/provider error · 4 something is still billing
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from workbench import __version__
from workbench.core.domain.errors import WorkbenchError
from workbench.cli.output import emit_json, err

EPILOG = """\
exit codes:
  0  ok
  1  user or input error (bad spec, unknown profile/launch id, invalid credentials JSON, cancelled)
  2  usage error (unknown command or flag)
  3  cloud or provider error (authentication, quota, capacity, throttling, unavailable plugin)
  4  something is still billing after `down` (listed on stderr / in "remaining")

examples:
  workbench run resources/examples/local-smoke.yaml     (launch it here and follow its log)
  workbench launch resources/examples/local-smoke.yaml --provider local --yes
  workbench convert task.yaml            (a SkyPilot or dstack job file, read field by field)
  workbench status
  workbench logs LAUNCH_ID --follow
  workbench down --all --yes
"""

log = logging.getLogger("workbench.cli")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output (stable shape)")
    common.add_argument("-v", "--verbose", action="store_true", help="also log to stderr")
    common.add_argument("--mfa-code", metavar="CODE",
                        help="the one-time code (2FA) a Slurm login node asks for after the key; without it a "
                             "terminal is asked")

    p = argparse.ArgumentParser(prog="workbench", description="Cloud GPU Workbench: rent GPUs, watch them "
                                "train, stop the bill.", epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"workbench {__version__}")
    p.add_argument("--self-test", action="store_true",
                   help="smoke test of this install: plugins, store, an offscreen window, keyring")
    p.add_argument("--json", action="store_true", dest="top_json", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("gui", parents=[common], help="open the desktop app (the default)")
    sub.add_parser("providers", parents=[common], help="list provider plugins and whether they are usable")

    o = sub.add_parser("offers", parents=[common], help="GPU offers of every cloud, cheapest first (no account "
                       "needed: clouds without one are priced from the price catalog)")
    o.add_argument("--gpu", metavar="MODEL[:COUNT]", help="e.g. V100, A100:8, any:2")
    o.add_argument("--provider", metavar="P", help="only this cloud (aws, azure, local …)")
    o.add_argument("--profile", metavar="NAME", help="only what this profile's account offers (no catalog)")
    o.add_argument("--region", metavar="R", help="only this region (e.g. us-east-1, eastus)")
    o.add_argument("--spot", action="store_true", help="rank by spot price")
    o.add_argument("--max-price", type=float, metavar="X", help="per hour")
    o.add_argument("--accounts-only", action="store_true",
                   help="only offers your accounts can launch (leave out the price catalog)")
    o.add_argument("--nodes", type=int, default=1, metavar="N",
                   help="for a job on N machines: the price of all N, and a note where the network is slow")

    la = sub.add_parser("launch", parents=[common],
                        help="launch a job file: a workbench spec, SkyPilot task or dstack task (YAML)")
    la.add_argument("spec", metavar="SPEC.yaml", help="the job file (resources/examples has some)")
    la.add_argument("--provider", metavar="P", help="provider to launch on (default: the spec's, else local)")
    la.add_argument("--profile", metavar="NAME", help="profile (account) to launch with")
    la.add_argument("--region", metavar="R", help="region (default: the spec's, else the profile's)")
    la.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    la.add_argument("--env", action="append", metavar="NAME=VALUE",
                    help="value of a secret the spec asks for (never stored), or an env variable to set (repeatable)")
    la.add_argument("--secret-env", action="append", metavar="NAME",
                    help="take the secret NAME from this computer's environment (never stored; repeatable)")
    la.add_argument("--detach", "-d", action="store_true",
                    help="on a cloud: return once the machines are up; the job is started in the background "
                         "(`workbench logs ID --follow` attaches later)")

    ru = sub.add_parser("run", parents=[common], help="launch a job file and follow its log until it ends "
                        "(launch, then logs --follow)")
    ru.add_argument("spec", metavar="SPEC.yaml", help="the job file (resources/examples has some)")
    ru.add_argument("--provider", metavar="P", help="provider to launch on (default: the spec's, else local)")
    ru.add_argument("--profile", metavar="NAME", help="profile (account) to launch with")
    ru.add_argument("--region", metavar="R", help="region (default: the spec's, else the profile's)")
    ru.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    ru.add_argument("--env", action="append", metavar="NAME=VALUE",
                    help="value of a secret the spec asks for (never stored), or an env variable to set (repeatable)")
    ru.add_argument("--secret-env", action="append", metavar="NAME",
                    help="take the secret NAME from this computer's environment (never stored; repeatable)")
    ru.add_argument("--interval", type=_positive_float, default=1.0, help=argparse.SUPPRESS)

    st = sub.add_parser("start", parents=[common],
                        help="wait for SSH, upload and start a launch's job on its cloud machine (idempotent)")
    st.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch whose job to start")
    st.add_argument("--secrets-stdin", action="store_true",
                    help="read the values of the spec's secrets as a JSON object from standard input "
                         "(what `launch --detach` passes)")
    st.add_argument("--secret-env", action="append", metavar="NAME",
                    help="take the secret NAME from this computer's environment (never stored; repeatable); "
                         "a secret without a value is asked for on a terminal, else start refuses")

    cv = sub.add_parser("convert", parents=[common],
                        help="print the workbench spec for a SkyPilot or dstack job file, field by field")
    cv.add_argument("file", metavar="FILE", help="a SkyPilot task YAML, dstack task file or workbench spec")

    st = sub.add_parser("status", parents=[common], help="reconcile with every provider and list launches")
    st.add_argument("--max-age", type=float, default=0.0, metavar="SECONDS",
                    help="accept the last listing of every profile when it is at most this old and nothing "
                         "was launched or ended since: answers from this computer without asking the clouds "
                         "(default 0: always ask)")

    d = sub.add_parser("down", parents=[common], help="terminate, sweep leftovers, verify")
    d.add_argument("launch_ids", nargs="*", metavar="LAUNCH_ID", help="launches to tear down (see `workbench status`)")
    d.add_argument("--all", action="store_true", help="everything this app launched")
    d.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    d.add_argument("--include-own", action="store_true",
                   help="with --all: also end the free jobs on your own hardware (this computer, your cluster) "
                        "without asking; otherwise a terminal is asked and, without one or with --yes, they keep "
                        "running")
    d.add_argument("--timeout", type=_positive_float, default=600.0, metavar="SECONDS",
                   help="how long to wait for the providers to confirm (default 600)")

    pr = sub.add_parser("profiles", parents=[common], help="list, add or remove provider profiles")
    prs = pr.add_subparsers(dest="action", metavar="ACTION")
    prs.add_parser("list", parents=[common], help="every profile with its provider and region")
    add = prs.add_parser("add", parents=[common], help="add a profile, or change one (credentials: `credentials set`)")
    add.add_argument("provider", metavar="PROVIDER", help="aws, azure, … (see `workbench providers`)")
    add.add_argument("name", metavar="NAME", help="the profile's name, e.g. lab-aws")
    add.add_argument("--region", metavar="R", help="the default region of its launches")
    add.add_argument("--endpoint-url", metavar="URL", help="another API endpoint (a private or test cloud)")
    add.add_argument("--set", action="append", metavar="KEY=VALUE", help="provider setting (repeatable)")
    rm = prs.add_parser("remove", parents=[common], help="remove a profile and its keyring entry")
    rm.add_argument("name", metavar="NAME", help="the profile to remove")

    cr = sub.add_parser("credentials", parents=[common], help="store, check or delete credentials (keyring)")
    crs = cr.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, what in (("set", "store a profile's credentials in the system keyring"),
                         ("check", "show who the stored credentials authenticate as, or why not"),
                         ("delete", "delete a profile's credentials from the keyring")):
        c = crs.add_parser(action, parents=[common], help=what)
        c.add_argument("provider", metavar="PROVIDER", help="the profile's provider (aws, azure, …)")
        c.add_argument("profile", metavar="PROFILE", help="the profile's name")
        if action == "set":
            c.add_argument("--stdin", action="store_true", help="read a JSON object of the fields from stdin")

    lg = sub.add_parser("logs", parents=[common], help="print a launch's job output")
    lg.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch whose output to print")
    lg.add_argument("--follow", "-f", action="store_true", help="keep printing until the job ends")
    lg.add_argument("--node", type=int, metavar="R",
                    help="a multi-node launch: only node R's output (0 = the head); default: every node's, "
                         "each line prefixed [node R]")
    lg.add_argument("--interval", type=_positive_float, default=1.0, help=argparse.SUPPRESS)

    dl = sub.add_parser("download", parents=[common], help="fetch a job's output folder from its machine")
    dl.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch whose outputs to fetch")
    dl.add_argument("path", nargs="?", metavar="PATH",
                    help="on the machine, relative to the job's working folder (default: the spec's outputs)")
    dl.add_argument("--to", metavar="DIR", help="local folder (default: the launch's outputs folder)")

    sub.add_parser("doctor", parents=[common], help="check Qt, keyring, plugins and the store, with fixes")

    cat = sub.add_parser("catalog", parents=[common], help="the price catalog (no account needed): show it, or "
                         "refresh it from the clouds' public price lists")
    cats = cat.add_subparsers(dest="action", metavar="ACTION")
    cs = cats.add_parser("show", parents=[common], help="prices per cloud: how many, regions, their date")
    cs.add_argument("--provider", action="append", metavar="P", help="only this cloud (repeatable)")
    cu = cats.add_parser("update", parents=[common], help="read the public price lists (AWS offer files, Azure "
                         "Retail Prices API) into your price cache, dated today")
    cu.add_argument("--provider", action="append", metavar="P", help="only this cloud (repeatable)")
    cu.add_argument("--region", action="append", metavar="R",
                    help="only this region (repeatable; default: the catalog's regions)")
    cu.add_argument("--price-list-url", action="append", metavar="PROVIDER=URL",
                    help="read PROVIDER's price list from this base URL (a mirror; repeatable)")
    cu.add_argument("--timeout", type=_positive_float, default=60.0, metavar="SECONDS",
                    help="per request (default 60)")
    from workbench.cli.money_args import add_parsers as add_money_parsers  # cost, plan, budget, currency, watch, keep

    add_money_parsers(sub, common, _positive_float)
    from workbench.cli.advice_args import add_parsers as add_advice_parsers  # advise, report

    add_advice_parsers(sub, common, _positive_float)
    from workbench.cli.storage_args import add_parsers as add_storage_parsers  # storage, attempts, interrupt

    add_storage_parsers(sub, common)
    from workbench.cli.notify_args import add_parsers as add_notify_parsers  # notify

    add_notify_parsers(sub, common)
    from workbench.cli.controller_args import add_parsers as add_controller_parsers  # controller

    add_controller_parsers(sub, common)
    from workbench.cli.ports_args import add_parsers as add_ports_parsers  # ports, open
    add_ports_parsers(sub, common)
    from workbench.cli.registry_args import add_parsers as add_registry_parsers  # registry login, list, logout

    add_registry_parsers(sub, common)
    return p


#: short read-only commands that run with the cyclic GC off and leave by ``os._exit`` (see :func:`main`)
QUICK_COMMANDS = frozenset({"status", "offers", "providers", "cost"})


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code.

    ``argv`` None means this is the process's own command line (the ``workbench`` console
    script, ``python -m workbench``).  Then a command of :data:`QUICK_COMMANDS` runs with the
    cyclic garbage collector off (its full passes over boto3's service models were ~0.2 s of
    CPU in ``status``) and, once its output is flushed, its store closed and its log shut, the
    process ends with ``os._exit``: the interpreter's teardown of every loaded module was
    another ~0.3 s of CPU and ~0.5 s of wall time, for nothing.  These commands leave no
    work running in the background (their thread pools are idle when they return).
    """
    quick_exit = argv is None
    args = build_parser().parse_args(argv)
    command = args.command or "gui"
    if quick_exit and command in QUICK_COMMANDS:
        import gc

        gc.disable()
        code = _main(args)
        _exit_now(code)
    return _main(args)


def _exit_now(code: int) -> None:
    """End the process at once, after flushing what it wrote and closing the log (never returns)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    logging.shutdown()
    os._exit(code)


def _main(args: argparse.Namespace) -> int:
    as_json = bool(getattr(args, "json", False) or args.top_json)
    args.json = as_json
    if args.self_test:
        from workbench.cli.selftest import self_test

        return self_test(as_json)
    command = args.command or "gui"
    if command == "gui":
        from workbench.app import main as gui_main

        return gui_main([])
    if command == "doctor":  # must work even when the data folder or store is broken
        from workbench.cli.checks import cmd_doctor

        return cmd_doctor(None, args)
    from workbench.cli.context import CliContext

    ctx = None
    try:
        ctx = CliContext(json_output=as_json, verbose=getattr(args, "verbose", False),
                         mfa_code=getattr(args, "mfa_code", None))
        code = _dispatch(command, ctx, args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below, not at interpreter exit
        return code
    except WorkbenchError as exc:
        log.info("%s failed: %s", command, exc.message)
        if as_json:
            emit_json({"error": exc.to_json()})
        err(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:  # `workbench ... | head`: the reader left; say nothing more, like other Unix tools
        return _reader_left()
    except ModuleNotFoundError as exc:  # a half-installed SDK: say what to install, not "internal error"
        from workbench.core.providers.registry import missing_module_error

        error = missing_module_error(exc)
        log.warning("%s failed: %s", command, error.message, exc_info=True)
        if as_json:
            emit_json({"error": error.to_json()})
        err(f"error: {error}")
        return error.exit_code
    except Exception as exc:  # keep tracebacks out of users' faces; the log has them
        log.exception("internal error in %s", command)
        if as_json:
            emit_json({"error": {"kind": "internal", "message": f"{type(exc).__name__}: {exc}", "hint": None}})
        err(f"internal error: {type(exc).__name__}: {exc} (details in the log file)")
        return 1
    finally:
        if ctx is not None:
            ctx.close()


def _reader_left() -> int:
    """stdout's reader closed the pipe: point stdout at /dev/null so the exit flush cannot raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # what a shell reports for a process ended by SIGPIPE


#: command → (module of workbench.cli, function): only the module a command needs is imported
COMMANDS = {
    "providers": ("admin", "cmd_providers"), "profiles": ("admin", "cmd_profiles"),
    "credentials": ("admin", "cmd_credentials"), "offers": ("cloud", "cmd_offers"),
    "launch": ("remote", "cmd_launch"), "start": ("remote", "cmd_start"), "run": ("remote", "cmd_run"), "status": ("cloud", "cmd_status"), "down": ("cloud", "cmd_down"),
    "convert": ("convert", "cmd_convert"),
    "logs": ("remote", "cmd_logs"), "download": ("remote", "cmd_download"),
    "cost": ("money", "cmd_cost"), "plan": ("money", "cmd_plan"), "budget": ("money", "cmd_budget"),
    "currency": ("money", "cmd_currency"), "watch": ("money", "cmd_watch"), "keep": ("money", "cmd_keep"),
    "extend": ("extend", "cmd_extend"),
    "advise": ("advice", "cmd_advise"), "report": ("advice", "cmd_report"),
    "storage": ("storage", "cmd_storage"), "attempts": ("recovery", "cmd_attempts"),
    "interrupt": ("recovery", "cmd_interrupt"),
    "catalog": ("catalog", "cmd_catalog"), "notify": ("notify", "cmd_notify"),
    "controller": ("controller", "cmd_controller"),
    "ports": ("ports", "cmd_ports"), "open": ("ports", "cmd_open"),
    "registry": ("registry", "cmd_registry"),
}


def _dispatch(command: str, ctx, args: argparse.Namespace) -> int:
    import importlib

    module, name = COMMANDS[command]
    return getattr(importlib.import_module(f".{module}", __name__), name)(ctx, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
