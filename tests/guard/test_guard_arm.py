"""The on-machine guard against our ARM-protocol test server (HTTPS, tokens, RBAC): the VM's identity
deletes its own resource group when it may, and a refusal is logged and retried, never hidden."""

from __future__ import annotations

import json
import urllib.request

from azure_arm import shared_server
from guardsim import LID, T0, FakeAzure, Machine

DELETE_GROUP = "Microsoft.Resources/subscriptions/resourceGroups/delete"


def _arm(server, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    import ssl

    req = urllib.request.Request(f"{server.url}{path}", method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    ctx = ssl.create_default_context(cafile=server.ca_file)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _setup(machine: Machine, azure: FakeAzure, identity_actions: tuple[str, ...]):
    server = shared_server()
    app = server.new_account()  # the workbench's own service principal: it created the launch's group
    app_token = server.state.issue_token(app.tenant, app.client_id, app.secret)
    group = f"wb-{LID}"
    status, _ = _arm(server, app_token, "PUT", f"/subscriptions/{app.subscription}/resourcegroups/{group}"
                     "?api-version=2025-04-01", {"location": "eastus", "tags": {"workbench:launch": LID}})
    assert status in (200, 201)
    # the VM's system-assigned identity: its own principal, with only the role the plugin grants it
    server.state.add_client(app.tenant, "vm-identity-" + LID, "unused-secret", (app.subscription,),
                            identity_actions)
    azure.token = server.state.issue_token(app.tenant, "vm-identity-" + LID, "unused-secret")
    azure.compute = {"subscriptionId": app.subscription, "resourceGroupName": group, "name": "vm-1"}
    machine.configure(cloud="azure", max_runtime_s=600,
                      azure={"imds": azure.url, "arm": server.url, "resource": server.url + "/"})
    machine.env["SSL_CERT_FILE"] = server.ca_file
    return server, app, app_token, group


def test_the_identity_deletes_its_own_group_over_arm(machine: Machine, azure: FakeAzure):
    server, app, app_token, group = _setup(machine, azure, (DELETE_GROUP,))
    machine.run(T0)
    machine.run(T0 + 599)
    assert not [s for s in server.seen if s.method == "DELETE" and s.sub == app.subscription]
    machine.run(T0 + 600)
    [delete] = [s for s in server.seen if s.method == "DELETE" and s.sub == app.subscription]
    assert (delete.status, delete.client_id, delete.actions) == (202, "vm-identity-" + LID, (DELETE_GROUP,))
    status, g = _arm(server, app_token, "GET", f"/subscriptions/{app.subscription}/resourcegroups/{group}"
                     "?api-version=2025-04-01")
    assert status == 404 or g["properties"]["provisioningState"] == "Deleting"
    assert machine.state["fired"]["done"] is True and machine.shutdowns == []
    assert azure.token not in machine.console


def test_a_refused_delete_is_logged_and_retried(machine: Machine, azure: FakeAzure):
    server, app, app_token, group = _setup(machine, azure, ("Microsoft.Resources/subscriptions/resourceGroups/read",))
    machine.run(T0)
    machine.run(T0 + 600)
    assert machine.state["fired"]["done"] is False
    assert "ARM refused the deletion of the resource group" in machine.console and "HTTP 403" in machine.console
    assert "AuthorizationFailed" in machine.console
    machine.run(T0 + 660)
    refused = [s for s in server.seen if s.method == "DELETE" and s.sub == app.subscription]
    assert [s.status for s in refused] == [403, 403]  # tried again on the next run
    status, g = _arm(server, app_token, "GET", f"/subscriptions/{app.subscription}/resourcegroups/{group}"
                     "?api-version=2025-04-01")
    assert status == 200 and g["properties"]["provisioningState"] == "Succeeded"
