"""An EC2 instance metadata service (IMDSv2) of ours on loopback, serving an instance role's credentials.

On EC2 a machine with an instance profile gets its role's temporary credentials from
``http://169.254.169.254/latest/meta-data/iam/security-credentials/<role>``, after a ``PUT
/latest/api/token`` (IMDSv2); the SDKs' default credential chain reads them there and renews them
before they expire.  This server answers the same paths (token required, as IMDSv2 with
``HttpTokens=required``), with credentials the test makes by ``sts:AssumeRole`` of the role against moto —
what EC2 itself does for the instance.  botocore reaches it through ``AWS_EC2_METADATA_SERVICE_ENDPOINT``
(never the real 169.254.169.254).

``mint()`` is called for every credentials request whose last answer is within 5 minutes of expiring, as
EC2 rotates them.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class InstanceMetadata:
    def __init__(self, role: str, mint: Callable[[], dict]) -> None:
        self.role = role
        self.mint = mint
        self.tokens: set[str] = set()
        self.requests: list[tuple[str, str]] = []
        self._creds: dict | None = None
        self._lock = threading.Lock()
        imds = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802 - http.server's naming
                imds.requests.append(("PUT", self.path))
                if self.path != "/latest/api/token" or not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    return self._send(400, "")
                token = secrets.token_hex(16)
                imds.tokens.add(token)
                self._send(200, token)

            def do_GET(self) -> None:  # noqa: N802
                imds.requests.append(("GET", self.path))
                if self.headers.get("X-aws-ec2-metadata-token") not in imds.tokens:
                    return self._send(401, "")
                base = "/latest/meta-data/iam/security-credentials/"
                if self.path == base:
                    return self._send(200, imds.role)
                if self.path == base + imds.role:
                    return self._send(200, json.dumps(imds.credentials()))
                self._send(404, "")

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def credentials(self) -> dict:
        with self._lock:
            if self._creds is None or self._creds["_expires"] - time.time() < 300:
                c = self.mint()
                exp = c["Expiration"]
                self._creds = {"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": c["AccessKeyId"],
                               "SecretAccessKey": c["SecretAccessKey"], "Token": c["SessionToken"],
                               "Expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ") if hasattr(exp, "strftime") else exp,
                               "LastUpdated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "_expires": exp.timestamp() if hasattr(exp, "timestamp") else time.time() + 3600}
            return {k: v for k, v in self._creds.items() if not k.startswith("_")}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
