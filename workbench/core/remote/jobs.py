"""The remote jobs and telemetry streams one app session drives (used by the GUI's session).

:meth:`RemoteJobs.sync` is handed every fresh instance list (cheap, non-blocking):
for each running cloud instance with an address it makes sure a :class:`GpuStream`
feeds the shared :class:`TelemetryHub`, and, when its launch has a stored spec and
the job is not done yet, a :class:`RemoteJob` thread runs it (launch or attach,
follow, on_finish).  Instances that stopped bill-wise lose their stream.

Threading: ``sync`` and ``stop_all`` from any one thread (the GUI's main thread);
jobs and streams run on their own daemon threads and report through ``on_event``
(called on those threads: a GUI must hand it to its own thread).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.jobspec import spec_from_dict
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.remote.batchstream import BatchGpuSampler
from workbench.core.remote.gpustream import GpuStream
from workbench.core.remote.job import JobEvent, JobOptions, RemoteJob, read_state, recorded_exit_code
from workbench.core.remote.kinds import is_queued, is_remote, streams_gpus

log = logging.getLogger("workbench.remote.jobs")

FINAL_PHASES = ("done", "kept", "error")




class RemoteJobs:
    """Starts at most one job thread and one telemetry stream per instance."""

    def __init__(self, accounts: Any, on_event: Callable[[JobEvent], None] | None = None,
                 options: JobOptions | None = None, period_ms: int = 1000, telemetry: bool = True) -> None:
        self.accounts = accounts
        self.on_event = on_event
        self.options = options
        self.period_ms = period_ms
        self.telemetry = telemetry
        self.hub = TelemetryHub(accounts.store)
        self.jobs: dict[str, Any] = {}  # launch id -> RemoteJob, or ClusterJob for a multi-node launch
        self.threads: dict[str, threading.Thread] = {}
        self.streams: dict[str, GpuStream | BatchGpuSampler] = {}
        self._lock = threading.Lock()

    @property
    def data_dir(self) -> Path:
        return self.accounts.store.path.parent

    def _fresh(self, inst: Instance) -> Callable[[], Instance]:
        def get() -> Instance:
            got = self.accounts.store.get_instance(inst.provider, inst.profile, inst.instance_id)
            return got if got is not None and got.host else inst
        return get

    def sync(self, instances: Iterable[Instance], launches: Mapping[str, Any]) -> None:
        """Start what is missing for running remote instances, stop streams of the ones that ended."""
        instances = list(instances)
        with self._lock:
            live = set()
            clusters = self._clusters(instances, launches)
            for inst in instances:
                if is_queued(inst) and not inst.state.active and inst.launch_id not in self.threads:
                    self._collect(inst, launches.get(inst.launch_id))  # ended while nobody followed it
                if not is_remote(inst) or inst.state != InstanceState.RUNNING or not inst.host:
                    continue
                live.add(inst.instance_id)
                if self.telemetry and (inst.gpu_count or 0) > 0 and inst.instance_id not in self.streams:
                    s = (GpuStream(self.hub, inst, self.data_dir, self.period_ms, fresh=self._fresh(inst))
                         if streams_gpus(inst) else  # a batch job: its GPUs read through its scheduler
                         BatchGpuSampler(self.hub, self.accounts, inst, fresh=self._fresh(inst)))
                    self.streams[inst.instance_id] = s
                    s.start()
                rec = launches.get(inst.launch_id)
                spec = getattr(rec, "spec", None)
                if inst.launch_id in self.threads or not isinstance(spec, dict):
                    continue
                if read_state(inst.launch_id).get("phase") in FINAL_PHASES:
                    continue
                if inst.launch_id in clusters:
                    nodes = clusters[inst.launch_id]
                    if nodes:  # every node is up with an address: drive them together
                        self._start_job(nodes[0], spec, nodes)
                    continue
                self._start_job(inst, spec)
            for iid in [i for i in self.streams if i not in live]:
                self.streams.pop(iid).stop()

    def keep(self, launch_id: str) -> bool:
        """Tell the machine of ``launch_id`` to skip its own on_finish (blocking; call off the UI thread)."""
        with self._lock:
            job = self.jobs.get(launch_id)
        if job is None:
            return False
        job.keep_machine()
        return True

    @staticmethod
    def _clusters(instances: list[Instance], launches: Mapping[str, Any]) -> dict[str, list[Instance]]:
        """Multi-node launches: launch id -> its nodes in rank order once all are running with an
        address, [] while some are not yet (the cluster starts only with every node)."""
        out: dict[str, list[Instance]] = {}
        for inst in instances:
            spec = getattr(launches.get(inst.launch_id), "spec", None)
            wanted = int(spec.get("num_nodes") or 1) if isinstance(spec, dict) else 1
            if wanted > 1 and not is_queued(inst):  # a batch job is one instance for all its nodes
                out.setdefault(inst.launch_id, []).append(inst)
        for lid, nodes in out.items():
            spec = getattr(launches.get(lid), "spec", None) or {}
            up = [i for i in nodes if i.state == InstanceState.RUNNING and i.host and is_remote(i)]
            out[lid] = sorted(up, key=lambda i: node_rank_of(i.extra)) if len(up) >= int(spec.get("num_nodes")) else []
        return out

    def _collect(self, inst: Instance, rec: Any) -> None:
        """A batch job that ended while the app was away: its log and exit code from the login node, once."""
        spec = getattr(rec, "spec", None)
        if not isinstance(spec, dict) or not inst.host or recorded_exit_code(inst.launch_id) is not None:
            return
        job = RemoteJob(self.accounts, inst, spec_from_dict(spec), self.options, on_event=self.on_event)

        def body() -> None:
            try:
                job.collect()
            except WorkbenchError as exc:
                log.info("could not bring home the log of %s: %s", inst.launch_id, exc.message)

        t = threading.Thread(target=body, name=f"collect-{inst.launch_id}", daemon=True)
        self.threads[inst.launch_id] = t
        t.start()

    def _start_job(self, inst: Instance, spec_dict: dict, nodes: list[Instance] | None = None) -> None:
        try:
            spec = spec_from_dict(spec_dict)
        except WorkbenchError as exc:
            log.warning("launch %s has an unreadable spec: %s", inst.launch_id, exc)
            return
        if nodes:
            from workbench.core.remote.cluster import ClusterJob

            job: Any = ClusterJob(self.accounts, nodes, spec, self.options, on_event=self.on_event)
        else:
            job = RemoteJob(self.accounts, inst, spec, self.options, on_event=self.on_event)

        def body() -> None:
            try:
                job.run()
            except WorkbenchError as exc:
                log.warning("remote job %s: %s", inst.launch_id, exc.message)
            except Exception:  # noqa: BLE001 - reported, the app goes on
                log.exception("remote job %s crashed", inst.launch_id)

        t = threading.Thread(target=body, name=f"remote-job-{inst.launch_id}", daemon=True)
        self.jobs[inst.launch_id] = job
        self.threads[inst.launch_id] = t
        t.start()

    def stop_all(self, wait: float = 0.0) -> None:
        """Stop following (the jobs go on on their machines); optionally wait for the threads."""
        with self._lock:
            for job in self.jobs.values():
                job.stop()
            for s in self.streams.values():
                s.stop()
            threads = list(self.threads.values()) + list(self.streams.values())
        for t in threads:
            if wait:
                t.join(wait)
