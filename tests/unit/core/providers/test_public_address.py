"""The one public-address lookup: a real local HTTP server, the cache, the timeout, a bad answer."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.providers import public_address


@pytest.fixture
def server():
    hits: list[str] = []
    answers = {"/ip": b"203.0.113.7\n", "/ip6": b"2001:db8::7", "/junk": b"<html>nope</html>"}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            body = answers.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    public_address.forget()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
        public_address.forget()


def test_the_address_is_asked_once_and_cached(server):
    url, hits = server
    assert public_address.public_cidr(url + "/ip") == "203.0.113.7/32"
    assert public_address.public_cidr(url + "/ip") == "203.0.113.7/32"
    assert hits == ["/ip"]
    assert public_address.public_cidr(url + "/ip6") == "2001:db8::7/128"
    now = [0.0]
    public_address.forget()
    public_address.public_cidr(url + "/ip", clock=lambda: now[0])
    now[0] = public_address.TTL_S + 1
    public_address.public_cidr(url + "/ip", clock=lambda: now[0])
    assert hits.count("/ip") == 3  # asked again once the answer is older than the TTL


@pytest.mark.parametrize("path", ["/junk", "/missing"])
def test_a_bad_answer_is_a_config_error_with_the_fix(server, path):
    url, hits = server
    with pytest.raises(ConfigError) as info:
        public_address.public_cidr(url + path)
    assert "public address" in info.value.message and "ssh_cidr" in info.value.hint
    with pytest.raises(ConfigError):
        public_address.public_cidr(url + path)
    assert hits.count(path) == 2  # failures are not cached


def test_a_silent_service_times_out():
    quiet = socket.socket()
    quiet.bind(("127.0.0.1", 0))
    quiet.listen(1)  # accepts the connection, never answers
    try:
        with pytest.raises(ConfigError, match="timeout|Timeout"):
            public_address.public_cidr(f"http://127.0.0.1:{quiet.getsockname()[1]}/ip", timeout=0.3)
    finally:
        quiet.close()
