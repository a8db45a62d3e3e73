"""The ECS instance metadata service of one instance, on loopback: its RAM role's temporary key.

On ECS, an instance started with ``RamRoleName`` reads its role's STS credentials at
``http://100.100.100.200/latest/meta-data/ram/security-credentials/<role>`` (the bare path lists the role's
name); in hardened mode (IMDSv2) a token from ``PUT /latest/api/token`` (header
``X-aliyun-ecs-metadata-token-ttl-seconds``) must come as ``X-aliyun-ecs-metadata-token``
(www.alibabacloud.com/help/en/ecs/user-guide/attach-an-instance-ram-role-to-an-ecs-instance, "Obtain the
temporary access credentials").  The answer: ``{Code: Success, AccessKeyId, AccessKeySecret, SecurityToken,
Expiration, LastUpdated}``; 404 for a role the instance does not have.

This one serves the instance a test names (``instance_id`` on the ECS server, its ``RamRoleName``), hardened
(tokens required, ``hardened=True``), and mints each key as ECS does: an STS credential of the ECS server for
the role's ARN, carrying the actions of the policies attached to the role, valid ``duration_s`` on the
account's test clock, renewed when less than 15 minutes remain.  The ECS server checks every call signed
with it (the key, its ``SecurityToken``, its expiry, its actions).  alibabacloud_credentials hard-codes the
host 100.100.100.200: the plugin's test-only setting ``ecs_metadata_host`` points it here (``host``).
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .ram import role_named, trusted_services
from .server import AlibabaServer
from .state import Account, TempCredential, iso

BASE = "/latest/meta-data/ram/security-credentials/"


class InstanceMetadata:
    """One instance's metadata service (see the module doc); ``requests`` records (method, path)."""

    def __init__(self, server: AlibabaServer, account: Account, instance_id: str, duration_s: float = 6 * 3600,
                 hardened: bool = True) -> None:
        self.ecs, self.account, self.instance_id = server, account, instance_id
        self.duration_s, self.hardened = duration_s, hardened
        self.tokens: set[str] = set()
        self.requests: list[tuple[str, str]] = []
        self.minted: list[TempCredential] = []
        self._lock = threading.Lock()
        meta = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802 - http.server's naming
                meta.requests.append(("PUT", self.path))
                if self.path != "/latest/api/token" or not self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds"):
                    return self._send(400, "")
                token = secrets.token_hex(16)
                meta.tokens.add(token)
                self._send(200, token)

            def do_GET(self) -> None:  # noqa: N802
                meta.requests.append(("GET", self.path))
                if meta.hardened and self.headers.get("X-aliyun-ecs-metadata-token") not in meta.tokens:
                    return self._send(401, "")
                role = meta.role()
                if self.path == BASE:
                    return self._send(200, role) if role else self._send(404, "")
                if role and self.path == BASE + role:
                    return self._send(200, json.dumps(meta.credentials(role)))
                self._send(404, "")

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="ecs-metadata", daemon=True).start()

    def role(self) -> str | None:
        """The RAM role the instance runs with (None: none, or a role ECS may not pass it)."""
        found = [i for i in self.ecs.instances(self.account) if i["InstanceId"] == self.instance_id]
        name = found[0].get("_ram_role") if found else None
        with self.ecs.state.lock:
            role = role_named(self.ecs.state, self.account.account_id, name) if name else None
        return name if role is not None and "ecs.aliyuncs.com" in trusted_services(role) else None

    def credentials(self, role_name: str) -> dict[str, Any]:
        st = self.ecs.state
        with self._lock, st.lock:
            now = st.now(self.account.account_id)
            last = self.minted[-1] if self.minted else None
            if last is None or last.expires - now < 15 * 60:
                arn = role_named(st, self.account.account_id, role_name)["Arn"]
                ak = f"STS.{secrets.token_hex(12)}"
                last = TempCredential(access_key_id=ak, secret=secrets.token_urlsafe(24),
                                      token=f"CAIS{secrets.token_urlsafe(48)}", account=self.account, role_arn=arn,
                                      session=f"i-{self.instance_id[-8:]}", expires=now + self.duration_s,
                                      actions=tuple(self.account.roles.get(arn, ())))
                st.temp[ak] = last
                self.minted.append(last)
            return {"Code": "Success", "AccessKeyId": last.access_key_id, "AccessKeySecret": last.secret,
                    "SecurityToken": last.token, "Expiration": iso(last.expires), "LastUpdated": iso(now)}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
