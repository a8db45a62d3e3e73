"""Azure's instance metadata service (IMDS) of one VM, on loopback: its managed identity's ARM tokens.

On a VM, ``GET http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=<aud>``
with the header ``Metadata: true`` (and ``client_id=<id>`` to choose among user-assigned identities; without
it the VM's only identity) answers ``{access_token, expires_in, expires_on, resource, token_type}``
(learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-to-use-vm-token); a missing header
is 400, an identity the VM does not have is 400 ``invalid_request`` "Identity not found".

This one serves the identities a test attached to "its VM" (``attach``: user-assigned identities the ARM
server made, by resource id).  A token it hands out is one the ARM server honours for exactly what the
identity's role assignments grant: the actions of the custom (or built-in "*") roles assigned to its
principal, on the subscriptions they are assigned in — what Entra ID and ARM do for a managed identity.
azure-identity and MSAL reach it through ``AZURE_POD_IDENTITY_AUTHORITY_HOST`` (``env()``), never the real
169.254.169.254.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from .authz import BUILT_IN, IDENTITY_TYPE, ROLE_TYPE
from .server import ArmServer

ENV = "AZURE_POD_IDENTITY_AUTHORITY_HOST"
TOKEN_PATH = "/metadata/identity/oauth2/token"


class VmMetadata:
    """One VM's IMDS (see the module doc); ``requests`` records (path, query) of each call."""

    def __init__(self, arm: ArmServer) -> None:
        self.arm = arm
        self.attached: list[str] = []  # identity resource ids
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.issued: dict[str, str] = {}  # token -> client id
        imds = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                imds.requests.append((url.path, query))
                if self.headers.get("Metadata") != "true":
                    return self._send(400, {"error": "invalid_request",
                                            "error_description": "Required metadata header not specified"})
                if url.path != TOKEN_PATH:
                    return self._send(404, {"error": "not_found"})
                status, body = imds.token(query)
                self._send(status, body)

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="azure-imds", daemon=True).start()

    def attach(self, identity_id: str) -> None:
        """The VM runs as this user-assigned identity (what the VM's ``identity.userAssignedIdentities`` says)."""
        self.attached.append(identity_id)

    def env(self) -> dict[str, str]:
        """The variables that point azure-identity at this service."""
        return {ENV: self.url}

    def token(self, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not query.get("resource") or not query.get("api-version"):
            return 400, {"error": "invalid_request", "error_description": "Required query variable not specified"}
        st = self.arm.state
        with st.lock:
            idents = [st.find(i) for i in self.attached]
            idents = [i for i in idents if i is not None and i["type"] == IDENTITY_TYPE]
            wanted = query.get("client_id")
            found = [i for i in idents if wanted is None or i["properties"]["clientId"] == wanted]
            if len(found) != 1:
                return 400, {"error": "invalid_request", "error_description": "Identity not found"}
            props = found[0]["properties"]
            actions, subs = self._grants(props["principalId"])
            client = st.add_client(props["tenantId"], props["clientId"], f"imds-{uuid.uuid4().hex}", subs, actions)
            client.object_id = props["principalId"]
            token = st.issue_token(props["tenantId"], props["clientId"], client.secret)
            self.issued[token] = props["clientId"]
        now = int(time.time())
        return 200, {"access_token": token, "client_id": props["clientId"], "expires_in": "86399",
                     "expires_on": str(now + 86399), "ext_expires_in": "86399", "not_before": str(now),
                     "resource": query["resource"], "token_type": "Bearer"}

    def _grants(self, principal: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The actions of the roles assigned to ``principal`` and the subscriptions of those assignments."""
        st = self.arm.state
        actions: list[str] = []
        subs: list[str] = []
        for ra in list(st.resources.values()):
            p = ra.get("properties") or {}
            if ra["type"] != ROLE_TYPE or p.get("principalId") != principal:
                continue
            definition = p["roleDefinitionId"]
            if definition.rsplit("/", 1)[-1].lower() in BUILT_IN:
                actions.append("*")
            else:
                rd = st.find(definition) or {}
                for perm in (rd.get("properties") or {}).get("permissions") or []:
                    actions.extend(perm.get("actions") or [])
            subs.append(p["scope"].split("/")[2])
        return tuple(dict.fromkeys(actions)), tuple(dict.fromkeys(subs))

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
