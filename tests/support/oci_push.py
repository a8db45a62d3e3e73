"""Push a root-file-system tar to a registry as a one-layer image, over the registry HTTP API.

    push_rootfs(tar, registry, "wb/torch:1", user, password)   # the image's reference, now pullable

Why not ``docker import`` + ``docker push``: the daemon gzips the layer again on every push (single
threaded: 68 s for the 1.6 GB torch root file system, on every test run).  Here the layer is made once
and cached beside the tar (``<tar>.layer.gz`` and ``<tar>.layer.json`` with its digests), leaving out
what no test reads (apt's caches and lists, documentation, man pages, translations, the test programs
Debian ships with torch and sympy); each run uploads the cached blob (a second or two on loopback).

The image is what ``docker import -c 'CMD ["/bin/bash"]'`` would make: one layer, Docker's image
manifest v2 schema 2 and its config (rootfs ``diff_ids`` = the sha256 of the *uncompressed* layer,
which the puller checks).  The registry (docker-registry with an htpasswd file) takes Basic
credentials on every request; it listens on loopback without TLS.

Registry HTTP API: distribution/distribution docs/spec/api.md ("Monolithic Upload", "Pushing an Image
Manifest"); image config: the OCI image spec's config.md (docker's v1 config is the same shape).
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import http.client
import json
import os
import tarfile
import urllib.parse
import zlib
from pathlib import Path

#: member paths (below "./") the cached layer leaves out: nothing a job or a test reads
SKIPPED_PREFIXES = ("var/cache/apt/archives/", "var/lib/apt/lists/", "usr/share/doc/", "usr/share/man/",
                    "usr/share/info/", "usr/share/locale/", "usr/lib/libtorch-test/",
                    "usr/lib/python3/dist-packages/torch/bin/test_")
SKIPPED_PARTS = ("/sympy/", "/tests/")  # sympy's own test suite: both in one path

MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
CONFIG = "application/vnd.docker.container.image.v1+json"
LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"


def _skipped(name: str) -> bool:
    path = name[2:] if name.startswith("./") else name.lstrip("/")
    if path.startswith(SKIPPED_PREFIXES):
        return True
    return all(part in f"/{path}" for part in SKIPPED_PARTS)


class _Hashing:
    """A write-only file that hashes what passes through and gzips it into ``out`` (hashing that too)."""

    def __init__(self, out) -> None:
        self.out = out
        self.raw = hashlib.sha256()
        self.packed = hashlib.sha256()
        self.size = 0
        self.zip = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing, fastest level

    def _emit(self, data: bytes) -> None:
        if data:
            self.packed.update(data)
            self.size += len(data)
            self.out.write(data)

    def write(self, data: bytes) -> int:
        self.raw.update(data)
        self._emit(self.zip.compress(data))
        return len(data)

    def close(self) -> None:
        self._emit(self.zip.flush())


def cached_layer(tar: Path) -> tuple[Path, dict]:
    """The gzipped, slimmed layer of ``tar`` and its facts (``digest``, ``diff_id``, ``size``); made once."""
    blob, facts_file = Path(f"{tar}.layer.gz"), Path(f"{tar}.layer.json")
    with open(f"{tar}.layer.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two xdist workers: one makes it, the other waits and reads it
        if facts_file.exists() and blob.exists() and facts_file.stat().st_mtime >= tar.stat().st_mtime:
            return blob, json.loads(facts_file.read_text())
        partial = blob.with_suffix(".partial")
        with open(partial, "wb") as out:
            sink = _Hashing(out)
            with tarfile.open(tar, "r|", bufsize=1 << 20) as src, \
                    tarfile.open(fileobj=sink, mode="w|", format=tarfile.GNU_FORMAT, bufsize=1 << 20,
                                 copybufsize=1 << 20) as dst:
                for member in src:
                    if _skipped(member.name):
                        continue
                    dst.addfile(member, src.extractfile(member) if member.isreg() else None)
            sink.close()
        facts = {"digest": f"sha256:{sink.packed.hexdigest()}", "diff_id": f"sha256:{sink.raw.hexdigest()}",
                 "size": sink.size}
        os.replace(partial, blob)
        facts_file.write_text(json.dumps(facts))
        return blob, facts


class _Registry:
    def __init__(self, registry: str, user: str, password: str) -> None:
        self.host = registry
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self.auth = {"Authorization": f"Basic {token}"}

    def call(self, method: str, path: str, body=None, headers: dict | None = None,
             ok: tuple[int, ...] = (200, 201, 202)) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection(self.host, timeout=300)
        conn.request(method, path, body=body, headers={**self.auth, **(headers or {})})
        reply = conn.getresponse()
        reply.read_body = reply.read()
        conn.close()
        if reply.status not in ok:
            raise RuntimeError(f"registry {method} {path}: HTTP {reply.status} {reply.read_body[:500]!r}")
        return reply

    def put_blob(self, repo: str, digest: str, body, size: int) -> None:
        if self.call("HEAD", f"/v2/{repo}/blobs/{digest}", ok=(200, 404)).status == 200:
            return  # the registry has it already
        started = self.call("POST", f"/v2/{repo}/blobs/uploads/", headers={"Content-Length": "0"})
        location = urllib.parse.urlsplit(started.getheader("Location"))
        query = f"{location.query}&" if location.query else ""
        self.call("PUT", f"{location.path}?{query}digest={urllib.parse.quote(digest)}", body=body,
                  headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)})


def push_rootfs(tar: Path, registry: str, name: str, user: str, password: str, note: str = "") -> str:
    """Push ``tar`` as ``registry/name`` (``name`` = "repo:tag"); returns the full reference."""
    blob, facts = cached_layer(tar)
    repo, tag = name.rsplit(":", 1)
    reg = _Registry(registry, user, password)
    with open(blob, "rb") as f:
        reg.put_blob(repo, facts["digest"], f, facts["size"])
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "2026-01-01T00:00:00Z",
        "config": {"Cmd": ["/bin/bash"]},
        "rootfs": {"type": "layers", "diff_ids": [facts["diff_id"]]},
        "history": [{"created": "2026-01-01T00:00:00Z", "created_by": note or f"workbench tests: {tar.name}"}],
    }, sort_keys=True).encode()
    config_digest = f"sha256:{hashlib.sha256(config).hexdigest()}"
    reg.put_blob(repo, config_digest, config, len(config))
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "size": len(config), "digest": config_digest},
        "layers": [{"mediaType": LAYER, "size": facts["size"], "digest": facts["digest"]}],
    }).encode()
    reg.call("PUT", f"/v2/{repo}/manifests/{tag}", body=manifest, headers={"Content-Type": MANIFEST})
    return f"{registry}/{name}"
