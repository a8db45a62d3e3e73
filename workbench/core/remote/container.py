"""A job in a container (``image:`` in the spec): the generated ``container.sh`` and its ``docker run``.

One script serves both places a job runs — a cloud machine (``supervise.sh`` calls it, see
:mod:`.supervisor`) and this computer (the Local provider's wrapper) — with four commands::

    container.sh pull          log in (a per-job Docker config), pull with progress, log out
    container.sh start         docker run -d … the job's container (sleeps until told otherwise)
    container.sh prepare       pull, then start, its result in ``container.ready`` (see :func:`prepare_command`)
    container.sh exec [-e] F   setup or run inside it (bash, else sh), the exit code passed through
    container.sh stop          docker rm -f (also from the wrappers' TERM trap), a prepare still running ended first
    container.sh signal SIG    SIG to every process of the job inside it (the storage agent's TERM, then KILL)

Why one long-lived container and ``docker exec``: what setup installs inside it (``pip install``) is
still there for run, and a multi-node barrier runs on the machine between the two.

Rules it keeps:

* every GPU of the machine (``--gpus all``) when the NVIDIA container toolkit and a working driver are
  there; none on a machine without GPUs (Docker refuses ``--gpus`` without the toolkit);
* ``--network host``: the multi-node variables, NCCL and the barrier work as without a container;
* the workdir and the storage mounts bind-mounted at the paths the job expects, the scripts read-only, and on a
  multi-node launch the cluster folder (the MPI hostfile, the inter-node SSH files) read-only at its path;
* the job's environment from ``--env-file`` (a 0600 file in the job folder, read by the daemon, so any
  ``--user`` works) — secrets are never on a command line and never in an image;
* registry credentials only in ``<job folder>/docker`` (``DOCKER_CONFIG``, 0700; podman:
  ``--authfile``/``REGISTRY_AUTH_FILE``), fed the secret's value on stdin from the env file, removed right after the
  pull — never the user's ``~/.docker/config.json`` nor podman's own auth file;
* podman (the engine's name ends in ``podman``): ``--tls-verify=false`` for a registry on this computer only
  (localhost, 127.0.0.1, [::1] — Docker's own insecure rule for loopback), GPUs through CDI
  (``--device nvidia.com/gpu=all``, when ``nvidia-ctk cdi list`` names it), ``rm -f -t 0`` (no 10 s wait), and the
  env on each exec's stdin as ``export`` lines from the caller's environment (podman keeps any ``run``/``exec``
  env value in its database file even after ``rm``); ``container.names`` (names only) says which;
* a failed pull or start says why (login refused, not found, network) and exits 125, before setup.

Pure functions building text; nothing here runs anything.
"""

from __future__ import annotations

import re
import shlex
from typing import Mapping, Sequence

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import ContainerImage

ENV_FILE = "container.env"
SCRIPT = "container.sh"
SCRIPTS_AT = "/workbench"  # where setup.sh and run.sh appear inside the container (read-only)
PULL_FAILED = 125  # Docker's own code for "the container could not be started"
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# the NVIDIA container toolkit on the machine, and a driver that answers: only then --gpus all
GPU_CHECK = ("{ command -v nvidia-ctk || command -v nvidia-container-cli || command -v nvidia-container-runtime; } "
             ">/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1")
# podman takes GPUs from a CDI spec (sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)
CDI_CHECK = "nvidia-ctk cdi list 2>/dev/null | grep -q 'nvidia.com/gpu=all'"
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")  # registries podman may reach over plain http


def container_name(launch_id: str, rank: int | None = None) -> str:
    """The container's name: ``wb-`` and the launch id (Docker's allowed characters only), and a multi-node
    launch's node rank (one name per node even where two nodes share a daemon, as in the tests)."""
    return "wb-" + re.sub(r"[^A-Za-z0-9_.-]", "-", launch_id) + ("" if rank is None else f"-node{rank}")


def env_file(env: Mapping[str, str]) -> str:
    """The job's environment in ``--env-file`` form (``NAME=value`` lines, no quoting), less the values that
    span several lines (an env file cannot carry them: :func:`multiline` names them for ``-e NAME``).

    Raises ConfigError for a name Docker would misread.
    """
    lines = []
    for name, value in env.items():
        if not _NAME_RE.fullmatch(str(name)):
            raise ConfigError(f"the environment variable name {name!r} cannot be passed into a container")
        if str(name) not in multiline(env):
            lines.append(f"{name}={value}\n")
    return "".join(lines)


def multiline(env: Mapping[str, str]) -> list[str]:
    """Names whose values span several lines (a multi-node launch's WORKBENCH_NODE_IPS, a PEM key): ``docker run
    -e NAME`` takes each from the environment of the docker command itself (supervise.sh and the Local wrapper
    export the job's env), so the value is never on a command line either."""
    return [str(n) for n, v in env.items() if "\n" in str(v) or "\r" in str(v)]


def binds(workdir: str, scripts: Mapping[str, str], mount_paths: Sequence[str] = ()) -> list[tuple[str, str, bool]]:
    """(host path, container path, read-only) for the workdir, the scripts and the absolute storage mounts.

    The workdir and the storage mounts appear at the same path inside as on the machine (the job's
    relative paths and its spec's absolute mount paths both hold); relative mount paths are inside the
    workdir already.
    """
    out = [(workdir, workdir, False)]
    out += [(host, f"{SCRIPTS_AT}/{name}", True) for name, host in scripts.items()]
    for path in mount_paths:
        if path.startswith("/") and not (path + "/").startswith(workdir.rstrip("/") + "/"):
            out.append((path, path, False))
    return out


def run_args(image: ContainerImage, launch_id: str, workdir: str, env_path: str,
             bind_list: Sequence[tuple[str, str, bool]], gpus: bool, passed: Sequence[str] = (),
             rank: int | None = None, engine: str = "docker") -> list[str]:
    """The ``docker run`` arguments (after ``docker``) that start the job's container, detached.

    The container sleeps until ``container.sh stop``; setup and run are ``docker exec``-ed into it.  podman's
    gets no env: podman keeps a container's env values in its database file (bolt_state.db) even after ``rm``, so
    its setup and run take the env on stdin (:func:`exec_args`).
    """
    args = ["run", "-d", "--rm", "--name", container_name(launch_id, rank), "--label", f"workbench.launch={launch_id}",
            "--network", "host", *(["--env-file", env_path] if engine != "podman" else []), "-w", workdir]
    for name in passed if engine != "podman" else ():  # the value from docker's own environment (see multiline)
        args += ["-e", name]
    if gpus:
        args += ["--device", "nvidia.com/gpu=all"] if engine == "podman" else ["--gpus", "all"]
    if image.user:
        args += ["--user", image.user]
    if image.shm_size:
        args += ["--shm-size", image.shm_size]
    for host, inside, read_only in bind_list:
        args += ["-v", f"{host}:{inside}" + (":ro" if read_only else "")]
    args += ["--entrypoint", "sleep", image.name, "infinity"]
    return args


def exec_args(launch_id: str, script: str, stop_on_error: bool, rank: int | None = None,
              stdin_env: bool = False) -> list[str]:
    """The ``docker exec`` arguments that run one of the job's scripts inside its container (bash, else sh);
    ``stdin_env`` (podman): the job's env first, as ``export`` lines on stdin (never in podman's database)."""
    pick = 'if command -v bash >/dev/null 2>&1; then exec bash "$@"; else exec sh "$@"; fi'
    if stdin_env:
        pick = 'eval "$(cat)"; ' + pick
    return ["exec", *(["-i"] if stdin_env else []), container_name(launch_id, rank), "sh", "-c", pick, "workbench-job",
            *(["-e"] if stop_on_error else []), f"{SCRIPTS_AT}/{script}"]


def _q(args: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


SCRIPT_TEXT = r"""#!/bin/sh
# Cloud GPU Workbench: the job's container (pull | start | exec [-e] SCRIPT | stop). Generated; see
# workbench/core/remote/container.py.
J=@JOB@
IMAGE=@IMAGE@
NAME=@NAME@
E="${WORKBENCH_CONTAINER_ENGINE:-$(command -v docker || command -v podman)}"
P=; case "${E##*/}" in *podman) P=podman ;; esac  # podman: its auth file flag, TLS, CDI GPUs, rm -t 0
if [ -z "$E" ]; then
  echo "[workbench] this job runs in the container image $IMAGE, but neither Docker nor podman is installed here" \
       "(install the docker.io or podman package)"
  if [ "$1" = prepare ]; then echo 127 > "$J/container.ready"; rm -f "$J/container.prepare"; fi  # said once
  exit 127
fi
envs() {  # podman: the job's env as export lines from this shell's (the Local wrapper and supervise.sh export it)
  for n in $(cat "$J/container.names" 2>/dev/null) @PASSED@; do
    eval "[ -n \"\${$n+x}\" ]" || continue
    eval "v=\$$n"; printf "export %s='" "$n"; printf '%s' "$v" | sed "s/'/'\\\\''/g"; printf "'\n"
  done
}
rmc() { if [ -n "$P" ]; then "$E" rm -f -t 0 "$NAME"; else "$E" rm -f "$NAME"; fi >/dev/null 2>&1; }
why() {  # the reason a pull or login failed, from the engine's own words in $1 (else $2)
  if grep -qiE 'Cannot connect to the Docker daemon|Is the docker daemon running' "$1"; then
    echo "the Docker daemon is not running here (start it, e.g. sudo systemctl start docker)"
  elif grep -qiE 'permission denied.*docker.sock|docker.sock.*permission denied' "$1"; then
    echo "this user may not use Docker (add it to the docker group, then log in again)"
  elif grep -qiE 'manifest unknown|not found|does not exist|name unknown' "$1"; then echo "the image was not found"
  elif grep -qiE 'unauthorized|authentication required|(incorrect|invalid) username.{0,4}password|no basic auth|denied'\
       "$1"; then
    echo "the registry refused the login"
  elif grep -qiE 'connection refused|no such host|timeout|unreachable|dial tcp|TLS handshake|server misbehaving' "$1"
  then echo "the registry could not be reached (network)"
  else echo "${2:-see the lines above}"; fi
}
case "$1" in
pull)
  D="$J/docker"  # a per-job Docker config: the login never touches ~/.docker/config.json
  rm -rf "$D"; mkdir -m 700 "$D" || exit 125
  trap 'rm -rf "$D"' EXIT
  export DOCKER_CONFIG="$D" REGISTRY_AUTH_FILE="$D/auth.json"
  set --  # podman: its own per-job auth file (made empty: podman refuses a missing one), http only to this computer
  if [ -n "$P" ]; then printf '{"auths": {}}\n' > "$D/auth.json" && set -- --authfile "$D/auth.json" @TLS@; fi
  if [ -n @LOGIN_USER@ ]; then
    echo "[workbench] logging in to @REGISTRY@ as "@LOGIN_USER@
    sed -n 's/^@SECRET@=//p' "$J/@ENVFILE@" | "$E" login --username @LOGIN_USER@ --password-stdin @REGISTRY@ "$@" \
      > "$D/login.out" 2>&1
    rc=$?; cat "$D/login.out"
    if [ "$rc" -ne 0 ]; then
      echo "[workbench] could not log in to @REGISTRY@: $(why "$D/login.out" "the registry refused the login");" \
           "setup was not started"
      exit 125
    fi
  fi
  echo "[workbench] pulling $IMAGE"
  { "$E" pull "$IMAGE" "$@" 2>&1; echo $? > "$D/pull.rc"; } | tee "$D/pull.out"
  rc=$(cat "$D/pull.rc" 2>/dev/null || echo 1)
  if [ "$rc" -ne 0 ]; then
    echo "[workbench] could not pull $IMAGE: $(why "$D/pull.out"); setup was not started"
    exit 125
  fi
  echo "[workbench] pulled $IMAGE"
  ;;
start)  # (a container of the same name left by an earlier start is removed only when the run meets it)
  if [ -n "$P" ]; then sed -n 's/=.*//p' "$J/@ENVFILE@" > "$J/container.names" || exit 125; fi  # names only
  if @GPU_CHECK@ && [ -n "$P" ] && ! @CDI_CHECK@; then
    echo "[workbench] podman finds no CDI spec for the GPUs (sudo nvidia-ctk cdi generate" \
         "--output=/etc/cdi/nvidia.yaml); the container starts without GPUs"
    set -- @RUN_P@
  elif @GPU_CHECK@; then
    echo "[workbench] starting the container with every GPU of this machine"
    if [ -n "$P" ]; then set -- @RUN_CDI@; else set -- @RUN_GPUS@; fi
  elif [ -n "$P" ]; then set -- @RUN_P@
  else
    set -- @RUN@
  fi
  if ! out=$("$E" "$@" 2>&1); then
    case "$out" in *"already in use"*) rmc; out=$("$E" "$@" 2>&1) && out= ;; esac
    if [ -n "$out" ]; then
      echo "$out"; echo "[workbench] could not start the container from $IMAGE; setup was not started"
      exit 125
    fi
  fi
  ;;
exec)
  shift
  if [ -n "$P" ]; then  # podman: the env on stdin (never in its database)
    if [ "$1" = -e ]; then set -- @EXEC_PE@ "@AT@/$2"; else set -- @EXEC_P@ "@AT@/$1"; fi
    envs | "$E" "$@"; exit
  fi
  if [ "$1" = -e ]; then set -- @EXEC_E@ "@AT@/$2"; else set -- @EXEC@ "@AT@/$1"; fi
  exec "$E" "$@"
  ;;
prepare)  # pull and start in the background while the app uploads the workdir; supervise.sh waits for the result
  cd "$J/work" 2>/dev/null || cd "$J"
  set -a; [ -f "$J/env.sh" ] && . "$J/env.sh"; set +a  # what docker run -e NAME takes, as supervise.sh exports it
  had=$("$E" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)
  if [ -n "$had" ]; then  # cached here: started while the registry says whether the tag moved (then started again)
    sh "$J/@SCRIPT@" start > "$J/container.start" 2>&1 & s=$!
    sh "$J/@SCRIPT@" pull; rc=$?
    wait "$s"; src=$?; cat "$J/container.start"; rm -f "$J/container.start"
    if [ "$rc" -ne 0 ]; then rmc  # the pull's failure (its reason above) is the job's: no container stays
    elif [ "$("$E" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)" != "$had" ]; then
      echo "[workbench] $IMAGE changed in the registry: starting the container again from the new image"
      rmc; sh "$J/@SCRIPT@" start; rc=$?
    else rc=$src; fi
  else
    sh "$J/@SCRIPT@" pull && sh "$J/@SCRIPT@" start; rc=$?
  fi
  echo "$rc" > "$J/container.ready.tmp" && mv -f "$J/container.ready.tmp" "$J/container.ready"
  rm -f "$J/container.prepare"
  exit "$rc"
  ;;
stop)  # a prepare still running is ended first: it would start the container after this rm
  p=$(cat "$J/container.prepare" 2>/dev/null)
  if [ -n "$p" ] && grep -q prepare "/proc/$p/cmdline" 2>/dev/null; then
    kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; n=0  # its group (setsid): the docker client too
    while kill -0 "$p" 2>/dev/null && [ "$n" -lt 100 ]; do sleep 0.1 2>/dev/null || sleep 1; n=$((n + 1)); done
    rm -f "$J/container.prepare"
  fi
  rmc
  exit 0
  ;;
signal)  # kill -1 inside: every process of the container but its pid 1 (sleep) — docker exec forwards no signal
  exec "$E" exec "$NAME" sh -c 'kill -s "$1" -- -1' workbench-signal "$2"
  ;;
*) echo "usage: container.sh pull|start|prepare|exec [-e] SCRIPT|stop|signal SIG" >&2; exit 2 ;;
esac
"""


def prepare_command(job_dir: str) -> str:
    """The shell line that begins ``container.sh prepare`` on the machine, detached, unless one is running or its
    result waits (idempotent: a launch that reconnects sends it again).  ``echo $!`` writes the prepare's pid before
    the line returns, so the ``supervise.sh`` started after it always knows to wait for ``container.ready``."""
    j = shlex.quote(job_dir)
    return (f"J={j}; p=$(cat \"$J/container.prepare\" 2>/dev/null); "
            f"if [ -f \"$J/container.ready\" ] || {{ [ -n \"$p\" ] && kill -0 \"$p\" 2>/dev/null; }}; then echo already; "
            f"else echo pull > \"$J/phase\"; nohup setsid sh \"$J/{SCRIPT}\" prepare < /dev/null >> \"$J/output.log\" 2>&1 & "
            f"echo $! > \"$J/container.prepare\"; echo begun; fi")


def script(image: ContainerImage, launch_id: str, job_dir: str, workdir: str, scripts: Mapping[str, str],
           mount_paths: Sequence[str] = (), passed: Sequence[str] = (), rank: int | None = None) -> str:
    """``container.sh`` for one job: ``job_dir`` holds ``container.env``; ``scripts`` maps setup.sh/run.sh to
    their paths on this machine; ``passed`` the multi-line variables (:func:`multiline`) the caller's environment
    exports; ``rank`` a multi-node launch's node.  ``exec`` takes a script's name (``setup.sh``) as its argument."""
    env_path = f"{job_dir}/{ENV_FILE}"
    bind_list = binds(workdir, scripts, mount_paths)
    if rank is not None:  # multi-node: the cluster folder (cluster_files: the hostfile WORKBENCH_MPI_HOSTFILE names,
        cluster = f"{job_dir}/cluster"  # the inter-node ssh_config and key) at its own path, read-only
        bind_list += [(cluster, cluster, True), (f"{cluster}/mpi_rsh.sh", f"{SCRIPTS_AT}/mpi_rsh.sh", True)]
    auth = image.registry_auth
    loopback = re.sub(r":[0-9]+$", "", image.registry) in LOOPBACK
    if auth and not _NAME_RE.fullmatch(auth.secret_name):
        raise ConfigError(f"registry_auth names the secret {auth.secret_name!r}, which is not a variable name")
    exec_base = exec_args(launch_id, "X", False, rank)[:-1]
    exec_e = exec_args(launch_id, "X", True, rank)[:-1]
    text = (SCRIPT_TEXT
            .replace("@JOB@", shlex.quote(job_dir))
            .replace("@IMAGE@", shlex.quote(image.name))
            .replace("@NAME@", shlex.quote(container_name(launch_id, rank)))
            .replace("@LOGIN_USER@", shlex.quote(auth.username if auth else ""))
            .replace("@REGISTRY@", shlex.quote(image.registry))
            .replace("@SECRET@", auth.secret_name if auth else "")
            .replace("@ENVFILE@", ENV_FILE)
            .replace("@TLS@", "--tls-verify=false" if loopback else "")
            .replace("@GPU_CHECK@", GPU_CHECK)
            .replace("@CDI_CHECK@", CDI_CHECK)
            .replace("@RUN_GPUS@", _q(run_args(image, launch_id, workdir, env_path, bind_list, True, passed, rank)))
            .replace("@RUN_CDI@", _q(run_args(image, launch_id, workdir, env_path, bind_list, True, passed, rank,
                                              "podman")))
            .replace("@RUN_P@", _q(run_args(image, launch_id, workdir, env_path, bind_list, False, passed, rank,
                                            "podman")))
            .replace("@RUN@", _q(run_args(image, launch_id, workdir, env_path, bind_list, False, passed, rank)))
            .replace("@PASSED@", " ".join(n for n in passed if _NAME_RE.fullmatch(n)))
            .replace("@EXEC_PE@", _q(exec_args(launch_id, "X", True, rank, stdin_env=True)[:-1]))
            .replace("@EXEC_P@", _q(exec_args(launch_id, "X", False, rank, stdin_env=True)[:-1]))
            .replace("@EXEC_E@", _q(exec_e))
            .replace("@EXEC@", _q(exec_base))
            .replace("@AT@", SCRIPTS_AT)
            .replace("@SCRIPT@", SCRIPT))
    return text
