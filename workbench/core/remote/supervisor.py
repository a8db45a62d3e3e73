"""The job's life on the machine: setup once, run supervised, record the exit code, apply on_finish.

Layout on the machine (``$WORKBENCH_REMOTE_DIR``, default ``~/.workbench``)::

    jobs/<launch id>/work/          the uploaded workdir (the job's current folder)
                     env.sh         the spec's env + launcher variables (exported)
                     setup.sh run.sh  the spec's commands
                     container.sh container.env  a spec with image: (see :mod:`.container`)
                     container.prepare container.ready  its pull and start begun during the upload: pid, exit code
                     storage.sh     image: with storage or recovery: the storage agent here around the container
                     supervise.sh   setup once (setup.done), run, exit_code, then on_finish.sh
                     on_finish.sh   the machine's own on_finish, after a grace period
                     output.log     stdout+stderr of setup and run (streamed by byte offset; the app's
                                    look waits here for it to grow: :func:`wait_command`)
                     phase          pull (a container image) | setup | barrier (multi-node) | run | finished
                     cluster/       a multi-node launch's files (see :mod:`.cluster_files`)
                     exit_code      written atomically when run (or a failed setup) ends
                     hold           an epoch time until which the machine must not end itself
                                    (the app extends it while it downloads the outputs)
                     on_finish.waited  seconds on_finish.sh has waited so far (rewritten each second)
                     handled        written by the app when the machine must not act at all

``start.sh`` starts ``supervise.sh`` once (a ``start.lock`` folder makes it
idempotent) as a **systemd unit** (``systemd-run --unit workbench-<id>``) when the
machine has systemd and we may use it (root, passwordless sudo, or a lingering
user manager), else as a **setsid/nohup** process in its own session.  Either way
it outlives the SSH connection and the app.

on_finish on the machine: ``terminate``/``stop`` wait ``grace_s`` (and past any
``hold`` the app set while downloading the outputs); the app, when it is open,
ends the bill first through the cloud's API, which it can verify.  If the app is
closed, the machine ends its own bill: ``$WORKBENCH_REMOTE_DIR/bin/workbench-end-bill ACTION`` when the guard's
user-data installed it, else ``shutdown`` (AWS launches with shutdown behaviour
"terminate").  ``WORKBENCH_SELF_STOP`` in the machine's environment overrides
the command (tests).  ``keep`` does nothing on the machine.

Threading: pure functions building text, plus :func:`install`, which blocks.
"""

from __future__ import annotations

import io
import re
import shlex
import tarfile
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from workbench.core.domain.models import Instance, JobSpec, OnFinish
from workbench.core.remote import container
from workbench.core.domain.errors import WorkbenchError
from workbench.core.remote.connection import Connection

DEFAULT_GRACE_S = 600
BASE_EXPR = '"${WORKBENCH_REMOTE_DIR:-$HOME/.workbench}"'
DEFAULT_MASTER_PORT = 29500

SUPERVISE_SH = r"""#!/bin/sh
# Cloud GPU Workbench job supervisor: setup once, run, record the exit code, then on_finish.
J="$(cd "$(dirname "$0")" && pwd)"
echo $$ > "$J/supervisor.pid"
SH="$(command -v bash || echo sh)"
cd "$J/work" 2>/dev/null || cd "$J"
set -a; . "$J/env.sh"; set +a
code=0
in_job() {  # in_job [-e] SCRIPT: here, or inside the job's container when it has one (container.sh)
  if [ "$1" = run.sh ] && [ -f "$J/storage.sh" ]; then sh "$J/storage.sh" run "$J/container.sh" run.sh  # agent here
  elif [ -f "$J/container.sh" ]; then sh "$J/container.sh" exec "$@"
  elif [ "$1" = -e ]; then "$SH" -e "$J/$2"; else "$SH" "$J/$1"; fi
}
if [ -f "$J/container.sh" ]; then  # pulled (with its per-job login) and started before setup
  trap 'sh "$J/container.sh" stop; exit 143' TERM INT HUP
  echo pull > "$J/phase"
  p=$(cat "$J/container.prepare" 2>/dev/null)  # the app began pull and start while the workdir uploaded
  while [ -n "$p" ] && [ ! -f "$J/container.ready" ] && kill -0 "$p" 2>/dev/null; do sleep 0.02 2>/dev/null || sleep 1; done
  code=$(cat "$J/container.ready" 2>/dev/null); rm -f "$J/container.ready"  # once: a rerun starts its own
  if [ -z "$code" ]; then
    { sh "$J/container.sh" pull && sh "$J/container.sh" start; } >> "$J/output.log" 2>&1 < /dev/null; code=$?
  fi
fi
if [ "$code" -eq 0 ] && [ -f "$J/storage.sh" ] && [ ! -f "$J/setup.done" ]; then  # mounts in, before the container's setup
  echo setup > "$J/phase"
  sh "$J/storage.sh" prepare >> "$J/output.log" 2>&1 < /dev/null; code=$?
  [ "$code" -ne 0 ] && echo "[workbench] setup failed with exit code $code; run was not started" >> "$J/output.log"
fi
if [ "$code" -eq 0 ] && [ -s "$J/setup.sh" ] && [ ! -f "$J/setup.done" ]; then
  echo setup > "$J/phase"
  in_job -e setup.sh >> "$J/output.log" 2>&1 < /dev/null; code=$?
  if [ "$code" -eq 0 ]; then touch "$J/setup.done"
  else echo "[workbench] setup failed with exit code $code; run was not started" >> "$J/output.log"; fi
fi
if [ -f "$J/cluster/barrier.sh" ]; then  # a multi-node launch: run starts once every node finished setup
  [ "$code" -eq 0 ] && echo barrier > "$J/phase"
  sh "$J/cluster/barrier.sh" "$code" >> "$J/output.log" 2>&1 < /dev/null; code=$?
fi
if [ "$code" -eq 0 ]; then
  echo run > "$J/phase"
  in_job run.sh >> "$J/output.log" 2>&1 < /dev/null; code=$?
fi
[ -f "$J/container.sh" ] && sh "$J/container.sh" stop
echo "$code" > "$J/exit_code.tmp" && mv -f "$J/exit_code.tmp" "$J/exit_code"
echo finished > "$J/phase"
exec sh "$J/on_finish.sh" "$code" >> "$J/on_finish.log" 2>&1 < /dev/null
"""

ON_FINISH_SH = r"""#!/bin/sh
# on_finish on the machine itself: give the app GRACE seconds to take over, then end the bill.
J="$(cd "$(dirname "$0")" && pwd)"
ACTION=@ACTION@
GRACE=@GRACE@
[ "$ACTION" = keep ] && exit 0
# "hold" holds an epoch time the app extends while it downloads the outputs
waited=0
while :; do
  [ -f "$J/handled" ] && exit 0
  hold=$(cat "$J/hold" 2>/dev/null); now=$(date +%s)
  if [ "$waited" -ge "$GRACE" ] && [ "$now" -ge "${hold:-0}" ]; then break; fi
  echo "$waited" > "$J/on_finish.waited"  # "checked after N s and still waiting" (what tests wait on)
  sleep 1; waited=$((waited + 1))
done
echo "$(date -u +%FT%TZ) the app did not take over within $GRACE s: applying on_finish=$ACTION here"
B="${WORKBENCH_REMOTE_DIR:-$HOME/.workbench}"
if [ -n "$WORKBENCH_SELF_STOP" ]; then exec $WORKBENCH_SELF_STOP "$ACTION"
elif [ -x "$B/bin/workbench-end-bill" ]; then exec "$B/bin/workbench-end-bill" "$ACTION"
else sudo -n shutdown -h now || shutdown -h now
fi
"""

START_SH = r"""#!/bin/sh
# Start supervise.sh once, as a unit that outlives this connection.
J="$(cd "$(dirname "$0")" && pwd)"
if ! mkdir "$J/start.lock" 2>/dev/null; then echo already; exit 0; fi
date +%s > "$J/started"
UNIT=@UNIT@
case "@SUPERVISOR@" in
  systemd-system) systemd-run --quiet --collect --unit="$UNIT" /bin/sh "$J/supervise.sh" ;;
  systemd-sudo) sudo -n systemd-run --quiet --collect --uid="$(id -u)" --gid="$(id -g)" --unit="$UNIT" \
      --setenv=HOME="$HOME" /bin/sh "$J/supervise.sh" ;;
  systemd-user) systemd-run --user --quiet --collect --unit="$UNIT" /bin/sh "$J/supervise.sh" ;;
  batch) sh "$J/submit.sh" ;;  # a scheduler's batch job runs supervise.sh (SupportsBatchJobs: Slurm)
  *) setsid nohup /bin/sh "$J/supervise.sh" < /dev/null > /dev/null 2>&1 & ;;
esac
rc=$?
if [ "$rc" -ne 0 ]; then rmdir "$J/start.lock"; rm -f "$J/started"; echo "failed $rc"; exit "$rc"; fi
echo "started @SUPERVISOR@"
"""


def probe_command(launch_id: str | None = None, machine: bool = True) -> str:
    """One round trip that tells the base folder, the supervisor to use, cloud-init and driver state, and the job's.

    ``machine=False``: a scheduler's login node (the job runs elsewhere, as a batch job): only the base folder and
    the job's state — no ``nvidia-smi`` (a login node's may be slow or absent), no ``sudo -n`` probing (which a
    cluster's security logs may flag), no cloud-init."""
    lines = [f"B={BASE_EXPR}; mkdir -p \"$B/jobs\"; echo \"base=$B\""]
    if machine:
        lines += [
            "if command -v cloud-init >/dev/null 2>&1; then",
            "  echo \"cloud_init=$(cloud-init status 2>/dev/null | sed -n 's/^status: //p')\"",
            "  echo \"cloud_init_log=$(tail -n 1 \"${WORKBENCH_CLOUD_INIT_LOG:-/var/log/cloud-init-output.log}\" "
            "2>/dev/null | cut -c1-160)\"; fi",
            "if [ -n \"$WORKBENCH_SUPERVISOR\" ]; then echo \"supervisor=$WORKBENCH_SUPERVISOR\"",
            "elif [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then",
            "  if [ \"$(id -u)\" = 0 ]; then echo supervisor=systemd-system",
            "  elif sudo -n true 2>/dev/null; then echo supervisor=systemd-sudo",
            "  elif [ \"$(loginctl show-user \"$(id -un)\" -p Linger --value 2>/dev/null)\" = yes ]; then "
            "echo supervisor=systemd-user",
            "  else echo supervisor=setsid; fi",
            "else echo supervisor=setsid; fi",
            "if command -v nvidia-smi >/dev/null 2>&1; then",
            "  m=$(nvidia-smi -L 2>&1); echo \"nvidia=$?\"; echo \"nvidia_msg=$(echo \"$m\" | head -n 1 | cut -c1-200)\"",
            "else echo nvidia=missing; fi",
        ]
    else:
        lines.append("echo supervisor=batch")
    if launch_id:
        j = f"$B/jobs/{launch_id}"
        lines += [
            f"J=\"{j}\"; [ -f \"$J/started\" ] && echo started=1",
            "[ -f \"$J/phase\" ] && echo \"phase=$(cat \"$J/phase\")\"",
            "[ -f \"$J/exit_code\" ] && echo \"exit_code=$(cat \"$J/exit_code\")\"",
            "[ -f \"$J/handled\" ] && echo handled=1",
        ]
    return "\n".join(lines) + "\ntrue\n"


NAP_S = 0.1  # how often the follow's wait looks at the job folder on the machine (two forks a look: wc, sleep)


def wait_command(job_dir: str, offset: int, phase: str | None, seconds: float) -> str:
    """The follow's look at the job: waits on the machine, up to ``seconds``, until ``output.log`` holds more than
    ``offset`` bytes or the phase is no longer ``phase`` (None: answers at once), then prints the phase and the exit
    code (when there is one).  So a line or a phase shows in the app one nap (:data:`NAP_S`) after the machine wrote
    it, in as many round trips as a look every ``seconds`` took (issue 34: the first line of a job in a container
    came up to a whole poll late)."""
    q = shlex.quote(job_dir)
    wait = ""
    if phase is not None and seconds > 0:
        nap = min(NAP_S, seconds)
        naps = max(1, round(seconds / nap))
        wait = (f"i=0; while {{ p=; read -r p < {q}/phase; }} 2>/dev/null; [ \"$p\" = {shlex.quote(phase)} ] && "
                f"[ $i -lt {naps} ] && "
                f"[ \"$(wc -c 2>/dev/null < {q}/output.log || echo 0)\" -le {int(offset)} ]; do "
                f"sleep {nap:g} 2>/dev/null || {{ sleep 1; i=$((i + {max(1, round(1 / nap)) - 1})); }}; "
                f"i=$((i + 1)); done; ")
    return wait + f"cat {q}/phase {q}/exit_code 2>/dev/null"


def parse_probe(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and re.fullmatch(r"[a-z_]+", key):
            out[key] = value.strip()
    return out


def launcher_env(gpus: int, nodes: int = 1, node_rank: int = 0, master_addr: str = "127.0.0.1",
                 master_port: int = DEFAULT_MASTER_PORT) -> dict[str, str]:
    """The variables framework launchers read (torchrun's PET_*, accelerate/deepspeed/Lightning's).

    Per-process ranks (RANK, LOCAL_RANK, WORLD_SIZE) are the launcher's to set, not ours.
    """
    env = {"MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port), "NNODES": str(nodes),
           "NODE_RANK": str(node_rank)}
    if gpus > 0:
        env.update({
            "NPROC_PER_NODE": str(gpus), "GPUS_PER_NODE": str(gpus), "NUM_GPUS": str(gpus),
            "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(gpus)),
            "PET_NPROC_PER_NODE": str(gpus), "PET_NNODES": str(nodes), "PET_NODE_RANK": str(node_rank),
            "PET_MASTER_ADDR": master_addr, "PET_MASTER_PORT": str(master_port),
        })
    return env


def job_env(spec: JobSpec, inst: Instance, launch_id: str, peers: Sequence[Instance] = ()) -> dict[str, str]:
    """Everything exported to setup and run: launcher variables, then the spec's env (the user wins)."""
    gpus = inst.gpu_count or (spec.resources.gpu.count if spec.resources.gpu else 0)
    nodes = list(peers) or [inst]
    rank = next((i for i, p in enumerate(nodes) if p.instance_id == inst.instance_id), 0)
    first = nodes[0]
    master = "127.0.0.1" if len(nodes) == 1 else str(first.extra.get("private_ip") or first.host or "127.0.0.1")
    env = launcher_env(gpus, len(nodes), rank, master)
    env.update({"WORKBENCH_LAUNCH_ID": launch_id, "WORKBENCH_JOB_NAME": spec.name})
    env.update({str(k): str(v) for k, v in spec.env.items()})
    return env


@dataclass(frozen=True)
class Scripts:
    files: Mapping[str, str]  # name → content, written into the job folder


def unit_name(launch_id: str) -> str:
    """The systemd unit a job runs as (when the machine has systemd)."""
    return "workbench-" + re.sub(r"[^A-Za-z0-9_.-]", "-", launch_id)


def render(spec: JobSpec, launch_id: str, env: Mapping[str, str], supervisor: str,
           grace_s: int = DEFAULT_GRACE_S, job_dir: str | None = None) -> Scripts:
    """The job folder's files; a spec with ``image:`` adds ``container.sh`` and ``container.env`` (its env, 0600),
    for which ``job_dir`` (the folder's absolute path on the machine) is needed."""
    unit = unit_name(launch_id)
    extra: dict[str, str] = {}
    if spec.image is not None:
        if not job_dir:
            raise ValueError("a job in a container needs its folder's path on the machine")
        extra = {
            container.ENV_FILE: container.env_file(env),
            container.SCRIPT: container.script(spec.image, launch_id, job_dir, f"{job_dir}/work",
                                               {n: f"{job_dir}/{n}" for n in ("setup.sh", "run.sh")},
                                               [m.path for m in spec.storage], container.multiline(env),
                                               int(env["NODE_RANK"]) if int(env.get("NNODES", "1")) > 1 else None),
        }
    return Scripts({**extra, 
        "env.sh": "".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()),
        "setup.sh": (spec.setup or "").rstrip("\n") + "\n" if spec.setup else "",
        "run.sh": spec.run.rstrip("\n") + "\n",
        "supervise.sh": SUPERVISE_SH,
        "on_finish.sh": ON_FINISH_SH.replace("@ACTION@", spec.on_finish.value if isinstance(spec.on_finish, OnFinish)
                                             else str(spec.on_finish)).replace("@GRACE@", str(int(grace_s))),
        "start.sh": START_SH.replace("@UNIT@", shlex.quote(unit)).replace("@SUPERVISOR@", supervisor),
    })


def install(conn: Connection, job_dir: str, scripts: Scripts) -> None:
    """Write the scripts into ``job_dir`` (created, with an empty ``work/`` for a job without a workdir): one
    ``tar`` on the machine reading them from the SSH channel's stdin, one round trip (SFTP took one per file and
    mode, plus its own session).

    The folder is the job's user's only (0700), and every file is made under ``umask 077``, so ``env.sh`` (and a
    container's ``container.env``), which may hold the values of the spec's secrets, is never readable by others,
    not even while it is written; scripts are made executable afterwards.  Nothing secret is on the command line
    (only the file names) or on the machine's disk outside the job folder (a pipe, not a here-document)."""
    names = sorted(scripts.files)
    for name in names:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"a job script's name must be a plain file name, not {name!r}")
    executable = [n for n in names if n.endswith(".sh") and n not in ("env.sh", container.ENV_FILE)]
    d = shlex.quote(job_dir)
    command = (f"mkdir -p {d}/work && chmod 700 {d} && umask 077 && tar -x -f - -C {d}"
               + (f" && cd {d} && chmod 755 {' '.join(shlex.quote(n) for n in executable)}" if executable else ""))
    res = conn.run(command, timeout=120, stdin=_tar(scripts.files))
    if res.rc != 0:
        detail = (res.err or res.out).strip().splitlines()
        raise WorkbenchError(f"writing the job's scripts failed on {conn.target.where} (exit {res.rc})"
                             + (f": {detail[-1]}" if detail else ""),
                             hint="the machine needs tar (every Linux has it) and room in its home folder")


def _tar(files: Mapping[str, str]) -> bytes:
    """An uncompressed tar of ``files`` (name → text), each 0600 (the machine's chmod makes scripts 0755)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(files):
            data = files[name].encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def start(conn: Connection, job_dir: str) -> str:
    """Run start.sh; "started <how>" or "already" (idempotent)."""
    return conn.check(f"sh {shlex.quote(job_dir + '/start.sh')}", "starting the job", timeout=60).strip()
