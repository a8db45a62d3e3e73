"""`make bench`: prints one table of figures, each a ratio against a baseline measured in the same run.

Foundation figures:
- CLI `status --json` with 500 instances in the store (Local provider only) vs a bare
  `python -c pass` process: the CLI's own overhead (imports, plugin discovery, store, reconcile).
- store: 500 instance upserts (each its own WAL transaction + ledger row) vs 500 plain
  sqlite3 inserts with one commit each on the same disk.

GUI figures (benchmarks/gui.py, each in fresh processes on the offscreen platform):
- cold start to the first paint of the main window vs a bare PySide6 label window (median of 5).
- the largest event-loop stall while a cloud with 500 ms per call is refreshed, launched into
  through the wizard and torn down with Stop all billing, vs the idle recorder's largest gap.
- bytes held by the monitor's rings for 64 instances × 8 GPUs × 24 h (target <= 250 MB).

AWS figures (benchmarks/aws.py, against moto in server mode): launch and teardown wall time,
and one launch + teardown under 30 % throttling + 10 % 5xx with botocore's shipped backoff.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _median_run(argv: list[str], env: dict[str, str], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _fill_store(home: Path, n: int) -> float:
    os.environ["WORKBENCH_HOME"] = str(home)
    from workbench.core.models import Instance, InstanceState
    from workbench.core.store import LaunchRecord, Store

    with Store.open() as store:
        t = time.perf_counter()
        for i in range(n):
            lid = f"bench-{i:04d}"
            store.add_launch(LaunchRecord(lid, "bench", "local", "local", "local", time.time(), "terminated"))
            store.upsert_instance(Instance("local", "local", f"local-{lid}", lid, "local", "this-computer",
                                           InstanceState.TERMINATED, name="bench", exit_code=0))
        return time.perf_counter() - t


def _plain_sqlite(path: Path, n: int) -> float:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # the store's setting: compare like with like
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, v TEXT)")
    t = time.perf_counter()
    for i in range(n):
        conn.execute("INSERT INTO t VALUES (?, ?)", (str(i), "x" * 200))
        conn.commit()
    conn.close()
    return time.perf_counter() - t


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="wb-bench-") as tmp:
        home = Path(tmp) / "home"
        store_s = _fill_store(home, 500)
        plain_s = _plain_sqlite(Path(tmp) / "plain.sqlite3", 500)
        rows.append(("store: 500 launches+instances vs 500 sqlite inserts", store_s, plain_s, "report"))
        env = dict(os.environ, WORKBENCH_HOME=str(home))
        base = _median_run([sys.executable, "-c", "pass"], env)
        status = _median_run([sys.executable, "-m", "workbench", "status", "--json"], env)
        rows.append(("`status --json`, 500 instances vs bare python", status, base, "report"))
    gui_env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    gui = [sys.executable, "-m", "benchmarks.gui"]

    def gui_value(what: str) -> str:
        out = subprocess.run([*gui, what], env=gui_env, capture_output=True, text=True, check=True, timeout=300)
        return out.stdout.strip().splitlines()[-1]

    app_s = statistics.median(float(gui_value("start-app")) for _ in range(5))
    bare_s = statistics.median(float(gui_value("start-bare")) for _ in range(5))
    rows.append(("cold start to first paint vs bare PySide6 window", app_s, bare_s, "<= 1.5x (issue 10)"))
    largest_ms, idle_ms = (float(v) for v in gui_value("gaps").split())
    rows.append(("largest event-loop gap, 500 ms/call cloud, vs idle", largest_ms / 1000, idle_ms / 1000,
                 "<= 50 ms absolute"))
    mem = int(gui_value("monitor-memory"))
    print(f"monitor rings, 64 instances x 8 GPUs x 24 h: {mem / 1e6:.1f} MB (target <= 250 MB)")
    from benchmarks import remote  # telemetry CPU per sample, upload throughput over a loopback sshd

    remote.report()
    from benchmarks import aws  # launch / teardown wall time against moto, clean and under injected faults

    rows.extend(aws.rows())
    print(f"{'measure':52} {'value':>10} {'baseline':>10} {'ratio':>7}  target")
    for name, value, baseline, target in rows:
        print(f"{name:52} {value * 1000:8.1f}ms {baseline * 1000:8.1f}ms {value / baseline:6.2f}x  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
