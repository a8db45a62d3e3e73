"""Files and start-up of local jobs.

Layout under the context's data dir::

    local/<launch_id>/job.json     the record (atomic writes)
    local/<launch_id>/exit_code    "<code> <phase>", written by the wrapper when the job ends
    local/<launch_id>/setup.sh     the spec's setup, if any
    local/<launch_id>/run.sh       the spec's run
    local/<launch_id>/work/        working directory (copy of spec.workdir)
    local/.locks/<launch_id>.lock  flock held while a launch is in progress
    jobs/<launch_id>/output.log    stdout+stderr (same as paths.job_log)

The job runs under a small ``/bin/sh`` wrapper that is the leader of a new
session.  The wrapper runs setup (stopping on failure) and run with ``bash -e``
(``sh -e`` where bash is missing) and writes the exit code itself, so the code
is recorded even when the app that launched it is gone.  A job killed before
it could write one has no exit code.

Threading: JobStore methods touch only files and may run on any thread;
cross-process races on one launch id are serialised by ``launch_lock``.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator, Mapping

import psutil

from workbench.core.domain.errors import ConfigError, PluginError, TransientError, WorkbenchError
from workbench.core.domain.models import JobSpec
from workbench.core.paths import check_launch_id

from . import containers, procs

log = logging.getLogger(__name__)

#: folders never shipped with the code: history, caches, local environments.
SKIP_COPY = (".git", "__pycache__", ".venv")
LOCK_WAIT_S = 30.0

WRAPPER = r"""
state="$1"; shell="$2"; code=0; phase=run
if [ -f "$state/setup.sh" ]; then
  "$shell" -e "$state/setup.sh"; code=$?
  if [ "$code" -ne 0 ]; then
    phase=setup
    echo "workbench: setup failed with exit code $code; run skipped" >&2
  fi
fi
if [ "$code" -eq 0 ]; then "$shell" -e "$state/run.sh"; code=$?; fi
printf '%s %s\n' "$code" "$phase" > "$state/exit_code.tmp" && mv -f "$state/exit_code.tmp" "$state/exit_code"
exit "$code"
"""


@dataclass(frozen=True)
class JobRecord:
    """What ``job.json`` holds about one local job."""

    launch_id: str
    name: str
    pid: int
    pgid: int
    create_time: float
    owner: str
    profile: str
    log: str
    started_at: float
    price_per_hour: float = 0.0
    currency: str = "USD"
    gpu_model: str | None = None
    gpu_count: int = 0
    spec_name: str = ""
    spec_source: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    terminated_by_user: bool = False
    terminated_at: float | None = None
    num_nodes: int = 1  # a multi-node rehearsal: ``nodes`` lists every node (see nodes.py)
    nodes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "JobRecord":
        """Build from parsed JSON; raises ValueError/TypeError/KeyError on a malformed record."""
        known = {f.name for f in fields(cls)}
        rec = cls(**{k: v for k, v in data.items() if k in known})
        if not isinstance(rec.pid, int) or not isinstance(rec.pgid, int):
            raise ValueError("pid and pgid must be integers")
        return rec


@dataclass(frozen=True)
class ExitStatus:
    """The wrapper's record: the exit code and the phase that produced it ("setup" or "run")."""

    code: int
    phase: str


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file + rename so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class JobStore:
    """The state files of every local job under one data dir."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "local"
        self.logs_root = data_dir / "jobs"

    def state_dir(self, launch_id: str) -> Path:
        return self.root / check_launch_id(launch_id)

    def work_dir(self, launch_id: str) -> Path:
        return self.state_dir(launch_id) / "work"

    def log_path(self, launch_id: str) -> Path:
        return self.logs_root / check_launch_id(launch_id) / "output.log"

    def read(self, launch_id: str) -> JobRecord | None:
        """The record, or None when there is none (or it cannot be read: logged)."""
        return self._read(self.state_dir(launch_id) / "job.json")

    def _read(self, path: Path) -> JobRecord | None:
        try:
            return JobRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError):
            log.warning("ignoring unreadable local job record %s", path, exc_info=True)
            return None

    def write(self, record: JobRecord) -> None:
        write_atomic(self.state_dir(record.launch_id) / "job.json", json.dumps(record.to_json(), indent=2))

    def records(self) -> list[JobRecord]:
        """Every readable record, oldest first."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            rec = self._read(entry / "job.json")
            if rec is not None:
                found.append(rec)
        return sorted(found, key=lambda r: r.started_at)

    def exit_status(self, launch_id: str, rank: int = 0) -> ExitStatus | None:
        """What the wrapper (of node ``rank``) wrote when the job ended; None if it never did (killed)."""
        state = self.state_dir(launch_id)
        try:
            text = ((state if rank == 0 else state / f"node-{rank}") / "exit_code").read_text(encoding="utf-8").split()
            return ExitStatus(int(text[0]), text[1] if len(text) > 1 else "run")
        except (OSError, ValueError, IndexError):
            return None

    def remove(self, launch_id: str) -> None:
        shutil.rmtree(self.state_dir(launch_id), ignore_errors=True)

    def _lock_path(self, launch_id: str) -> Path:
        return self.root / ".locks" / f"{check_launch_id(launch_id)}.lock"

    def launch_in_progress(self, launch_id: str) -> bool:
        """True while some process holds the launch lock of ``launch_id`` (spawned, not yet recorded)."""
        try:
            with open(self._lock_path(launch_id), "rb") as handle:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        except (OSError, WorkbenchError):
            pass  # no lock file: nobody is launching it
        return False

    @contextmanager
    def launch_lock(self, launch_id: str) -> Iterator[None]:
        """Hold an exclusive flock for ``launch_id`` (across processes; freed if we die).

        Raises TransientError if another launch of the same id holds it for
        longer than LOCK_WAIT_S (e.g. copying a huge workdir).
        """
        path = self._lock_path(launch_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+b") as handle:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TransientError(
                            f"another launch of {launch_id} is still in progress",
                            hint="wait for it to finish, then try again",
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def copy_workdir(source: str, dest: Path, data_root: Path) -> None:
    """Copy the spec's workdir into the job's working directory (as if shipping it to a machine).

    Raises ConfigError for a missing folder or one that contains the data
    dir (the copy would recurse into itself); OSError for copy failures.
    """
    src = Path(source).expanduser()
    if not src.is_dir():
        raise ConfigError(f"the job's workdir {src} is not a folder")
    if data_root.resolve().is_relative_to(src.resolve()):
        raise ConfigError(
            f"the job's workdir {src} contains the workbench data folder {data_root}",
            hint="point workdir at the project folder only, or set WORKBENCH_HOME elsewhere",
        )
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*SKIP_COPY), symlinks=True, dirs_exist_ok=True)


def job_env(base: Mapping[str, str], spec_env: Mapping[str, str], launch_id: str, owner: str) -> dict[str, str]:
    """os.environ + spec.env + our markers (last, so a spec cannot forge or drop them)."""
    env = dict(base)
    env["PYTHONUNBUFFERED"] = "1"  # python jobs: lines reach the log as they are printed
    env.update({str(k): str(v) for k, v in spec_env.items()})
    env.update({"WORKBENCH_LAUNCH_ID": launch_id, "WORKBENCH_MANAGED": "true", "WORKBENCH_OWNER": owner})
    return env


def job_shell() -> str:
    """bash where installed (job scripts are often written for it), else POSIX sh."""
    return shutil.which("bash") or "/bin/sh"


def describe_failure(exc: BaseException) -> str:
    """A one-line cause for rollback messages."""
    if isinstance(exc, WorkbenchError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


@dataclass(frozen=True)
class JobInfo:
    """The launch-time facts ``start_job`` copies into the record."""

    launch_id: str
    spec: JobSpec
    owner: str
    profile: str
    price_per_hour: float
    currency: str
    gpu_model: str | None
    gpu_count: int
    tags: Mapping[str, str]
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)  # only in the job's environment


def start_job(store: JobStore, info: JobInfo) -> JobRecord:
    """Prepare the folders, spawn the wrapper in a new session, write ``job.json``.

    The caller holds ``store.launch_lock(info.launch_id)`` and has removed
    any stale state dir.  On any failure this kills whatever it started,
    removes the state dir and raises: ConfigError when the files cannot be
    prepared, PluginError when the process cannot be started or inspected.
    """
    launch_id, spec = info.launch_id, info.spec
    state, work, log_path = store.state_dir(launch_id), store.work_dir(launch_id), store.log_path(launch_id)
    proc: subprocess.Popen[bytes] | None = None
    try:
        try:
            work.mkdir(parents=True)
            if spec.workdir:
                copy_workdir(spec.workdir, work, store.root.parent)
            if spec.setup:
                (state / "setup.sh").write_text(spec.setup + "\n", encoding="utf-8")
            (state / "run.sh").write_text(spec.run + "\n", encoding="utf-8")
            if spec.image is not None:  # setup and run inside the container (containers.py)
                env = containers.container_env({**spec.env, **info.secret_env}, launch_id, info.owner)
                containers.prepare(spec, launch_id, state, work, env)
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_file = open(log_path, "ab")
        except OSError as exc:
            raise ConfigError(
                f"cannot prepare local job {launch_id}: {describe_failure(exc)}",
                hint="check that the workbench data folder is writable and has free space",
            ) from exc
        with log_file:  # the child keeps its own copy of the descriptor
            try:
                wrapper = containers.WRAPPER if spec.image is not None else WRAPPER
                proc = subprocess.Popen(
                    ["/bin/sh", "-c", wrapper, "workbench-job", str(state), job_shell(),
                     containers.storage_wrapper(spec, launch_id)],
                    cwd=work,
                    env=job_env(os.environ, {**spec.env, **info.secret_env}, launch_id, info.owner),
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # own group: terminate reaches every descendant
                    close_fds=True,
                )
            except OSError as exc:
                raise PluginError(f"could not start local job {launch_id}: {describe_failure(exc)}") from exc
        try:
            # Not reaped yet (only we wait on it), so this works even if the job already exited.
            create_time = psutil.Process(proc.pid).create_time()
        except psutil.Error as exc:
            raise PluginError(f"could not inspect local job {launch_id} (pid {proc.pid}): {exc}") from exc
        record = JobRecord(
            launch_id=launch_id,
            name=spec.name,
            pid=proc.pid,
            pgid=proc.pid,  # start_new_session: the leader's pid is the group id
            create_time=create_time,
            owner=info.owner,
            profile=info.profile,
            log=str(log_path),
            started_at=time.time(),
            price_per_hour=info.price_per_hour,
            currency=info.currency,
            gpu_model=info.gpu_model,
            gpu_count=info.gpu_count,
            spec_name=spec.name,
            spec_source=spec.source,
            tags=dict(info.tags),
        )
        try:
            store.write(record)
        except OSError as exc:
            raise ConfigError(f"cannot record local job {launch_id}: {describe_failure(exc)}") from exc
    except BaseException:
        if proc is not None:
            _kill_now(proc)
        store.remove(launch_id)
        raise
    procs.adopt(proc)  # type: ignore[arg-type]  # set whenever we get here
    return record


def _kill_now(proc: subprocess.Popen[bytes]) -> None:
    """Rollback: SIGKILL the whole new group and reap the leader."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass  # already gone
    try:
        proc.wait(timeout=procs.KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        log.warning("local job pid %s did not exit after SIGKILL during rollback", proc.pid)
