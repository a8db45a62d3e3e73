"""A real Slurm cluster on this host (Debian slurm-wlm 22.05 + munge), for the Slurm tests (issue 35).

    cluster = start_cluster(Path(tempfile.mkdtemp(prefix="wb-slurm-")))   # ~1-2 s
    job = cluster.submit("#!/bin/sh\\nnvidia-smi -L\\n", "--gres=gpu:1", "--time=5")
    cluster.wait_job(job, {"COMPLETED"})
    cluster.stop()                                                          # nothing left running

What runs (the workplace recipes, "A real Slurm cluster in tests"): ``munged`` (as the munge user), ``slurmctld``
and three ``slurmd`` (``-N node1`` … ``node3``, all ``NodeHostname=localhost NodeAddr=127.0.0.1``), each in
the foreground (``-D``/``-F``) under ``root``: the key, socket, state, spool, pid and log files.  The
controller's and the nodes' ports are picked free when the cluster starts, so two test processes
(pytest-xdist workers) each run a cluster of their own side by side.  ``root`` and its parents must be
traversable by other users (the second user's commands reach the munge socket there): pytest's
``tmp_path`` is not (``/tmp/pytest-of-root`` is 0700, and pytest tightens it again), a
``tempfile.mkdtemp()`` under /tmp is.

Nodes and partitions:

* node1, node2: ``CPUs=2 RealMemory=4000 Gres=gpu:v100:2``; node3: ``Gres=gpu:2`` (no GPU type: a
  cluster that names its GPUs only by partition).  The GPUs are character devices ``mknod
  ROOT/dev/NODE/nvidia[01] c 195 N`` (plain files are refused); jobs get ``CUDA_VISIBLE_DEVICES``,
  ``SLURM_JOB_GPUS`` (steps ``SLURM_STEP_GPUS``) with the node's own indexes 0/1.
* ``gpu`` (node1, node2; default; MaxTime=30 min), ``a100`` (node3; 60 min), ``debug`` (node1; 2 min;
  ``AllowAccounts=physics``).  Found on 22.05.8 without slurmdbd (``AccountingStorageType=none``):
  AllowAccounts is NOT checked at submission (``EnforcePartLimits=NO``, the default kept here):
  ``sbatch -p debug`` with any ``-A`` (physics included) or none is accepted, and the job stays PENDING
  for ever, ``Reason=Job's account not known, so it can't use this partition (debug allows physics)``
  (the scheduler checks the account of the job's association, and without slurmdbd there is none).
  With ``EnforcePartLimits=ALL`` every submission to ``debug`` is refused, ``-A physics`` too ("Invalid
  account or account/partition combination specified"); a time limit over MaxTime is then refused as
  well (with NO it pends, ``Reason=PartitionTimeLimit``).  A partition that physics can really use
  needs slurmdbd (the workplace recipes).

The stand-in ``nvidia-smi`` (``bin/``, first on every job task's PATH through the ``TaskProlog``, and
first on the login node's): a shell wrapper around tests/fixtures/nvidia_smi/fake_nvidia_smi.py (copied
into ``bin/``, so a job of the second user can read it).  At start the cluster writes one recording per
node and GPU subset (``nvidia/NODE/0``, ``…/1``, ``…/0_1``: ``list.txt``, ``fields``, ``stream.txt`` in
the real CSV format, the app's twelve ``--query-gpu`` fields); the wrapper picks the subset a job
was given (``SLURM_STEP_GPUS``, else ``SLURM_JOB_GPUS``, else ``CUDA_VISIBLE_DEVICES``) on
``$SLURMD_NODENAME`` and names that folder, as an absolute path, in the fake's state file
(the fake joins it onto its own folder; an absolute path wins).  GPU names: "Tesla V100-SXM2-16GB"
(node1/node2), "NVIDIA A100-SXM4-40GB" (node3); index = the node's device index (as nvidia-smi
prints without cgroup device constraints); UUIDs fixed per node and index.  A task without GPUs
gets "No devices were found" (exit 6); outside any job (the login node) the driver "is not loaded"
(the ``nodriver`` recording, exit 9).

Timing, measured here (2 shared cores):

* Start 0.2-1.3 s (until every node is idle), stop 0.1-0.25 s.  A port another process took between
  picking and binding makes a daemon fail: the cluster starts again on fresh ports (~2 s more).
* Time limits: slurmctld checks them every 30 s (``PERIODIC_TIMEOUT``, hard-coded in 22.05's
  slurmctld.h, counted from the controller's start; not a slurm.conf option), so a ``--time=1`` job
  is ended (``JobState=TIMEOUT Reason=TimeLimit``, ``ExitCode=0:15``) 60-90 s after it started
  (measured 87.7 s; ``OverTimeLimit=0``, ``KillWait=2``).  :meth:`SlurmCluster.time_out` moves a running
  job's ``EndTime`` to now (``scontrol update``; its TimeLimit shrinks to match) and the same check ends
  it as TIMEOUT within 30 s (measured 25 s).
* ``sbatch`` → RUNNING: 0.02-1 s (the next backfill pass, ``bf_interval=1``).  A job that needs busy GPUs
  is ``PENDING Reason=Resources`` ~1 s after ``sbatch`` (``Reason=None`` before); a job queued behind
  another pending job shows ``Reason=Priority`` instead.  ``squeue --start`` has an estimate as soon
  as Reason=Resources shows.

Multi-node torch (the integrator's e2e, not run here): ``srun -N2 --ntasks-per-node=1 /usr/bin/python3
allreduce.py`` with ``init_process_group("gloo", rank=SLURM_PROCID, world_size=SLURM_NTASKS)``,
``MASTER_ADDR=127.0.0.1`` (every node is this host; on a real cluster the first of ``scontrol show
hostnames $SLURM_JOB_NODELIST``), a ``MASTER_PORT`` picked free, and ``GLOO_SOCKET_IFNAME=lo`` (checked:
the two ranks' all_reduce gives 3.0 in ~2.5 s; it also worked here without GLOO_SOCKET_IFNAME, but gloo
then uses the interface of the host name, which on another machine need not reach the peers).

Over SSH (:meth:`SlurmCluster.login_node`): a real sshd (tests/support/sshd.py) whose sessions get
``SLURM_CONF`` through ``SetEnv`` (without it: "fetch_config: DNS SRV lookup failed") and the stand-in
nvidia-smi first on PATH; ``srun --jobid=ID --overlap nvidia-smi …`` there runs on the job's node with
the job's GPUs.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil

import slurm_gpus
from sshd import Sshd

DAEMONS = {"slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd", "munged": "/usr/sbin/munged",
           "mungekey": "/usr/sbin/mungekey"}
OTHER_USER = "wbother"
MARKER = "WB_SLURM_CLUSTER"  # in the environment of every daemon and job of one cluster: stop() finds them by it
NODES = ("node1", "node2", "node3")
_KV = re.compile(r"([A-Za-z][A-Za-z0-9_:/]*)=(.*?)(?= [A-Za-z][A-Za-z0-9_:/]*=|$)")
QUEUE_FIELDS = {"JOBID": "%i", "NAME": "%j", "USER": "%u", "STATE": "%T", "REASON": "%r", "COMMENT": "%k",
                "PARTITION": "%P", "NODELIST": "%N"}
SEP = "\x1f"


def available() -> str | None:
    """None when slurmctld, slurmd and munged are installed (and we are root), else why not."""
    missing = [name for name, path in DAEMONS.items() if not os.access(path, os.X_OK)]
    if missing:
        return ("the Slurm tests need " + ", ".join(missing)
                + " (`make test` installs the Debian packages slurm-wlm munge)")
    if os.geteuid() != 0:
        return "the Slurm tests start slurmd, which needs root"
    return None


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def ensure_user(name: str = OTHER_USER) -> pwd.struct_passwd:
    """The second Unix user, made once (``useradd``; password ``*``: a locked ``!`` account cannot run jobs)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
        # two test processes may race here: useradd then fails (exists, or /etc/passwd is locked); look again
        made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name],
                              capture_output=True, text=True)
        if made.returncode == 0:
            subprocess.run(["usermod", "-p", "*", name], check=True, capture_output=True)
        elif time.monotonic() > deadline:
            raise RuntimeError(f"useradd {name} failed: {made.stderr.strip()}")
        else:
            time.sleep(0.2)


def _traversable(path: Path) -> bool:
    for p in path.parents:
        if not os.stat(p).st_mode & stat.S_IXOTH:
            return False
    return True


class SlurmCluster:
    """One munged + slurmctld + three slurmd under ``root`` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.conf = self.root / "slurm.conf"
        self.bin = self.root / "bin"
        self.log = self.root / "log"
        self.munge_dir = self.root / "munge"
        self.socket = self.munge_dir / "munge.socket"
        self.other_user = OTHER_USER
        path = f"{self.bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        self.env: dict[str, str] = {"SLURM_CONF": str(self.conf), "PATH": path, MARKER: str(self.root)}
        self.ctld_port, *self.node_ports = _free_ports(1 + len(NODES))
        self._procs: dict[str, subprocess.Popen] = {}

    # -- life cycle ----------------------------------------------------------------------------
    def _start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        if not _traversable(self.root):
            raise ValueError(f"{self.root}: other users cannot reach it (a parent is not o+x); "
                             "use tempfile.mkdtemp() under /tmp")
        user = ensure_user()
        for d in ("state", "spool", "run", "log", "bin", "work"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        for who, uid, gid in (("root", 0, 0), (user.pw_name, user.pw_uid, user.pw_gid)):
            w = self.root / "work" / who
            w.mkdir(exist_ok=True)
            os.chown(w, uid, gid)
        self._write_devices()
        slurm_gpus.write(self.root, self.bin)
        prolog = self.bin / "task_prolog"
        # a TaskProlog's "export NAME=value" lines go into every task's environment
        prolog.write_text(f'#!/bin/sh\necho "export PATH={self.bin}:$(echo "$PATH" | sed "s#{self.bin}:##g")"\n')
        prolog.chmod(0o755)
        self._write_conf()
        self._start_munge()
        try:
            self._spawn("slurmctld", [DAEMONS["slurmctld"], "-D", "-f", str(self.conf)])
            for node in NODES:
                self._spawn(node, [DAEMONS["slurmd"], "-D", "-f", str(self.conf), "-N", node])
            self._wait_idle()
        except BaseException:
            self.stop()
            raise

    def _write_devices(self) -> None:
        for node in NODES:
            d = self.root / "dev" / node
            d.mkdir(parents=True, exist_ok=True)
            for i in range(2):
                dev = d / f"nvidia{i}"
                if not dev.exists():
                    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(195, i))

    def _write_conf(self) -> None:
        r = self.root
        lines = [
            "ClusterName=wbtest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={self.ctld_port}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            f"TaskProlog={self.bin / 'task_prolog'}",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={r / 'log' / 'jobcomp.txt'}",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "ReturnToService=2",
            # the scheduler looks at a new job at once (Reason=Resources within ~1 s) and backfill
            # (squeue --start's estimate) runs every second
            "SchedulerParameters=bf_interval=1,bf_resolution=1,batch_sched_delay=0,sched_min_interval=0",
            "KillWait=2",
            "OverTimeLimit=0",
            "InactiveLimit=0",
            "MinJobAge=3600",  # ended jobs stay in `scontrol show job` for the whole test session
            "MessageTimeout=10",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            "GresTypes=gpu",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool' / '%n'}",
            f"SlurmctldPidFile={r / 'run' / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'run' / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd-%n.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
        ]
        for node, port in zip(NODES, self.node_ports):
            gres = "gpu:2" if node == "node3" else "gpu:v100:2"
            lines.append(f"NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs=2 "
                         f"RealMemory=4000 Gres={gres} State=UNKNOWN")
        lines += [
            "PartitionName=gpu Nodes=node1,node2 Default=YES MaxTime=30 State=UP",
            "PartitionName=a100 Nodes=node3 MaxTime=60 State=UP",
            "PartitionName=debug Nodes=node1 MaxTime=2 AllowAccounts=physics State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")
        gres_lines = []
        for node in NODES:
            typ = "" if node == "node3" else " Type=v100"
            gres_lines.append(f"NodeName={node} Name=gpu{typ} File={r / 'dev' / node}/nvidia[0-1]")
        (r / "gres.conf").write_text("\n".join(gres_lines) + "\n")

    def _daemon_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        env.update(self.env)
        return env

    def _spawn(self, name: str, argv: list[str], **kw) -> subprocess.Popen:
        out = open(self.log / f"{name}.out", "ab")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=self._daemon_env(),
                                start_new_session=True, cwd=self.root, **kw)
        out.close()
        self._procs[name] = proc
        return proc

    def _start_munge(self) -> None:
        m = self.munge_dir
        m.mkdir(mode=0o755, exist_ok=True)
        key = m / "munge.key"
        subprocess.run([DAEMONS["mungekey"], "--create", f"--keyfile={key}", "--force"], check=True,
                       capture_output=True)
        munge = pwd.getpwnam("munge")
        for p in (m, key):
            os.chown(p, munge.pw_uid, munge.pw_gid)
        os.chmod(m, 0o755)  # 0700 → clients: "Socket is inaccessible"
        os.chmod(key, 0o600)
        self._spawn("munged", [DAEMONS["munged"], "-F", f"--key-file={key}", f"--socket={self.socket}",
                               f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
                               f"--seed-file={m / 'munge.seed'}", "--num-threads=4"],
                    user=munge.pw_uid, group=munge.pw_gid, extra_groups=[])
        self._wait(lambda: self.socket.exists(), "munged", 10)

    def _wait(self, ready, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}: {self._log_tail(name)}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not ready within {timeout} s: {self._log_tail(what)}")
            time.sleep(0.05)

    def _log_tail(self, name: str) -> str:
        texts = []
        for p in (self.log / f"{name}.out", self.log / f"{name}.log", self.log / f"slurmd-{name}.log",
                  self.munge_dir / f"{name}.log"):
            if p.exists():
                texts.append(p.read_text(errors="replace")[-1500:])
        return "\n".join(texts)

    def _wait_idle(self) -> None:
        def idle() -> bool:
            try:
                out = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False, timeout=5)
            except subprocess.TimeoutExpired:  # the controller is busy (e.g. with a node that died): ask again
                return False
            states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
            return all(states.get(n, "").startswith("idle") for n in NODES)
        self._wait(idle, "slurmctld", 30)

    def stop(self) -> None:
        """Cancel every job, stop every daemon, and kill whatever of this cluster is still running."""
        if self._procs.get("slurmctld") and self._procs["slurmctld"].poll() is None:
            try:
                self.cancel_all(timeout=10)
            except (TimeoutError, subprocess.SubprocessError, OSError):
                pass
        for name in ("slurmctld", *NODES, "munged"):
            proc = self._procs.get(name)
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in self._procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self._procs.clear()
        leftovers = self.processes()
        for p in leftovers:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(leftovers, timeout=5)

    def processes(self) -> list[psutil.Process]:
        """Every process of this cluster still alive: daemons, slurmstepd, job tasks (found by ``MARKER``)."""
        found = []
        me = os.getpid()
        for p in psutil.process_iter():
            try:
                if p.pid != me and p.environ().get(MARKER) == str(self.root):
                    found.append(p)
            except (psutil.Error, OSError):
                continue
        return found

    def __enter__(self) -> "SlurmCluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- client commands -------------------------------------------------------------------------
    def _user_env(self, user: str | None) -> tuple[dict[str, str], dict]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        env.update(self.env)
        if user is None or user == "root":
            env["HOME"] = str(self.root / "work" / "root")
            return env, {"cwd": self.root / "work" / "root"}
        pw = pwd.getpwnam(user)
        env.update(HOME=str(self.root / "work" / user), USER=user, LOGNAME=user)
        return env, {"cwd": self.root / "work" / user, "user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def run(self, *argv: str, user: str | None = None, check: bool = True, timeout: float = 30,
            input: str | None = None) -> subprocess.CompletedProcess:
        """A Slurm command with :attr:`env`, as root or as ``user`` (setuid in the child, like runuser)."""
        env, kw = self._user_env(user)
        res = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout, input=input,
                             **kw)
        if check and res.returncode != 0:
            raise subprocess.CalledProcessError(res.returncode, list(argv), res.stdout, res.stderr)
        return res

    def submit(self, script: str, *sbatch_args: str, user: str | None = None) -> str:
        """``sbatch --parsable`` with the script on stdin; the job id.  Output: ``work/USER/slurm-ID.out``."""
        res = self.run("sbatch", "--parsable", *sbatch_args, user=user, input=script)
        return res.stdout.strip().split(";")[0]

    def output(self, job_id: str, user: str | None = None) -> str:
        """The default output file of a batch job submitted by :meth:`submit` ('' while there is none)."""
        p = self.root / "work" / (user or "root") / f"slurm-{job_id}.out"
        return p.read_text(errors="replace") if p.exists() else ""

    def job(self, job_id: str) -> dict[str, str]:
        res = self.run("scontrol", "show", "job", "-o", str(job_id), check=False)
        if res.returncode != 0 or not res.stdout.strip():
            return {}
        return dict(_KV.findall(res.stdout.splitlines()[0].strip()))

    def wait_job(self, job_id: str, states: set[str], timeout: float = 60) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        record: dict[str, str] = {}
        while time.monotonic() < deadline:
            record = self.job(job_id)
            if record.get("JobState") in states:
                return record
            time.sleep(0.1)
        raise TimeoutError(f"job {job_id} not in {sorted(states)} within {timeout} s: {record}")

    def queue(self, user: str | None = None) -> list[dict[str, str]]:
        fmt = SEP.join(QUEUE_FIELDS.values())
        argv = ["squeue", "-h", "-o", fmt] + (["-u", user] if user else [])
        rows = []
        for line in self.run(*argv).stdout.splitlines():
            if line.strip():
                rows.append(dict(zip(QUEUE_FIELDS, line.split(SEP))))
        return rows

    def cancel_all(self, timeout: float = 30) -> None:
        """scancel every job and wait until none is pending, running or completing (its GPUs free again)."""
        ids = [row["JOBID"] for row in self.queue()]
        if ids:
            self.run("scancel", *ids, check=False)
        deadline = time.monotonic() + timeout
        while self.queue():
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs still in the queue after scancel: {self.queue()}")
            time.sleep(0.1)

    def time_out(self, job_id: str) -> None:
        """Let a running job run out of time now: its EndTime becomes now, and the controller's next
        time-limit check (every 30 s) ends it as ``TIMEOUT`` (Reason=TimeLimit), as at the real limit."""
        self.run("scontrol", "update", f"JobId={job_id}",
                 "EndTime=" + time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 1)))

    def gpu_period(self, period_ms: int | None) -> None:
        """The stand-in nvidia-smi's loop period for every job from now on (None: what ``-lms`` asks)."""
        slurm_gpus.set_period(self.root, period_ms)

    # -- the login node --------------------------------------------------------------------------
    def login_node(self, tmp: Path, authorized_key: str) -> Sshd:
        """A started loopback sshd whose sessions reach this cluster (SLURM_CONF, the stand-in nvidia-smi
        first on PATH), authorizing ``authorized_key``.  The caller stops it (a context manager)."""
        # the marker too: a job submitted there carries it, so stop() finds its processes as well
        server = Sshd.start(tmp, env={"SLURM_CONF": str(self.conf), MARKER: str(self.root)})
        try:
            (server.bin / "nvidia-smi").unlink()
            (server.bin / "nvidia-smi").symlink_to(self.bin / "nvidia-smi")
            server.authorize(authorized_key)
        except BaseException:
            server.stop()
            raise
        return server


def start_cluster(root: Path) -> SlurmCluster:
    """Write slurm.conf and gres.conf under ``root`` and start munged, slurmctld and three slurmd;
    returns once every node is idle."""
    why = available()
    if why:
        raise RuntimeError(why)
    for attempt in range(3):
        cluster = SlurmCluster(root)  # fresh ports each time
        try:
            cluster._start()
            return cluster
        except (RuntimeError, TimeoutError) as exc:
            # another process took one of the ports between picking and binding: pick again
            if attempt == 2 or "in use" not in str(exc).lower():
                raise
            shutil.rmtree(cluster.root / "state", ignore_errors=True)
    raise AssertionError("unreachable")


def _main() -> None:  # python tests/support/slurm.py DIR: a cluster to try things by hand (Ctrl-C stops it)
    cluster = start_cluster(Path(sys.argv[1]))
    print(f"export SLURM_CONF={cluster.conf} PATH={cluster.env['PATH']}", flush=True)
    try:
        signal.pause()
    finally:
        cluster.stop()


if __name__ == "__main__":
    _main()
