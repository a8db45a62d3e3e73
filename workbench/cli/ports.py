"""``workbench ports`` and ``workbench open``: a launch's ports, forwarded over SSH to 127.0.0.1 here.

``open`` forwards until Ctrl+C or until the launch's machines end; the Jupyter token is printed to the
user who asked (stdout, the JSON), never logged.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import webbrowser
from typing import Any

from workbench.cli.context import CliContext
from workbench.cli.output import emit_json, err, table
from workbench.core import paths
from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.jobspec import spec_from_dict
from workbench.core.domain.models import InstanceState, JobSpec
from workbench.core.remote import logins
from workbench.core.remote.forwards import Forwards
from workbench.core.remote.port_services import find_url, jupyter_url, port_of, ports_json, read_log_tail

POLL_S = 5.0


def _launch(ctx: CliContext, lid: str) -> tuple[Any, JobSpec]:
    rec = ctx.store.find_launch(paths.check_launch_id(lid))
    if rec is None:
        raise NotFoundError(f"unknown launch id {lid!r}", hint="`workbench status` lists the launches")
    if not isinstance(rec.spec, dict):
        raise NotFoundError(f"launch {lid} has no stored job spec")
    return rec, spec_from_dict(rec.spec)


def _alive(ctx: CliContext, lid: str) -> list[Any]:
    return sorted((i for i in ctx.store.list_instances(launch_id=lid) if i.state == InstanceState.RUNNING),
                  key=lambda i: (node_rank_of(i.extra), i.instance_id))


def cmd_ports(ctx: CliContext, args: argparse.Namespace) -> int:
    """The spec's ports; this process forwards none, so ``forwards`` is empty and ``printed_url`` is the
    address Jupyter printed on the machine (from the local copy of the log)."""
    rec, spec = _launch(ctx, args.launch_id)
    log_text = read_log_tail(paths.job_log(rec.launch_id)) if spec.ports else ""
    rows = ports_json(spec.ports, [], {})
    for row, p in zip(rows, spec.ports):
        row["printed_url"] = jupyter_url(log_text, p.port, p.port) if p.name == "jupyter" else None
    if ctx.json:
        emit_json({"launch_id": rec.launch_id, "status": rec.status, "ports": rows})
        return 0
    if not rows:
        print(f"{rec.launch_id} lists no ports (add ports: to the spec)")
        return 0
    table(["PORT", "SERVICE", "NODES", "OPEN WITH"],
          [[r["port"], r["service"] or r["name"] or "", r["node"],
            f"workbench open {rec.launch_id} {r['port']}"] for r in rows])
    return 0


def _display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def cmd_open(ctx: CliContext, args: argparse.Namespace) -> int:
    """Forward one port until Ctrl+C (exit 0) or the launch's machines end (exit 0, said on stderr)."""
    rec, spec = _launch(ctx, args.launch_id)
    port = port_of(spec.ports, args.port)
    nodes = _alive(ctx, rec.launch_id)
    if not nodes:
        raise ConfigError(f"launch {rec.launch_id} has no running machine", hint="`workbench status` shows it")
    if any(i.provider == "local" for i in nodes):
        raise ConfigError("a job on this computer needs no forward", hint=f"open http://127.0.0.1:{port.port}/")
    for node in nodes:  # a login node's own way in (jump host, key) is registered by its provider
        logins.ensure(ctx.accounts, node)
    forwards = Forwards(ctx.store.path.parent)
    forwards.stop_with_teardown()
    try:
        opened = forwards.open(rec.launch_id, nodes, port)
        rows = []
        for o in opened:
            url = find_url(forwards, rec.launch_id, port, o, paths.job_log(rec.launch_id), wait_s=args.wait)
            rows.append({"node_rank": o.node_rank, "instance_id": o.instance_id, "local_port": o.local_port,
                         "local_address": o.local_address, "url": url})
        browser = not args.no_browser and _display() and bool(rows[0]["url"])
        if ctx.json:
            emit_json({"launch_id": rec.launch_id, "port": port.port, "name": port.name, "node": port.node,
                       "forwards": rows, "browser": browser})
            sys.stdout.flush()
        else:
            for r in rows:
                print(f"port {port.port} of node {r['node_rank']} → {r['url'] or r['local_address']}", flush=True)
            if port.name == "jupyter" and not rows[0]["url"]:
                err("Jupyter has not printed its address with a token in the job's log yet; "
                    f"http://{rows[0]['local_address']}/ asks for it")
            err("forwarding until Ctrl+C (127.0.0.1 only)")
        if browser:
            webbrowser.open(rows[0]["url"])
        while forwards.list(rec.launch_id):
            time.sleep(POLL_S)
            if not _alive(ctx, rec.launch_id):
                forwards.stop(rec.launch_id)
                err(f"launch {rec.launch_id} has no running machine any more: the forward ended")
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        forwards.close()
