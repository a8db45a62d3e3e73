"""What a job on one machine (:class:`.job.RemoteJob`) and on a cluster (:class:`.cluster.ClusterJob`) share: the
order of launch, follow and on_finish, and the end of the bill (teardown, verified, then the launch's SSH entries and
host keys forgotten).

Threading: blocking, on the job's own thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance
from workbench.core.remote import sshconfig
from workbench.core.remote.hostkeys import KnownHosts, host_alias, known_hosts_path
from workbench.core.remote.job_state import JobOptions, read_state


class JobFlow:
    """The end of a job's life that one machine and a cluster share: follow it, then its on_finish.

    A subclass provides ``launch()``, ``follow()``, ``apply_on_finish()``, ``exit_code``, ``stopped``,
    ``launch_id``, ``opts``, ``accounts``, ``data_dir`` and ``_emit``.
    """

    launch_id: str
    opts: JobOptions
    accounts: Any
    data_dir: Path
    stopped: bool

    def follow_and_finish(self) -> int | None:
        code = self.exit_code if read_state(self.launch_id).get("phase") == "finished" else None
        if code is None:
            code = self.follow()
        if code is not None and self.opts.apply_on_finish and not self.stopped:
            self.apply_on_finish()
        return code

    def run(self) -> int | None:
        """launch (unless already done), follow, on_finish.  Errors end in phase "error" and are raised."""
        try:
            if read_state(self.launch_id).get("phase") in ("done", "kept"):
                return self.exit_code
            if not self.launch():
                return None
            return self.follow_and_finish()
        except WorkbenchError as exc:
            if self.stopped:
                return None  # we closed the connection ourselves: not the job's problem
            self._emit("error", exc.message, kind="error")
            raise

    def _terminate_and_verify(self, machines: list[Instance]) -> None:
        """End the launch's bill (teardown, verified); on success forget its SSH entries and host keys."""
        from workbench.core.lifecycle.teardown import teardown

        report = teardown(self.accounts, [self.launch_id], timeout=self.opts.teardown_timeout_s)
        if report.clean:
            sshconfig.update(self.data_dir, remove_launches=[self.launch_id])
            known = KnownHosts(known_hosts_path(self.data_dir))
            for inst in machines:
                known.forget(host_alias(inst.provider, inst.instance_id))
            self._emit("done", "terminated and verified")
        else:
            left = ", ".join(getattr(x, "instance_id", None) or getattr(x, "resource_id", "?")
                             for x in report.remaining)
            errs = "; ".join(e.message for _, e in report.errors)
            self._emit("error", f"teardown did not finish: still billing: {left or '-'} {errs}".strip(),
                       kind="error")

    # provided by the subclass
    exit_code: int | None

    def launch(self) -> bool:
        raise NotImplementedError

    def follow(self) -> int | None:
        raise NotImplementedError

    def apply_on_finish(self) -> None:
        raise NotImplementedError

    def _emit(self, phase: str, message: str, kind: str = "info") -> None:
        raise NotImplementedError
