"""Arguments of ``workbench controller`` (plan, up, status, logs, down, hand, release, away, serve), kept light."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``controller`` to the ``workbench`` parser."""
    c = sub.add_parser("controller", parents=[common], help="a small machine in your own cloud account that "
                       "watches, relaunches and ends jobs while this computer is off (docs/controller.md)")
    cs = c.add_subparsers(dest="action", metavar="ACTION", required=True)

    def with_profile(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--profile", metavar="NAME", help="the account (default: the only cloud profile)")
        return p

    with_profile(cs.add_parser("plan", parents=[common], help="what `up` would create and its price all-in "
                               "(machine, disk, address), without creating anything"))
    up = with_profile(cs.add_parser("up", parents=[common], help="create the account's controller (its cloud "
                                    "identity once, then its machine) and wait until it answers"))
    up.add_argument("--yes", action="store_true", help="do not ask (the identities and the machine are created)")
    up.add_argument("--wheelhouse", metavar="DIR", help="install its dependencies from this folder of wheels "
                    "(no package index: air-gapped accounts); default: the package index the machine reaches")
    up.add_argument("--poll", type=float, default=30.0, metavar="S", help="how often it looks (default 30 s)")
    up.add_argument("--idle-end", type=float, default=30.0, metavar="MIN",
                    help="it ends itself after this long with nothing to watch (default 30 min)")
    up.add_argument("--wait", type=float, default=1200.0, metavar="S",
                    help="wait this long for its first heartbeat (default 1200 s; 0: do not wait)")
    with_profile(cs.add_parser("status", parents=[common], help="its machine, heartbeat, identity and what it "
                               "watches"))
    logs = with_profile(cs.add_parser("logs", parents=[common], help="its log (what it noticed and did)"))
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    down = with_profile(cs.add_parser("down", parents=[common], help="end it (verified); the launches it "
                                      "watched go back to the app"))
    down.add_argument("--yes", action="store_true", help="do not ask")
    hand = cs.add_parser("hand", parents=[common], help="hand a launch to its account's controller")
    hand.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch (any attempt's id)")
    rel = cs.add_parser("release", parents=[common], help="take a launch back from the controller")
    rel.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch (any attempt's id)")
    with_profile(cs.add_parser("away", parents=[common], help="what the controllers did while the app was "
                               "closed (relaunched, gave up, guard fired, finished; cost per attempt)"))
    serve = cs.add_parser("serve", parents=[common], help="run the controller here (on its machine; started by "
                          "its service)")
    serve.add_argument("--config", metavar="FILE", required=True, help="its controller.json")
    serve.add_argument("--once", action="store_true", help="one round, then exit")
