"""Remote-job figures: CPU per telemetry sample, and upload/log throughput over a loopback sshd.

    python -m benchmarks.remote            (also part of `make bench`)

* telemetry: 64 machines × 8 GPUs, rounds of the synthetic H100 ×8 lines (real format): parse every line
  and insert it into the hub's rings (with the per-minute averages going to a real store),
  timed with process CPU time; reported per sample and as the share of one core at 1 Hz.
* upload: a 64 MB file plus 256 files of 4 KB over SFTP to a real OpenSSH sshd on
  127.0.0.1 (tests/support/sshd.py), after ``plan_upload``; MB/s of wall time.
* log pull: one 16 MB backlog pulled by offset (what a reconnect after a long gap does).

A flow that fails raises (a parse that drops lines, an upload that sends less than the files, a
pull that ends short, no sshd on this machine).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import check

ROOT = Path(__file__).resolve().parents[1]


def telemetry_cpu(machines: int = 64, gpus: int = 8, rounds: int = 60) -> tuple[float, int]:
    """(CPU seconds per sample, samples) for parse + ring insert (+ minute history into a store)."""
    from workbench.core.store.database import Store
    from workbench.core.telemetry.hub import TelemetryHub
    from workbench.core.telemetry.nvidia_smi import parse_line

    text = (ROOT / "tests" / "fixtures" / "nvidia_smi" / "synthetic" / "h100x8" / "stream.txt").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip()][:gpus]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "s.sqlite3")
        hub = TelemetryHub(store)
        t0, samples = 1_700_000_000.0, 0
        start = time.process_time()
        for k in range(rounds):
            for m in range(machines):
                readings = [parse_line(ln) for ln in lines]
                samples += hub.add(f"i-{m}", readings, t0 + k)  # 1 Hz: the 60th round crosses a minute
        cpu = time.process_time() - start
        store.close()
    check(samples == machines * gpus * rounds, f"{samples} of {machines * gpus * rounds} readings were taken")
    return cpu / samples, samples


def ssh_throughput() -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import sshd as sshd_support

    from workbench.core.domain.models import Instance, InstanceState
    from workbench.core.remote import logs
    from workbench.core.remote.connection import Target, connect
    from workbench.core.remote.transfer import plan_upload, upload
    from workbench.core.providers.sshkeys import ensure_keypair

    why = sshd_support.available()
    check(why is None, f"no test sshd here: {why}")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="wb-bench-ssh-") as tmp:
        tmp_p = Path(tmp)
        server = sshd_support.Sshd.start(tmp_p / "sshd")
        try:
            keys = ensure_keypair(tmp_p / "data")
            server.authorize(keys.public_openssh)
            work = tmp_p / "work"
            (work / "small").mkdir(parents=True)
            (work / "big.bin").write_bytes(os.urandom(64 << 20))
            for i in range(256):
                (work / "small" / f"f{i:03d}.txt").write_bytes(os.urandom(4096))
            inst = Instance("bench", "bench", "i-bench", "bench-1", "loop", "t", InstanceState.RUNNING,
                            host="127.0.0.1", extra={"ssh_user": server.user, "ssh_port": server.port})
            with connect(Target.for_instance(inst, tmp_p / "data")) as conn:
                plan = plan_upload(work)
                t = time.perf_counter()
                sent = upload(conn, plan, str(server.remote_dir / "up"))
                out["upload_mb_s"] = sent / 1e6 / (time.perf_counter() - t)
                check(sent >= (64 << 20) + 256 * 4096, f"the upload sent {sent} bytes")
                check((server.remote_dir / "up" / "big.bin").stat().st_size == 64 << 20, "big.bin did not arrive whole")
                out["upload_mb"] = sent / 1e6
                remote_log = server.remote_dir / "backlog.log"
                remote_log.write_bytes(os.urandom(16 << 20))
                local = tmp_p / "local.log"
                t = time.perf_counter()
                while logs.pull(conn, str(remote_log), local):
                    pass
                out["log_pull_mb_s"] = local.stat().st_size / 1e6 / (time.perf_counter() - t)
                check(local.stat().st_size == 16 << 20, f"the log pull ended at {local.stat().st_size} bytes")
        finally:
            server.stop()
    return out


def report() -> None:
    per, n = telemetry_cpu()
    print(f"telemetry: {per * 1e6:.1f} us CPU per GPU sample (parse + ring insert + minute history; {n} samples); "
          f"64 machines x 8 GPUs at 1 Hz = {per * 512 * 100:.1f}% of one core")
    ssh = ssh_throughput()
    print(f"upload over loopback sshd (SFTP): {ssh['upload_mb_s']:.1f} MB/s ({ssh['upload_mb']:.0f} MB, "
          f"1 x 64 MB + 256 x 4 KB); log pull by offset: {ssh['log_pull_mb_s']:.1f} MB/s")


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_HOME", tempfile.mkdtemp(prefix="wb-bench-home-"))
    report()
