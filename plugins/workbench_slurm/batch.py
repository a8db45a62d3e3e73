"""A Slurm job's folder: the batch script around ``supervise.sh``, ``submit.sh``, and the run spread over the nodes.

The SSH runner renders the job folder as for a machine (``env.sh``, ``setup.sh``, ``run.sh``, ``supervise.sh``,
``on_finish.sh``, ``start.sh``; see :mod:`workbench.core.remote.supervisor`).  On a cluster :func:`render` changes it:

* ``job.sbatch`` — the batch job (``#SBATCH`` lines: job name ``wb-<launch id>`` and comment
  ``workbench:<install id>:<launch id>``, by which the app finds its jobs again after a crash; partition, nodes,
  GPUs as GRES, the time limit, account/QOS; Slurm's own output file in the job folder).  Its body (``batch.sh``)
  records the Slurm job id, runs ``supervise.sh`` and, when Slurm ends the job (time limit, ``scancel``, a node
  failure: SIGTERM), records exit code 143 so the app's follower sees the end.
* ``run.sh`` — ``srun`` of ``node.sh`` once on every node of the allocation; ``node.sh`` exports the node's cluster
  variables (the same names as every multi-node launch: :func:`workbench.core.domain.cluster.node_env`, computed
  from ``SLURM_NODEID`` and the allocation's node addresses), runs the spec's setup (on each node: a node's own
  disk may need it) and then its run.  ``setup.sh`` is left empty so ``supervise.sh`` skips it.
* ``env.sh`` without ``CUDA_VISIBLE_DEVICES`` (Slurm sets it to the GPUs it gave the job).
* ``on_finish.sh`` does nothing: the batch job ends with ``supervise.sh`` and Slurm frees its nodes; nothing waits.
* ``submit.sh`` — ``sbatch --parsable job.sbatch`` once (``start.sh`` runs it under its lock), the job id into
  ``batch_id``, phase ``queued``; refused when the launch was ended before its job was queued (``cancelled``).

* a job with storage mounts: the storage agent once on the batch node around every node's run (:mod:`.mounts`); the
  batch script deletes the mounts' credentials file when the job ends (``submit.sh`` when nothing was queued).

Secrets stay in ``env.sh`` (0600, written by the runner): never on an ``sbatch`` command line.
Pure functions building text; any thread.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from typing import Mapping

from workbench.core.domain.cluster import ClusterLayout, master_port_of, node_env
from workbench.core.domain.models import JobSpec
from workbench.core.remote.supervisor import launcher_env
from workbench.core.storage.machine import CREDENTIALS_NAME

from . import mounts

COMMENT_PREFIX = "workbench:"
CANCELLED_FILE = "cancelled"
BATCH_ID_FILE = "batch_id"


@dataclass(frozen=True)
class BatchRequest:
    """What the batch script asks Slurm for (one launch)."""

    launch_id: str
    install_id: str
    partition: str
    nodes: int = 1
    gpus_per_node: int = 0
    gres_type: str | None = None
    time_limit_s: int | None = None
    account: str | None = None
    qos: str | None = None
    cpus_per_task: int | None = None
    mem_mb: int | None = None


def job_name(launch_id: str) -> str:
    """The Slurm job name of a launch (also its instance id)."""
    return f"wb-{launch_id}"


def comment(install_id: str, launch_id: str) -> str:
    return f"{COMMENT_PREFIX}{install_id}:{launch_id}"


def parse_comment(text: str | None) -> tuple[str, str] | None:
    """(install id, launch id) from a job's comment, None when the job is not one of the app's."""
    m = re.fullmatch(r"workbench:([A-Za-z0-9_.-]+):([A-Za-z0-9_.-]+)", (text or "").strip())
    return (m.group(1), m.group(2)) if m else None


def slurm_time(seconds: int) -> str:
    """Slurm's ``--time`` for ``seconds`` (whole minutes, rounded up; days as ``D-HH:MM:SS``)."""
    minutes = max(1, math.ceil(seconds / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    return f"{days}-{hours:02d}:{mins:02d}:00" if days else f"{hours:02d}:{mins:02d}:00"


def sbatch_options(req: BatchRequest, job_dir: str) -> list[str]:
    """The ``#SBATCH`` options (also given to ``sbatch --test-only`` before anything is queued)."""
    opts = [f"--job-name={job_name(req.launch_id)}", f"--comment={comment(req.install_id, req.launch_id)}",
            f"--partition={req.partition}", f"--nodes={req.nodes}", "--ntasks-per-node=1"]
    if req.gpus_per_node > 0:
        opts.append(f"--gres=gpu:{req.gres_type}:{req.gpus_per_node}" if req.gres_type
                    else f"--gres=gpu:{req.gpus_per_node}")
    if req.time_limit_s:
        opts.append(f"--time={slurm_time(req.time_limit_s)}")
    if req.account:
        opts.append(f"--account={req.account}")
    if req.qos:
        opts.append(f"--qos={req.qos}")
    if req.cpus_per_task:
        opts.append(f"--cpus-per-task={req.cpus_per_task}")
    if req.mem_mb:
        opts.append(f"--mem={req.mem_mb}M")
    if job_dir:
        opts += [f"--output={job_dir}/slurm-%j.out", f"--chdir={job_dir}"]
    return opts


BATCH_SH = r"""J=@J@
echo "$SLURM_JOB_ID" > "$J/slurm_job_id"
child=
ended() {
  echo "[workbench] Slurm is ending the job (its time limit, scancel, or a node failure)" >> "$J/output.log"
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  a=$(cat "$J/storage.pid" 2>/dev/null)
  if [ -n "$a" ] && kill -0 "$a" 2>/dev/null; then  # the storage agent saves the sync mounts (within KillWait)
    kill -TERM "$a" 2>/dev/null; n=0
    while kill -0 "$a" 2>/dev/null && [ "$n" -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
  fi
  rm -f "$J/@CREDENTIALS@"
  if [ ! -f "$J/exit_code" ]; then
    echo 143 > "$J/exit_code.tmp" && mv -f "$J/exit_code.tmp" "$J/exit_code"
    echo finished > "$J/phase"
  fi
  exit 143
}
trap ended TERM INT
/bin/sh "$J/supervise.sh" &
child=$!
wait "$child"
code=$?
rm -f "$J/@CREDENTIALS@"  # a job's storage credentials end with it (the agent deleted them already when it ran)
exit "$code"
"""

SUBMIT_SH = r"""#!/bin/sh
# Queue the job's batch script once (start.sh runs this under its lock).
J=@J@
if [ -f "$J/cancelled" ]; then
  rm -f "$J/@CREDENTIALS@"; echo "the launch was ended before its job was queued" >&2; exit 3
fi
out=$(sbatch --parsable "$J/job.sbatch") || { rc=$?; rm -f "$J/@CREDENTIALS@"; exit $rc; }
id=${out%%;*}
echo "$id" > "$J/batch_id.tmp" && mv -f "$J/batch_id.tmp" "$J/batch_id"
echo queued > "$J/phase"
echo "queued $id"
"""

RUN_SH = r"""# Spread over the allocation's nodes: node.sh once on each (its cluster variables, setup, run).
J=@J@
i=0
for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
  a=$(scontrol show node -o "$h" 2>/dev/null | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')
  export "WB_ADDR_$i=${a:-$h}"
  i=$((i + 1))
done
mkdir -p "$J/cluster" && : > "$J/cluster/hostfile"
j=0
while [ "$j" -lt "$i" ]; do eval "echo \"\$WB_ADDR_$j slots=@SLOTS@\"" >> "$J/cluster/hostfile"; j=$((j + 1)); done
exec srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 --kill-on-bad-exit=1 \
  @LABEL@/bin/sh "$J/node.sh"
"""

NODE_SH = r"""#!/bin/sh
# One node of the batch job (srun runs this once per node): its cluster variables, then setup, then run.
J=@J@
case "${SLURM_NODEID:-0}" in
@CASES@
esac
cd "$J/work" 2>/dev/null || cd "$J"
SH="$(command -v bash || echo sh)"
if [ -s "$J/node_setup.sh" ]; then "$SH" -e "$J/node_setup.sh" || exit $?; fi
exec "$SH" "$J/node_run.sh"
"""

NO_ON_FINISH = ("#!/bin/sh\n# A Slurm batch job ends with supervise.sh: Slurm frees its nodes, nothing waits here.\n"
                "exit 0\n")


def _dq(value: str) -> str:
    """``value`` in double quotes, with the allocation's addresses (``@ADDR<i>@``) left to the shell."""
    escaped = re.sub(r'([\\"$`])', r"\\\1", value)
    return '"' + re.sub(r"@ADDR(\d+)@", r"${WB_ADDR_\1}", escaped) + '"'


def node_cases(nodes: int, gpus_per_node: int, job_dir: str, spec_env: Mapping[str, str]) -> str:
    """The ``case`` arms of node.sh: every cluster variable of each node rank."""
    port = master_port_of(spec_env)
    layout = ClusterLayout(tuple(f"@ADDR{i}@" for i in range(nodes)), gpus_per_node, port,
                           hostfile=f"{job_dir}/cluster/hostfile")
    arms = []
    for rank in range(nodes):
        env = launcher_env(gpus_per_node, nodes, rank, layout.head, port)
        env.update(node_env(layout, rank))
        env.pop("CUDA_VISIBLE_DEVICES", None)  # Slurm's own value: the GPUs it gave this node
        env.update({k: v for k, v in spec_env.items() if k in ("MASTER_PORT", "WORKBENCH_MASTER_PORT")})
        lines = "\n".join(f"  export {k}={_dq(v)}" for k, v in env.items())
        arms.append(f"{rank})\n{lines}\n  ;;")
    return "\n".join(arms)


def batch_script(req: BatchRequest, job_dir: str) -> str:
    head = "".join(f"#SBATCH {o}\n" for o in sbatch_options(req, job_dir))
    return "#!/bin/sh\n" + head + "# Cloud GPU Workbench: supervise.sh as a Slurm batch job\n" + BATCH_SH.replace(
        "@J@", shlex.quote(job_dir)).replace("@CREDENTIALS@", CREDENTIALS_NAME)


def render(req: BatchRequest, job_dir: str, files: Mapping[str, str], spec_env: Mapping[str, str],
           agent_spec: JobSpec | None = None) -> dict[str, str]:
    """The job folder's files for Slurm, from ``files`` as the runner rendered them for a machine; ``agent_spec``: the
    spec as the runner wrapped it around the storage agent (a job with storage mounts: :func:`.mounts.render`)."""
    out = dict(files)
    j = shlex.quote(job_dir)
    out["node_setup.sh"] = files.get("setup.sh", "")
    out["node_run.sh"] = files["run.sh"]
    out["setup.sh"] = ""  # each node runs it (node.sh), not supervise.sh on the first node alone
    out["run.sh"] = (RUN_SH.replace("@J@", j).replace("@SLOTS@", str(max(1, req.gpus_per_node)))
                     .replace("@LABEL@", "--label " if req.nodes > 1 else ""))
    out["node.sh"] = NODE_SH.replace("@J@", j).replace(
        "@CASES@", node_cases(req.nodes, req.gpus_per_node, job_dir, spec_env) if req.nodes > 1 else "")
    out["env.sh"] = "".join(line + "\n" for line in files.get("env.sh", "").splitlines()
                            if line and not line.startswith("CUDA_VISIBLE_DEVICES="))
    out["on_finish.sh"] = NO_ON_FINISH
    out["job.sbatch"] = batch_script(req, job_dir)
    out["submit.sh"] = SUBMIT_SH.replace("@J@", j).replace("@CREDENTIALS@", CREDENTIALS_NAME)
    if agent_spec is not None:
        out = mounts.render(out, job_dir, agent_spec, out["run.sh"])
    return out
