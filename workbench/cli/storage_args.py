"""Arguments of the storage and recovery commands (storage, attempts, interrupt), kept light (no core imports)."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``storage``, ``attempts`` and ``interrupt`` to the ``workbench`` parser."""
    st = sub.add_parser("storage", parents=[common], help="object storage: list buckets, upload a folder, "
                        "check a spec's mounts")
    sts = st.add_subparsers(dest="action", metavar="ACTION", required=True)
    b = sts.add_parser("buckets", parents=[common], help="the buckets (Azure: containers) a profile can see")
    b.add_argument("--profile", metavar="NAME", help="default: every profile whose cloud has object storage")
    u = sts.add_parser("upload", parents=[common], help="upload a folder (resumable; unchanged files are skipped)")
    u.add_argument("folder", metavar="FOLDER", help="the local folder to upload")
    u.add_argument("uri", metavar="URI", help="s3://BUCKET/PREFIX, https://ACCOUNT.blob.core.windows.net/"
                   "CONTAINER/PREFIX or oss://BUCKET/PREFIX")
    u.add_argument("--profile", metavar="NAME", help="whose credentials (default: the first profile of that cloud)")
    c = sts.add_parser("check", parents=[common], help="check a spec's storage mounts as a launch would "
                       "(buckets, access, regions, sizes against the disk) without launching")
    c.add_argument("spec", metavar="SPEC.yaml", help="the job spec whose storage mounts to check")
    c.add_argument("--provider", metavar="P", help="plan the launch on this provider")
    c.add_argument("--profile", metavar="NAME", help="plan the launch on this profile")
    c.add_argument("--region", metavar="R", help="plan the launch in this region")

    a = sub.add_parser("attempts", parents=[common], help="a launch's attempts (recovery): machine, how each ended, "
                       "cost")
    a.add_argument("launch_id", metavar="LAUNCH_ID", help="the first launch or any of its attempts")

    i = sub.add_parser("interrupt", parents=[common], help="rehearse a spot interruption: the machine's storage "
                       "agent gets a notice (the job is stopped and its sync mounts saved)")
    i.add_argument("launch_id", metavar="LAUNCH_ID", help="the launch whose machine gets the notice")
    i.add_argument("--after", type=float, default=30.0, metavar="SECONDS",
                   help="when the pretend reclaim happens (default 30): the job then ends with code 143")
