"""The arguments of ``workbench advise`` and ``workbench report`` (commands in ``advice.py``).

Kept apart so that building the ``workbench`` parser does not import the advisor (numpy) for
every command.
"""

from __future__ import annotations

import argparse
from typing import Callable


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser,
                positive_float: Callable[[str], float]) -> None:
    """Register ``advise`` and ``report`` (called from workbench.cli.build_parser)."""
    a = sub.add_parser("advise", parents=[common], help="what to change in a run to use what you pay for",
                       description="Rules over a run's GPU telemetry (utilization, memory, power, clocks; CPU, "
                                   "network and disk of each machine) that say what to change and what it would "
                                   "have saved. Give a LAUNCH_ID, or a log recorded anywhere with: nvidia-smi "
                                   "--query-gpu=timestamp,index,name,utilization.gpu,utilization.memory,memory.used,"
                                   "memory.total,power.draw,power.limit,clocks.sm --format=csv -l 1 > gpu.csv")
    a.add_argument("launch_id", nargs="?", metavar="LAUNCH_ID", help="a launch of this app (see `workbench status`)")
    a.add_argument("--nvidia-smi-log", action="append", metavar="FILE", dest="logs",
                   help="an nvidia-smi --format=csv log instead of a launch; repeat it for the machines of a "
                        "multi-node run (one file each)")
    a.add_argument("--gpu-model", metavar="M", help="the GPU model when the log does not name it (e.g. A100)")
    a.add_argument("--price-per-hour", type=positive_float, metavar="P",
                   help="what one machine cost per hour (default: the cheapest bundled offer of that GPU "
                        "model and count)")
    a.add_argument("--currency", default="USD", metavar="CODE", help="currency of --price-per-hour (default USD)")
    a.add_argument("--instance-type", metavar="TYPE",
                   help="the machine the log was recorded on (e.g. p3.16xlarge): its price, network and "
                        "spot price come from the bundled catalogue")
    a.add_argument("--region", metavar="REGION",
                   help="the region of --instance-type (default: its cheapest region in the catalogue)")
    a.add_argument("--checkpoints", action="store_true",
                   help="the job resumes from checkpoints (lets the spot rule price an interruptible run)")

    r = sub.add_parser("report", parents=[common], help="write a launch's one-page run report (HTML or PDF)",
                       description="Cost, duration, a per-GPU utilization summary, advice and plots of one launch. "
                                   "HTML needs nothing else; --pdf renders it with Qt (imported only for PDF; "
                                   "without a display it runs offscreen).")
    r.add_argument("launch_id", metavar="LAUNCH_ID", help="a launch of this app (see `workbench status`)")
    r.add_argument("-o", "--output", metavar="FILE",
                   help="where to write it (default: workbench-report-LAUNCH_ID.html or .pdf here)")
    r.add_argument("--pdf", action="store_true", help="write PDF (rendered with Qt) instead of HTML")
