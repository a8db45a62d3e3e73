"""``workbench attempts``, ``workbench interrupt`` and the recovery part of ``workbench watch``.

``watch`` is the headless way to keep recovery going: after each guard poll it runs one
:class:`~workbench.core.lifecycle.recovery.RecoveryEngine` poll, and it follows the relaunched
attempts on cloud machines (upload, start, log) as the GUI would.  While neither ``watch`` nor the
app runs, nothing is relaunched (the machine's own guard still ends its bill).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from typing import Any, Callable

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.lifecycle.recovery import RecoveryEngine, RecoveryEvent, history
from workbench.core.storage.machine import NOTICE_NAME
from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_OK, duration, emit_json, money, table

def print_event(as_json: bool) -> Callable[[RecoveryEvent], None]:
    def show(ev: RecoveryEvent) -> None:
        if as_json:
            sys.stdout.write(json.dumps({"guard": "recovery", **ev.to_json()}) + "\n")
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ev.ts))
            line = f"{stamp} [recovery] {ev.action} {ev.launch_id}: {ev.message}"
            (sys.stderr if ev.level == "error" else sys.stdout).write(line + "\n")
        sys.stdout.flush()
    return show


class WatchRecovery:
    """What ``watch`` adds for recovery: the engine, and remote jobs for relaunched cloud attempts."""

    def __init__(self, ctx: CliContext, as_json: bool, retry_s: float) -> None:
        self.ctx = ctx
        from workbench.core.controller.away import app_claims

        # launches handed to a controller: relaunched by it while it answers, else by us through its board's claims
        self.engine = RecoveryEngine(ctx.accounts, on_event=print_event(as_json), retry_s=retry_s,
                                     claims=app_claims(ctx.accounts, retry_s=retry_s))
        self.as_json = as_json
        self.remote: Any = None
        self._told: dict[str, bool] = {}

    def poll(self) -> list[RecoveryEvent]:
        self._catch_up()
        events = self.engine.poll()
        self._follow()
        return events

    def _catch_up(self) -> None:
        """What the controllers did (their attempts into this store); say once when one stops answering."""
        from workbench.core.controller.away import catch_up

        for away in catch_up(self.ctx.accounts):
            for ev in away.events:
                line = {"guard": "controller", "profile": away.profile, **ev}
                if self.as_json:
                    sys.stdout.write(json.dumps(line) + "\n")
                else:
                    print(f"[controller {away.profile}] {ev.get('action')} {ev.get('launch_id')}: {ev.get('message')}")
            if self._told.get(away.profile) != away.took_over:
                self._told[away.profile] = away.took_over
                if away.took_over:
                    sys.stderr.write(f"the controller of {away.profile} does not answer"
                                     f"{': ' + away.error if away.error else ''}; this process relaunches the "
                                     "launches handed to it\n")
            sys.stdout.flush()

    def _follow(self) -> None:
        """Start (or keep following) the job of each relaunched attempt on a cloud machine."""
        store = self.ctx.store
        attempts = {a.launch_id for a in store.all_attempts() if a.attempt > 1}
        if not attempts:
            return
        from workbench.core.remote.kinds import is_remote

        insts = [i for i in store.list_instances() if i.launch_id in attempts and is_remote(i)]
        if not insts:
            return
        if self.remote is None:
            from workbench.core.remote.jobs import RemoteJobs

            self.remote = RemoteJobs(self.ctx.accounts, telemetry=False)
        self.remote.sync(insts, {r.launch_id: r for r in store.list_launches() if r.launch_id in attempts})

    def stop(self) -> None:
        if self.remote is not None:
            self.remote.stop_all()


def cmd_attempts(ctx: CliContext, args: argparse.Namespace) -> int:
    lid = paths.check_launch_id(args.launch_id)
    rows = history(ctx.store, lid)
    if ctx.json:
        emit_json({"root_id": rows[0]["root_id"], "attempts": rows,
                   "total_cost": round(sum(float(r["cost"]) for r in rows), 6)})
        return EXIT_OK
    table(["#", "LAUNCH", "MACHINE", "STARTED", "RAN", "ENDED", "COST"],
          [(r["attempt"], r["launch_id"],
            f"{r['provider']}/{r['profile']} {r['region'] or '-'} {r['instance_type'] or '-'}"
            + (" spot" if r["spot"] else ""),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(float(r["started_at"]))),
            duration((float(r["ended_at"]) if r["ended_at"] else time.time()) - float(r["started_at"])),
            (f"{r['end_reason']}: {r['detail']}" if r["end_reason"] else
             ("launch failed: " + str(r["detail"]) if r["status"] == "launch_failed" else "running")),
            money(float(r["cost"]), str(r["currency"])))
           for r in rows])
    print(f"total {money(sum(float(r['cost']) for r in rows), str(rows[0]['currency']))} over {len(rows)} attempt(s)")
    return EXIT_OK


def cmd_interrupt(ctx: CliContext, args: argparse.Namespace) -> int:
    """Write the notice file the machine's storage agent watches (Local: this computer; a cloud: over SSH)."""
    lid = paths.check_launch_id(args.launch_id)
    rec = ctx.store.get_launch(lid)
    if not (rec.spec or {}).get("storage") and not (rec.spec or {}).get("recovery"):
        raise ConfigError(f"launch {lid} has neither storage mounts nor a recovery policy: nothing on its machine "
                          "listens for an interruption notice")
    insts = [i for i in ctx.store.list_instances(launch_id=lid) if i.state.active]
    if not insts:
        raise NotFoundError(f"launch {lid} has no running machine")
    notice = json.dumps({"reason": "preemption", "source": "a rehearsal (workbench interrupt)",
                         "not_after": time.time() + args.after})
    from workbench.core.remote.kinds import is_remote

    if not is_remote(insts[0]):
        target = paths.job_dir(lid) / NOTICE_NAME
        tmp = target.with_name(NOTICE_NAME + ".tmp")
        tmp.write_text(notice, encoding="utf-8")
        tmp.replace(target)
    else:
        from workbench.core.domain.jobspec import spec_from_dict
        from workbench.core.remote.job import RemoteJob

        job = RemoteJob(ctx.accounts, insts[0], spec_from_dict(rec.spec or {}))
        conn = job._connect(60, "interrupting")
        if conn is None:
            return 130
        with conn:
            job._probe(conn)
            conn.check(f"printf %s {shlex.quote(notice)} > {shlex.quote(job.remote_dir + '/' + NOTICE_NAME)}",
                       "writing the interruption notice")
    if ctx.json:
        emit_json({"launch_id": lid, "notice": json.loads(notice)})
    else:
        print(f"{lid}: interruption notice sent; the job is stopped, its sync mounts saved, and in {args.after:g} s "
              "the pretend reclaim ends it (recovery relaunches it while the app or `workbench watch` runs)")
    return EXIT_OK
