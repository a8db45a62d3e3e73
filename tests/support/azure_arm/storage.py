"""Microsoft.Storage storage accounts: enough for the app to find an account's region, blob endpoint and key.

``add_account`` (a test helper, like the portal) creates an account in a resource group; its blob
endpoint can point at Azurite (the data plane this server does not speak).  ARM answers the
subscription-wide listing and ``POST …/storageAccounts/NAME/listKeys``.
"""

from __future__ import annotations

from typing import Any

from .state import ArmState, Reply

ACCOUNT_TYPE = "Microsoft.Storage/storageAccounts"


def add_account(state: ArmState, sub: str, group: str, name: str, location: str, blob_endpoint: str,
                key: str) -> dict[str, Any]:
    with state.lock:
        gid = state.group_id(sub, group)
        state.groups.setdefault(gid.lower(), {"id": gid, "name": group, "type": "Microsoft.Resources/resourceGroups",
                                              "location": location, "tags": {},
                                              "properties": {"provisioningState": "Succeeded"}})
        return state.store({
            "id": f"{gid}/providers/{ACCOUNT_TYPE}/{name}", "name": name, "type": ACCOUNT_TYPE, "location": location,
            "kind": "StorageV2", "sku": {"name": "Standard_LRS", "tier": "Standard"}, "tags": {},
            "properties": {"provisioningState": "Succeeded", "primaryLocation": location,
                           "primaryEndpoints": {"blob": blob_endpoint.rstrip("/") + "/"},
                           "allowSharedKeyAccess": True},
            "_keys": [{"keyName": "key1", "value": key, "permissions": "FULL"}],
        })


def list_keys(resource: dict[str, Any]) -> Reply:
    return Reply(200, {"keys": list(resource.get("_keys") or [])})
