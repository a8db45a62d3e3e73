"""Azurite (Microsoft's Azure Storage emulator, npm package) on a loopback port, for the Azure Blob tests.

    server = azurite.start()          # one per test process (session-wide); azurite.stop() ends it
    server.blob_url                   # http://127.0.0.1:PORT/devstoreaccount1
    server.service()                  # a real azure-storage-blob BlobServiceClient (shared key)

``make test`` installs ``azurite@3.37.0`` once into the tree's ``node_modules`` (ignored by git);
this module starts ``node_modules/.bin/azurite-blob --blobHost 127.0.0.1 --blobPort PORT
--location DIR --silent --skipApiVersionCheck`` and waits until the port answers (about 2 s).
Unauthenticated requests get 403, as on Azure.  The account name and key are the emulator's
well-known development constants, published by Microsoft (not secrets).
"""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AZURITE = ROOT / "node_modules" / ".bin" / "azurite-blob"
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def available() -> str | None:
    """None when Azurite can run here, else why not (the tests fail with this text)."""
    if not AZURITE.exists():
        return f"{AZURITE} is missing: run `make test` (it installs azurite@3.37.0 with npm)"
    if shutil.which("node") is None:
        return "node is not installed (Debian package nodejs)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Azurite:
    """One running azurite-blob process with its own data folder."""

    def __init__(self) -> None:
        why = available()
        if why:
            raise RuntimeError(why)
        self.dir = Path(tempfile.mkdtemp(prefix="azurite-"))
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(self.port), "--location", str(self.dir),
             "--silent", "--skipApiVersionCheck", "--loose"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"azurite exited with {self.proc.returncode}: "
                                   f"{self.proc.stderr.read().decode(errors='replace')[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("azurite did not listen within 30 s")
                time.sleep(0.1)
        self.blob_url = f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    def service(self):
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient(self.blob_url, credential={"account_name": ACCOUNT, "account_key": KEY})

    def container(self, name: str):
        """A fresh container (created; an existing one of that name is emptied first)."""
        svc = self.service()
        client = svc.get_container_client(name)
        if client.exists():
            client.delete_container()
        svc.create_container(name)
        return client

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_server: Azurite | None = None
_lock = threading.Lock()


def start() -> Azurite:
    """The process's Azurite (started on first use; a session fixture calls :func:`stop`, exit at the latest)."""
    global _server
    with _lock:
        if _server is None:
            _server = Azurite()
            atexit.register(_server.stop)
        return _server


def stop() -> None:
    """Stop the process's Azurite (tests stop what they start, before the run checks for leftovers)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
