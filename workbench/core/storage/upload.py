"""A folder on this computer → a bucket prefix: progress, resumable, unchanged files skipped.

:func:`upload_folder` walks the folder (every file; symlinks only when they stay inside it), lists
what the prefix already holds, and sends only what is new or changed.  "Unchanged" means: the
bucket has the key with the same size and ETag that this computer recorded when it sent the file,
and the file's size and modification time are still what they were then.  The record (one JSON
line per stored file, under ``<data>/storage/uploads/``) is written as each file lands, so an
upload that is interrupted (closed app, lost network, cancel) resumes with the files that were
not yet stored; unfinished multipart uploads are aborted first so nothing half-sent keeps billing.
The transfers themselves are the cloud plugin's (boto3's transfer manager, azure-storage-blob).

Threading: blocking, on a worker; ``progress`` is called from the plugin's transfer threads
(serialised here, at most ten times a second plus the last one).  ``should_stop()`` ends the
upload early without error (:attr:`UploadReport.cancelled`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.storage_uri import StorageUri
from workbench.core.storage.contract import PutFile, SupportsObjectStorage


@dataclass(frozen=True)
class UploadProgress:
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    skipped_files: int
    current: str = ""


@dataclass(frozen=True)
class UploadReport:
    uri: str
    files: int  # in the folder
    uploaded: int
    skipped: int  # already in the bucket, unchanged
    bytes_uploaded: int
    bytes_total: int  # of the whole folder
    seconds: float
    aborted_incomplete: int = 0
    cancelled: bool = False

    def to_json(self) -> dict[str, object]:
        return {"uri": self.uri, "files": self.files, "uploaded": self.uploaded, "skipped": self.skipped,
                "bytes_uploaded": self.bytes_uploaded, "bytes_total": self.bytes_total,
                "seconds": round(self.seconds, 3), "aborted_incomplete": self.aborted_incomplete,
                "cancelled": self.cancelled}


@dataclass(frozen=True)
class LocalFile:
    rel: str  # '/'-separated, relative to the folder
    path: str
    size: int
    mtime_ns: int


def scan_folder(folder: str | os.PathLike[str]) -> list[LocalFile]:
    """Every file under ``folder``, sorted; a link is followed only when it stays inside (ConfigError if unreadable)."""
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ConfigError(f"{root} is not a folder")
    out: list[LocalFile] = []

    def walk(path: Path, rel: str) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            if e.is_symlink():
                target = Path(e.path).resolve()
                if not target.is_relative_to(root):
                    continue  # a link out of the folder (e.g. to ~/.ssh) is never uploaded
            if e.is_dir(follow_symlinks=True):
                walk(Path(e.path), child)
            elif e.is_file(follow_symlinks=True):
                st = e.stat(follow_symlinks=True)
                out.append(LocalFile(child, e.path, st.st_size, st.st_mtime_ns))

    walk(root, "")
    return out


def folder_size(folder: str | os.PathLike[str]) -> tuple[int, int]:
    """(files, bytes) of ``folder`` as :func:`upload_folder` would send it."""
    files = scan_folder(folder)
    return len(files), sum(f.size for f in files)


class Manifest:
    """What this computer stored under one destination: rel → (size, mtime_ns, etag); JSON lines, appended."""

    def __init__(self, folder: Path, uri: StorageUri) -> None:
        digest = hashlib.sha1(str(uri).encode("utf-8")).hexdigest()[:16]
        self.path = folder / f"{digest}.jsonl"
        self.entries: dict[str, tuple[int, int, str]] = {}
        self._lock = threading.Lock()
        self._fh = None
        try:
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    d = json.loads(line)
                    self.entries[d["rel"]] = (int(d["size"]), int(d["mtime_ns"]), str(d.get("etag", "")))
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by a crash: that file is sent again
        except FileNotFoundError:
            pass

    def record(self, f: LocalFile, etag: str) -> None:
        with self._lock:
            self.entries[f.rel] = (f.size, f.mtime_ns, etag)
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(json.dumps({"rel": f.rel, "size": f.size, "mtime_ns": f.mtime_ns, "etag": etag}) + "\n")
            self._fh.flush()

    def rewrite(self) -> None:
        """Compact to one line per file (after a complete upload)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text("".join(json.dumps({"rel": r, "size": s, "mtime_ns": m, "etag": e}) + "\n"
                                   for r, (s, m, e) in sorted(self.entries.items())), encoding="utf-8")
            os.replace(tmp, self.path)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def upload_folder(storage: SupportsObjectStorage, folder: str | os.PathLike[str], uri: StorageUri,
                  records: Path, progress: Callable[[UploadProgress], None] | None = None,
                  should_stop: Callable[[], bool] = lambda: False) -> UploadReport:
    """Send ``folder`` to ``uri`` (see the module docstring); the plugin's errors propagate."""
    started = time.monotonic()
    files = scan_folder(folder)
    total = sum(f.size for f in files)
    remote = storage.storage_list(uri)
    manifest = Manifest(records, uri)
    todo: list[LocalFile] = []
    for f in files:
        have, mine = remote.get(f.rel), manifest.entries.get(f.rel)
        same = (have is not None and mine is not None and have.size == f.size == mine[0] and mine[1] == f.mtime_ns
                and (not mine[2] or mine[2] == have.etag))
        if not same:
            todo.append(f)
    skipped = len(files) - len(todo)
    aborted = storage.storage_abort_incomplete(uri) if todo else 0
    by_key = {f.rel: f for f in todo}
    lock = threading.Lock()
    state = {"files": 0, "bytes": 0, "sent": 0, "shown": 0.0}

    def report(current: str, force: bool = False) -> None:
        if progress is None:
            return
        now = time.monotonic()
        if not force and now - state["shown"] < 0.1:
            return
        state["shown"] = now
        progress(UploadProgress(state["files"], len(todo), state["bytes"], sum(f.size for f in todo), skipped,
                                current))

    def on_bytes(n: int) -> None:
        with lock:
            state["bytes"] += n
            report("")

    def on_done(item: PutFile, etag: str) -> None:
        manifest.record(by_key[item.key], etag)
        with lock:
            state["files"] += 1
            state["sent"] += item.size
            report(item.key)

    try:
        report("", force=True)
        storage.storage_put(uri, [PutFile(f.path, f.rel, f.size) for f in todo], on_done, on_bytes, should_stop)
        cancelled = should_stop() and state["files"] < len(todo)
        if not cancelled and todo:
            listed = storage.storage_list(uri)  # the ETags the transfers did not report
            for f in todo:
                have = listed.get(f.rel)
                if have is not None and have.size == f.size:
                    manifest.entries[f.rel] = (f.size, f.mtime_ns, have.etag)
            manifest.rewrite()
        with lock:
            report("", force=True)
    finally:
        manifest.close()
    return UploadReport(str(uri), len(files), state["files"], skipped, state["sent"], total,
                        time.monotonic() - started, aborted, cancelled)
