"""Helpers for the guard tests: the instance-side guard run as a real Python process with fake nvidia-smi / shutdown / sudo on PATH,
a controllable clock (WORKBENCH_GUARD_NOW) and, for Azure, a local HTTP server standing in for IMDS + ARM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "resources" / "guard" / "workbench_guard.py"
LID = "train-abc123"
T0 = 1_800_000_000.0

FAKE_NVIDIA_SMI = """#!/bin/sh
# replays $GPU_DIR/util (one utilisation per GPU per line); read<N> for the N-th call if present
d="$GPU_DIR"; n=$(cat "$d/calls" 2>/dev/null || echo 0); echo $((n + 1)) > "$d/calls"
[ -f "$d/broken" ] && { echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" >&2; exit 9; }
if [ -f "$d/read$n" ]; then cat "$d/read$n"; else cat "$d/util"; fi
"""
FAKE_SHUTDOWN = """#!/bin/sh
echo "$*" >> "$GPU_DIR/shutdown.calls"
"""
FAKE_SUDO = """#!/bin/sh
[ "$1" = -n ] && shift
exec "$@"
"""


@dataclass
class GuardRun:
    rc: int
    out: str


@dataclass
class Machine:
    """A pretend cloud machine: a folder with the guard's config, state, job folder and fake tools."""

    root: Path
    config: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)  # extra environment for the guard process (e.g. SSL_CERT_FILE)

    @property
    def job(self) -> Path:
        return self.root / "home" / "ubuntu" / ".workbench" / "jobs" / LID

    def gpus(self, *utils: float) -> None:
        (self.root / "gpu" / "util").write_text("".join(f"{u:g}\n" for u in utils))

    def configure(self, **changes) -> None:
        self.config.update(changes)
        (self.root / "guard.json").write_text(json.dumps(self.config))

    def run(self, at: float, *args: str) -> GuardRun:
        env = dict(os.environ, PATH=f"{self.root / 'bin'}:{os.environ['PATH']}", GPU_DIR=str(self.root / "gpu"),
                   WORKBENCH_GUARD_NOW=repr(at), **self.env)
        p = subprocess.run([sys.executable, str(SCRIPT), "--config", str(self.root / "guard.json"), *args],
                           capture_output=True, text=True, env=env, timeout=60)
        return GuardRun(p.returncode, p.stdout + p.stderr)

    @property
    def shutdowns(self) -> list[str]:
        f = self.root / "gpu" / "shutdown.calls"
        return f.read_text().splitlines() if f.exists() else []

    @property
    def console(self) -> str:
        f = self.root / "console.log"
        return f.read_text() if f.exists() else ""

    @property
    def state(self) -> dict:
        return json.loads((self.root / "state" / "guard.json").read_text())

    def finish(self, code: int = 0) -> None:
        self.job.mkdir(parents=True, exist_ok=True)
        (self.job / "exit_code").write_text(f"{code}\n")


class FakeAzure:
    """IMDS (token + instance metadata) and the two ARM calls the guard makes, over real HTTP."""

    TOKEN = "eyJ0eXAi-secret-token-never-logged"

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict]] = []
        self.token = self.TOKEN  # what the "managed identity" gets from IMDS
        self.compute = {"subscriptionId": "sub-1", "resourceGroupName": f"wb-{LID}", "name": "vm-1"}
        self.token_status = 200
        self.delete_status = 202
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep test output clean
                pass

            def _reply(self, status: int, body: dict | None = None) -> None:
                data = json.dumps(body or {}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                url = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                outer.requests.append((self.command, url.path, dict(self.headers), q))
                if url.path.startswith("/metadata/"):
                    if self.headers.get("Metadata") != "true":
                        return self._reply(400, {"error": "Bad request. Required metadata header not specified"})
                    if url.path == "/metadata/identity/oauth2/token":
                        if outer.token_status != 200:
                            return self._reply(outer.token_status, {"error": "invalid_request",
                                                                    "error_description": "Identity not found"})
                        return self._reply(200, {"access_token": outer.token, "token_type": "Bearer",
                                                 "resource": q.get("resource")})
                    if url.path == "/metadata/instance":
                        return self._reply(200, {"compute": outer.compute})
                if self.headers.get("Authorization") != f"Bearer {outer.TOKEN}":
                    return self._reply(401, {"error": {"code": "AuthenticationFailed"}})
                if self.command == "DELETE" and url.path == f"/subscriptions/sub-1/resourcegroups/wb-{LID}":
                    return self._reply(outer.delete_status)
                if self.command == "POST" and url.path.endswith("/virtualMachines/vm-1/deallocate"):
                    return self._reply(202)
                return self._reply(404, {"error": {"code": "ResourceNotFound"}})

            do_GET = do_POST = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def calls(self, method: str) -> list:
        return [r for r in self.requests if r[0] == method]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
