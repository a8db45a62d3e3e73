"""Commands for jobs on cloud machines: launch's upload and start, logs --follow, download.

``workbench launch`` on a cloud waits for the machine to answer on SSH, uploads
the workdir (progress on stderr) and starts the job as a supervised unit, then
returns: the machine applies on_finish itself if nobody watches.  ``workbench
logs ID --follow`` streams the log (resuming where the local copy ends), prints the
exit code and applies on_finish (downloading the spec's outputs first).
``workbench download ID [PATH] [--to DIR]`` fetches an output folder.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from workbench.core import paths
from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.errors import NotFoundError, WorkbenchError
from workbench.core.domain.jobspec import spec_from_dict
from workbench.core.domain.models import Instance, JobSpec
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.remote.job import JobEvent, RemoteJob, recorded_exit_code
from workbench.core.remote.log_tail import FileTail, NodeLogTail, follow
from workbench.core.remote.jobs import is_remote
from workbench.core.remote.kinds import is_queued
from workbench.core.remote.outputs_folder import outputs_folder
from workbench.core.remote.sshconfig import config_path, include_line
from workbench.cli.context import CliContext
from workbench.cli.output import EXIT_OK, emit_json, err

def _progress_line(label: str, done: int, total: int) -> None:
    pct = f"{100 * done / total:5.1f}%" if total else "  -  "
    sys.stderr.write(f"\r{label}: {pct} of {total / 1e6:.1f} MB")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


class _Printer:
    """Job events on stderr: phases once each, upload progress on one line."""

    def __init__(self) -> None:
        self.last = ""
        self.last_progress = 0.0

    def __call__(self, ev: JobEvent) -> None:
        if ev.kind == "upload":
            now = time.monotonic()
            if now - self.last_progress > 0.2 or ev.data.get("done") == ev.data.get("total"):
                self.last_progress = now
                _progress_line(ev.phase, int(ev.data.get("done", 0)), int(ev.data.get("total", 0)))
        elif ev.kind in ("phase", "warning", "error", "exit") and (ev.phase, ev.message) != self.last:
            self.last = (ev.phase, ev.message)
            prefix = {"warning": "warning: ", "error": "error: "}.get(ev.kind, "")
            err(f"[{ev.phase}] {prefix}{ev.message}".rstrip())


def _launch_instance(ctx: CliContext, lid: str) -> tuple[Any, Instance]:
    rec = ctx.store.find_launch(paths.check_launch_id(lid))
    if rec is None:
        raise NotFoundError(f"unknown launch id {lid!r}", hint="`workbench status` lists the launches")
    try:
        reconcile(ctx.accounts, [ctx.accounts.profile(rec.profile)])
    except WorkbenchError:
        pass  # the stored instance may still be enough
    insts = _nodes(ctx, lid)
    if not insts:
        raise NotFoundError(f"launch {lid} has no machine")
    return rec, insts[0]


def _nodes(ctx: CliContext, lid: str) -> list[Instance]:
    """The launch's machines, head (node rank 0) first."""
    return sorted(ctx.store.list_instances(launch_id=lid), key=lambda i: (node_rank_of(i.extra), i.instance_id))


def _job(ctx: CliContext, rec: Any, inst: Instance) -> RemoteJob:
    if not isinstance(rec.spec, dict):
        raise NotFoundError(f"launch {rec.launch_id} has no stored job spec")
    return RemoteJob(ctx.accounts, inst, spec_from_dict(rec.spec), on_event=_Printer())


def cmd_launch(ctx: CliContext, args: argparse.Namespace) -> int:
    """``cloud.cmd_launch``, then (on a cloud) upload and start the job on the new machine."""
    from workbench.cli import cloud

    before = {r.launch_id for r in ctx.store.list_launches()}
    rc = cloud.cmd_launch(ctx, args)
    new = [r for r in ctx.store.list_launches() if r.launch_id not in before]
    if rc != EXIT_OK or not new:
        return rc
    rec = new[0]
    insts = _nodes(ctx, rec.launch_id)
    if not insts or not is_remote(insts[0]):
        return rc
    if getattr(args, "detach", False):
        from workbench.cli.detach import spawn_starter, start_log
        from workbench.core.lifecycle import launch_secrets

        pid = spawn_starter(rec.launch_id, launch_secrets.values(rec.launch_id))
        what = "the machine is up" if len(insts) == 1 else f"the {len(insts)} machines are up"
        err(f"detached: {what}; `workbench start` (pid {pid}) waits for SSH, uploads and starts the job "
            f"in the background (its log: {start_log(rec.launch_id)}).\n"
            f"attach with: workbench logs {rec.launch_id} --follow")
        return rc
    if len(insts) > 1:
        from workbench.core.remote.cluster import ClusterJob

        with _still_billing(rec.launch_id, spec_from_dict(rec.spec)):
            if not ClusterJob(ctx.accounts, insts, spec_from_dict(rec.spec), on_event=_Printer()).launch():
                return 130
        err(f"the job runs on {len(insts)} machines; ssh: add `{include_line(ctx.store.path.parent)}` to "
            f"~/.ssh/config, then `ssh {rec.launch_id}` (the head) or `ssh {rec.launch_id}-node1` …")
        return rc
    job = _job(ctx, rec, insts[0])
    with _still_billing(rec.launch_id, job.spec):
        if not job.launch():
            return 130
    err(f"the job runs on the machine; ssh: add `{include_line(ctx.store.path.parent)}` to ~/.ssh/config, "
        f"then `ssh {rec.launch_id}`")
    return rc


#: phases of a job's local state from which it runs (or ran) on its machine: start needs no secrets then
RUNNING_PHASES = frozenset({"setup", "running", "finished", "interrupted", "downloading", "stopping", "terminating",
                            "done", "kept"})


@contextmanager
def _still_billing(launch_id: str, spec: JobSpec) -> Iterator[None]:
    """A job that could not be uploaded or started: its error says the machine bills and how to go on."""
    try:
        yield
    except WorkbenchError as exc:
        exc.hint = "; ".join(x for x in (exc.hint, still_billing_hint(launch_id, spec)) if x)
        raise


def still_billing_hint(launch_id: str, spec: JobSpec) -> str:
    """The exact commands that go on after a failed upload or start, and that the machine bills until then."""
    again = f"`workbench start {launch_id}` uploads and starts the job again"
    if spec.secrets:
        names = ", ".join(spec.secrets)
        again += (f" (it asks for {names} again: secret values are never stored; without a terminal pipe them "
                  f"as JSON: `… | workbench start {launch_id} --secrets-stdin`, or --secret-env NAME)")
    return f"the machine is up and bills until it is stopped: {again}; `workbench down {launch_id}` stops the bill"


def cmd_start(ctx: CliContext, args: argparse.Namespace) -> int:
    """Wait for SSH, upload and start a launch's job on its machine (what ``launch`` does after the
    machine exists; ``launch --detach`` runs this in the background).  Idempotent: a started job is left as it is.

    The values of the spec's secrets live only in the process that launched: a job not yet started needs
    them again (``--secrets-stdin``, ``--secret-env NAME`` or asked on a terminal), else start refuses
    naming them; it never starts a job without its secrets."""
    from workbench.cli.convert import ask_for_missing_secrets, secrets_from_environment
    from workbench.core.lifecycle import launch_secrets
    from workbench.core.remote.job import read_state

    rec, inst = _launch_instance(ctx, args.launch_id)
    if not is_remote(inst):
        raise NotFoundError(f"launch {rec.launch_id} runs on this computer: it started with the launch")
    if not isinstance(rec.spec, dict):
        raise NotFoundError(f"launch {rec.launch_id} has no stored job spec")
    if not inst.state.active:  # (it waited 30 minutes for SSH to a machine that is no more)
        raise NotFoundError(f"launch {rec.launch_id} has ended: its machine is {inst.state.value}",
                            hint="launch the job file again for a new machine")
    spec = spec_from_dict(rec.spec)
    secret_env = launch_secrets.values(rec.launch_id)
    if args.secrets_stdin:
        from workbench.cli.detach import read_secrets

        secret_env.update(read_secrets(sys.stdin))
    secret_env.update(secrets_from_environment(spec, getattr(args, "secret_env", None)))
    if read_state(rec.launch_id).get("phase") not in RUNNING_PHASES:
        ask_for_missing_secrets(
            ctx, spec, secret_env, "and the job has not started yet (secret values are never stored)",
            f"run `workbench start {rec.launch_id}` in a terminal (it asks for them), or pipe them as a JSON "
            f"object to `workbench start {rec.launch_id} --secrets-stdin`, or give --secret-env NAME")
    nodes = _nodes(ctx, rec.launch_id)
    with _still_billing(rec.launch_id, spec):
        if len(nodes) > 1:
            from workbench.core.remote.cluster import ClusterJob

            started = ClusterJob(ctx.accounts, nodes, spec, on_event=_Printer(), secret_env=secret_env).launch()
        else:
            started = RemoteJob(ctx.accounts, inst, spec, on_event=_Printer(), secret_env=secret_env).launch()
    if ctx.json:
        emit_json({"launch_id": rec.launch_id, "started": started})
    return EXIT_OK if started else 130


def cmd_run(ctx: CliContext, args: argparse.Namespace) -> int:
    """``launch``, then ``logs --follow`` of the new launch: the job's output until it ends, and its exit code."""
    before = {r.launch_id for r in ctx.store.list_launches()}
    args.detach = False
    args.following = True
    rc = cmd_launch(ctx, args)
    new = [r for r in ctx.store.list_launches() if r.launch_id not in before]
    if rc != EXIT_OK or not new:
        return rc
    args.launch_id, args.follow = new[0].launch_id, True
    rc = cmd_logs(ctx, args)
    code = recorded_exit_code(args.launch_id)
    if code is None:  # a Local job: its exit code is on its instance (the head's for several nodes)
        insts = _nodes(ctx, args.launch_id)
        code = insts[0].exit_code if insts else None
    if code is not None and _is_local(ctx, args.launch_id):
        err(f"exit code: {code}")
    return rc


def _is_local(ctx: CliContext, launch_id: str) -> bool:
    rec = ctx.store.find_launch(launch_id)
    return rec is not None and rec.provider == "local"


def cmd_logs(ctx: CliContext, args: argparse.Namespace) -> int:
    """Remote launches: stream by offset (and apply on_finish when following); Local: ``cloud.cmd_logs``."""
    from workbench.cli import cloud

    lid = paths.check_launch_id(args.launch_id)
    rec = ctx.store.find_launch(lid)
    if rec is None or rec.provider == "local":
        return cloud.cmd_logs(ctx, args)
    rec, inst = _launch_instance(ctx, lid)
    if is_queued(inst) and not inst.state.active and recorded_exit_code(lid) is None:
        _job(ctx, rec, inst).collect()  # a batch job that ended unfollowed: its folder is still on the login node
    if not args.follow or not inst.state.active:
        return cloud.cmd_logs(ctx, args)  # the local copy: kept after the machine is gone
    from workbench.cli.detach import starter_pid, wait_for_starter

    if starter_pid(lid) is not None:  # `launch --detach` is still starting it: attach once it has
        wait_for_starter(lid, err)
    nodes = _nodes(ctx, lid)
    if len(nodes) > 1 or getattr(args, "node", None) is not None:
        from workbench.cli.node_logs import chosen_ranks
        from workbench.core.remote.cluster import ClusterJob

        # every node is followed (and its on_finish applied); the chosen ones are printed
        ranks = chosen_ranks(args, len(nodes)) or [0]
        cluster = ClusterJob(ctx.accounts, nodes, spec_from_dict(rec.spec), on_event=_Printer())
        return _follow(cluster, NodeLogTail(lid, ranks, prefix=len(ranks) > 1), lid, 0.2, "machines")
    return _follow(_job(ctx, rec, inst), FileTail(paths.job_log(lid)), lid,
                   args.interval if args.interval < 1 else 0.2, "machine")


def _follow(job: Any, tail: FileTail | NodeLogTail, launch_id: str, wait_s: float, machines: str) -> int:
    """Print the launch's log as ``job`` (a RemoteJob or ClusterJob) streams it down, then its exit code.

    The job follows the machine(s) and applies on_finish on a thread of its own; Ctrl+C stops only
    the following (exit 130)."""
    result: dict[str, Any] = {}

    def body() -> None:
        try:
            result["code"] = job.follow_and_finish()
        except WorkbenchError as exc:
            result["error"] = exc

    t = threading.Thread(target=body, name="follow", daemon=True)
    t.start()
    try:
        follow(tail, sys.stdout.buffer, t.is_alive, lambda: t.join(wait_s))
    except KeyboardInterrupt:
        job.stop()
        err(f"stopped following; the job goes on on its {machines}")
        return 130
    if "error" in result:
        raise result["error"]
    code = result.get("code", recorded_exit_code(launch_id))
    if code is not None:
        err(f"exit code: {code}")
    return EXIT_OK


def cmd_download(ctx: CliContext, args: argparse.Namespace) -> int:
    """Fetch PATH (relative to the job's working folder; default: the spec's outputs) into --to."""
    rec, inst = _launch_instance(ctx, args.launch_id)
    if not is_remote(inst):  # nothing to fetch: say where its files are (a folder that exists)
        return _already_here(ctx, rec.launch_id, outputs_folder(inst),
                             f"launch {rec.launch_id} ran on this computer; its files are in")
    if not inst.state.active:
        kept = outputs_folder(inst)
        if kept.is_dir() and any(kept.iterdir()):
            return _already_here(ctx, rec.launch_id, kept, f"the machine of {rec.launch_id} is {inst.state.value}; "
                                 f"the outputs downloaded before it ended are in")
        raise NotFoundError(f"the machine of {rec.launch_id} is {inst.state.value}: nothing to download from, and "
                            f"nothing was downloaded before it ended",
                            hint="outputs are fetched when the job ends while the app or `workbench logs --follow` "
                                 "watches it, or with `workbench download` while the machine runs")
    job = _job(ctx, rec, inst)
    wanted = tuple([args.path]) if args.path else job.spec.outputs
    if not wanted:
        raise NotFoundError("the job spec names no outputs", hint="give a PATH, e.g. `workbench download ID checkpoints`")
    dest = Path(args.to).expanduser() if args.to else paths.job_dir(rec.launch_id) / "outputs"
    job.opts.connect_deadline_s = job.opts.reconnect_deadline_s = 60
    conn = job._connect(60, "downloading")
    if conn is None:
        return 130
    with conn:
        job._probe(conn)
        results = job.download_outputs(conn, wanted, dest)
    files = [f for r in results for f in r.files]
    total = sum(r.bytes for r in results)
    dest.mkdir(parents=True, exist_ok=True)  # the path printed exists, even when nothing matched
    dest = dest.resolve()
    if ctx.json:
        emit_json({"launch_id": rec.launch_id, "to": str(dest), "files": files, "bytes": total})
    else:
        print(f"downloaded {len(files)} files ({total / 1e6:.1f} MB) into {dest}")
    return EXIT_OK


def _already_here(ctx: CliContext, launch_id: str, folder: Path, what: str) -> int:
    """``download`` of a launch whose files are on this computer already: print where (it exists)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()
    if ctx.json:
        emit_json({"launch_id": launch_id, "to": str(folder), "files": [], "bytes": 0})
    else:
        print(f"{what} {folder}")
    return EXIT_OK


def ssh_hint(data_dir: Path) -> str:
    return f"{include_line(data_dir)}  (file: {config_path(data_dir)})"
