"""Storage figure: uploading a 1 GB folder of 1,000 files to S3 (moto in server mode, real boto3 over HTTP).

    python -m benchmarks.storage            (also part of `make bench`)

* ours: ``workbench.core.storage.upload.upload_folder`` through the AWS plugin: walk the folder, list
  the prefix, clean unfinished multipart uploads, send with boto3's transfer manager (16 at a time),
  record each file for resuming, list again for the ETags.
* baseline: boto3's transfer manager alone with the same client settings and concurrency, every file
  submitted at once, nothing else.

Samples are interleaved (ours, baseline, ours, …) so the machine's load hits both alike; each sample
sends the whole folder to a fresh prefix of an empty bucket (moto is reset between samples).  A
sample that does not store all 1,000 objects raises.  moto runs in a process of its own (so its work
does not compete with the client threads for one interpreter lock); it answers in memory, so this is the
client-side overhead, not S3's own throughput.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import BenchmarkFailed

ROOT = Path(__file__).resolve().parents[1]
FILES = 1000
FILE_BYTES = 1 << 20  # 1,000 × 1 MiB ≈ 1 GB
SAMPLES = 3
BUCKET = "bench-uploads"


class _MotoProcess:
    """moto's server in a process of its own (its own GIL: the client threads here do not slow it down)."""

    def __init__(self) -> None:
        import socket
        import subprocess
        import urllib.request

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/data.json", timeout=2).read()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise BenchmarkFailed("moto's server did not start") from None
                time.sleep(0.2)

    def reset(self) -> None:
        import urllib.request

        req = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST", data=b"")
        urllib.request.urlopen(req, timeout=60).read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def _setup(tmp: Path, stack: _MotoProcess):
    from workbench.core.domain.models import Profile
    from workbench.core.providers.contract import ProviderContext
    from workbench_aws.provider import AwsProvider

    folder = tmp / "dataset"
    for i in range(FILES):
        sub = folder / f"part{i // 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"shard-{i:04d}.bin").write_bytes(os.urandom(FILE_BYTES))
    profile = Profile("bench", "aws", "us-east-1", endpoint_url=stack.url, settings={"retry_backoff_cap_s": "0.05"})
    provider = AwsProvider(profile, {"access_key_id": "moto-fake-key-id", "secret_access_key": "moto-fake-not-secret"},
                           ProviderContext(install_id="benchinstall", data_dir=tmp / "data"))
    return folder, provider


def _fresh_bucket(stack, client) -> None:
    stack.reset()
    client.create_bucket(Bucket=BUCKET)


def _count(client, prefix: str) -> int:
    n = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        n += len(page.get("Contents") or [])
    return n


def _baseline(client, folder: Path, prefix: str) -> float:
    from boto3.s3.transfer import TransferConfig, create_transfer_manager

    from workbench.core.storage.s3_store import transfer_config

    files = sorted(p for p in folder.rglob("*") if p.is_file())
    config = TransferConfig(**transfer_config())  # the same parts and concurrency as the app's uploads
    t = time.perf_counter()
    with create_transfer_manager(client, config) as manager:
        futures = [manager.upload(str(p), BUCKET, f"{prefix}/{p.relative_to(folder).as_posix()}") for p in files]
        for f in futures:
            f.result()
    return time.perf_counter() - t


def _ours(provider, folder: Path, prefix: str, records: Path) -> float:
    from workbench.core.domain.storage_uri import parse_storage_uri
    from workbench.core.storage.upload import upload_folder

    t = time.perf_counter()
    report = upload_folder(provider, folder, parse_storage_uri(f"s3://{BUCKET}/{prefix}"), records)
    took = time.perf_counter() - t
    if report.uploaded != FILES or report.cancelled:
        raise BenchmarkFailed(f"the upload stored {report.uploaded} of {FILES} files")
    return took


def measure(samples: int = SAMPLES) -> dict[str, object]:
    stack = _MotoProcess()
    try:
        with tempfile.TemporaryDirectory(prefix="wb-bench-storage-") as tmp:
            return _samples(stack, Path(tmp), samples)
    finally:
        stack.stop()


def _samples(stack: _MotoProcess, tmp: Path, samples: int) -> dict[str, object]:
    folder, provider = _setup(tmp, stack)
    s3 = provider._clients.client("s3", "us-east-1")  # the plugin's own client settings, for the baseline too
    ours, base = [], []
    for k in range(samples):
        for side in ("ours", "baseline"):
            _fresh_bucket(stack, s3)
            prefix = f"{side}-{k}"
            if side == "ours":
                ours.append(_ours(provider, folder, prefix, tmp / f"records-{k}"))
            else:
                base.append(_baseline(s3, folder, prefix))
            stored = _count(s3, prefix + "/")
            if stored != FILES:
                raise BenchmarkFailed(f"{side} sample {k}: {stored} of {FILES} objects in the bucket")
    stack.reset()
    return {"ours": ours, "baseline": base, "bytes": FILES * FILE_BYTES}


def row() -> tuple[str, float, float, list[float], list[float]]:
    m = measure()
    ours, base = m["ours"], m["baseline"]
    return (f"upload 1 GB in {FILES} files to moto S3 vs boto3's transfer manager alone (interleaved, {SAMPLES} each)",
            statistics.median(ours), statistics.median(base), ours, base)


def report() -> None:
    name, ours, base, all_ours, all_base = row()
    fmt = lambda xs: " / ".join(f"{x:.1f}" for x in (min(xs), statistics.median(xs), max(xs)))  # noqa: E731
    print(f"{name}: ours {fmt(all_ours)} s, baseline {fmt(all_base)} s (min / median / max); "
          f"median ratio {ours / base:.2f}x (target <= 1.2x: {'met' if ours / base <= 1.2 else 'NOT met'}); "
          f"{FILES * FILE_BYTES / 1e6 / ours:.0f} MB/s")


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_HOME", tempfile.mkdtemp(prefix="wb-bench-home-"))
    report()
