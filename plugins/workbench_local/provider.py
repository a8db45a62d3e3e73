"""The Local provider: run jobs on this computer, as a free rehearsal for a cloud launch.

A "machine" here is one job's process group.  Everything the provider knows
lives in files under ``context.data_dir`` (see :mod:`.jobs`), never only in
memory, so a job outlives the GUI or CLI that started it (even SIGKILL) and
the next process finds it again.

Profile settings (strings, like every profile setting):
``price_per_hour``  what an hour of this computer costs you (electricity), default 0;
``grace_seconds``   how long terminate waits after SIGTERM before SIGKILL, default 10.

Threading: one mutation (launch/terminate/delete) at a time per profile, as
the contract says; reads (offers, instances, leftovers, samples) may run on
any thread concurrently.  The only state on ``self`` is the telemetry meter,
which has its own lock.  ``terminate`` and ``delete`` block for up to the
grace period plus a few seconds.

Failure rules: only workbench errors escape.  A bad setting is ConfigError;
an unwritable data dir is ConfigError; a process that cannot be started or
that survives SIGKILL is PluginError.  Already-gone jobs are a success.
"""

from __future__ import annotations

import dataclasses
import datetime
import getpass
import logging
import math
import os
import signal
import socket
import time
from typing import Iterable, Mapping, Sequence

from workbench.core.domain.errors import ConfigError, PluginError, WorkbenchError
from workbench.core.domain.phrase import N_
from workbench.core.domain.models import (
    GpuSample,
    Identity,
    Instance,
    InstanceState,
    LaunchRequest,
    Offer,
    Prices,
    Profile,
    Region,
    Resource,
)
from workbench.core.paths import check_launch_id
from workbench.core.providers.contract import Provider, ProviderContext, SupportsTelemetry

from . import containers, hardware, nodes, procs
from .jobs import JobInfo, JobRecord, JobStore, describe_failure, start_job

log = logging.getLogger(__name__)

MAX_NODES = 64
REGION = "local"
INSTANCE_TYPE = "this-computer"
DEFAULT_GRACE_S = 10.0


class LocalProvider(Provider, SupportsTelemetry):
    """Runs a job spec's setup + run as a process group on this computer."""

    id = "local"
    display_name = "This computer"
    credential_fields = ()
    runs_jobs_over_ssh = False  # its own runner (jobs.py)
    own_hardware = True  # this computer: a free job here is kept by Stop all unless ticked

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)
        self._store = JobStore(context.data_dir)
        self._meter = procs.TreeMeter()

    @classmethod
    def default_region(cls) -> str | None:
        return REGION

    # -- settings -------------------------------------------------------------------

    def _number_setting(self, key: str, default: float) -> float:
        raw = self.profile.settings.get(key, default)
        try:
            value = float(raw)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise ConfigError(
                f"profile {self.profile.name!r}: {key} must be a number >= 0, not {raw!r}",
                hint=f"edit the profile and set {key} to e.g. {default:g}",
            )
        return value

    def price_per_hour(self) -> float:
        """The profile's ``price_per_hour`` setting (ConfigError when invalid)."""
        return self._number_setting("price_per_hour", 0.0)

    def grace_seconds(self) -> float:
        """The profile's ``grace_seconds`` setting (ConfigError when invalid)."""
        return self._number_setting("grace_seconds", DEFAULT_GRACE_S)

    # -- account and catalogue ----------------------------------------------------------

    def check_credentials(self) -> Identity:
        host = socket.gethostname()
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no USER variable and no passwd entry (containers)
            user = str(os.getuid())
        return Identity(account=host, principal=user, display=f"{user}@{host}")

    def regions(self) -> list[Region]:
        return [Region(REGION, "This computer")]

    def offers(self, region: str | None = None) -> Iterable[Offer]:
        """Exactly one offer, this computer as it is now; [] for any other region."""
        if region not in (None, REGION):
            return []
        price = self.price_per_hour()
        gpus = hardware.probe_gpus()
        return [
            Offer(
                provider=self.id,
                region=REGION,
                instance_type=INSTANCE_TYPE,
                gpu_model=gpus[0].model if gpus else None,
                gpu_count=len(gpus),
                gpu_memory_gb=round(min(g.memory_total_mb for g in gpus) / 1024, 1) if gpus else 0.0,
                vcpus=hardware.cpu_count(),
                memory_gb=hardware.memory_total_gb(),
                prices=Prices(
                    on_demand=price,
                    spot=price,
                    currency="USD",
                    source=N_("profile setting"),  # the price the user set (default 0)
                    as_of=datetime.date.today().isoformat(),
                ),
                extra={"hostname": socket.gethostname(), "gpus": [g.raw_name for g in gpus]},
            )
        ]

    # -- launch and state -----------------------------------------------------------------

    def launch(self, req: LaunchRequest) -> list[Instance]:
        """Start the job now (RUNNING on return); a known launch id returns its instance."""
        launch_id = check_launch_id(req.launch_id)
        if not 1 <= req.count <= MAX_NODES:
            raise ConfigError(f"a local rehearsal runs 1 to {MAX_NODES} nodes, not {req.count}")
        if req.spec.image is not None:
            if req.count > 1:
                raise ConfigError("a local rehearsal of several nodes does not run container images yet",
                                  hint="launch one node, or remove image: from the spec")
            containers.engine()  # neither Docker nor podman: say what to install before anything starts
        price = req.offer.hourly(req.spot)
        info = JobInfo(
            launch_id=launch_id,
            spec=req.spec,
            owner=self.context.install_id,
            profile=self.profile.name,
            price_per_hour=self.price_per_hour() if price is None else price,
            currency=req.offer.prices.currency,
            gpu_model=req.offer.gpu_model,
            gpu_count=req.offer.gpu_count,
            tags=req.tags,
            secret_env=req.secret_env,
        )
        try:
            with self._store.launch_lock(launch_id):
                existing = self._store.read(launch_id)
                if existing is not None:
                    if existing.owner != self.context.install_id:
                        raise ConfigError(f"launch id {launch_id} belongs to another workbench install")
                    return self._instances_of(existing)
                if self._store.state_dir(launch_id).exists():
                    self._clear_stale(launch_id)
                record = (start_job(self._store, info) if req.count == 1
                          else nodes.start_cluster(self._store, info, req.count))
        except OSError as exc:  # the lock folder itself could not be created
            raise ConfigError(
                f"cannot prepare local job {launch_id}: {describe_failure(exc)}",
                hint="check that the workbench data folder is writable",
            ) from exc
        log.info("local job %s started as pid %s", launch_id, record.pid)
        # Just spawned: RUNNING even if a one-line job already exited; instances() will say so.
        return self._instances_of(record, just_started=True)

    def _clear_stale(self, launch_id: str) -> None:
        """A launch that died between spawning and recording: end its processes, drop its files."""
        for found in procs.marked_processes(self.context.install_id):
            if found.launch_id == launch_id:
                self._end_process(found.pid, found.pgid, found.create_time, f"stale job {launch_id}")
        self._store.remove(launch_id)

    def instances(self) -> list[Instance]:
        return [i for r in self._store.records() if r.owner == self.context.install_id
                for i in self._instances_of(r)]

    def _instances_of(self, rec: JobRecord, just_started: bool = False) -> list[Instance]:
        """One instance per node (a single-node job is one)."""
        return [self._instance(rec, just_started, node) for node in nodes.nodes_of(rec)]

    def _instance(self, rec: JobRecord, just_started: bool = False,
                  node: nodes.NodeProc | None = None) -> Instance:
        """Derive the instance's state from the process table and the wrapper's exit file."""
        node = node or nodes.NodeProc(0, rec.pid, rec.pgid, rec.create_time, rec.log)
        rank = node.rank
        extra: dict[str, object] = {"pid": node.pid, "pgid": node.pgid, "log": node.log,  # where its files are:
                                    "workdir": str(nodes.node_dir(self._store, rec.launch_id, rank) / "work")}
        if rec.num_nodes > 1:
            extra.update(node_rank=rank, num_nodes=rec.num_nodes, private_ip=nodes.HEAD_ADDRESS)
        state, exit_code = InstanceState.RUNNING, None
        if not just_started and not procs.is_running(node.pid, node.create_time):
            state = InstanceState.TERMINATED
            status = self._store.exit_status(rec.launch_id, rank)
            exit_code = status.code if status else None
            if rec.terminated_by_user:
                extra["reason"] = "terminated by user"
            elif status is None:
                extra["reason"] = "killed"  # ended without the wrapper writing a code
            elif status.phase == "stopped":
                extra["reason"] = "stopped: " + (nodes.stopped_because(self._store, rec.launch_id, rank)
                                                 or "another node ended")
            elif status.phase == "barrier":
                extra["reason"] = "not started: another node's setup failed or it was lost"
            else:
                extra["reason"] = "setup failed" if status.phase == "setup" else "exited"
            if status is not None:
                extra["phase"] = status.phase
            self._meter.forget(_instance_id(rec.launch_id, rank))
        return Instance(
            provider=self.id,
            profile=self.profile.name,
            instance_id=_instance_id(rec.launch_id, rank),
            launch_id=rec.launch_id,
            region=REGION,
            instance_type=INSTANCE_TYPE,
            state=state,
            name=rec.name,
            gpu_model=rec.gpu_model,
            gpu_count=rec.gpu_count,
            price_per_hour=rec.price_per_hour,
            currency=rec.currency,
            launched_at=rec.started_at,
            exit_code=exit_code,
            extra=extra,
        )

    # -- ending things ----------------------------------------------------------------------

    def terminate(self, instances: Sequence[Instance]) -> None:
        """End each job's whole process group (SIGTERM, grace, SIGKILL, verify).

        Tries every instance, then raises one PluginError listing the failures.
        """
        grace = self.grace_seconds()
        failures: list[str] = []
        for inst in instances:
            if inst.provider != self.id:
                continue
            rec = self._store.read(inst.launch_id)
            if rec is None or rec.owner != self.context.install_id:
                continue  # no record: nothing of ours to end
            try:
                self._end_job(rec, grace)
            except WorkbenchError as exc:
                failures.append(exc.message)
        if failures:
            raise PluginError("; ".join(failures))

    def _end_job(self, rec: JobRecord, grace: float) -> None:
        """End every node's group of the launch (a node is the whole launch's: they go together)."""
        live = []
        for node in nodes.nodes_of(rec):
            leader_alive = procs.is_running(node.pid, node.create_time)
            # With the leader gone, the group is still ours only if a member carries our launch id:
            # a reused pid (or pgid) of an unrelated process never does.
            if leader_alive or procs.group_is_marked(node.pgid, rec.launch_id):
                live.append((node, leader_alive))
        if not live:
            return
        if any(alive for _, alive in live) and not rec.terminated_by_user:
            try:
                self._store.write(dataclasses.replace(rec, terminated_by_user=True, terminated_at=time.time()))
            except OSError:  # the bill matters more than the label: end the job anyway
                log.warning("could not mark local job %s as terminated by user", rec.launch_id, exc_info=True)
        what = f"local job {rec.name} ({rec.launch_id})"
        for node, _ in live:  # SIGTERM everywhere first, so the nodes' grace periods overlap
            try:
                procs._signal_group(node.pgid, signal.SIGTERM)
            except PluginError:
                pass  # end_group below reports it
        for node, _ in live:
            procs.end_group(node.pgid, grace, what if rec.num_nodes == 1 else f"node {node.rank} of {what}")
        containers.remove_left(self._store.state_dir(rec.launch_id))  # a job in an image: gone with its group

    def leftovers(self) -> list[Resource]:
        """Processes with our markers whose launch has no running job (its record gone or ended)."""
        live = self._live_launches()
        found = []
        for proc in procs.marked_processes(self.context.install_id):
            if proc.launch_id in live or self._launching(proc.launch_id):
                continue
            found.append(
                Resource(
                    provider=self.id,
                    profile=self.profile.name,
                    resource_id=str(proc.pid),
                    kind="process",
                    region=REGION,
                    launch_id=proc.launch_id or None,
                    extra={"pgid": proc.pgid, "create_time": proc.create_time, "name": proc.name},
                )
            )
        return found

    def delete(self, resources: Sequence[Resource]) -> None:
        """Kill leftover processes (their whole group when it is theirs); gone is a success."""
        live = self._live_launches()
        mine = {p.pid: p for p in procs.marked_processes(self.context.install_id)}
        failures = []
        for res in resources:
            if res.provider != self.id or res.kind != "process":
                continue
            found = mine.get(int(res.resource_id)) if res.resource_id.isdigit() else None
            if found is None or found.launch_id in live:
                continue  # gone, not ours, or (again) part of a running job
            wanted = res.extra.get("create_time")
            if wanted is not None and abs(found.create_time - float(wanted)) > procs.CREATE_TIME_TOLERANCE_S:
                continue  # the pid now names another process
            try:
                self._end_process(found.pid, found.pgid, found.create_time, f"leftover process {found.pid}")
            except WorkbenchError as exc:
                failures.append(exc.message)
        if failures:
            raise PluginError("; ".join(failures))

    def _end_process(self, pid: int, pgid: int, create_time: float, what: str) -> None:
        """End a marked process: its group when the group is a job's, else only the process."""
        if pgid == os.getpgrp() or not procs.group_made_by(pgid, self.context.install_id):
            procs.kill_one(pid, create_time)  # never take down a group we cannot vouch for
        else:
            procs.end_group(pgid, self.grace_seconds(), what)

    def _live_launches(self) -> set[str]:
        return {
            r.launch_id
            for r in self._store.records()
            if r.owner == self.context.install_id
            and any(procs.is_running(n.pid, n.create_time) for n in nodes.nodes_of(r))
        }

    def _launching(self, launch_id: str) -> bool:
        try:
            return bool(launch_id) and self._store.launch_in_progress(launch_id)
        except WorkbenchError:
            return False  # a marker that is not a valid launch id

    # -- telemetry ----------------------------------------------------------------------------

    def samples(self, instance: Instance) -> list[GpuSample]:
        """GPU readings where NVML works, else one CPU/RAM reading of the job's process tree."""
        try:
            rec = self._store.read(instance.launch_id)
        except WorkbenchError:
            return []
        ours = rec is not None and rec.owner == self.context.install_id
        rank = int(instance.extra.get("node_rank", 0) or 0)
        node = next((n for n in nodes.nodes_of(rec) if n.rank == rank), None) if rec is not None and ours else None
        root = procs.find(node.pid, node.create_time) if node is not None else None
        if node is None or root is None or not procs.is_running(node.pid, node.create_time):
            self._meter.forget(instance.instance_id)
            return []
        gpus = hardware.gpu_samples(instance.instance_id)
        if gpus:
            return gpus
        cpu, rss = self._meter.measure(instance.instance_id, root)
        return [
            GpuSample(
                instance_id=instance.instance_id,
                ts=time.time(),
                index=0,
                util_percent=round(min(100.0, cpu / hardware.cpu_count()), 1),
                mem_used_mb=round(rss / hardware.MIB, 1),
                mem_total_mb=hardware.memory_total_mb(),
                name="CPU",
                kind="cpu",
            )
        ]


def _instance_id(launch_id: str, rank: int) -> str:
    """``local-<launch id>`` for the head (and a single-node job), ``…-node<r>`` for the others."""
    return f"local-{launch_id}" if rank == 0 else f"local-{launch_id}-node{rank}"
