"""Arguments of ``workbench notify`` (show, set, test), kept light (no core imports)."""

from __future__ import annotations

import argparse

EVENTS = "finished, failed, relaunched, gave_up, budget"


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``notify`` to the ``workbench`` parser."""
    n = sub.add_parser("notify", parents=[common], help="be told while away: a profile's webhook or mail for "
                       "finished, failed, relaunched, gave-up and budget events")
    ns = n.add_subparsers(dest="action", metavar="ACTION", required=True)
    sh = ns.add_parser("show", parents=[common], help="each profile's channel (secrets: only whether they are stored)")
    sh.add_argument("--profile", metavar="NAME", help="only this profile")
    st = ns.add_parser("set", parents=[common], help="set a profile's channel; secrets (the webhook URL, a "
                       "signing secret, the mail password) from a prompt or --secret-stdin, never the command line")
    st.add_argument("--profile", metavar="NAME", help="the profile (required when there is more than one)")
    st.add_argument("--channel", choices=("webhook", "smtp", "none"),
                    help="where notices go (none: off, and the stored secrets are deleted)")
    st.add_argument("--format", choices=("json", "slack", "feishu", "dingtalk", "wecom"),
                    help="the webhook's format (default json: {event, title, text, launch_id, ts, profile})")
    st.add_argument("--events", metavar="LIST", help=f"comma list of {EVENTS}, or all (default all)")
    st.add_argument("--smtp-host", metavar="HOST", help="the mail server")
    st.add_argument("--smtp-port", type=int, metavar="N", help="its port (default: 587 starttls, 465 ssl, 25 none)")
    st.add_argument("--smtp-tls", choices=("starttls", "ssl", "none"), help="how the mail connection is encrypted")
    st.add_argument("--mail-from", metavar="ADDRESS", help="the sender address")
    st.add_argument("--mail-to", metavar="LIST", help="comma list of recipient addresses")
    st.add_argument("--smtp-user", metavar="USER", help="log in as this user (its password is a secret); '' for none")
    st.add_argument("--secret-stdin", action="store_true",
                    help="read the secrets from standard input: a JSON object of webhook_url, signing_secret, "
                         "smtp_password, or one line (the webhook URL, or the mail password)")
    t = ns.add_parser("test", parents=[common], help="send a test notice through a profile's channel now")
    t.add_argument("--profile", metavar="NAME", help="the profile (required when more than one has a channel)")
    t.add_argument("--kind", choices=("finished", "failed", "relaunched", "gave_up", "budget"), default="finished",
                   help="the kind of the test notice (default finished)")
