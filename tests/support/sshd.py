"""A real OpenSSH ``sshd`` on a loopback port, for the remote-job and telemetry tests.

    with Sshd.start(tmp_dir) as server:
        server.authorize(public_key_line)
        ... connect to 127.0.0.1:server.port as server.user ...

It runs ``/usr/sbin/sshd -D -e -f CONFIG`` (absolute path, as sshd requires) with its
own host key, an authorized-keys file the test appends to, ``internal-sftp``, and
``SetEnv`` lines that put ``bin/`` (the fake ``nvidia-smi``) first on the PATH of
every session and give the app its own remote folder (``WORKBENCH_REMOTE_DIR``), so
nothing a test runs touches the real home folder.  ``WORKBENCH_SELF_STOP`` replaces the
machine's own "end the bill" command (``shutdown``!) by a script that only writes the
action into the job folder's ``self_stopped``.

``HOME`` is a folder of the server's own (``SetEnv`` overrides the account's): sshd runs the
account's login shell, and bash started by sshd reads ``~/.bashrc`` even for a plain command.
This computer's ``.bashrc`` is not part of the machine under test — root's here runs
``pyenv init``, whose ``pyenv rehash`` waits 60 s on a lock file that a session killed
mid-rehash (these tests kill sessions on purpose) leaves behind; every later command then
took a minute and the whole remote suite timed out.

Threading: start/stop from one thread.  ``kill_sessions`` kills the per-connection
sshd processes this server forked (a dropped network, as far as clients can tell);
``end_jobs`` kills a job's processes (what a terminated machine does to them);
``restart`` stops the listener and starts a new one on the same port, optionally
with a new host key (a machine that was re-imaged).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

SSHD = Path("/usr/sbin/sshd")
ROOT = Path(__file__).resolve().parents[2]
FAKE_NVIDIA_SMI = ROOT / "tests" / "fixtures" / "nvidia_smi" / "fake_nvidia_smi.py"


def available() -> str | None:
    """None when a test sshd can run here, else why not."""
    if not SSHD.exists():
        return "openssh-server is not installed (make test installs it)"
    if not shutil.which("ssh-keygen"):
        return "ssh-keygen (openssh-client) is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> None:
    path.unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Sshd:
    """One sshd process and its files under ``root``."""

    def __init__(self, root: Path, address: str = "127.0.0.1", port: int | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.root = root
        self.env = dict(env or {})  # more of the sessions' environment (e.g. the machine's metadata service)
        self.address = address  # another loopback address (127.x.y.z) makes a second "machine"
        self.port = port or _free_port()
        self.user = psutil.Process().username()
        self.host_key = root / "ssh_host_ed25519_key"
        self.authorized = root / "authorized_keys"
        self.config = root / "sshd_config"
        self.bin = root / "bin"
        self.remote_dir = root / "remote"  # the app's folder "on the machine"
        self.home = root / "home"  # the sessions' $HOME: an empty one, so no shell startup file of this computer runs
        self.nvidia_state = root / "nvidia"  # which recording the fake nvidia-smi replays
        self.proc: subprocess.Popen | None = None

    # -- life cycle ----------------------------------------------------------
    @classmethod
    def start(cls, root: Path, address: str = "127.0.0.1", port: int | None = None,
              env: dict[str, str] | None = None) -> "Sshd":
        server = cls(root, address, port, env)
        server._prepare()
        server._launch()
        return server

    def _prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.bin.mkdir(exist_ok=True)
        self.remote_dir.mkdir(exist_ok=True)
        self.home.mkdir(exist_ok=True)
        self.nvidia_state.mkdir(exist_ok=True)
        _keygen(self.host_key)
        self.authorized.touch()
        os.chmod(self.authorized, 0o600)
        fake = self.bin / "nvidia-smi"
        fake.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_NVIDIA_SMI} \"$@\"\n")
        fake.chmod(0o755)
        # never let a test job's on_finish shut this computer down: record what it would have done
        end_bill = self.bin / "fake-end-bill"
        end_bill.write_text('#!/bin/sh\necho "$1" > ../self_stopped\n')
        end_bill.chmod(0o755)
        self.set_gpu("v100x1")
        path = f"{self.bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        # a session gets sshd's SetEnv, not the test's environment: pass the test run's marker on,
        # so the run's end finds a job process a test left behind (tests/support/honest_run.py)
        run = os.environ.get("WORKBENCH_TEST_RUN")
        marker = f" WORKBENCH_TEST_RUN={run} WORKBENCH_TEST_NODE=a-session-of-the-test-sshd" if run else ""
        self.config.write_text("\n".join([
            f"Port {self.port}",
            f"ListenAddress {self.address}",
            f"HostKey {self.host_key}",
            f"AuthorizedKeysFile {self.authorized}",
            f"PidFile {self.root / 'sshd.pid'}",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "PermitRootLogin prohibit-password",
            "UsePAM no",
            "StrictModes no",
            "MaxSessions 50",
            "MaxStartups 50",
            "LogLevel ERROR",
            f"SetEnv PATH={path} HOME={self.home} WORKBENCH_REMOTE_DIR={self.remote_dir} "
            f"FAKE_NVIDIA_SMI_STATE={self.nvidia_state} WORKBENCH_SELF_STOP={end_bill} "
            f"WORKBENCH_CLOUD_INIT_LOG={self.root / 'cloud-init-output.log'} "
            f"WORKBENCH_AUTHORIZED_KEYS={self.authorized} WORKBENCH_SSH_DIR={self.root / 'dot-ssh'}{marker}"
            + "".join(f" {k}={v}" for k, v in self.env.items()),
            "Subsystem sftp internal-sftp",
            "",
        ]))

    def _launch(self) -> None:
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
        log = open(self.root / "sshd.log", "ab")
        # stdout/stderr to a file: an inherited pipe would hang a caller's $(...) capture
        self.proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(self.config)], stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.root / 'sshd.log').read_text()[-2000:]}")
            try:
                with socket.create_connection((self.address, self.port), timeout=0.5) as s:
                    s.settimeout(2)
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("sshd did not answer within 10 s")

    def sessions(self) -> list[psutil.Process]:
        """The per-connection sshd processes of this server (children of the listener)."""
        if self.proc is None:
            return []
        try:
            return psutil.Process(self.proc.pid).children(recursive=False)
        except psutil.NoSuchProcess:
            return []

    def kill_sessions(self) -> int:
        """Kill every open connection's sshd process (their commands' process groups live on)."""
        killed = 0
        for p in self.sessions():
            try:
                p.kill()
                killed += 1
            except psutil.NoSuchProcess:
                pass
        return killed

    def end_jobs(self, launch_id: str = "") -> int:
        """What a machine that is gone does to its jobs: kill every process of ``launch_id``'s job
        (every job when empty) — the supervisor, the run, its ``on_finish.sh`` — and wait for them.

        A cloud's terminate (moto's, the ARM server's) cannot reach this "machine"; a test that
        ran a job here through such a cloud calls this.  The supervisor runs in its own session
        (setsid), so its session id also finds children whose command lines do not name the folder.
        """
        marker = f"{self.remote_dir}/jobs/{launch_id}"
        own = os.getsid(0)
        sids = set()
        for p in psutil.process_iter(["cmdline"]):
            try:
                if any(marker in part for part in (p.info["cmdline"] or [])) and os.getsid(p.pid) != own:
                    sids.add(os.getsid(p.pid))
            except (psutil.Error, OSError):
                continue
        victims = []
        for p in psutil.process_iter():
            try:
                if os.getsid(p.pid) in sids:
                    p.kill()
                    victims.append(p)
            except (psutil.Error, OSError):
                continue
        psutil.wait_procs(victims, timeout=5)
        return len(victims)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill_sessions()
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def restart(self, new_host_key: bool = False) -> None:
        """Stop and start again on the same port (with a fresh host key when asked)."""
        self.stop()
        if new_host_key:
            _keygen(self.host_key)
        self._launch()

    def __enter__(self) -> "Sshd":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for tests ---------------------------------------------------
    def authorize(self, public_key_line: str) -> None:
        line = public_key_line.strip()
        if line not in self.authorized.read_text().splitlines():
            with open(self.authorized, "a") as fh:
                fh.write(line + "\n")

    def host_public_key(self) -> str:
        """The server's host key as 'ssh-ed25519 AAAA…' (what a cloud's console output would show)."""
        return " ".join((self.host_key.with_suffix(".pub")).read_text().split()[:2])

    def set_gpu(self, recording: str, period_ms: int | None = None) -> None:
        """Make the fake nvidia-smi replay ``recording`` (a folder under tests/fixtures/nvidia_smi/synthetic or recorded)."""
        (self.nvidia_state / "recording").write_text(recording)
        if period_ms is not None:
            (self.nvidia_state / "period_ms").write_text(str(period_ms))
