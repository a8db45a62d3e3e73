"""Arguments of ``workbench registry`` (login, list, logout), kept light (no core imports)."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``registry`` to the ``workbench`` parser."""
    r = sub.add_parser("registry", parents=[common], help="container registry logins saved in this computer's "
                       "keyring, for a job spec's registry_auth: {username: U, password: keyring}")
    rs = r.add_subparsers(dest="action", metavar="ACTION", required=True)
    li = rs.add_parser("login", parents=[common], help="save a registry's user and password or token in the "
                       "keyring (asked on a terminal, or --password-stdin; never the command line)")
    li.add_argument("registry", metavar="HOST", help="the registry as images name it: nvcr.io, ghcr.io, "
                    "registry.example.com:5000 (docker.io for Docker Hub)")
    li.add_argument("--username", "-u", required=True, metavar="USER", help="the user to log in as")
    li.add_argument("--password-stdin", action="store_true",
                    help="read the password or token from standard input (one line)")
    rs.add_parser("list", parents=[common], help="the saved logins: registry and user (never the password)")
    lo = rs.add_parser("logout", parents=[common], help="forget a registry's saved login (keyring and list)")
    lo.add_argument("registry", metavar="HOST", help="the registry")
