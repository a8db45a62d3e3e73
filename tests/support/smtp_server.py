"""A real SMTP server on 127.0.0.1 for tests: it speaks enough of RFC 5321 for smtplib (EHLO/HELO, MAIL,
RCPT, DATA, RSET, NOOP, QUIT), with optional ``AUTH PLAIN`` and ``STARTTLS``, and keeps what it got::

    with SmtpServer(users={"bot": "pw"}, tls=(certfile, keyfile)) as smtp:
        ... send to 127.0.0.1:smtp.port ...
        mail = smtp.wait_for(1)[0]          # a Received: mail_from, rcpts, user, tls, message (parsed)

``reject`` names recipients it answers 550; ``require_auth`` makes MAIL answer 530 before a login; AUTH is
offered only after STARTTLS when ``tls`` is given (as real servers do).  Each connection is served on its
own thread; ``close()`` (or leaving the ``with``) stops it.
"""

from __future__ import annotations

import base64
import email
import email.message
import email.policy
import socketserver
import ssl
import threading
import time
from dataclasses import dataclass


@dataclass
class Received:
    mail_from: str
    rcpts: list[str]
    data: bytes
    user: str | None
    tls: bool

    @property
    def message(self) -> email.message.EmailMessage:
        return email.message_from_bytes(self.data, policy=email.policy.default)  # type: ignore[return-value]


class _Handler(socketserver.BaseRequestHandler):
    server: "_Server"

    def setup(self) -> None:
        self.sock = self.request
        self.rfile = self.sock.makefile("rb")
        self.tls = False
        self.user: str | None = None

    def say(self, line: str) -> None:
        self.sock.sendall(line.encode("utf-8") + b"\r\n")

    def handle(self) -> None:
        owner = self.server.owner
        self.say("220 workbench-test ESMTP")
        mail_from, rcpts = None, []
        while True:
            raw = self.rfile.readline(4096)
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            verb, _, rest = line.partition(" ")
            verb = verb.upper()
            if verb == "EHLO":
                caps = ["250-workbench-test"]
                if owner.tls and not self.tls:
                    caps.append("250-STARTTLS")
                if owner.users and (self.tls or not owner.tls):
                    caps.append("250-AUTH PLAIN")
                caps.append("250 8BITMIME")
                for cap in caps:
                    self.say(cap)
            elif verb == "HELO":
                self.say("250 workbench-test")
            elif verb == "STARTTLS" and owner.tls and not self.tls:
                self.say("220 ready to start TLS")
                self.sock = owner.tls.wrap_socket(self.sock, server_side=True)
                self.rfile = self.sock.makefile("rb")
                self.tls = True
            elif verb == "AUTH" and owner.users:
                mech, _, initial = rest.partition(" ")
                if mech.upper() != "PLAIN":
                    self.say("504 only PLAIN")
                    continue
                if not initial:
                    self.say("334 ")
                    initial = self.rfile.readline(4096).decode().strip()
                try:
                    _, user, password = base64.b64decode(initial).decode("utf-8").split("\0")
                except ValueError:
                    self.say("501 bad AUTH PLAIN")
                    continue
                if owner.users.get(user) == password:
                    self.user = user
                    self.say("235 2.7.0 authenticated")
                else:
                    owner.failed_logins += 1
                    self.say("535 5.7.8 authentication credentials invalid")
            elif verb == "MAIL":
                if owner.require_auth and self.user is None:
                    self.say("530 5.7.0 authentication required")
                    continue
                mail_from, rcpts = rest.partition(":")[2].strip().split(" ")[0].strip("<>"), []
                self.say("250 OK")
            elif verb == "RCPT":
                rcpt = rest.partition(":")[2].strip().strip("<>")
                if rcpt in owner.reject:
                    self.say("550 5.1.1 no such user")
                else:
                    rcpts.append(rcpt)
                    self.say("250 OK")
            elif verb == "DATA":
                if not rcpts:
                    self.say("503 no recipients")
                    continue
                self.say("354 end with <CRLF>.<CRLF>")
                lines = []
                while True:
                    chunk = self.rfile.readline(1 << 20)
                    if not chunk or chunk == b".\r\n":
                        break
                    lines.append(chunk[1:] if chunk.startswith(b"..") else chunk)
                owner._store(Received(mail_from or "", rcpts, b"".join(lines), self.user, self.tls))
                self.say("250 OK queued")
                mail_from, rcpts = None, []
            elif verb in ("RSET", "NOOP"):
                mail_from, rcpts = (None, []) if verb == "RSET" else (mail_from, rcpts)
                self.say("250 OK")
            elif verb == "QUIT":
                self.say("221 bye")
                return
            else:
                self.say("502 command not implemented")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "SmtpServer"


class SmtpServer:
    """See the module docstring."""

    def __init__(self, users: dict[str, str] | None = None, tls: tuple[str, str] | None = None,
                 reject: set[str] | None = None, require_auth: bool = False) -> None:
        self.users = dict(users or {})
        self.reject = set(reject or ())
        self.require_auth = require_auth
        self.tls: ssl.SSLContext | None = None
        if tls:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(*tls)
        self.received: list[Received] = []
        self.failed_logins = 0
        self._cond = threading.Condition()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="smtp-server", daemon=True)
        self._thread.start()

    def _store(self, mail: Received) -> None:
        with self._cond:
            self.received.append(mail)
            self._cond.notify_all()

    def wait_for(self, n: int, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.received) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.received)} mail(s) arrived, not {n}")
                self._cond.wait(left)
            return list(self.received)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> "SmtpServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
