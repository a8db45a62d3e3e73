"""Where the UI thread's time goes during the stall row's long gaps (diagnostic, off by default).

Turned on by ``WB_STALL_PROFILE=1`` for ``python -m benchmarks.gui gaps``; the report goes to stderr,
the row's JSON line is unchanged.  Several views of the gaps longer than ``THRESHOLD_S``:

* **CPU split** (exact, from the gap recorder's own ticks): the gap's wall time, the UI thread's CPU time
  in it (``time.thread_time``) and the whole process's (``time.process_time``).  UI CPU close to the
  wall time: real work on the UI thread.  Much CPU in other threads: they held the interpreter lock (GIL
  contention).  Little CPU anywhere: the process was not scheduled (machine load) or waited on I/O.
* **Stacks** (sampled): a watchdog thread that, while the UI thread has not ticked for longer than the
  threshold, takes ``sys._current_frames()`` every 5 ms and counts the UI thread's stack and the top
  frames of the other threads that were running Python (not parked in a wait, select or recv).

* **Late watchdog** (sampled): whenever the watchdog itself woke more than 15 ms late (something held the
  interpreter lock, or no core was free), the stacks of the threads running Python right after.
* **GC passes**: every cyclic-GC collection (``gc.callbacks``), its generation and duration.
* **UI-thread profile**: ``cProfile`` of the UI thread with ``time.thread_time`` as its clock.

Threading: :meth:`StallProfiler.tick` on the UI thread (from the gap recorder); the watchdog is its own
daemon thread; :meth:`report` after the flow, on the UI thread.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time

THRESHOLD_S = 0.040
PERIOD_S = 0.005
_PARKED = ("wait", "select", "recv", "recv_into", "accept", "readinto", "get", "_wait_for_tstate_lock",
           "poll", "sleep", "read", "readline", "_worker", "run_forever", "_run_once")


def enabled() -> bool:
    return os.environ.get("WB_STALL_PROFILE", "") not in ("", "0")


def _short(frame) -> str:
    code = frame.f_code
    path = code.co_filename
    for mark in ("/site-packages/", "/workbench/", "/plugins/", "/benchmarks/", "/lib/python3"):
        i = path.find(mark)
        if i >= 0:
            path = path[i + 1:]
            break
    return f"{path}:{frame.f_lineno} {code.co_name}"


def _stack(frame, depth: int) -> tuple[str, ...]:
    out = []
    while frame is not None and len(out) < depth:
        out.append(_short(frame))
        frame = frame.f_back
    return tuple(out)


class StallProfiler:
    def __init__(self, depth: int = 14) -> None:
        self.depth = depth
        self.main_id = threading.get_ident()
        self.phase = "idle"
        self._last_wall = time.perf_counter()
        self._last_thread = time.thread_time()
        self._last_proc = time.process_time()
        self.cloud_pid: int | None = None  # the test clouds' process (benchmarks/clouds.py)
        self._last_ext = self._external()
        # phase, wall, ui cpu, process cpu, (clouds process cpu, whole machine busy cpu)
        self.gaps: list[tuple[str, float, float, float, tuple[float, float]]] = []
        self.main_stacks: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.other_tops: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.samples: collections.Counter = collections.Counter()
        self.late: list[tuple[float, str, list]] = []
        self.sample_lag: list[float] = []  # how late the watchdog woke (waiting for the GIL, the CPU)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stall-watchdog", daemon=True)

    def _gc(self, what: str, info: dict) -> None:
        if what == "start":
            self._gc_t0 = time.perf_counter()
        else:
            self.gc_runs.append((self.phase, info["generation"], time.perf_counter() - self._gc_t0,
                                 threading.current_thread().name))

    def start(self) -> None:
        import cProfile
        import gc

        self.gc_runs: list[tuple[str, int, float, str]] = []
        self._gc_t0 = 0.0
        gc.callbacks.append(self._gc)
        self._thread.start()
        # what the UI thread spends its own CPU on (thread_time: waits for the GIL or a core cost nothing)
        self._cprof = cProfile.Profile(time.thread_time)
        self._cprof.enable()

    def stop(self) -> None:
        import gc

        gc.callbacks.remove(self._gc)
        self._cprof.disable()
        self._stop.set()
        self._thread.join(2)

    def reset(self, phase: str) -> None:
        self.phase = phase
        self._last_wall = time.perf_counter()
        self._last_thread = time.thread_time()
        self._last_proc = time.process_time()
        self._last_ext = self._external()

    _TICK = os.sysconf("SC_CLK_TCK")

    def _external(self) -> tuple[float, float]:
        """CPU seconds so far of the clouds' process and of the whole machine (busy, all cores); jiffies."""
        cloud = 0.0
        if self.cloud_pid:
            try:
                with open(f"/proc/{self.cloud_pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                cloud = (int(fields[11]) + int(fields[12])) / self._TICK
            except OSError:
                pass
        with open("/proc/stat", "rb") as f:
            cpu = [int(v) for v in f.readline().split()[1:]]
        busy = (sum(cpu[:8]) - cpu[3] - cpu[4]) / self._TICK  # all but idle and iowait
        return cloud, busy

    def tick(self) -> None:
        wall, th, proc = time.perf_counter(), time.thread_time(), time.process_time()
        ext = self._external()
        if wall - self._last_wall > THRESHOLD_S:
            self.gaps.append((self.phase, wall - self._last_wall, th - self._last_thread, proc - self._last_proc,
                              (ext[0] - self._last_ext[0], ext[1] - self._last_ext[1])))
        self._last_wall, self._last_thread, self._last_proc, self._last_ext = wall, th, proc, ext

    def _watch(self) -> None:
        while not self._stop.is_set():
            want = time.perf_counter() + PERIOD_S
            time.sleep(PERIOD_S)
            now = time.perf_counter()
            self.sample_lag.append(now - want)
            if now - want > 0.015:  # the watchdog could not run: who was running when it got the GIL back
                frames = sys._current_frames()
                tops = [_stack(f, 6) for i, f in frames.items()
                        if i != threading.get_ident() and f.f_code.co_name not in _PARKED]
                self.late.append((now - want, self.phase, tops))
            if now - self._last_wall <= THRESHOLD_S:
                continue
            frames = sys._current_frames()
            main = frames.get(self.main_id)
            if main is None:
                continue
            phase = self.phase
            self.samples[phase] += 1
            self.main_stacks[phase][_stack(main, self.depth)] += 1
            for ident, frame in frames.items():
                if ident in (self.main_id, threading.get_ident()):
                    continue
                if frame.f_code.co_name in _PARKED:
                    continue
                self.other_tops[phase][_stack(frame, 4)] += 1

    def report(self, out=sys.stderr, top: int = 8) -> None:
        p = lambda *a: print(*a, file=out)  # noqa: E731
        p("== stall profile: gaps > %.0f ms ==" % (THRESHOLD_S * 1000))
        by_phase: dict[str, list] = collections.defaultdict(list)
        for g in self.gaps:
            by_phase[g[0]].append(g)
        for phase, gs in by_phase.items():
            wall = sum(g[1] for g in gs)
            ui = sum(g[2] for g in gs)
            proc = sum(g[3] for g in gs)
            cloud = sum(g[4][0] for g in gs)
            busy = sum(g[4][1] for g in gs)
            p(f"[{phase}] {len(gs)} gaps, {wall * 1000:.0f} ms in all: UI-thread CPU {ui * 1000:.0f} ms, "
              f"app's other threads {(proc - ui) * 1000:.0f} ms, clouds' process {cloud * 1000:.0f} ms, "
              f"rest of the machine {(busy - proc - cloud) * 1000:.0f} ms (of {2 * wall * 1000:.0f} on 2 cores)")
            for g in sorted(gs, key=lambda g: -g[1])[:5]:
                p(f"    gap {g[1] * 1000:6.1f} ms: UI cpu {g[2] * 1000:5.1f}, app others {(g[3] - g[2]) * 1000:5.1f}, "
                  f"clouds {g[4][0] * 1000:5.0f}, rest {(g[4][1] - g[3] - g[4][0]) * 1000:5.0f}")
        p("cyclic GC collections (all threads; each holds the GIL throughout), by phase and generation:")
        agg: dict = collections.defaultdict(list)
        for phase, gen, dur, _ in self.gc_runs:
            agg[(phase, gen)].append(dur)
        for (phase, gen), durs in agg.items():
            p(f"  [{phase}] gen {gen}: {len(durs)} runs, {sum(durs) * 1000:.0f} ms in all, "
              f"longest {max(durs) * 1000:.1f} ms")
        lag = sorted(self.sample_lag)
        if lag:
            p(f"watchdog wake-up lag: median {lag[len(lag) // 2] * 1000:.1f} ms, "
              f"p99 {lag[int(len(lag) * 0.99)] * 1000:.1f} ms, max {lag[-1] * 1000:.1f} ms")
        p(f"watchdog woke > 15 ms late {len(self.late)} times; threads running Python right after, by phase "
          f"(count, summed lateness ms):")
        for phase in dict.fromkeys(ph for _, ph, _ in self.late):
            late_by: collections.Counter = collections.Counter()
            late_ms: collections.Counter = collections.Counter()
            for lag, ph, tops in self.late:
                if ph != phase:
                    continue
                for t in tops:
                    late_by[t] += 1
                    late_ms[t] += lag * 1000
            p(f" [{phase}]")
            for t, c in late_ms.most_common(top):
                p(f"  {late_by[t]:3d} {c:6.0f}  " + " <- ".join(t))
        for phase, n in self.samples.items():
            p(f"\n--- [{phase}] {n} samples ({n * PERIOD_S * 1000:.0f} ms) of the UI thread in a long gap ---")
            for stack, c in self.main_stacks[phase].most_common(top):
                p(f"  {c:4d}  " + "\n        <- ".join(stack))
            p(f"  other threads running Python in those samples:")
            for stack, c in self.other_tops[phase].most_common(top):
                p(f"  {c:4d}  " + " <- ".join(stack))
        import io
        import pstats

        buf = io.StringIO()
        st = pstats.Stats(self._cprof, stream=buf)
        st.sort_stats("cumulative").print_stats(45)
        p("\n--- UI thread CPU by function (cProfile with thread_time; the whole flow) ---")
        p("\n".join(line for line in buf.getvalue().splitlines()[6:] if line.strip()))
        # the UI thread's innermost frames over all phases (what it was doing, whatever called it)
        leaf: collections.Counter = collections.Counter()
        for phase, ctr in self.main_stacks.items():
            for stack, c in ctr.items():
                leaf[stack[:3]] += c
        p("\n--- UI thread, innermost 3 frames, all phases ---")
        for stack, c in leaf.most_common(top * 2):
            p(f"  {c:4d}  " + " <- ".join(stack))
