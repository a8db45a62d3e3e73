"""How rclone on a machine reaches an S3-compatible bucket (AWS S3, Alibaba OSS) with short-lived credentials.

One place for the remote definition both clouds share, so a plugin only mints the credentials:

* AWS S3: ``provider = AWS``, the bucket's region; rclone finds the endpoint.
* Alibaba OSS: ``provider = Alibaba``, endpoint ``https://oss-<region>.aliyuncs.com`` (OSS's S3-compatible
  API, virtual-hosted addressing as OSS requires), an STS token as the session token.
* A custom endpoint (a private S3-compatible service, or the test stand-ins): ``provider = Other``, which
  rclone 1.60 addresses path-style (its AWS and Alibaba providers ignore ``force_path_style``).

``no_check_bucket``: the machine never creates buckets, and its scoped credentials may not list them.
Pure function; any thread.
"""

from __future__ import annotations

from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage.contract import MachineRemote

PROVIDERS = {"s3": "AWS", "oss": "Alibaba"}


def oss_endpoint(region: str) -> str:
    """OSS's public endpoint of a region (``cn-hangzhou`` → ``https://oss-cn-hangzhou.aliyuncs.com``)."""
    region = region.removeprefix("oss-")
    return f"https://oss-{region}.aliyuncs.com"


def s3_compatible_remote(uri: StorageUri, access_key_id: str, secret_access_key: str, session_token: str,
                         region: str, endpoint: str | None = None, expires_at: float | None = None) -> MachineRemote:
    """The rclone remote for ``uri`` (kind ``s3`` or ``oss``) with these temporary credentials."""
    if uri.kind not in PROVIDERS:
        raise ValueError(f"{uri} is not an S3-compatible address")
    options = {"type": "s3", "access_key_id": access_key_id, "secret_access_key": secret_access_key,
               "session_token": session_token, "region": region, "no_check_bucket": "true"}
    if endpoint:
        options.update(provider="Other", endpoint=endpoint)
    elif uri.kind == "oss":
        options.update(provider="Alibaba", endpoint=oss_endpoint(region))
    else:
        options["provider"] = "AWS"
    path = f"{uri.bucket}/{uri.prefix}" if uri.prefix else uri.bucket
    return MachineRemote(options, path, expires_at, secret_keys=("secret_access_key", "session_token"))
