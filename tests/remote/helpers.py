"""Small helpers shared by the remote tests (no fixtures here)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import Instance, JobSpec
from workbench.core.remote.job import JobEvent, JobOptions, RemoteJob


def make_spec(tmp: Path, run: str, *, setup: str | None = None, on_finish: str = "terminate",
              outputs: list[str] | None = None, files: dict[str, str] | None = None, env: dict | None = None,
              name: str = "remote-test") -> JobSpec:
    work = tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {}).items():
        p = work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    lines = [f"name: {name}", f"run: {run!r}" if "\n" not in run else "run: |\n" + _indent(run),
             f"workdir: {work}", f"on_finish: {on_finish}", "resources:", "  gpu: V100:1"]
    if setup:
        lines.append("setup: |\n" + _indent(setup))
    if outputs:
        lines.append("outputs: [" + ", ".join(outputs) + "]")
    if env:
        lines.append("env:")
        lines += [f"  {k}: {v!r}" for k, v in env.items()]
    return parse_spec("\n".join(lines) + "\n", source=str(tmp / "spec.yaml"), base_dir=tmp)


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.rstrip("\n").splitlines())


def launch(accounts, spec: JobSpec) -> Instance:
    lp = choose_offer(accounts, spec, provider="sshcloud")
    (inst,) = execute(accounts, lp)
    return inst


def quick_options(**changes) -> JobOptions:
    opts = JobOptions(connect_deadline_s=20, key_grace_s=5, reconnect_deadline_s=20, driver_deadline_s=5,
                      poll_s=0.05, grace_s=600, teardown_timeout_s=10)
    for k, v in changes.items():
        setattr(opts, k, v)
    return opts


class Events:
    """Collects JobEvents (called from the job's thread)."""

    def __init__(self) -> None:
        self.items: list[JobEvent] = []

    def __call__(self, ev: JobEvent) -> None:
        import os, sys
        if os.environ.get("WB_EVENT_TRACE"):
            sys.stderr.write(f"{time.monotonic():.2f} {ev.kind} {ev.phase} {ev.message}\n")
        self.items.append(ev)

    def phases(self) -> list[str]:
        out: list[str] = []
        for e in self.items:
            if e.kind in ("phase", "error") and (not out or out[-1] != e.phase):
                out.append(e.phase)
        return out

    def of(self, kind: str) -> list[JobEvent]:
        return [e for e in self.items if e.kind == kind]


def job(accounts, inst: Instance, spec: JobSpec, events: Events | None = None, **opts) -> RemoteJob:
    return RemoteJob(accounts, inst, spec, quick_options(**opts), on_event=events)


def wait_until(cond: Callable[[], object], timeout: float = 15.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
