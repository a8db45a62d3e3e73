"""The flat RPC parameters of one request (``Tag.1.Key=…``, ``SystemDisk.Size=…``) and their shapes.

The SDKs flatten lists and structures into dotted names (lists are 1-based:
``InstanceId.1``, ``Tag.2.Value``, ``Permissions.1.PortRange``); a few actions take
a JSON array in one parameter instead (``InstanceIds``, ``KeyPairNames``).  This class
reads both and raises the gateway's ``MissingParameter`` / ``InvalidParameter`` errors.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import ApiError


class Params:
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.flat: dict[str, str] = {}
        for k, v in pairs:
            self.flat[k] = v

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self.flat.get(name)
        return default if value is None or value == "" else value

    def need(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise ApiError(400, "MissingParameter", f"The input parameter \"{name}\" that is mandatory for processing "
                           "this request is not supplied.")
        return value

    def int(self, name: str, default: int | None = None) -> int | None:
        value = self.get(name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ApiError(400, "InvalidParameter", f"The specified parameter \"{name}\" is not valid.") from None

    def float(self, name: str, default: float | None = None) -> float | None:
        value = self.get(name)
        if value is None:
            return default
        try:
            return float(value)
        except ValueError:
            raise ApiError(400, "InvalidParameter", f"The specified parameter \"{name}\" is not valid.") from None

    def bool(self, name: str, default: bool = False) -> bool:
        value = self.get(name)
        return default if value is None else value.strip().lower() == "true"

    def indexed(self, name: str) -> list[str]:
        """``Name.1``, ``Name.2`` … in index order."""
        found = []
        pat = re.compile(re.escape(name) + r"\.(\d+)$")
        for k, v in self.flat.items():
            m = pat.match(k)
            if m:
                found.append((int(m.group(1)), v))
        return [v for _, v in sorted(found)]

    def records(self, name: str) -> list[dict[str, str]]:
        """``Name.N.Field`` groups as dicts, in index order (``Tag.1.Key``/``Tag.1.Value`` → ``{"Key","Value"}``)."""
        groups: dict[int, dict[str, str]] = {}
        pat = re.compile(re.escape(name) + r"\.(\d+)\.(.+)$")
        for k, v in self.flat.items():
            m = pat.match(k)
            if m:
                groups.setdefault(int(m.group(1)), {})[m.group(2)] = v
        return [groups[i] for i in sorted(groups)]

    def struct(self, name: str) -> dict[str, str]:
        """``Name.Field`` as a dict (``SystemDisk.Size`` → ``{"Size": …}``)."""
        prefix = name + "."
        return {k[len(prefix):]: v for k, v in self.flat.items() if k.startswith(prefix)}

    def json_list(self, name: str) -> list[str] | None:
        value = self.get(name)
        if value is None:
            return None
        try:
            data = json.loads(value)
        except ValueError:
            raise ApiError(400, f"InvalidParameter.{name}", f"The specified parameter \"{name}\" is not a JSON array.") \
                from None
        if not isinstance(data, list):
            raise ApiError(400, f"InvalidParameter.{name}", f"The specified parameter \"{name}\" is not a JSON array.")
        return [str(x) for x in data]

    def tags(self) -> list[tuple[str, str]]:
        """Tag.N.Key / Tag.N.Value pairs (the value may be empty)."""
        out = []
        for rec in self.records("Tag"):
            if rec.get("Key"):
                out.append((rec["Key"], rec.get("Value", "")))
        return out

    def signature_free(self) -> tuple[tuple[str, Any], ...]:
        """The parameters that make a request what it is (ClientToken idempotency compares these)."""
        return tuple(sorted((k, v) for k, v in self.flat.items() if k not in ("ClientToken",)))
