"""A multi-node job over SSH: every node prepared in parallel, a barrier, the head's exit, one on_finish.

    job = ClusterJob(accounts, instances, spec, on_event=print)   # the launch's N instances
    job.run()          # launch (every node), follow (every node), on_finish (the whole launch)

Each node is a :class:`NodeJob` (a :class:`~.job.RemoteJob` with its rank): it waits for
its machine, uploads the workdir and installs the supervised scripts like a single machine,
plus its ``cluster/`` files (:mod:`.cluster_files`: the launch's own key pair, ssh_config,
known_hosts, hostfile, barrier and stop scripts) and the cluster variables
(:func:`workbench.core.domain.cluster.node_env`).  The nodes wait for each other in this
process once each answers on SSH (every node's address and host key go into every node's
files), then each is uploaded to and started at its own pace: ``setup`` runs everywhere in
parallel, and ``run`` starts on a node only after every node finished ``setup`` (the nodes'
own barrier, over the launch's SSH).

Following: one thread per node streams its log into ``paths.node_log(launch, rank)``.
The job's exit is the head's (rank 0).  A node whose ``run`` fails, or that is lost (its
machine gone, or unreachable past ``reconnect_deadline_s``), fails the launch: the other
nodes' jobs are stopped (``cluster/stop.sh``) and the launch is recorded as failed.  Nodes
still running ``peer_grace_s`` after the head finished are stopped too.  Then on_finish
applies to the whole launch: outputs from the head (``outputs_from: all``: from every node,
into ``outputs/node-<rank>/``), then terminate / stop / keep every node.

State: ``<job dir>/remote.json`` holds the launch's phase, each node's phase and the exit
code (``read_state``); events carry ``data["node"]`` for a node's own events.

Threading: blocking; a thread per node while launching and following.  ``on_event`` is
called on those threads.  ``stop()`` (any thread) makes every loop return.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import posixpath
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from workbench.core import paths
from workbench.core.domain.cluster import ClusterLayout, master_port_of, node_env, node_rank_of
from workbench.core.domain.errors import NotFoundError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance, JobSpec, OnFinish
from workbench.core.providers.contract import SupportsStop
from workbench.core.remote import cluster_files, supervisor
from workbench.core.remote.connection import Connection
from workbench.core.remote.job import (STATE_FILE, JobEvent, JobFlow, JobOptions, RemoteJob, read_state,
                                       recorded_exit_code)

log = logging.getLogger("workbench.remote.cluster")

#: how long workers may run on after the head finished before they are stopped
PEER_GRACE_S = 30.0
#: after the head failed, how long to wait for a worker's failure that caused it (the real cause to report)
HEAD_FAILURE_WAIT_S = 3.0
#: phases in the order a launch goes through them: the launch shows its least advanced node's
PHASE_ORDER = ("connecting", "booting", "driver", "uploading", "starting", "pulling", "setup", "barrier", "running",
               "reconnecting", "finished")


class NodeLost(WorkbenchError):
    """A node's machine is gone (or unreachable for good): the launch fails."""

    kind = "node_lost"


class PeerFailed(WorkbenchError):
    """This node was fine, but another one could not be prepared (so none starts)."""

    kind = "peer_failed"


class NodeJob(RemoteJob):
    """One node of a :class:`ClusterJob`: a RemoteJob that reports to the cluster (see the module doc)."""

    def __init__(self, cluster: "ClusterJob", instance: Instance, rank: int) -> None:
        # a worker never ends its own machine for a finished job: the head's end ends the launch (on the
        # machines, the head's guard asks every peer's; in the app, the launch's teardown)
        spec = cluster.spec if rank == 0 else dataclasses.replace(cluster.spec, on_finish=OnFinish.KEEP)
        super().__init__(cluster.accounts, instance, spec, cluster.opts, on_event=None, secret_env=cluster.secret_env)
        self.cluster = cluster
        self.rank = rank
        self.local_log = paths.node_log(self.launch_id, rank)
        self.exit_code = None
        self.phase = "connecting"
        self.host_key: tuple[str, str] | None = None
        self.supervisor = "setsid"

    # -- reporting -----------------------------------------------------------------------------
    def _emit(self, phase: str, message: str = "", kind: str = "phase", **data: Any) -> None:
        if kind == "phase":
            self.phase = phase
        self.cluster._node_event(self, phase, message, kind, data)
        if phase in ("reconnecting", "connecting", "booting") and kind == "phase":
            self.cluster._check_alive(self)  # raises NodeLost for a machine that is gone

    def _record_exit(self, code: int) -> int:
        self.exit_code = code
        self._emit("finished", f"run exited with code {code}")
        self._emit("finished", f"run exited with code {code}", kind="exit", exit_code=code)
        return code

    # -- starting --------------------------------------------------------------------------------
    def _upload_and_start(self, conn: Connection, info: dict[str, str]) -> None:
        key = conn.transport.get_remote_server_key()
        self.host_key = (key.get_name(), key.get_base64())
        self.supervisor = info.get("supervisor", "setsid")
        # every node reached: all addresses and host keys are known, so each node goes on at its own
        # pace (a slow upload to one node does not hold back setup on the others; the nodes' own
        # barrier holds back run)
        self.cluster._arrive(self)
        if info.get("started"):
            return  # attached to a running job: nothing to install
        super()._upload_and_start(conn, info)

    def _job_env(self) -> dict[str, str]:
        return self.cluster.env_for(self)

    def _before_start(self, conn: Connection, info: dict[str, str]) -> None:
        cluster_files.install(conn, self.remote_dir, self.cluster.files_for(self))

    # -- stopping --------------------------------------------------------------------------------
    def stop_remote(self, reason: str) -> None:
        """Stop this node's job now (another node failed or was lost); its follow loop sees the exit."""
        conn = self._connect(min(self.opts.reconnect_deadline_s, 120), "stopping")
        if conn is None:
            return
        with conn:
            self._probe(conn)
            script = posixpath.join(self.remote_dir, cluster_files.CLUSTER_DIR, "stop.sh")
            conn.run(f"sh {_q(script)} {_q(reason)}", timeout=60)


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)


class ClusterJob(JobFlow):
    """Drives every node of one launch (see the module docstring)."""

    def __init__(self, accounts: Any, instances: Sequence[Instance], spec: JobSpec,
                 options: JobOptions | None = None, on_event: Callable[[JobEvent], None] | None = None,
                 peer_grace_s: float = PEER_GRACE_S, secret_env: Mapping[str, str] | None = None) -> None:
        if not instances:
            raise NotFoundError("a multi-node launch without machines")
        self.accounts = accounts
        self.spec = spec
        self.opts = options or JobOptions()
        self.on_event = on_event
        self.peer_grace_s = peer_grace_s
        self.secret_env = secret_env  # None: the values the launch kept in memory (launch_secrets)
        self.nodes = sorted(instances, key=lambda i: (node_rank_of(i.extra), i.instance_id))
        self.launch_id = self.nodes[0].launch_id
        self.local_dir: Path = paths.job_dir(self.launch_id)
        self.data_dir: Path = accounts.store.path.parent
        self.exit_code: int | None = recorded_exit_code(self.launch_id)
        self.jobs = [NodeJob(self, inst, rank) for rank, inst in enumerate(self.nodes)]
        self.key = cluster_files.new_keypair(f"workbench-{self.launch_id}-nodes")
        self._barrier = threading.Barrier(len(self.jobs))
        self._stop = threading.Event()
        self._state_lock = threading.Lock()
        self._alive_lock = threading.Lock()
        self._alive_checked = 0.0
        self._stopping: set[int] = set()

    # -- plumbing ----------------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        self._barrier.abort()
        for job in self.jobs:
            job.stop()

    def _write_state(self, **changes: Any) -> dict[str, Any]:
        with self._state_lock:
            state = read_state(self.launch_id)
            state.update(changes, num_nodes=len(self.jobs), on_finish=self.spec.on_finish.value,
                         exit_code=self.exit_code, updated_at=time.time())
            tmp = self.local_dir / (STATE_FILE + ".tmp")
            tmp.write_text(json.dumps(state), encoding="utf-8")
            tmp.replace(self.local_dir / STATE_FILE)
            return state

    def _send(self, ev: JobEvent) -> None:
        if kind_is_loud(ev.kind):
            log.warning("%s: %s", self.launch_id, ev.message)
        if self.on_event is not None:
            try:
                self.on_event(ev)
            except Exception:  # noqa: BLE001 - a display must never stop the job
                log.exception("cluster job event callback failed")

    def _emit(self, phase: str, message: str = "", kind: str = "phase", **data: Any) -> None:
        if kind == "phase":
            self._write_state(phase=phase, message=message)
        self._send(JobEvent(self.launch_id, phase, message, kind, dict(data)))

    def _node_event(self, job: NodeJob, phase: str, message: str, kind: str, data: dict[str, Any]) -> None:
        if kind == "phase":
            phases = {str(j.rank): j.phase for j in self.jobs}
            known = [p for p in phases.values() if p in PHASE_ORDER]
            overall = min(known, key=PHASE_ORDER.index) if known else phase
            self._write_state(phase=overall, nodes=phases, message=f"node {job.rank}: {message}")
        text = f"node {job.rank}: {message}" if message else f"node {job.rank}"
        self._send(JobEvent(self.launch_id, phase, text, kind, {**data, "node": job.rank}))

    def _check_alive(self, job: NodeJob) -> None:
        """Reconcile (at most every few seconds for the whole launch); NodeLost when ``job``'s machine is gone."""
        from workbench.core.lifecycle.reconcile import reconcile

        with self._alive_lock:
            if time.monotonic() - self._alive_checked >= 3.0:
                self._alive_checked = time.monotonic()
                try:
                    reconcile(self.accounts, [self.accounts.profile(job.instance.profile)])
                except WorkbenchError as exc:
                    log.info("%s: could not check the nodes: %s", self.launch_id, exc.message)
        if not job._instance_alive():
            raise NodeLost(f"node {job.rank} ({job.instance.instance_id}) is gone",
                           hint="a multi-node job needs every node; the launch fails and the others stop")

    # -- what each node gets -------------------------------------------------------------------------
    def addresses(self) -> list[cluster_files.NodeAddress]:
        out = []
        for job in self.jobs:
            inst = job._fresh_instance()
            out.append(cluster_files.NodeAddress(
                address=str(inst.extra.get("private_ip") or inst.host or ""),
                port=int(inst.extra.get("node_ssh_port") or 22),
                user=str(inst.extra.get("ssh_user") or "ubuntu"), host_key=job.host_key))
        return out

    def gpus_per_node(self) -> int:
        first = self.nodes[0]
        return first.gpu_count or (self.spec.resources.gpu.count if self.spec.resources.gpu else 0)

    def env_for(self, job: NodeJob) -> dict[str, str]:
        """env.sh of ``job``: launcher variables, cluster variables, tool and NCCL settings; the spec's env wins."""
        addrs = [a.address for a in self.addresses()]
        gpus = self.gpus_per_node()
        port = master_port_of(self.spec.env)
        layout = ClusterLayout(tuple(addrs), gpus, port,
                               hostfile=posixpath.join(job.remote_dir, cluster_files.CLUSTER_DIR, "hostfile"))
        env = supervisor.launcher_env(gpus, len(addrs), job.rank, addrs[0], port)
        env.update(node_env(layout, job.rank))
        env.update(cluster_files.tool_env(job.remote_dir, in_container=self.spec.image is not None))
        env.update(cluster_files.INTERCONNECT_ENV.get(str(job.instance.extra.get("interconnect") or ""), {}))
        env.update({"WORKBENCH_LAUNCH_ID": self.launch_id, "WORKBENCH_JOB_NAME": self.spec.name})
        env.update({str(k): str(v) for k, v in self.spec.env.items()})
        return env

    def files_for(self, job: NodeJob) -> dict[str, str]:
        return cluster_files.render(self.launch_id, job.rank, job.remote_dir, self.addresses(), self.gpus_per_node(),
                                    self.key, supervisor.unit_name(self.launch_id), job.supervisor)

    def _arrive(self, job: NodeJob) -> None:
        try:
            self._barrier.wait(timeout=self.opts.connect_deadline_s)
        except threading.BrokenBarrierError:
            raise PeerFailed(f"node {job.rank} did not start: another node of {self.launch_id} could not be "
                             "prepared", hint="see the other nodes' messages") from None

    # -- launch ------------------------------------------------------------------------------------------
    def _each(self, fn: Callable[[NodeJob], Any], jobs: Sequence[NodeJob] | None = None) -> list[Any]:
        """``fn(job)`` for every node at once; the first real error is raised after all have returned."""
        jobs = list(self.jobs if jobs is None else jobs)
        results: dict[int, Any] = {}
        errors: dict[int, BaseException] = {}

        def body(job: NodeJob) -> None:
            try:
                results[job.rank] = fn(job)
            except BaseException as exc:  # noqa: BLE001 - collected, re-raised below
                errors[job.rank] = exc
                self._barrier.abort()  # the others must not wait for this node

        threads = [threading.Thread(target=body, args=(j,), name=f"node-{self.launch_id}-{j.rank}", daemon=True)
                   for j in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            real = [e for e in errors.values() if not isinstance(e, PeerFailed)] or list(errors.values())
            raise real[0]
        return [results.get(j.rank) for j in jobs]

    def launch(self) -> bool:
        """Every node: wait for it, upload, install its scripts and cluster files, start.  False when stopped."""
        self._emit("connecting", f"preparing {len(self.jobs)} nodes")
        try:
            done = self._each(lambda job: job.launch())
        except WorkbenchError:
            if self.stopped:
                return False
            raise
        if self.stopped or not all(done):
            return False
        self._emit("running", f"the job runs on {len(self.jobs)} nodes")
        return True

    # -- follow ------------------------------------------------------------------------------------------
    def _stop_nodes(self, ranks: Sequence[int], reason: str) -> None:
        todo = [self.jobs[r] for r in ranks if r not in self._stopping]
        self._stopping.update(j.rank for j in todo)
        for job in todo:
            self._emit("stopping", f"stopping node {job.rank}: {reason}")

        def one(job: NodeJob) -> None:
            try:
                job.stop_remote(reason)
            except WorkbenchError as exc:
                log.warning("%s: could not stop node %d: %s", self.launch_id, job.rank, exc.message)

        for job in todo:
            threading.Thread(target=one, args=(job,), name=f"stop-{self.launch_id}-{job.rank}", daemon=True).start()

    def follow(self) -> int | None:
        """Follow every node until the launch's exit is known (see the module doc).  None when stopped."""
        events: queue.Queue[tuple[int, str, int | None, WorkbenchError | None]] = queue.Queue()

        def body(job: NodeJob) -> None:
            try:
                events.put((job.rank, "exit", job.follow(), None))
            except WorkbenchError as exc:
                events.put((job.rank, "lost", None, exc))
            except Exception as exc:  # noqa: BLE001 - a bug on one node's thread still ends the wait
                log.exception("following node %d of %s crashed", job.rank, self.launch_id)
                events.put((job.rank, "lost", None, WorkbenchError(f"{type(exc).__name__}: {exc}")))

        for job in self.jobs:
            threading.Thread(target=body, args=(job,), name=f"follow-{self.launch_id}-{job.rank}", daemon=True).start()
        running = set(range(len(self.jobs)))
        head_code: int | None = None
        head_done_at: float | None = None
        head_failed_at: float | None = None  # the head failed: a worker's failure may be the cause, so wait a moment
        failure: tuple[int, int, str] | None = None
        while running:
            try:
                rank, kind, code, exc = events.get(timeout=0.2)
            except queue.Empty:
                if self.stopped:
                    return None
                now = time.monotonic()
                if failure is None and head_failed_at is not None and now - head_failed_at >= HEAD_FAILURE_WAIT_S:
                    failure = (0, head_code or 1, f"the head node failed (exit {head_code})")
                    self._stop_nodes(sorted(running), failure[2])
                elif failure is None and head_done_at is not None and now - head_done_at >= self.peer_grace_s:
                    self._stop_nodes(sorted(running), f"the head node finished {self.peer_grace_s:g} s ago")
                continue
            running.discard(rank)
            stopped_by_us = rank in self._stopping
            if kind == "exit" and code is None:
                if self.stopped:
                    return None
                continue
            if kind == "exit" and code is not None:
                if rank == 0 and failure is None and not stopped_by_us:
                    head_code, head_done_at = code, time.monotonic()
                    if code != 0:
                        head_failed_at = head_done_at
                elif code != 0 and failure is None and not stopped_by_us and (head_code is None or head_failed_at):
                    failure = (rank, code, f"node {rank} failed (exit {code})")
                    self._stop_nodes(sorted(running), failure[2])
                elif code != 0 and not stopped_by_us:
                    self._emit("running", f"node {rank} ended with exit code {code} after the head", kind="warning")
            else:
                message = exc.message if isinstance(exc, WorkbenchError) else "lost"
                if failure is None and (head_code is None or head_failed_at):
                    failure = (rank, 1, f"node {rank} was lost: {message}")
                    self._stop_nodes(sorted(running), failure[2])
                elif not stopped_by_us:
                    self._emit("running", f"node {rank}: {message}", kind="warning")
        if failure is None and head_failed_at is not None:
            failure = (0, head_code or 1, f"the head node failed (exit {head_code})")
        final = head_code if failure is None or failure[0] == 0 else failure[1]
        return self._record_exit(int(final if final is not None else 1), failure[2] if failure else None)

    def _record_exit(self, code: int, failure: str | None) -> int:
        self.exit_code = code
        (self.local_dir / "exit_code").write_text(f"{code}\n")
        store = self.accounts.store
        head = self.jobs[0]._fresh_instance()
        store.upsert_instance(head.with_state(head.state, exit_code=code))
        if failure:
            store.update_launch(self.launch_id, error=f"multi-node job failed: {failure}")
        elif code != 0:
            store.update_launch(self.launch_id, error=f"run exited with code {code}")
        self._write_state(phase="finished", message=failure or f"run exited with code {code}", failure=failure)
        self._emit("finished", failure or f"run exited with code {code}", kind="error" if failure else "phase")
        self._emit("finished", f"run exited with code {code}", kind="exit", exit_code=code)
        return code

    # -- on_finish ---------------------------------------------------------------------------------------
    def download_outputs(self) -> int:
        """The spec's outputs from the head (every node with ``outputs_from: all``); how many files came."""
        jobs = self.jobs if self.spec.outputs_from == "all" else self.jobs[:1]
        count = 0
        for job in jobs:
            dest = self.local_dir / "outputs" / (f"node-{job.rank}" if self.spec.outputs_from == "all" else "")
            try:
                conn = job._connect(min(self.opts.reconnect_deadline_s, 300), "downloading")
                if conn is None:
                    continue
                with conn:
                    job._probe(conn)
                    count += sum(len(r.files) for r in job.download_outputs(conn, dest=dest))
            except WorkbenchError as exc:
                self._emit("downloading", f"could not download the outputs of node {job.rank}: {exc.message}",
                           kind="warning")
        return count

    def apply_on_finish(self) -> None:
        """Outputs first, then terminate / stop / keep every node of the launch."""
        action = self.spec.on_finish
        if self.spec.outputs:
            got = self.download_outputs()
            self._emit("downloading", f"{got} files saved in {self.local_dir / 'outputs'}")
        if action != OnFinish.KEEP and self.opts.teardown_by_guards:
            self._emit("finished", f"the job ended; its {len(self.jobs)} machines are "
                                   f"{'stopped' if action == OnFinish.STOP else 'terminated'} after the finish "
                                   "guard's grace period unless you keep them running")
            return
        if action == OnFinish.KEEP:
            total = sum(j.instance.price_per_hour for j in self.jobs)
            self._emit("kept", f"on_finish is 'keep': the {len(self.jobs)} machines keep running and billing "
                               f"{total:.2f} {self.nodes[0].currency}/h until you terminate them", kind="warning")
            return
        if action == OnFinish.STOP:
            prov = self.accounts.provider(self.accounts.profile(self.nodes[0].profile))
            if not isinstance(prov, SupportsStop):
                self._emit("kept", f"on_finish is 'stop' but {self.nodes[0].provider} cannot stop machines",
                           kind="warning")
                return
            self._emit("stopping", f"stopping the {len(self.jobs)} machines")
            prov.stop([j._fresh_instance() for j in self.jobs])
            self._emit("done", "stopped (disks are kept and may bill)")
            return
        self._emit("terminating", f"terminating the {len(self.jobs)} machines and verifying nothing is left")
        self._terminate_and_verify(list(self.nodes))

    def keep_machine(self, years: int = 10) -> None:
        """"Keep running" after the job ended: every node's own on_finish stands down (other guards stay)."""
        self._each(lambda job: job.keep_machine(years))
        self._emit("kept", f"the {len(self.jobs)} machines keep running at your request")


def kind_is_loud(kind: str) -> bool:
    return kind in ("warning", "error")


def is_multi_node(spec: JobSpec | None, instances: Sequence[Instance]) -> bool:
    """A launch the cluster runner drives: more than one node in its spec (or ranked instances)."""
    return bool(spec is not None and spec.num_nodes > 1) or len({node_rank_of(i.extra) for i in instances}) > 1


__all__ = ["ClusterJob", "NodeJob", "NodeLost", "TransientError", "is_multi_node"]
