"""GPU readings of a batch job on a scheduler's compute nodes (Slurm), polled into the telemetry hub.

A cloud machine's GPUs stream from the machine itself (:mod:`.gpustream`); a batch job's GPUs are on compute nodes
the app does not reach: the provider reads them through the scheduler (:meth:`SupportsBatchJobs.gpu_readings`:
``srun --jobid … --overlap nvidia-smi`` from the login node) every ``period_s`` while the job runs, and this thread
hands them to the same hub, so the Monitor, the advisor, the idle guard and the run report see them as any machine's.
One ``srun`` per period: a cluster's scheduler is shared, so the period is seconds, not the cloud stream's one.

Threading: a daemon thread per running batch job; ``stop()`` from any thread ends it within the period.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance
from workbench.core.providers.contract import SupportsBatchJobs
from workbench.core.telemetry.hub import TelemetryHub

log = logging.getLogger("workbench.remote.telemetry")

PERIOD_S = 5.0


class BatchGpuSampler(threading.Thread):
    """Polls one batch job's GPUs through its provider into ``hub`` until stopped."""

    def __init__(self, hub: TelemetryHub, accounts: Any, instance: Instance, period_s: float = PERIOD_S,
                 fresh: Callable[[], Instance] | None = None) -> None:
        super().__init__(name=f"batch-gpus-{instance.instance_id}", daemon=True)
        self.hub, self.accounts, self.instance, self.period_s = hub, accounts, instance, period_s
        self.fresh = fresh or (lambda: self.instance)
        self._halt = threading.Event()
        self.rounds = 0  # polls that brought readings (tests and diagnostics)

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        iid = self.instance.instance_id
        while not self._halt.is_set():
            started = time.monotonic()
            try:
                prov = self.accounts.provider(self.accounts.profile(self.instance.profile))
                if not isinstance(prov, SupportsBatchJobs):
                    return
                readings = prov.gpu_readings(self.fresh())
                if readings:
                    self.hub.add(iid, readings, time.time())  # (the hub's state becomes "streaming")
                    self.rounds += 1
            except WorkbenchError as exc:
                self.hub.set_state(iid, "reconnecting", exc.message)
            except Exception:  # noqa: BLE001 - a telemetry bug must not kill the thread silently
                log.exception("GPU readings of %s failed", iid)
            self._halt.wait(max(0.5, self.period_s - (time.monotonic() - started)))
        self.hub.set_state(iid, "stopped")
