"""The files a multi-node launch puts on each node: inter-node SSH, hostfile, barrier, stop.

In ``<job folder>/cluster/`` of every node (written over SFTP before the job starts)::

    id_ed25519 id_ed25519.pub   the launch's own key pair, made in memory for this launch (never
                                written on this computer); its public half is appended to the
                                node's authorized keys, so the nodes log in to each other
    ssh_config                  Host entries for every node's private address (port, user, key,
                                known_hosts, StrictHostKeyChecking yes); an ``Include`` of it is put at
                                the top of the node's ``~/.ssh/config`` so plain ``ssh ADDR`` (mpirun,
                                the DeepSpeed/pdsh launcher, horovodrun) works
    known_hosts                 every node's host key as the app saw it when it connected
    hostfile                    the MPI hostfile, ``ADDR slots=G`` per node
    peers rank                  the addresses in rank order, this node's rank (the instance-side
                                guard reads them to act on the whole launch)
    barrier.sh                  run by supervise.sh after ``setup``: ``run`` starts only once every
                                node finished ``setup`` (see :data:`BARRIER_SH`); a failed setup
                                anywhere means ``run`` starts nowhere
    stop.sh                     the app stops a node's job with it when another node failed or was lost
    mpi_rsh.sh                  mpirun's remote shell for a job in a container image (its daemons start in
                                the other node's container): see :data:`MPI_RSH_SH`

``WORKBENCH_AUTHORIZED_KEYS`` and ``WORKBENCH_SSH_DIR`` in the node's environment move the
authorized keys file and the ssh folder (tests: several "nodes" share one computer's home).

Pure text rendering plus :func:`install` (blocks on SFTP and one command).
"""

from __future__ import annotations

import io
import shlex
from dataclasses import dataclass
from typing import Mapping, Sequence

from workbench.core.domain.cluster import hostfile_text
from workbench.core.domain.errors import WorkbenchError
from workbench.core.remote.connection import Connection
from workbench.core.remote.container import SCRIPTS_AT, container_name

CLUSTER_DIR = "cluster"

#: The barrier, run by supervise.sh right after ``setup`` (with setup's exit code).  Every node tells
#: the head over the launch's own SSH that its setup finished (``ready.<rank>`` in the head's job
#: folder) or failed (``failed.<rank>``); the head waits for all of them, then tells every node to go
#: (``barrier.open``) or not (``barrier.failed``), all at once.  Each wait is on a local file, so the
#: barrier costs two SSH round trips, not a polling period.  ``abort`` (written by the app when a node
#: was lost) ends any wait at once.
BARRIER_SH = r"""#!/bin/sh
C="$(cd "$(dirname "$0")" && pwd)"; J="$(dirname "$C")"
RANK=@RANK@; N=@N@; PEERS="@PEERS@"; HEAD="${PEERS%% *}"; SETUP="${1:-0}"
AT=@AT@
push() {  # push NAME into ADDR's job folder (a few tries: a node may still be starting its sshd)
  i=0
  while [ "$i" -lt 30 ]; do
    ssh -F "$C/ssh_config" -o ConnectTimeout=10 "$1" "$AT; : > \"\$J/$2\"" < /dev/null 2>> "$C/barrier.err" && return 0
    [ -f "$J/abort" ] && return 1
    sleep 1; i=$((i + 1))
  done
  echo "[workbench] node $RANK: could not reach $1 to tell it $2"; return 1
}
everyone() {  # push NAME to every other node, side by side
  r=0
  for addr in $PEERS; do [ "$r" != "$RANK" ] && push "$addr" "$1" & r=$((r + 1)); done
  wait
}
if [ "$RANK" != 0 ]; then
  if [ "$SETUP" != 0 ]; then push "$HEAD" "failed.$RANK"; exit "$SETUP"; fi
  echo "[workbench] node $RANK: setup done; waiting for all $N nodes"
  push "$HEAD" "ready.$RANK" &
  while :; do
    [ -f "$J/barrier.open" ] && break
    [ -f "$J/barrier.failed" ] && { echo "[workbench] node $RANK: another node failed before run; run is not started"; exit 1; }
    [ -f "$J/abort" ] && { echo "[workbench] node $RANK: stopped by the app before run"; exit 1; }
    sleep 0.1
  done
  wait
else
  if [ "$SETUP" != 0 ]; then : > "$J/barrier.failed"; everyone barrier.failed; exit "$SETUP"; fi
  : > "$J/ready.0"
  echo "[workbench] node 0: setup done; waiting for all $N nodes"
  while :; do
    failed=$(cd "$J" && ls failed.* 2>/dev/null | head -n 1)
    if [ -n "$failed" ] || [ -f "$J/abort" ]; then
      : > "$J/barrier.failed"; everyone barrier.failed
      echo "[workbench] node 0: node ${failed#failed.} failed before run; run is not started anywhere"; exit 1
    fi
    [ "$(cd "$J" && ls ready.* 2>/dev/null | wc -l)" -ge "$N" ] && break
    sleep 0.1
  done
  : > "$J/barrier.open"; everyone barrier.open
fi
echo "[workbench] node $RANK: all $N nodes finished setup; starting run"
"""

#: Stops this node's job now (another node failed or was lost): the supervised unit or session is
#: ended, the exit code 143 recorded, and ``handled`` written so the node leaves on_finish to the app.
STOP_SH = r"""#!/bin/sh
C="$(cd "$(dirname "$0")" && pwd)"; J="$(dirname "$C")"
: > "$J/abort"; : > "$J/handled"
[ -f "$J/exit_code" ] && { echo already; exit 0; }
echo "[workbench] stopped: ${1:-another node ended}" >> "$J/output.log"
pid=$(cat "$J/supervisor.pid" 2>/dev/null)
case "@SUPERVISOR@" in
  systemd-system) systemctl stop @UNIT@ ;;
  systemd-sudo) sudo -n systemctl stop @UNIT@ ;;
  systemd-user) systemctl --user stop @UNIT@ ;;
esac
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  n=0; while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do sleep 0.2; n=$((n + 1)); done
  kill -KILL -- "-$pid" 2>/dev/null
fi
if [ ! -f "$J/exit_code" ]; then
  echo 143 > "$J/exit_code.tmp" && mv -f "$J/exit_code.tmp" "$J/exit_code"
  echo finished > "$J/phase"
fi
echo stopped
"""

#: mpirun's remote shell when the job runs in a container image (Open MPI's ``plm_rsh_agent``, set by
#: :func:`tool_env`; mounted at ``/workbench/mpi_rsh.sh`` in every node's container, see container.script):
#: ``mpi_rsh.sh [ssh options] ADDR COMMAND…`` runs COMMAND (the MPI daemon) inside the container of node ADDR (its
#: rank from ``peers``) through that node's own SSH, not on its machine beside it.
MPI_RSH_SH = r"""#!/bin/sh
C=@C@
while [ $# -gt 0 ]; do  # ssh's own options (Open MPI passes plm_rsh_args): this script sets what it needs
  case "$1" in -[bcDEeFIiJLlmOoPpQRSWw]) shift 2 ;; -*) shift ;; *) break ;; esac
done
addr="$1"; shift
rank=$(grep -nxF "$addr" "$C/peers" | head -n 1 | cut -d: -f1)
[ -n "$rank" ] || { echo "mpi_rsh.sh: $addr is not a node of this launch" >&2; exit 255; }
cmd=$(printf '%s' "$*" | sed "s/'/'\\\\''/g")  # for '…' below: each ' as '\''
exec ssh -F "$C/ssh_config" "$addr" \
  "E=\$(command -v docker || command -v podman); exec \"\$E\" exec -i @PREFIX@$((rank - 1)) sh -c '$cmd'"
"""

#: Appends the launch's public key to the authorized keys and includes the launch's ssh_config
#: at the top of the ssh config (once each: a re-run changes nothing).
AUTHORIZE_SH = r"""set -e
C=@C@
AK="${WORKBENCH_AUTHORIZED_KEYS:-$HOME/.ssh/authorized_keys}"
D="${WORKBENCH_SSH_DIR:-$HOME/.ssh}"
mkdir -p "$(dirname "$AK")" "$D"; chmod 700 "$D" 2>/dev/null || true
chmod 600 "$C/id_ed25519"
K=$(cat "$C/id_ed25519.pub")
touch "$AK"; grep -qxF "$K" "$AK" || printf '%s\n' "$K" >> "$AK"
chmod 600 "$AK" 2>/dev/null || true
touch "$D/config"
if ! grep -qxF "Include $C/ssh_config" "$D/config"; then
  { printf 'Include %s\n' "$C/ssh_config"; cat "$D/config"; } > "$D/config.wb.tmp" && mv -f "$D/config.wb.tmp" "$D/config"
  chmod 600 "$D/config"
fi
echo authorized
"""


@dataclass(frozen=True)
class NodeAddress:
    """How the other nodes reach one node: private address, SSH port and user, and its host key."""

    address: str
    port: int
    user: str
    host_key: tuple[str, str] | None  # (type, base64) as seen by the app


@dataclass(frozen=True)
class KeyPair:
    private_openssh: str
    public_openssh: str


def new_keypair(comment: str) -> KeyPair:
    """A fresh ed25519 key pair for one launch, in memory only."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return KeyPair(private, f"{public} {comment}")


def ssh_config_text(cluster_dir: str, nodes: Sequence[NodeAddress]) -> str:
    lines = ["# written by Cloud GPU Workbench for this launch's nodes"]
    for n in nodes:
        lines += [f"Host {n.address}", f"  HostName {n.address}", f"  Port {n.port}", f"  User {n.user}",
                  f"  IdentityFile {cluster_dir}/id_ed25519", "  IdentitiesOnly yes",
                  f"  UserKnownHostsFile {cluster_dir}/known_hosts",
                  "  StrictHostKeyChecking " + ("yes" if n.host_key else "accept-new"),
                  "  BatchMode yes", "  LogLevel ERROR"]
    return "\n".join(lines) + "\n"


def known_hosts_text(nodes: Sequence[NodeAddress]) -> str:
    out = []
    for n in nodes:
        if n.host_key:
            name = n.address if n.port == 22 else f"[{n.address}]:{n.port}"
            out.append(f"{name} {n.host_key[0]} {n.host_key[1]}")
    return "".join(line + "\n" for line in out)


def barrier_text(launch_id: str, rank: int, nodes: Sequence[NodeAddress]) -> str:
    # the job folder as the *other* node's shell sees it (its own WORKBENCH_REMOTE_DIR or home)
    at = f'J="${{WORKBENCH_REMOTE_DIR:-$HOME/.workbench}}/jobs/{launch_id}"'
    return (BARRIER_SH.replace("@RANK@", str(rank)).replace("@N@", str(len(nodes)))
            .replace("@PEERS@", " ".join(n.address for n in nodes)).replace("@AT@", shlex.quote(at)))


def stop_text(unit: str, supervisor: str) -> str:
    return STOP_SH.replace("@UNIT@", shlex.quote(unit)).replace("@SUPERVISOR@", supervisor)


def render(launch_id: str, rank: int, job_dir: str, nodes: Sequence[NodeAddress], gpus_per_node: int,
           key: KeyPair, unit: str, supervisor: str) -> dict[str, str]:
    """Every file of ``<job_dir>/cluster/`` for node ``rank`` (name -> text)."""
    cdir = f"{job_dir}/{CLUSTER_DIR}"
    return {
        "id_ed25519": key.private_openssh,
        "id_ed25519.pub": key.public_openssh + "\n",
        "ssh_config": ssh_config_text(cdir, nodes),
        "known_hosts": known_hosts_text(nodes),
        "hostfile": hostfile_text([n.address for n in nodes], gpus_per_node),
        "peers": "".join(n.address + "\n" for n in nodes),
        "rank": f"{rank}\n",
        "barrier.sh": barrier_text(launch_id, rank, nodes),
        "stop.sh": stop_text(unit, supervisor),
        "mpi_rsh.sh": MPI_RSH_SH.replace("@C@", shlex.quote(cdir))
                                .replace("@PREFIX@", container_name(launch_id, 0)[:-1]),
    }


def tool_env(job_dir: str, in_container: bool = False) -> dict[str, str]:
    """What points the common launchers at the launch's ssh_config even where ~/.ssh is not read; in a container
    image, Open MPI's remote shell is ``mpi_rsh.sh`` (its daemons start in the other nodes' containers)."""
    cfg = f"{job_dir}/{CLUSTER_DIR}/ssh_config"
    env = {"OMPI_MCA_plm_rsh_args": f"-F {cfg}", "PDSH_SSH_ARGS_APPEND": f"-F {cfg}",
           "WORKBENCH_SSH_CONFIG": cfg}
    if in_container:  # the same path in every node's container (the daemons read this variable too)
        env["OMPI_MCA_plm_rsh_agent"] = f"{SCRIPTS_AT}/mpi_rsh.sh"
    return env


#: NCCL/libfabric settings for the fast interconnects, set unless the spec sets them (docs/multinode.md)
INTERCONNECT_ENV: Mapping[str, Mapping[str, str]] = {
    "efa": {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "NCCL_SOCKET_IFNAME": "^lo,docker"},
    "infiniband": {"NCCL_IB_PCI_RELAXED_ORDERING": "1", "UCX_IB_PCI_RELAXED_ORDERING": "on",
                   "NCCL_SOCKET_IFNAME": "eth0", "UCX_TLS": "rc"},
}


def install(conn: Connection, job_dir: str, files: Mapping[str, str]) -> None:
    """Write ``files`` into ``<job_dir>/cluster/`` (the key 0600), authorize the key, include the config.

    One round trip: the files travel as a tar archive on the command's stdin.
    """
    import tarfile
    import time

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), int(time.time())
            info.mode = 0o600 if name == "id_ed25519" else (0o755 if name.endswith(".sh") else 0o644)
            tar.addfile(info, io.BytesIO(data))
    cdir = shlex.quote(f"{job_dir}/{CLUSTER_DIR}")
    command = (f"set -e\nmkdir -p {cdir}\nchmod 700 {cdir}\ntar -xf - -C {cdir}\n"
               + AUTHORIZE_SH.replace("@C@", cdir).replace("set -e\n", "", 1))
    res = conn.run("sh -c " + shlex.quote(command), timeout=60, stdin=buf.getvalue())
    if res.rc != 0:
        detail = (res.err or res.out).strip().splitlines()
        raise WorkbenchError(f"installing the launch's files on {conn.target.where} failed (exit {res.rc})"
                             + (f": {detail[-1]}" if detail else ""))
