"""One remote job end to end: wait for SSH, upload, start supervised, follow the log, apply on_finish.

    job = RemoteJob(accounts, instance, spec, on_event=print)
    job.run()          # everything (the GUI runs this on a worker thread)
    job.launch()       # only up to "started" (``workbench launch``), then
    job.follow_and_finish()   # (``workbench logs --follow``) stream until exit, then on_finish

Every step is idempotent, so a second app (or a restarted one) *attaches*: the
machine's ``started`` marker skips upload and start, the local log's size is the
offset (see :mod:`.logs`), a recorded exit code goes straight to on_finish.

States (``JobEvent.phase``, also saved in ``<job dir>/remote.json`` for the CLI and
GUI): connecting · booting (no SSH yet / cloud-init running, with its last output
line) · driver (nvidia-smi not ready) · uploading · starting · pulling (a container image) · setup · running ·
reconnecting · interrupted (the storage agent heard the cloud take the machine back: following ends) ·
finished · downloading · terminating · stopping · kept · done · error.

on_finish, applied here when the run's exit code is known: the spec's ``outputs``
are downloaded first (into ``<job dir>/outputs``; the machine is held meanwhile),
then ``terminate`` → core teardown of the launch, verified; ``stop`` → the
provider's ``stop`` if it SupportsStop; ``keep`` → a warning that it still bills.
When the app is closed, the machine applies it itself (:mod:`.supervisor`).

Threading: blocking; one thread per job.  ``on_event`` is called on that thread.
``stop()`` (any thread) makes the loops return at their next wait.
"""

from __future__ import annotations

import json
import logging
import posixpath
import shlex
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from workbench.core import paths
from workbench.core.lifecycle import launch_secrets
from workbench.core.domain.errors import NotFoundError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance, JobSpec, OnFinish
from workbench.core.providers.contract import SupportsBatchJobs, SupportsStop
from workbench.core.remote import container, logins, logs, sshconfig, supervisor, transfer
from workbench.core.remote import storage as remote_storage
from workbench.core.remote.connection import (Backoff, Connection, ConnectionLost, NotReadyError, Target,
                                             connect_with_backoff)
from workbench.core.remote.kinds import is_queued
from workbench.core.remote.job_flow import JobFlow
from workbench.core.remote.job_state import (EXIT_FILE, STATE_FILE, JobEvent, JobOptions,  # noqa: F401 - also
                                             read_state, recorded_exit_code)  # imported from here

log = logging.getLogger("workbench.remote.job")


class RemoteJob(JobFlow):
    """Drives one launch's job on its (first) instance; see the module docstring."""

    def __init__(self, accounts: Any, instance: Instance, spec: JobSpec, options: JobOptions | None = None,
                 on_event: Callable[[JobEvent], None] | None = None, peers: tuple[Instance, ...] = (),
                 secret_env: Mapping[str, str] | None = None) -> None:
        self.accounts = accounts
        # spec.secrets given at launch (this process's memory only): the job's environment, nothing else
        self._secret_env = dict(secret_env) if secret_env is not None else launch_secrets.values(instance.launch_id)
        self.instance = instance
        self.spec = spec
        self.peers = peers
        self.launch_id = instance.launch_id
        self.opts = options or JobOptions()
        self.on_event = on_event
        self.data_dir: Path = accounts.store.path.parent
        self.local_dir = paths.job_dir(self.launch_id)
        self.local_log = paths.job_log(self.launch_id)
        self.exit_code: int | None = recorded_exit_code(self.launch_id)
        self.phase = read_state(self.launch_id).get("phase", "connecting")
        self.remote_dir = ""  # <base>/jobs/<launch id>, known after the first probe
        self._stop = threading.Event()
        self._conn: Connection | None = None
        self._ssh_config_written = False
        self.interrupted = False  # the machine is being taken back (the storage agent's notice)
        self._resume_upload = False  # set after a dropped connection: files already there are not sent again

    # -- plumbing -------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            conn.close()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _emit(self, phase: str, message: str = "", kind: str = "phase", **data: Any) -> None:
        if kind == "phase" or phase != self.phase:
            self.phase = phase
            state = read_state(self.launch_id)
            state.update({"phase": phase, "message": message, "updated_at": time.time(),
                          "exit_code": self.exit_code, "on_finish": self.spec.on_finish.value})
            tmp = self.local_dir / (STATE_FILE + ".tmp")
            tmp.write_text(json.dumps(state), encoding="utf-8")
            tmp.replace(self.local_dir / STATE_FILE)
        if kind in ("warning", "error"):
            log.warning("%s: %s", self.launch_id, message)
        if self.on_event is not None:
            try:
                self.on_event(JobEvent(self.launch_id, phase, message, kind, dict(data)))
            except Exception:  # noqa: BLE001 - a display must never stop the job
                log.exception("remote job event callback failed")

    def _fresh_instance(self) -> Instance:
        """The instance as the store knows it now (host keys may have arrived with a refresh)."""
        i = self.instance
        got = self.accounts.store.get_instance(i.provider, i.profile, i.instance_id)
        if got is not None and got.host:
            self.instance = got
        return self.instance

    def _connect(self, deadline_s: float, phase: str) -> Connection | None:
        def waiting(exc: WorkbenchError, delay: float) -> None:
            self._end_with_the_launch()
            self._emit(phase, f"{exc.message}; retrying in {delay:.0f} s")

        self._emit(phase, f"connecting to {self._fresh_instance().host}")
        logins.ensure(self.accounts, self._fresh_instance())  # a login node's provider says how to log in
        target = Target.for_instance(self._fresh_instance(), self.data_dir)
        conn = connect_with_backoff(target, deadline_s, lambda: self.stopped, waiting,
                                    key_grace_s=self.opts.key_grace_s, sleep=self._sleep)
        self._conn = conn
        if conn is not None and not self._ssh_config_written:
            sshconfig.update(self.data_dir, add=[self.instance])  # `ssh <launch id>` works from now on
            self._ssh_config_written = True
        return conn

    # -- steps ----------------------------------------------------------------
    def _probe(self, conn: Connection) -> dict[str, str]:
        info = supervisor.parse_probe(conn.check(supervisor.probe_command(self.launch_id, not is_queued(self.instance)),
                                                 "checking the machine"))
        self.remote_dir = posixpath.join(info["base"], "jobs", self.launch_id)
        return info

    def _wait_ready(self, conn: Connection) -> dict[str, str]:
        """Probe until cloud-init is done and (for a GPU job) nvidia-smi answers, or its deadline passes."""
        backoff, start = Backoff(cap=15.0), time.monotonic()
        wants_gpu = bool(self.instance.gpu_count or self.spec.resources.gpu) and not is_queued(self.instance)
        while True:
            info = self._probe(conn)
            if info.get("started") or self.stopped:
                return info
            if info.get("cloud_init") == "running":
                self._emit("booting", "cloud-init: " + (info.get("cloud_init_log") or "running"))
            elif wants_gpu and info.get("nvidia") not in ("0",):
                if time.monotonic() - start >= self.opts.driver_deadline_s:
                    self._emit("driver", f"the GPU driver is still not ready ({info.get('nvidia_msg', '')}); "
                                         f"starting the job anyway", kind="warning")
                    return info
                self._emit("driver", "waiting for the GPU driver: " + (info.get("nvidia_msg") or "nvidia-smi missing"))
            else:
                return info
            self._sleep(backoff.next())

    def _upload_and_start(self, conn: Connection, info: dict[str, str]) -> None:
        """Upload, install, start.  A job in a container image has its scripts installed first and the image pulled
        and its container started on the machine while the workdir uploads (``container.sh prepare``); a launch that
        goes on later (reconnected, or the app started again) finds that container, and a machine whose launch never
        goes on ends with its container."""
        if info.get("started"):
            return
        early = self.spec.image is not None and self._batch_provider() is None
        if early:
            self._install(conn, info)
            conn.check(container.prepare_command(self.remote_dir), "pulling the job's image")
            self._emit("pulling", f"{self.spec.image.name} (while the workdir uploads)" if self.spec.workdir else "")
        if self.spec.workdir:
            plan = transfer.plan_upload(self.spec.workdir)
            self._emit("uploading", f"{len(plan.files)} files, {plan.total_bytes} bytes", kind="phase",
                       files=len(plan.files), total=plan.total_bytes, skipped=plan.skipped)

            def progress(done: int, total: int, current: str) -> None:
                self._emit("uploading", current, kind="upload", done=done, total=total)

            transfer.upload(conn, plan, self.remote_dir + "/work", progress, lambda: self.stopped,
                            resume=self._resume_upload)
        if self.stopped:  # (stop() closed the connection: a prepared container waits for the launch to go on)
            return
        if not early:
            self._install(conn, info)
        self._emit("starting", f"supervised by {info.get('supervisor', 'setsid')}")
        batch = self._batch_provider()
        if batch is not None:
            batch.submit(conn, self.instance, self.remote_dir)
        else:
            supervisor.start(conn, self.remote_dir)

    def _install(self, conn: Connection, info: dict[str, str]) -> None:
        """The job folder's scripts (and a storage agent's, a cluster's files) on the machine."""
        env = self._job_env()
        env.update(self._secret_env)
        if remote_storage.needs_agent(self.spec):  # its files go in before the scripts' tar (which makes the folder)
            transfer._mkdirs(conn.sftp(), self.remote_dir + "/work")
        run_spec = remote_storage.install(conn, self.accounts, self.spec, self.instance, self.remote_dir)
        batch = self._batch_provider()
        scripts = supervisor.render(run_spec, self.launch_id, env,
                                    "batch" if batch is not None else info.get("supervisor", "setsid"),
                                    self.opts.grace_s, job_dir=self.remote_dir)
        if batch is not None:  # a scheduler's login node: the job folder's files for its batch job (Slurm)
            scripts = supervisor.Scripts(batch.batch_files(self.instance, run_spec, self.remote_dir, scripts.files))
        supervisor.install(conn, self.remote_dir, scripts)
        self._before_start(conn, info)

    def _batch_provider(self) -> SupportsBatchJobs | None:
        """The instance's provider when its jobs run through a scheduler (Slurm), else None."""
        if not is_queued(self.instance):
            return None
        prov = self.accounts.provider(self.accounts.profile(self.instance.profile))
        return prov if isinstance(prov, SupportsBatchJobs) else None

    def _job_env(self) -> dict[str, str]:
        """What env.sh exports (a node of a multi-node launch adds its cluster variables: .cluster)."""
        return supervisor.job_env(self.spec, self.instance, self.launch_id, self.peers)

    def _before_start(self, conn: Connection, info: dict[str, str]) -> None:
        """Hook between installing the scripts and starting them (a multi-node launch's files: .cluster)."""

    def _end_with_the_launch(self) -> None:
        """Raise when the launch's machine was released meanwhile (``down``, Stop all, a guard — from this
        process or another): waiting on for SSH to it would retry for the whole deadline (issue 30)."""
        if not self._instance_alive():
            raise NotFoundError(f"{self.instance.name or self.launch_id} was released while the job was being "
                                f"started: nothing more to do", hint="launch the job file again for a new machine")

    def _wait_for_address(self) -> None:
        """A PENDING machine has no address yet: reconcile its profile until it has one."""
        from workbench.core.lifecycle.reconcile import reconcile

        backoff, start = Backoff(cap=15.0), time.monotonic()
        while not self._fresh_instance().host and not self.stopped:
            self._end_with_the_launch()
            if time.monotonic() - start > self.opts.connect_deadline_s:
                raise TransientError(f"{self.instance.name or self.launch_id} got no address within "
                                     f"{self.opts.connect_deadline_s:.0f} s", hint="check it in the cloud's console")
            self._emit("booting", "waiting for the machine's address")
            self._sleep(backoff.next())
            reconcile(self.accounts, [self.accounts.profile(self.instance.profile)])

    def launch(self) -> bool:
        """Connect (waiting out the boot), upload, start.  False when stopped first.

        A connection that drops on the way (the network, the machine's sshd) is opened again with backoff,
        as ``follow`` does, for up to ``reconnect_deadline_s`` from the first drop; the upload then goes on
        with the files not yet there, and a job that already started is not started twice (the probe)."""
        self._wait_for_address()
        conn = self._connect(self.opts.connect_deadline_s, "connecting")
        lost_at: float | None = None
        while conn is not None:
            try:
                info = self._wait_ready(conn)
                if self.stopped:
                    return False
                self._upload_and_start(conn, info)
                self._emit("running" if not info.get("exit_code") else "finished", "the job is running on the machine")
                return not self.stopped
            except (ConnectionLost, NotReadyError) as exc:
                lost_at = lost_at if lost_at is not None else time.monotonic()
                left = self.opts.reconnect_deadline_s - (time.monotonic() - lost_at)
                if left <= 0 or self.stopped:
                    raise
                self._end_with_the_launch()
                self._emit("reconnecting", f"{exc.message}; connecting again (the upload goes on where it stopped)",
                           kind="warning")
                self._resume_upload = True
            finally:
                conn.close()
            conn = self._connect(left, "reconnecting")
        return False

    def follow(self) -> int | None:
        """Stream the log until the job's exit code appears; reconnects with backoff.  None when stopped."""
        phase = "connecting"
        while not self.stopped:
            try:
                conn = self._connect(self.opts.reconnect_deadline_s, phase)
            except TransientError:
                if not self._instance_alive():
                    raise NotFoundError(f"{self.instance.name or self.launch_id} is gone; its log is kept in "
                                        f"{self.local_log}") from None
                raise
            if conn is None:
                return None
            try:
                code = self._follow_on(conn)
                if code is not None or self.stopped or self.interrupted:
                    return code
            except TransientError as exc:
                if self.stopped:  # stop() closed the connection under the look: not a drop
                    return None
                self._emit("reconnecting", exc.message)
            finally:
                conn.close()
            phase = "reconnecting"
        return None

    def _follow_on(self, conn: Connection) -> int | None:
        info = self._probe(conn)
        if not info.get("started"):
            raise WorkbenchError(f"the job was never started on {conn.target.where}",
                                 hint="launch it again, or see the app's log")
        remote_log = self.remote_dir + "/output.log"
        shown, said = "", None  # said: the phase file's word at the last look (None: look at once)
        while not self.stopped:
            got = logs.pull(conn, remote_log, self.local_log)
            if got:
                self._emit(self.phase, kind="log", bytes=got)
                continue  # drain a backlog before looking at the state
            # the look waits on the machine (up to poll_s) for a new line or phase: no sleep here
            res = conn.run(supervisor.wait_command(self.remote_dir, logs.local_size(self.local_log), said,
                                                   self.opts.poll_s), timeout=30 + self.opts.poll_s)
            parts = res.out.split()
            said = parts[0] if parts else ""
            phase = parts[0] if parts else "starting"
            if phase == "finished" and len(parts) > 1 and (self.spec.storage or self.spec.recovery):
                # a job stopped by an interruption notice also finishes (SIGTERM, 143): when the agent's record
                # is there, the machine is being taken back and that is the outcome, however late we look
                record = remote_storage.fetch_interruption(conn, self.remote_dir, self.launch_id)
                if record is not None and record.get("saved_at") is not None:
                    phase = "interrupted"
            if phase == "finished" and len(parts) > 1:
                if self.spec.on_finish != OnFinish.KEEP:
                    self._hold(conn)  # the app is here: the machine waits for its on_finish (outputs first)
                while logs.pull(conn, remote_log, self.local_log):
                    pass
                return self._record_exit(int(parts[1]))
            if phase == "interrupted":  # the storage agent heard the cloud take the machine back
                record = remote_storage.fetch_interruption(conn, self.remote_dir, self.launch_id)
                if record is not None and record.get("saved_at") is not None:  # the last save is over
                    while logs.pull(conn, remote_log, self.local_log):
                        pass
                    self.interrupted = True
                    self._emit("interrupted", remote_storage.describe(record))
                    self._emit("interrupted", remote_storage.describe(record), kind="warning")
                    return None  # the machine goes; recovery (if the spec has it) relaunches the job
            if phase != shown:
                self._emit({"pull": "pulling", "setup": "setup", "run": "running", "queued": "queued"}.get(phase, "running"))
                shown = phase
        return None

    def collect(self, deadline_s: float = 30.0) -> int | None:
        """The log and exit code (None if none) of a job that ended unfollowed, from a host that outlives it (a login node)."""
        conn = self._connect(deadline_s, "connecting")
        if conn is None:
            return None
        try:
            self._probe(conn)
            while logs.pull(conn, self.remote_dir + "/output.log", self.local_log):
                pass
            code = conn.run(f"cat {shlex.quote(self.remote_dir + '/' + EXIT_FILE)} 2>/dev/null", timeout=30).out.strip()
            return self._record_exit(int(code)) if code.lstrip("-").isdigit() else None
        finally:
            conn.close()

    def _record_exit(self, code: int) -> int:
        self.exit_code = code
        (self.local_dir / EXIT_FILE).write_text(f"{code}\n")
        store = self.accounts.store
        store.upsert_instance(self._fresh_instance().with_state(self.instance.state, exit_code=code))
        if code != 0:
            store.update_launch(self.launch_id, error=f"run exited with code {code}")
        self._emit("finished", f"run exited with code {code}")
        self._emit("finished", f"run exited with code {code}", kind="exit", exit_code=code)
        return code

    def _instance_alive(self) -> bool:
        got = self.accounts.store.get_instance(self.instance.provider, self.instance.profile,
                                               self.instance.instance_id)
        return got is None or got.state.active

    # -- on_finish --------------------------------------------------------------
    def download_outputs(self, conn: Connection, paths_: tuple[str, ...] | None = None,
                         dest: Path | None = None) -> list[transfer.DownloadResult]:
        """Fetch ``paths_`` (default: the spec's outputs) while holding the machine's own on_finish."""
        wanted = self.spec.outputs if paths_ is None else paths_
        dest = dest or self.local_dir / "outputs"
        results = []
        for rel in wanted:
            self._hold(conn)
            remote = rel if rel.startswith("/") else posixpath.join(self.remote_dir, "work", rel)
            self._emit("downloading", rel)

            def progress(done: int, total: int, current: str) -> None:
                self._emit("downloading", current, kind="upload", done=done, total=total)

            got = transfer.download(conn, remote, dest, progress, lambda: self.stopped)
            if got.refused:  # never written: they would land outside the outputs folder
                self._emit("downloading", f"not downloaded (the name would leave the outputs folder): "
                                          f"{', '.join(got.refused[:5])}" + (" …" if len(got.refused) > 5 else ""),
                           kind="warning")
            results.append(got)
        return results

    def _hold(self, conn: Connection, seconds: float = 900) -> None:
        conn.run(f"echo {int(time.time() + seconds)} > {shlex.quote(self.remote_dir + '/hold')}", timeout=30)

    def keep_machine(self, years: int = 10) -> None:
        """"Keep running" after the job ended: the machine's own on_finish stands down (its other guards stay)."""
        conn = self._connect(min(self.opts.reconnect_deadline_s, 300), "keeping")
        if conn is None:
            return
        with conn:
            self._probe(conn)
            self._hold(conn, seconds=years * 365 * 86400)
        self._emit("kept", "kept running at your request", kind="phase")

    def apply_on_finish(self) -> None:
        """Download the outputs, then terminate / stop / keep as the spec says (after the exit code)."""
        action = self.spec.on_finish
        if self.spec.outputs:
            try:
                conn = self._connect(min(self.opts.reconnect_deadline_s, 300), "downloading")
                if conn is not None:
                    with conn:
                        self._probe(conn)
                        got = self.download_outputs(conn)
                        self._emit("downloading", f"{sum(len(r.files) for r in got)} files saved in "
                                                  f"{self.local_dir / 'outputs'}", kind="phase")
            except WorkbenchError as exc:
                self._emit("downloading", f"could not download the outputs: {exc.message}", kind="warning")
        if action != OnFinish.KEEP and self.opts.teardown_by_guards:
            self._emit("finished", f"the job ended; the machine is {'stopped' if action == OnFinish.STOP else 'terminated'}"
                                   f" after the finish guard's grace period unless you keep it running", kind="phase")
            return
        if action == OnFinish.KEEP:
            self._emit("kept", f"on_finish is 'keep': {self.instance.name or self.launch_id} keeps running and "
                               f"billing {self.instance.price_per_hour:.2f} {self.instance.currency}/h until you "
                               f"terminate it", kind="warning")
            return
        if action == OnFinish.STOP:
            prov = self.accounts.provider(self.accounts.profile(self.instance.profile))
            if not isinstance(prov, SupportsStop):
                self._emit("kept", f"on_finish is 'stop' but {self.instance.provider} cannot stop machines; the "
                                   f"machine shuts itself down after {self.opts.grace_s} s", kind="warning")
                return
            self._emit("stopping", "stopping the machine")
            prov.stop([self._fresh_instance()])
            self._emit("done", "stopped (disks are kept and may bill)")
            return
        self._emit("terminating", "terminating the machine and verifying nothing of the launch is left")
        self._terminate_and_verify([self.instance])
