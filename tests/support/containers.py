"""A real Docker daemon, a private registry with a password and a job image, for the container tests.

    world = containers.start()        # one per test process (session-wide); containers.stop() ends it
    world.env                         # {"DOCKER_HOST": "unix://…/docker.sock"}: pass it to what runs docker
    world.image                       # "127.0.0.1:PORT/wb/job:1", pushed, needs world.user / world.password
    world.docker("ps")                # a docker CLI call against this daemon (CompletedProcess)

Everything follows the shared recipes ("Real containers in tests", checked on this machine kind); no public
registry is reachable,
so the image is built here from Debian packages:

* ``dockerd`` with its data and exec roots, pid file and socket under a scratch folder, leaving the
  host's network alone (``--iptables=false --bridge=none``): containers use ``--network host``.
  Stopped by its pid; its network namespace mount is undone.
* ``docker-registry serve CONFIG`` on 127.0.0.1 with an htpasswd (bcrypt) user: loopback registries
  need no TLS.
* The base image: ``debootstrap --variant=minbase --include=python3 bookworm`` (about 45 s), tarred
  once into ``~/.cache/workbench-tests/`` (``WORKBENCH_TEST_CACHE`` overrides), its gzipped layer made
  once beside it, and pushed from there on every later run as ``wb/job:1`` over the registry's HTTP API
  (``oci_push.py``: a second; ``docker push`` gzipped it again each time).  A file lock keeps two
  xdist workers from building it twice.  The daemon never holds it, so a job's pull downloads it.

:func:`available` says why this cannot run (missing Debian packages); the tests *fail* with that text
(``make test`` installs docker.io debootstrap docker-registry apache2-utils).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from oci_push import push_rootfs

USER = "wbtest"
PASSWORD = "s3cret-registry-pw"
TOOLS = {"dockerd": "docker.io", "docker": "docker.io", "debootstrap": "debootstrap",
         "docker-registry": "docker-registry", "htpasswd": "apache2-utils"}


def cache_dir() -> Path:
    base = os.environ.get("WORKBENCH_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "workbench-tests")
    return Path(base)


def available() -> str | None:
    """None when the container world can run here, else why not (the tests fail with this text)."""
    missing = sorted({pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None})
    if missing:
        return ("the container tests need the Debian packages " + " ".join(missing)
                + " (`make test` installs them: apt-get install --no-install-recommends …)")
    if os.geteuid() != 0:
        return "the container tests start their own dockerd and need root"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_tarball(include: str = "python3") -> Path:
    """A Debian bookworm root file system with ``include`` (debootstrap's comma list) as a tar, built once and
    cached: python3 alone ~45 s and 161 MB; with python3-torch (the multi-node test) a few minutes."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    tar = cache / f"debian-bookworm-{include.replace(',', '-')}.tar"
    with open(tar.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tar.exists():
            return tar
        work = Path(tempfile.mkdtemp(prefix="wb-rootfs-", dir=cache))
        try:
            rootfs = work / "rootfs"
            done = subprocess.run(["debootstrap", "--variant=minbase", f"--include={include}", "bookworm", str(rootfs)],
                                  capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                raise RuntimeError(f"debootstrap failed ({done.returncode}): "
                                   f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
            partial = work / "rootfs.tar"
            subprocess.run(["tar", "-C", str(rootfs), "--numeric-owner", "--exclude=./dev/*", "--exclude=./proc/*",
                            "--exclude=./sys/*", "-cf", str(partial), "."], check=True, timeout=600)
            os.replace(partial, tar)
        finally:
            _unmount_under(work)  # debootstrap mounts /proc and /sys in the tree while it installs
            shutil.rmtree(work, ignore_errors=True)
    return tar


class ContainerWorld:
    """One dockerd, one password-protected registry and the job image pushed to it."""

    def __init__(self) -> None:
        why = available()
        if why:
            raise RuntimeError(why)
        # a short path: the daemon's unix sockets must stay under 108 bytes
        self.dir = Path(tempfile.mkdtemp(prefix="wbd-", dir="/tmp"))
        self.socket = self.dir / "docker.sock"
        self.env = {"DOCKER_HOST": f"unix://{self.socket}"}
        self.user, self.password = USER, PASSWORD
        self.dockerd: subprocess.Popen | None = None
        self.registry_proc: subprocess.Popen | None = None
        self.timings: dict[str, float] = {}
        self._pushed: set[str] = set()
        try:
            self._start_dockerd()
            self._start_registry()
            self._push_image()
        except BaseException:
            self.stop()
            raise

    # -- daemon --------------------------------------------------------------
    def _start_dockerd(self) -> None:
        d = self.dir
        log = open(d / "dockerd.log", "ab")
        self.dockerd = subprocess.Popen(
            ["dockerd", "--data-root", str(d / "docker"), "--exec-root", str(d / "exec"),
             "--pidfile", str(d / "dockerd.pid"), "-H", self.env["DOCKER_HOST"], "--iptables=false",
             "--ip-masq=false", "--ip-forward=false", "--bridge=none"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 30
        while True:
            if self.dockerd.poll() is not None:
                raise RuntimeError(f"dockerd could not start (exit {self.dockerd.returncode}): "
                                   f"{(d / 'dockerd.log').read_text(errors='replace')[-2000:]}")
            if self.socket.exists() and self.docker("version", check=False).returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("dockerd did not answer within 30 s: "
                                   f"{(d / 'dockerd.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)

    def docker(self, *args: str, input: bytes | str | None = None, check: bool = True,
               env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        """``docker ARGS`` against this daemon (text output)."""
        full = {**os.environ, **self.env, **(env or {})}
        done = subprocess.run(["docker", *args], input=input, capture_output=True, text=True, env=full,
                              timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)} failed ({done.returncode}): {done.stderr[-1500:]}")
        return done

    # -- registry ------------------------------------------------------------
    def _start_registry(self) -> None:
        d = self.dir
        self.port = _free_port()
        self.registry = f"127.0.0.1:{self.port}"
        htpasswd = subprocess.run(["htpasswd", "-Bbn", USER, PASSWORD], capture_output=True, text=True, check=True)
        (d / "htpasswd").write_text(htpasswd.stdout)
        (d / "registry.yml").write_text(
            "version: 0.1\n"
            "log:\n  level: error\n"
            f"storage:\n  filesystem:\n    rootdirectory: {d / 'registry'}\n"
            f"http:\n  addr: {self.registry}\n"
            f"auth:\n  htpasswd:\n    realm: workbench-tests\n    path: {d / 'htpasswd'}\n")
        log = open(d / "registry.log", "ab")
        self.registry_proc = subprocess.Popen(["docker-registry", "serve", str(d / "registry.yml")],
                                              stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                              start_new_session=True)
        log.close()
        deadline = time.monotonic() + 20
        while True:
            if self.registry_proc.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {(d / 'registry.log').read_text()[-1500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("docker-registry did not listen within 20 s")
                time.sleep(0.05)

    def _push_image(self) -> None:
        t0 = time.monotonic()
        tar = base_tarball()
        self.timings["base_tarball_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        self.image = push_rootfs(tar, self.registry, "wb/job:1", USER, PASSWORD)
        self.timings["push_s"] = time.monotonic() - t0
        # nothing of the image is in the daemon: a job's pull downloads every layer from the registry

    def image_with(self, include: str, name: str) -> str:
        """Another image from Debian packages (``include``: debootstrap's list, e.g. "python3,python3-torch"),
        cached like the base and pushed as ``wb/NAME:1``; its reference in the registry."""
        remote = f"{self.registry}/wb/{name}:1"
        if remote in self._pushed:
            return remote
        t0 = time.monotonic()
        tar = base_tarball(include)
        self.timings[f"{name}_tarball_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        push_rootfs(tar, self.registry, f"wb/{name}:1", USER, PASSWORD)
        self.timings[f"{name}_push_s"] = time.monotonic() - t0
        self._pushed.add(remote)
        return remote

    def forget(self, reference: str) -> None:
        """Remove a pulled image from the daemon, so the next job pulls it again."""
        self.docker("rmi", "-f", reference, check=False)

    # -- the end -------------------------------------------------------------
    def stop(self) -> None:
        if self.registry_proc and self.registry_proc.poll() is None:
            self.registry_proc.terminate()
            try:
                self.registry_proc.wait(10)
            except subprocess.TimeoutExpired:
                self.registry_proc.kill()
                self.registry_proc.wait()
        if self.dockerd and self.dockerd.poll() is None:
            left = self._containers()
            if left:
                self.docker("rm", "-f", *left, check=False)
            self.dockerd.send_signal(signal.SIGTERM)
            try:
                self.dockerd.wait(30)
            except subprocess.TimeoutExpired:
                self.dockerd.kill()
                self.dockerd.wait()
        _unmount_under(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)

    def _containers(self) -> list[str]:
        try:
            done = self.docker("ps", "-aq", check=False, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return []
        return done.stdout.split() if done.returncode == 0 else []


def _unmount_under(root: Path) -> None:
    """Undo the daemon's mounts (its netns file, overlay leftovers) so the scratch folder can go."""
    try:
        mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return
    for point in sorted((m for m in mounts if m.startswith(str(root) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


_world: ContainerWorld | None = None
_lock = threading.Lock()


def start() -> ContainerWorld:
    """The process's container world (started on first use; a session fixture calls :func:`stop`)."""
    global _world
    with _lock:
        if _world is None:
            _world = ContainerWorld()
            atexit.register(stop)
        return _world


def stop() -> None:
    """Stop the daemon and the registry (tests stop what they start, before the run checks for leftovers)."""
    global _world
    with _lock:
        if _world is not None:
            _world.stop()
            _world = None
