"""``workbench controller``: the account's controller machine (docs/controller.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_BILLING, EXIT_INPUT, EXIT_OK, emit_json, money, table
from workbench.core.controller import deploy, handover
from workbench.core.domain.errors import ConfigError, NotFoundError

CONFIRMED = deploy.CONFIRMED  # store setting per profile: the user said yes to its identities once (shared with the app)


def err(line: str) -> None:
    sys.stderr.write(line + "\n")


def cmd_controller(ctx: CliContext, args: argparse.Namespace) -> int:
    action = args.action
    if action == "serve":
        return _serve(args)
    return {"plan": _plan, "up": _up, "status": _status, "logs": _logs, "down": _down, "hand": _hand,
            "release": _release, "away": _away}[action](ctx, args)


def _profile(ctx: CliContext, args: argparse.Namespace) -> Any:
    if getattr(args, "profile", None):
        return ctx.accounts.profile(args.profile)
    clouds = [p for p in ctx.accounts.profiles() if p.provider != "local"]
    if len(clouds) == 1:
        return clouds[0]
    if not clouds:
        raise ConfigError("a controller runs in a cloud account, and there is none",
                          hint="add one with `workbench profiles add PROVIDER NAME …`")
    raise ConfigError("which account? " + ", ".join(p.name for p in clouds), hint="pass --profile NAME")


def _cost_line(planned: deploy.Planned) -> str:
    c = planned.cost
    return (f"{c.instance_type} in {c.region}: {money(c.total_per_h, c.currency)}/h all-in "
            f"(machine {money(c.machine_per_h, c.currency)}, {c.disk_gb} GB disk {money(c.disk_per_h, c.currency)}, "
            f"public address {money(c.address_per_h, c.currency)})")


def _plan(ctx: CliContext, args: argparse.Namespace) -> int:
    planned = deploy.plan(ctx.accounts, _profile(ctx, args))
    if ctx.json:
        emit_json(planned.to_json())
        return EXIT_OK
    print(f"controller of {planned.profile.name}: {_cost_line(planned)}")
    ident = planned.identity
    if ident is not None:
        print(f"cloud identity {ident.name}: " + ("ready" if ident.ready else "to be created: "
                                                  + "; ".join(ident.missing)))
    print(f"records: {planned.board}")
    return EXIT_OK


def _confirm(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise ConfigError("creating a controller needs your yes", hint="run it in a terminal, or pass --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _up(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.notify import settings as notify_settings

    acc = ctx.accounts
    prof = _profile(ctx, args)
    if not deploy.controllers(acc.store, prof.name):
        planned = deploy.plan(acc, prof)
        ident = planned.identity
        first = ctx.store.get_setting(CONFIRMED + prof.name) is None
        what = "" if ident is None or ident.ready else f" and its cloud identity {ident.name} (once)"
        if (first or not args.yes) and not _confirm(f"Create the controller of {prof.name}{what}: "
                                                    f"{_cost_line(planned)}?", args.yes):
            err("cancelled: nothing was created")
            return EXIT_INPUT
        ctx.store.set_setting(CONFIRMED + prof.name, repr(time.time()))
    since = time.time()
    wheelhouse = Path(args.wheelhouse).expanduser() if args.wheelhouse else None

    def notify(path: Path) -> None:
        if notify_settings.load(acc, prof.name).channel != "none":
            notify_settings.write_controller_file(acc, prof.name, path)

    res = deploy.up(acc, prof, wheelhouse=wheelhouse, poll_s=args.poll, idle_end_s=args.idle_end * 60,
                    notify=notify, progress=None if ctx.json else (lambda step: err(f"  {step}")))
    if not res.already:
        deploy.start(acc, res)  # upload, install, start; it runs on there by itself
    beat = deploy.wait_for_heartbeat(acc, prof, res.launch_id, since if not res.already else 0.0, args.wait) \
        if args.wait > 0 else None
    out = {**res.to_json(), "heartbeat": beat, "answering": beat is not None}
    if ctx.json:
        emit_json(out)
    else:
        print(f"controller {res.launch_id} of {prof.name} " + ("was already there" if res.already else "created")
              + ("; it answers" if beat else "; no heartbeat yet (see `workbench controller logs`)"))
    return EXIT_OK if beat is not None or args.wait <= 0 else EXIT_BILLING


def _status(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.lifecycle.reconcile import reconcile

    prof = _profile(ctx, args)
    reconcile(ctx.accounts, [prof])
    st = deploy.status(ctx.accounts, prof)
    if ctx.json:
        emit_json(st)
        return EXIT_OK
    beat = st["heartbeat"] or {}
    age = f"{time.time() - float(beat['ts']):.0f} s ago" if beat.get("ts") else "never"
    table(["PROFILE", "CONTROLLER", "STATE", "MACHINE", "LAST HEARD", "WATCHING"],
          [(st["profile"], st["launch_id"] or "-", st["state"], st["instance_type"] or "-", age,
            ", ".join(beat.get("watching") or []) or "-")])
    if st["launch_id"] and not st["reachable"]:
        err("the controller does not answer: the app relaunches the launches handed to it while it runs")
    return EXIT_OK


def _logs(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.cli.remote import cmd_logs

    prof = _profile(ctx, args)
    found = deploy.controllers(ctx.store, prof.name, live_only=False)
    if not found:
        raise NotFoundError(f"profile {prof.name!r} has no controller", hint="create one with `workbench controller up`")
    args.launch_id = found[0].launch_id
    for name, default in (("interval", 1.0), ("node", None), ("tail", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    return cmd_logs(ctx, args)


def _down(ctx: CliContext, args: argparse.Namespace) -> int:
    prof = _profile(ctx, args)
    live = deploy.controllers(ctx.store, prof.name)
    if live and not _confirm(f"End the controller of {prof.name}? The launches it watches go back to the app.",
                             args.yes):
        err("cancelled: nothing was changed")
        return EXIT_INPUT
    report = deploy.down(ctx.accounts, prof)
    clean = report is None or report.clean
    if ctx.json:
        emit_json({"profile": prof.name, "ended": [r.launch_id for r in live], "clean": clean})
    else:
        print("no controller was running" if report is None else
              ("the controller is gone (verified)" if clean else "something of the controller still bills"))
    return EXIT_OK if clean else EXIT_BILLING


def _hand(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.providers.sshkeys import ensure_keypair

    rec = ctx.store.get_launch(handover.root_of(ctx.store, args.launch_id))
    board = handover.board_of(ctx.accounts, rec.profile)
    key = ensure_keypair(ctx.store.path.parent).public_openssh
    record = handover.hand_over(ctx.store, board, rec.launch_id, app_public_key=key)
    if ctx.json:
        emit_json({"root_id": record["root_id"], "profile": record["profile"], "limits": record["limits"]})
    else:
        print(f"{rec.launch_id} is watched by the controller of {rec.profile}")
        for note in record["limits"]:
            print(f"  note: {note}")
    return EXIT_OK


def _release(ctx: CliContext, args: argparse.Namespace) -> int:
    root = handover.root_of(ctx.store, args.launch_id)
    profile = handover.handed(ctx.store).get(root)
    if profile is None:
        raise NotFoundError(f"{args.launch_id} is not watched by a controller")
    handover.release(ctx.store, handover.board_of(ctx.accounts, profile), root)
    if ctx.json:
        emit_json({"root_id": root, "released": True})
    else:
        print(f"{root} is the app's again")
    return EXIT_OK


def _away(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.controller.away import catch_up

    found = catch_up(ctx.accounts)
    if getattr(args, "profile", None):
        found = [a for a in found if a.profile == args.profile]
    if ctx.json:
        emit_json({"profiles": [a.to_json() for a in found]})
        return EXIT_OK
    for a in found:
        state = "answers" if a.reachable else "does not answer: the app takes over while it runs"
        print(f"{a.profile}: the controller {state}")
        for e in a.events:
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(e.get("ts") or 0)))
            print(f"  {stamp} {e.get('action')} {e.get('launch_id')}: {e.get('message')}")
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    """On the controller machine: no keyring, no GUI; the machine's own identity."""
    from workbench.core import applog, paths
    from workbench.core.controller.service import Controller, ControllerConfig, MachineCredentials, ensure_install_id
    from workbench.core.providers.accounts import Accounts
    from workbench.core.store.database import Store

    path = Path(args.config).resolve()
    config = ControllerConfig.load(path)
    ensure_install_id(config.install_id)
    applog.setup(paths.log_dir(), verbose=False)
    import logging

    shown = logging.StreamHandler(sys.stdout)  # warnings in its own log too (`workbench controller logs`)
    shown.setLevel(logging.WARNING)
    shown.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("workbench").addHandler(shown)
    identity = MachineCredentials(dict((config.extra or {}).get("identity") or {}))
    accounts = Accounts(Store.open(), credentials=identity)  # type: ignore[arg-type]
    profile = config.profile_obj()
    accounts.save_profile(profile)
    notifier = None
    if config.notify_file and (path.parent / config.notify_file).exists():
        from workbench.core.notify.notice import notice_from_event
        from workbench.core.notify.notifier import Notifier

        channel = Notifier.from_file(path.parent / config.notify_file)

        def notifier(ev: Any) -> None:
            notice = notice_from_event(ev, profile.name)
            if notice is not None:
                channel.notify(notice)

    def say(line: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)

    ctl = Controller(config, accounts, say=say, notifier=notifier)
    if args.once:
        ctl.poll_once()
        return EXIT_OK
    return ctl.run()
