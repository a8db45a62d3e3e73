"""One persistent telemetry channel per machine: ``nvidia-smi … -lms N`` streamed over SSH into the hub.

A :class:`GpuStream` thread connects (with the app key and known_hosts), lists the
GPUs once (``nvidia-smi -L``: the MIG layout, and whether the driver answers), then
keeps one exec channel running :func:`workbench.core.telemetry.hub.query_command` and
parses each line as it arrives.  When the machine has MIG slices, a second channel
on the same connection runs ``nvidia-smi -l 5`` (the default view) for the slices'
memory, which the query interface does not report.  A third channel runs
:func:`workbench.core.telemetry.host.host_command` (CPU, memory, network and disk rates of
the machine, every ``HOST_PERIOD_S``) for the utilization advisor, and a fourth
:func:`workbench.core.telemetry.dmon.dmon_command` (each GPU's PCIe rx/tx, every ``PCIE_PERIOD_S``):
a driver without ``dmon`` ends that channel alone, and the machine has no PCIe numbers.  A fifth runs
:func:`workbench.core.telemetry.nvlink.nvlink_command` (a shell loop: ``nvidia-smi nvlink -gt d`` every
``NVLINK_PERIOD_S``, each GPU's cumulative NVLink counters, turned into rates here); on a machine without
NVLink, or whose driver refuses the command, that loop ends after its first call and the machine has no
NVLink numbers: the rest goes on.  A driver that refuses
one of the newer query fields ("… is not a valid field to query") gets the eight-field
query (``LEGACY_FIELDS``) from then on.

While the machine boots (no SSH yet) or its driver is not loaded the hub's state says
so ("booting" / "driver") and the stream retries with backoff (1 s doubling to 30 s);
a dropped connection reconnects the same way.  A changed host key stops the stream
with state "error": it is never retried.

Threading: a daemon thread per machine; ``stop()`` from any thread ends it within
about half a second (its channel is closed, so the remote nvidia-smi gets SIGPIPE).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance
from workbench.core.telemetry.dmon import DmonParser, dmon_command
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.host import HostMeter, host_command
from workbench.core.telemetry.nvlink import NvlinkParser, nvlink_command
from workbench.core.telemetry.nvidia_smi import (INVALID_FIELD, LEGACY_FIELDS, QUERY_FIELDS, GpuProblem, LineBuffer,
                                                 mig_readings, parse_block, parse_line, parse_mig_list, parse_mig_table,
                                                 query_command)
from workbench.core.remote.connection import Backoff, Connection, KeyRefusedError, NotReadyError, Target, connect
from workbench.core.remote.hostkeys import HostKeyError

log = logging.getLogger("workbench.remote.telemetry")

MIG_PERIOD_S = 5
HOST_PERIOD_S = 5
PCIE_PERIOD_S = 5
#: one ``nvidia-smi nvlink`` process per period on the machine; its counters are cumulative, so a longer period
#: loses no traffic (the minute means are the same), it only makes the newest rate older
NVLINK_PERIOD_S = 5


class GpuStream(threading.Thread):
    """Streams one machine's GPU readings into ``hub`` until stopped."""

    def __init__(self, hub: TelemetryHub, instance: Instance, data_dir: Path, period_ms: int = 1000,
                 fresh: Callable[[], Instance] | None = None, backoff_cap: float = 30.0) -> None:
        super().__init__(name=f"gpustream-{instance.instance_id}", daemon=True)
        self.hub = hub
        self.instance = instance
        self.data_dir = data_dir
        self.period_ms = period_ms
        self.fresh = fresh or (lambda: self.instance)
        self.backoff = Backoff(cap=backoff_cap)
        self._halt = threading.Event()
        self._conn: Connection | None = None
        self.connections = 0  # how many times it (re)connected: tests and diagnostics
        self.fields: tuple[str, ...] = QUERY_FIELDS
        self.host_period_s = HOST_PERIOD_S
        self.pcie_period_s = PCIE_PERIOD_S
        self.nvlink_period_s = NVLINK_PERIOD_S

    def stop(self) -> None:
        self._halt.set()
        conn = self._conn
        if conn is not None:
            conn.close()

    @property
    def iid(self) -> str:
        return self.instance.instance_id

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.instance = self.fresh()
                conn = self._conn = connect(Target.for_instance(self.instance, self.data_dir))
                self.connections += 1
            except HostKeyError as exc:
                self.hub.set_state(self.iid, "error", exc.message)
                return
            except (NotReadyError, KeyRefusedError) as exc:
                self.hub.set_state(self.iid, "booting", exc.message)
                self._halt.wait(self.backoff.next())
                continue
            except WorkbenchError as exc:
                self.hub.set_state(self.iid, "error", exc.message)
                self._halt.wait(self.backoff.next())
                continue
            try:
                if self._stream(conn):
                    self.backoff.reset()
            except WorkbenchError as exc:
                self.hub.set_state(self.iid, "reconnecting", exc.message)
            except Exception:  # noqa: BLE001 - a telemetry bug must not kill the thread silently
                log.exception("telemetry of %s failed", self.iid)
            finally:
                conn.close()
                self._conn = None
            self._halt.wait(self.backoff.next())
        self.hub.set_state(self.iid, "stopped")

    def _stream(self, conn: Connection) -> bool:
        """Read until the channel ends; True when readings arrived (a healthy connection)."""
        listing = conn.run("nvidia-smi -L", timeout=30)
        if listing.rc != 0:
            first = (listing.out + listing.err).strip().splitlines()
            msg = first[0] if first else f"nvidia-smi exited with {listing.rc}"
            self.hub.set_state(self.iid, "driver", msg)
            self.hub.problem(self.iid, GpuProblem("driver", msg))
            return False
        for line in listing.out.splitlines():
            p = parse_line(line)
            if isinstance(p, GpuProblem):
                self.hub.problem(self.iid, p)
        migs = parse_mig_list(listing.out)
        chan = conn.stream(query_command(self.period_ms, self.fields))
        mig_chan = conn.stream(f"nvidia-smi -l {MIG_PERIOD_S}") if migs else None
        host_chan = conn.stream(host_command(self.host_period_s))
        pcie_chan = conn.stream(dmon_command(self.pcie_period_s))
        nvlink_chan = conn.stream(nvlink_command(self.nvlink_period_s))
        host, pcie, nvlink = HostMeter(self.iid), DmonParser(), NvlinkParser()
        lines, mig_text = LineBuffer(), ""
        got_any = False
        chan.settimeout(0.5)
        try:
            while not self._halt.is_set():
                try:
                    data = chan.recv(65536)
                except TimeoutError:
                    data = None
                if data == b"":
                    if not got_any and self.fields != LEGACY_FIELDS and self._refused_field(chan):
                        log.info("nvidia-smi on %s refuses a newer field; using the eight-field query", self.iid)
                        self.fields = LEGACY_FIELDS
                    break  # the remote command ended or the connection dropped
                if data:
                    block, problems = parse_block(lines.feed(data))  # the round at once, no object per GPU
                    for problem in problems:
                        self.hub.problem(self.iid, problem)
                    if len(block):
                        got_any = True
                        self.hub.add(self.iid, block, time.time())
                if mig_chan is not None and mig_chan.recv_ready():
                    mig_text += mig_chan.recv(1 << 20).decode("utf-8", "replace")
                    # the default view repeats; parse each complete table once its Processes section began
                    while "Processes:" in mig_text:
                        block, _, mig_text = mig_text.partition("Processes:")
                        self.hub.add(self.iid, mig_readings(migs, parse_mig_table(block)), time.time())
                if host_chan.recv_ready():
                    self.hub.add_host(self.iid, host.feed(host_chan.recv(1 << 20).decode("utf-8", "replace"),
                                                          time.time()))
                if pcie_chan is not None and pcie_chan.recv_ready():
                    text = pcie_chan.recv(1 << 20)
                    if text:
                        self.hub.add_pcie(self.iid, pcie.feed(text.decode("utf-8", "replace")), time.time())
                elif pcie_chan is not None and pcie_chan.exit_status_ready():
                    pcie_chan.close()  # no dmon on this machine (or it failed): no PCIe numbers, the rest goes on
                    pcie_chan = None
                nvlink_chan = self._nvlink(nvlink_chan, nvlink)
            if not conn.alive and not self._halt.is_set():
                raise NotReadyError(f"the telemetry connection to {conn.target.where} dropped")
        finally:
            for c in (chan, mig_chan, host_chan, pcie_chan, nvlink_chan):
                if c is not None:
                    c.close()
        return got_any

    def _nvlink(self, chan, parser: NvlinkParser):
        """Read the NVLink poller's output into the hub; None once it ended (no NVLink on this machine)."""
        if chan is None:
            return None
        if chan.recv_ready():
            text = chan.recv(1 << 20)
            if text:
                known = len(parser.rejected_units)
                self.hub.add_nvlink(self.iid, parser.feed(text.decode("utf-8", "replace"), time.time()), time.time())
                if len(parser.rejected_units) > known:
                    log.warning("nvidia-smi nvlink on %s prints counters in %s (not understood): no NVLink rate for "
                                "them", self.iid, ", ".join(sorted(parser.rejected_units)))
            return chan
        if chan.exit_status_ready():
            log.info("no NVLink numbers from %s (nvidia-smi nvlink ended with %s)", self.iid, chan.recv_exit_status())
            chan.close()
            return None
        return chan

    @staticmethod
    def _refused_field(chan) -> bool:
        err = b""
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(65536)
        return INVALID_FIELD in err.decode("utf-8", "replace")
