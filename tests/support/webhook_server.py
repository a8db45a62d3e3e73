"""A real HTTP server on 127.0.0.1 that plays a chat platform's webhook and records every request::

    with WebhookServer() as hook:
        hook.answer(429, b"slow down", {"Retry-After": "0"})      # the next answer; then the default
        url = hook.url("/robot/send?access_token=TOKEN")
        ... post to url ...
        req = hook.requests[0]        # a Hit: method, path, query (dict of lists), headers, body, json

Answers are served in the order queued, then ``default`` (200 and ``{"errcode": 0, "errmsg": "ok"}``
unless given).  ``delay`` holds each answer that long (timeouts).  One thread per request; ``close()``
(or leaving the ``with``) stops it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

OK = (200, b'{"errcode": 0, "errmsg": "ok"}', {"Content-Type": "application/json"})


@dataclass
class Hit:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args: object) -> None:  # keep the test output quiet
        pass

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        owner._record(Hit(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), body))
        status, answer, headers = owner._next()
        if owner.delay:
            time.sleep(owner.delay)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_POST = _serve
    do_GET = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "WebhookServer"

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (a timeout test) closes its end first: not an error of the server."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class WebhookServer:
    """See the module docstring."""

    def __init__(self, default: tuple[int, bytes, dict[str, str]] = OK, delay: float = 0.0) -> None:
        self.default = default
        self.delay = delay
        self.requests: list[Hit] = []
        self._answers: list[tuple[int, bytes, dict[str, str]]] = []
        self._cond = threading.Condition()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="webhook-server", daemon=True)
        self._thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, status: int, body: bytes | dict | str = b"", headers: dict[str, str] | None = None) -> None:
        """Queue one answer (a dict is sent as JSON)."""
        if isinstance(body, dict):
            body, headers = json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})}
        elif isinstance(body, str):
            body = body.encode()
        with self._cond:
            self._answers.append((status, body, dict(headers or {})))

    def _next(self) -> tuple[int, bytes, dict[str, str]]:
        with self._cond:
            return self._answers.pop(0) if self._answers else self.default

    def _record(self, hit: Hit) -> None:
        with self._cond:
            self.requests.append(hit)
            self._cond.notify_all()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> "WebhookServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
