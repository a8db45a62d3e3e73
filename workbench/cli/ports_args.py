"""Arguments of ``workbench ports`` and ``workbench open`` (a job's forwarded ports), kept light (no core imports)."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``ports`` and ``open`` to the ``workbench`` parser."""
    p = sub.add_parser("ports", parents=[common], help="a launch's ports (the spec's ports:) and their services")
    p.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch (see `workbench status`)")
    o = sub.add_parser("open", parents=[common], help="forward a launch's port to 127.0.0.1 here over SSH and "
                       "open it in the browser, until Ctrl+C")
    o.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch (see `workbench status`)")
    o.add_argument("port", type=int, metavar="PORT", help="a port the spec lists under ports:")
    o.add_argument("--no-browser", action="store_true", help="print the local address only")
    o.add_argument("--wait", type=float, default=60.0, metavar="SECONDS",
                   help="how long to wait for Jupyter to print its token in the job's log (default 60)")
