"""A multi-node rehearsal on this computer: N "nodes" as N process groups with the cluster variables.

A launch with ``count`` N > 1 starts N wrappers, each the leader of its own session
(so each node is one process group, like one machine), all with the variables of
:func:`workbench.core.domain.cluster.node_env` (head address 127.0.0.1, a free
rendezvous port unless the spec names one).  Layout under ``local/<launch id>/``::

    setup.sh run.sh          the spec's commands (shared)
    work/  exit_code         node 0: its working folder and its "<code> <phase>" record
    node-<r>/work/ exit_code node r's
    cluster/hostfile         the MPI hostfile ("127.0.0.1 slots=G" per node)
    cluster/pid.<r>          node r's wrapper pid
    cluster/ready.<r>        node r finished setup
    cluster/exit.<r>         node r's "<code> <phase>" (also what its peers watch)

The wrappers coordinate through these files alone, so a rehearsal behaves the same with
the app closed:

* ``setup`` runs on every node at once; ``run`` starts on a node only once every node has
  written ``ready`` (a barrier); a failed setup anywhere skips ``run`` everywhere;
* a node whose ``run`` fails, or whose wrapper is gone without an exit record (killed:
  "lost"), stops every other node's ``run`` at once (phase ``stopped``, code 143);
* the head's exit is the job's; nodes still running ``HEAD_GRACE_S`` after the head ended
  are stopped.

Threading: :func:`start_nodes` blocks for the copies and spawns; the caller holds the
launch lock.  Failure rules: as :func:`workbench_local.jobs.start_job` (everything started
is killed and removed again before the error is raised).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from workbench.core.domain.cluster import ClusterLayout, hostfile_text, master_port_of, node_env
from workbench.core.domain.errors import ConfigError, PluginError

from . import procs
from .jobs import JobInfo, JobRecord, JobStore, _kill_now, copy_workdir, describe_failure, job_env, job_shell

HEAD_ADDRESS = "127.0.0.1"
HEAD_GRACE_S = 30
POLL_S = "0.2"

CLUSTER_WRAPPER = r"""
node="$1"; shell="$2"; scripts="$3"; c="$4"; rank="$5"; n="$6"; grace="$7"; poll="$8"
echo $$ > "$c/pid.$rank.tmp" && mv -f "$c/pid.$rank.tmp" "$c/pid.$rank"  # whole or absent, never empty to a peer
finish() {
  printf '%s %s\n' "$1" "$2" > "$node/exit_code.tmp" && mv -f "$node/exit_code.tmp" "$node/exit_code"
  printf '%s %s\n' "$1" "$2" > "$c/exit.$rank.tmp" && mv -f "$c/exit.$rank.tmp" "$c/exit.$rank"
}
gone() {  # node $1's wrapper ended without an exit record (killed: the node is lost)
  [ -f "$c/exit.$1" ] && return 1
  p=$(cat "$c/pid.$1" 2>/dev/null) || return 1
  [ -n "$p" ] || return 1  # (an empty pid made `ps -p ""` answer nothing: a node that had just started read as lost)
  st=$(ps -o stat= -p "$p" 2>/dev/null)
  [ -f "$c/exit.$1" ] && return 1
  case "$st" in
    Z*) return 0 ;;
    "") kill -0 "$p" 2>/dev/null && return 1; return 0 ;;  # ps said nothing: the builtin (no fork) asks again
  esac
  return 1
}
trouble() {  # why this node must stop now; nothing when it need not
  i=0
  while [ "$i" -lt "$n" ]; do
    if [ "$i" != "$rank" ]; then
      if [ -f "$c/exit.$i" ]; then
        read -r ecode ephase < "$c/exit.$i"
        if [ "$ecode" != 0 ] && [ "$ephase" != stopped ]; then echo "node $i failed (exit $ecode)"; return; fi
      elif gone "$i"; then echo "node $i was lost"; return; fi
    fi
    i=$((i + 1))
  done
}
code=0
if [ -f "$scripts/setup.sh" ]; then "$shell" -e "$scripts/setup.sh" < /dev/null; code=$?; fi
if [ "$code" -ne 0 ]; then
  echo "workbench: node $rank: setup failed with exit code $code; run skipped" >&2
  finish "$code" setup; exit "$code"
fi
: > "$c/ready.$rank"
while :; do
  ready=0; i=0
  while [ "$i" -lt "$n" ]; do [ -f "$c/ready.$i" ] && ready=$((ready + 1)); i=$((i + 1)); done
  [ "$ready" -ge "$n" ] && break
  [ -d "$c" ] || exit 1  # the launch's folder was removed while waiting: no run will start
  why=$(trouble)
  if [ -n "$why" ]; then
    echo "workbench: node $rank: $why before run started; run skipped" >&2
    finish 1 barrier; exit 1
  fi
  sleep "$poll"
done
rm -f "$node/run.rc"
( trap 'true' TERM; "$shell" -e "$scripts/run.sh" < /dev/null; echo $? > "$node/run.rc" ) &
stop=0
trap 'stop=1' TERM
head_done=0; why=""; limit=$(awk "BEGIN{print int($grace / $poll + 0.5)}")
while [ ! -f "$node/run.rc" ]; do
  [ -d "$c" ] || { kill -TERM 0 2>/dev/null; exit 1; }  # the launch's folder was removed: nothing can end us
  why=$(trouble)
  if [ -z "$why" ] && [ "$rank" != 0 ] && [ -f "$c/exit.0" ]; then
    head_done=$((head_done + 1))  # polls since the head ended; $limit of them make $grace s
    [ "$head_done" -ge "$limit" ] && why="the head node finished ${grace} s ago"
  fi
  [ -n "$why" ] && break
  [ "$stop" = 1 ] && break
  sleep "$poll"
done
if [ -n "$why" ] && [ ! -f "$node/run.rc" ]; then
  echo "workbench: node $rank: $why; stopping run" >&2
  echo "$why" > "$node/stopped_because"
  trap '' TERM
  kill -TERM 0 2>/dev/null
  waited=0
  while [ ! -f "$node/run.rc" ] && [ "$waited" -lt 50 ]; do sleep 0.2; waited=$((waited + 1)); done
  finish 143 stopped
  [ -f "$node/run.rc" ] || kill -KILL 0
  exit 143
fi
while [ ! -f "$node/run.rc" ]; do sleep 0.1; done
code=$(cat "$node/run.rc")
finish "$code" run
exit "$code"
"""


@dataclass(frozen=True)
class NodeProc:
    """One started node: its wrapper (the group leader) and its files."""

    rank: int
    pid: int
    pgid: int
    create_time: float
    log: str

    def to_json(self) -> dict[str, object]:
        return {"rank": self.rank, "pid": self.pid, "pgid": self.pgid, "create_time": self.create_time,
                "log": self.log}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> "NodeProc":
        return cls(int(d["rank"]), int(d["pid"]), int(d["pgid"]), float(d["create_time"]),  # type: ignore[arg-type]
                   str(d["log"]))


def node_dir(store: JobStore, launch_id: str, rank: int) -> Path:
    """Node ``rank``'s folder (work/, exit_code): the launch's own for the head."""
    state = store.state_dir(launch_id)
    return state if rank == 0 else state / f"node-{rank}"


def node_log(store: JobStore, launch_id: str, rank: int) -> Path:
    base = store.log_path(launch_id)
    return base if rank == 0 else base.parent / f"node-{rank}" / "output.log"


def cluster_dir(store: JobStore, launch_id: str) -> Path:
    return store.state_dir(launch_id) / "cluster"


def free_port() -> int:
    """A TCP port free on the loopback right now (the rehearsal's rendezvous port)."""
    with socket.socket() as s:
        s.bind((HEAD_ADDRESS, 0))
        return int(s.getsockname()[1])


def start_nodes(store: JobStore, info: JobInfo, count: int) -> list[NodeProc]:
    """Prepare every node's folders and spawn the N wrappers (see the module doc); rank order."""
    launch_id, spec = info.launch_id, info.spec
    state, cdir = store.state_dir(launch_id), cluster_dir(store, launch_id)
    started: list[subprocess.Popen[bytes]] = []
    nodes: list[NodeProc] = []
    try:
        gpus = spec.resources.gpu.count if spec.resources.gpu else info.gpu_count
        layout = ClusterLayout(addresses=(HEAD_ADDRESS,) * count, gpus_per_node=gpus,
                               master_port=master_port_of(spec.env, default=0) or free_port(),
                               hostfile=str(cdir / "hostfile"))
        try:
            cdir.mkdir(parents=True)
            (cdir / "hostfile").write_text(hostfile_text(layout.addresses, gpus), encoding="utf-8")
            if spec.setup:
                (state / "setup.sh").write_text(spec.setup + "\n", encoding="utf-8")
            (state / "run.sh").write_text(spec.run + "\n", encoding="utf-8")
            for rank in range(count):
                work = node_dir(store, launch_id, rank) / "work"
                work.mkdir(parents=True, exist_ok=True)
                if spec.workdir:
                    copy_workdir(spec.workdir, work, store.root.parent)
                node_log(store, launch_id, rank).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot prepare local job {launch_id}: {describe_failure(exc)}",
                              hint="check that the workbench data folder is writable and has free space") from exc
        for rank in range(count):
            node = node_dir(store, launch_id, rank)
            log_path = node_log(store, launch_id, rank)
            env = job_env(os.environ, {**node_env(layout, rank), **spec.env, **info.secret_env}, launch_id, info.owner)
            try:
                with open(log_path, "ab") as log_file:
                    proc = subprocess.Popen(
                        ["/bin/sh", "-c", CLUSTER_WRAPPER, "workbench-node", str(node), job_shell(), str(state),
                         str(cdir), str(rank), str(count), str(HEAD_GRACE_S), POLL_S],
                        cwd=node / "work", env=env, stdin=subprocess.DEVNULL, stdout=log_file,
                        stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
            except OSError as exc:
                raise PluginError(f"could not start node {rank} of local job {launch_id}: "
                                  f"{describe_failure(exc)}") from exc
            started.append(proc)
            try:
                create_time = psutil.Process(proc.pid).create_time()
            except psutil.Error as exc:
                raise PluginError(f"could not inspect node {rank} of local job {launch_id} (pid {proc.pid}): "
                                  f"{exc}") from exc
            nodes.append(NodeProc(rank, proc.pid, proc.pid, create_time, str(log_path)))
    except BaseException:
        for proc in started:
            _kill_now(proc)
        store.remove(launch_id)
        raise
    for proc in started:
        procs.adopt(proc)
    return nodes


def start_cluster(store: JobStore, info: JobInfo, count: int) -> JobRecord:
    """:func:`start_nodes`, then ``job.json`` naming every node (the head is the record's own pid)."""
    nodes = start_nodes(store, info, count)
    head = nodes[0]
    record = JobRecord(
        launch_id=info.launch_id, name=info.spec.name, pid=head.pid, pgid=head.pgid, create_time=head.create_time,
        owner=info.owner, profile=info.profile, log=head.log, started_at=time.time(),
        price_per_hour=info.price_per_hour, currency=info.currency, gpu_model=info.gpu_model,
        gpu_count=info.gpu_count, spec_name=info.spec.name, spec_source=info.spec.source, tags=dict(info.tags),
        num_nodes=count, nodes=[n.to_json() for n in nodes])
    try:
        store.write(record)
    except OSError as exc:
        for n in nodes:
            procs.end_group(n.pgid, 0.0, f"node {n.rank} of {info.launch_id}")
        store.remove(info.launch_id)
        raise ConfigError(f"cannot record local job {info.launch_id}: {describe_failure(exc)}") from exc
    return record


def nodes_of(rec: JobRecord) -> list[NodeProc]:
    """Every node of ``rec`` in rank order (a single-node job is its own node 0)."""
    if rec.num_nodes <= 1 or not rec.nodes:
        return [NodeProc(0, rec.pid, rec.pgid, rec.create_time, rec.log)]
    return sorted((NodeProc.from_json(d) for d in rec.nodes), key=lambda n: n.rank)


def stopped_because(store: JobStore, launch_id: str, rank: int) -> str | None:
    """Why node ``rank``'s run was stopped by its wrapper (another node failed or was lost), if it was."""
    try:
        text = (node_dir(store, launch_id, rank) / "stopped_because").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None
